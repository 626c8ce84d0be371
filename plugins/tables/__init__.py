"""/api/table: tables of registered databases and their metadata."""
from core import hookimpl

from .views import table_api


@hookimpl
def register_routes():
    return [table_api]
