"""/api/bookmark: a user's bookmarked cards, collections and dashboards (while their plugin is enabled), and their
order in the sidebar."""
from core import hookimpl

from .views import bookmark_api


@hookimpl
def register_routes():
    return [bookmark_api]
