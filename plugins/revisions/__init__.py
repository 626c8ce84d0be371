"""/api/revision: the revision history of any kind of content, and reverting it, by entity name.

Metabase's newer clients read and revert revisions here instead of /api/<entity>/:id/revisions. This
plugin owns no content: each plugin that records revisions registers its kind (`register_revisables`,
core.assembly.records.Revisable) and the core keeps them by entity name on the app state.
"""
from core import hookimpl

from .views import revision_api


@hookimpl
def register_routes():
    return [revision_api]
