"""/api/util: random tokens, password checks, logs, statistics, diagnostics, entity-id translation,
product feedback."""
from core import hookimpl

from .views import util_api


@hookimpl
def register_routes():
    return [util_api]
