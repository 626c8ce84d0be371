"""/api/collection: the collection tree, its items, personal collections and namespaces."""
from core import hookimpl

from .views import collection_api


@hookimpl
def register_routes():
    return [collection_api]
