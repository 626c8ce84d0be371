"""/api/field: fields of synced tables, their values and remappings."""
from core import hookimpl

from .views import field_api


@hookimpl
def register_routes():
    return [field_api]
