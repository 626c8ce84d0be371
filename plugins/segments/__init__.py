"""/api/segment: saved filters on one table (Metabase's segments), their revisions, and the MBQL
`segment` clause they define (expanded by core.query.macros)."""
from core import hookimpl

from .views import segment_api


@hookimpl
def register_routes():
    return [segment_api]
