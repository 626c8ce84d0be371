"""/api/bookmark: a user's bookmarked cards and collections (dashboards once they exist), and their
order in the sidebar."""
from core import hookimpl

from .views import bookmark_api


@hookimpl
def register_routes():
    return [bookmark_api]
