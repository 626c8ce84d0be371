"""/api/native-query-snippet: reusable pieces of SQL that native queries include as {{snippet: name}}.
Snippet folders are collections of the "snippets" namespace."""
from core import hookimpl

from .views import snippet_api


@hookimpl
def register_routes():
    return [snippet_api]
