"""/api/permissions (groups, memberships, data and execution graphs) and /api/collection/graph.

Owns the advanced-permissions setting, which turns group managers on.
"""
from core import SettingDef, hookimpl

from . import graph_views  # noqa: F401  (declares the graph endpoints on permissions_api)
from .graph_views import collection_graph_api
from .views import permissions_api


@hookimpl
def register_routes():
    return [permissions_api, collection_graph_api]


@hookimpl
def register_settings():
    return [
        SettingDef("advanced-permissions", type="boolean", default=False, visibility="authenticated",
                   description="Let group managers add and remove members of the groups they manage."),
    ]
