"""/api/docs: the OpenAPI document of every registered endpoint and a page that lists them."""
from core import hookimpl

from .views import docs_api


@hookimpl
def register_routes():
    return [docs_api]
