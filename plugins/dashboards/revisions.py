"""Dashboard revisions (core.content.revisions, model "Dashboard"): what a revision keeps, the phrases
describing a change, the history and the revert.

A revision holds the dashboard's columns that matter (Metabase's serialize-instance leaves out ids,
timestamps, view counts, public link and getting-started columns) plus `cards` (the dashcards as stored,
series as card ids; Metabase's key) and `tabs`. A revert restores the columns and, through the same
layout sync as PUT, the tabs and dashcards; tabs and dashcards deleted since come back with new ids.
`history` and `revert` are what /api/dashboard/:id/revisions, /revert and the generic /api/revision use.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from core.appdb.models import Collection, User
from core.content import revisions as core_revisions
from core.policy import permissions

from . import dashcards
from .lookup import readable_dashboard, writable_dashboard
from .models import Dashboard
from .serialize import MODEL, base_json

SKIPPED = {"id", "created_at", "updated_at", "creator_id", "points_of_interest", "caveats", "show_in_getting_started",
           "entity_id", "public_uuid", "made_public_by_id", "position", "initially_published_at", "view_count",
           "last_viewed_at"}
# What a revert writes back onto the row (embedding only for administrators, collection only when writable).
RESTORED = ("name", "description", "parameters", "width", "auto_apply_filters", "cache_ttl", "archived",
            "archived_directly", "collection_position")


def _plural(count: int, one: str, many: str) -> str:
    return one if count == 1 else many.format(count)


def _without_layout(cards: list[dict]) -> list:
    """The dashcards with their place and size left out: what tells a rearrangement from an edit."""
    place = ("row", "col", "size_x", "size_y")
    return sorted(sorted((k, str(v)) for k, v in card.items() if k not in place) for card in cards)


def describe(key: str, old: Any, new: Any) -> str | None:
    """Metabase's dashboard phrases (diff-strings :model/Dashboard) for the keys only dashboards have."""
    if key == "cards":
        old, new = old or [], new or []
        before, after = {c.get("id") for c in old}, {c.get("id") for c in new}
        if before < after:
            return _plural(len(after - before), "added a card", "added {} cards")
        if after < before:
            return _plural(len(before - after), "removed a card", "removed {} cards")
        return "rearranged the cards" if _without_layout(old) == _without_layout(new) else "modified the cards"
    if key == "tabs":
        old_tabs = {t.get("id"): t for t in old or []}
        new_tabs = {t.get("id"): t for t in new or []}
        created = [i for i in new_tabs if i not in old_tabs]
        deleted = [i for i in old_tabs if i not in new_tabs]
        updated = [i for i in new_tabs if i in old_tabs and new_tabs[i] != old_tabs[i]]
        parts = [_plural(len(created), "added a tab", "added {} tabs") if created else None,
                 _plural(len(updated), "modified a tab", "modified {} tabs") if updated else None,
                 _plural(len(deleted), "removed a tab", "removed {} tabs") if deleted else None]
        return " and ".join(p for p in parts if p) or None
    if key == "width":
        return f"changed the width setting to {new}"
    if key == "auto_apply_filters":
        return f"set auto apply filters to {str(bool(new)).lower()}"
    if key == "cache_ttl":
        return "changed the cache ttl"
    return None


KIND = core_revisions.Kind(model=MODEL, label="Dashboard", describe=describe)


def _jsonable(value):
    import orjson

    from core.http.api import dumps
    return orjson.loads(dumps(value))


def serialize(session: Session, dashboard: Dashboard) -> dict:
    layout = dashcards.load_layout(session, dashboard.id)
    obj = {k: v for k, v in base_json(dashboard).items() if k not in SKIPPED}
    obj["cards"] = dashcards.dashcard_rows(layout)
    obj["tabs"] = dashcards.tab_rows(layout)
    return _jsonable(obj)


def record(session: Session, user: User, dashboard: Dashboard, *, creation: bool = False) -> None:
    """Record the dashboard's state after a change (nothing when it equals the latest revision)."""
    session.flush()
    obj = serialize(session, dashboard)
    if creation:
        core_revisions.record(session, MODEL, dashboard.id, user.id, obj, is_creation=True)
    else:
        core_revisions.push(session, MODEL, dashboard.id, user.id, obj)


def history(session: Session, user: User, dashboard_id: int) -> list[dict]:
    """Every kept revision, newest first (read permission on the dashboard)."""
    readable_dashboard(session, user, dashboard_id)
    return core_revisions.history(session, KIND, dashboard_id)


def revert(session: Session, user: User, dashboard_id: int, revision_id: int) -> dict:
    """Put the dashboard back as it was at `revision_id` (write permission); returns the new revision."""
    dashboard = writable_dashboard(session, user, dashboard_id)

    def apply(obj: dict) -> None:
        for key in RESTORED:
            if key in obj:
                setattr(dashboard, key, obj[key])
        target = obj.get("collection_id")
        if target != dashboard.collection_id and (target is None or session.get(Collection, target) is not None) \
                and permissions.can_write_collection(session, user, target):
            dashboard.collection_id = target
        if user.is_superuser:
            dashboard.enable_embedding = bool(obj.get("enable_embedding", dashboard.enable_embedding))
            dashboard.embedding_params = obj.get("embedding_params", dashboard.embedding_params)
        dashcards.sync(session, user, dashboard.id, list(obj.get("tabs") or []), list(obj.get("cards") or []),
                       check=False)
        # core_revisions.revert records `obj`: make it the state reached (new ids for restored rows).
        obj.clear()
        obj.update(serialize(session, session.get(Dashboard, dashboard_id)))

    out = core_revisions.revert(session, KIND, dashboard_id, revision_id, user.id, apply)
    session.commit()
    return out
