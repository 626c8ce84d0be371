"""/api/activity: what the signed-in user looked at lately (recent_views) and what everyone looks at most
(popular_items), as Metabase's home page reads them, limited to the items the caller may read.

Nothing new is recorded for it: recent views are the caller's own runs of saved questions and of
dashboards' cards in the query log (`query_execution`, written by plugins.query_audit), popular items the
view counts cards and dashboards keep (core.content.viewing). Dashboards come through their content kind
(core.content.kinds), so this plugin imports no other.
"""
from core import hookimpl

from .views import activity_api


@hookimpl
def register_routes():
    return [activity_api]
