"""/api/search: one ranked search over collections, cards, models, metrics, databases and tables."""
from core import hookimpl

from .views import search_api


@hookimpl
def register_routes():
    return [search_api]
