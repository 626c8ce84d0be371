"""/api/dashboard: dashboards with tabs and dashcards, filters wired to their cards, dashcard queries
and exports, copies and revisions; and the dashboards' place in collections, search, bookmarks and
related lists, which the core asks for through hooks."""
from pathlib import Path

from core import Migrations, Revisable, hookimpl

from . import (
    content,
    copy_views,  # noqa: F401
    models,  # noqa: F401  (the plugin's tables join core.appdb.models.Base when it loads)
    query_views,  # noqa: F401  (declares the dashcard query, filter-value and metadata endpoints)
    views,  # noqa: F401  (declares the CRUD, layout, revision, sharing and save endpoints)
)
from .blueprint import dashboard_api


@hookimpl
def register_migrations():
    return [Migrations("dashboards", Path(__file__).parent / "migrations")]


@hookimpl
def register_content_kinds():
    return [content.KIND]


@hookimpl
def register_shareables():
    from .shared import SHAREABLE

    return [SHAREABLE]


@hookimpl
def register_routes():
    return [dashboard_api]


@hookimpl
def register_revisables():
    from . import revisions

    return [Revisable("dashboard", revisions.history, revisions.revert)]


@hookimpl
def dashboard_cards(session, card_ids, dashboard_ids):
    from .service import dashboard_cards as pairs

    return pairs(session, card_ids, dashboard_ids)


@hookimpl
def visible_dashboards(session, user, dashboard_ids):
    from .service import visible_dashboards as visible

    return visible(session, user, dashboard_ids)
