"""Dashboards: create, read (counting the view), list, update (plain keys, archive, move, embedding,
and the layout through dashcards.sync), delete, related. Every change records a revision in the same
transaction (revisions.py) and commits once.

Read permission is the dashboard's collection's; write permission too. Services take the app-DB
session and the caller and never read the request.
"""
from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from core.appdb import counters, memo
from core.appdb.models import Card, User, utcnow
from core.appdb.models.base import new_entity_id
from core.assembly import events
from core.content import related as core_related
from core.content import viewing
from core.content.collections import Access, check_target
from core.http.errors import Archived, Forbidden, check_404
from core.policy import audience, permissions, sharing

from . import dashcards, revisions
from .lookup import MAX_ID, readable_dashboard, writable_dashboard
from .models import Dashboard, DashboardBookmark, DashboardCard, DashboardCardSeries, DashboardTab
from .serialize import base_json, dashboard_facts, dashboard_json, dashcards_json, summaries_json, tab_json, with_rights

# PUT keys written whenever present (null included), and those written only when not null (Metabase's DashUpdates).
WHEN_PRESENT = ("description", "position", "width", "collection_position", "cache_ttl")
WHEN_NOT_NULL = ("name", "parameters", "caveats", "points_of_interest", "show_in_getting_started",
                 "auto_apply_filters")


# --------------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------------


def view_dashboard(session: Session, user: User, dashboard_id: int) -> Dashboard:
    """The dashboard, its view counted, its views not written yet laid over its columns."""
    dashboard = readable_dashboard(session, user, dashboard_id)
    views = counters.buffer()
    views.bump(Dashboard, dashboard.id, add={"view_count": 1}, latest={"last_viewed_at": utcnow()})
    counted, latest = views.pending(Dashboard, dashboard.id)
    if counted:
        set_committed_value(dashboard, "view_count", (dashboard.view_count or 0) + counted["view_count"])
        set_committed_value(dashboard, "last_viewed_at", latest["last_viewed_at"])
    events.emit("dashboard-read", user.id, dashboard)
    return dashboard


def viewed_dashboard_json(session: Session, user: User, dashboard_id: int, ignore_view: bool = False) -> dict:
    """GET /api/dashboard/:id, a read that counts (unless `ignore_view`): view_count and last_viewed_at
    are written off the request path (core.appdb.counters) and this process's views not written yet
    show at once. The hydration reads the app DB only: it is kept in core.appdb.memo while the app DB
    is unchanged."""
    if not ignore_view and events.has_listeners("dashboard-read"):  # listeners receive the dashboard object
        return dashboard_json(session, user, view_dashboard(session, user, dashboard_id))
    # Kept per dashboard, not per user; what the caller may do and see is laid over it per request from
    # permission answers kept per group set (core.policy.permissions).
    facts = _kept_facts(session, dashboard_id)
    check_404(facts)
    if any(d.get("action_id") is not None for d in facts["dashcards"]):  # actions describe themselves per user
        if not permissions.can_read_item(session, user, facts["collection_id"]):
            raise Forbidden()
        stored = with_rights(session, user, facts)
    else:
        # The dashboard as the caller's audience is shown it, kept per audience (every card's collection
        # decides what it shows of that card), computed from the kept facts, read inside so that the
        # answer depends on what they read. Shared between requests: laid over, never modified.
        collections = {facts["collection_id"], *(card["collection_id"] for d in facts["dashcards"]
                                                 for card in (d["card"], *(c for _, c in d["series"]))
                                                 if card is not None)}

        def shown():
            kept = check_404(_kept_facts(session, dashboard_id))
            if not permissions.can_read_item(session, user, kept["collection_id"]):
                return None
            return with_rights(session, user, kept)

        stored = audience.kept_answers(session, user, ("GET dashboard shown", dashboard_id), shown, collections)
        if stored is None:
            raise Forbidden()
    return viewing.viewed_json(session, with_card_counts(session, stored), Dashboard, dashboard_id, "last_viewed_at",
                               count=not ignore_view)


def _kept_facts(session: Session, dashboard_id: int) -> dict | None:
    return memo.get_or_compute(session, ("GET dashboard", dashboard_id), lambda: _facts(session, dashboard_id),
                               alone=True)


def _facts(session: Session, dashboard_id: int) -> dict | None:
    with memo.fresh_session(session) as fresh:
        dashboard = fresh.get(Dashboard, dashboard_id) if dashboard_id < MAX_ID else None
        return None if dashboard is None else dashboard_facts(fresh, dashboard)


def with_card_counts(session: Session, stored: dict) -> dict:
    """The kept dashboard with its cards' stored view counts laid over (core.content.viewing): a flush
    of card views ends those counts, not the dashboard's answer."""
    shown = [c for d in stored["dashcards"] for c in (d.get("card"), *d.get("series", ()))
             if c is not None and "view_count" in c]
    if not shown:
        return stored
    found = viewing.stored_counts(session, Card, (c["id"] for c in shown), "last_used_at")
    fresh = {i: {"view_count": n, "last_used_at": at} for i, (n, at) in found.items()}

    def card(c):
        return {**c, **fresh[c["id"]]} if c is not None and "view_count" in c and c["id"] in fresh else c

    return {**stored, "dashcards": [{**d, "card": card(d.get("card")),
                                     **({"series": [card(c) for c in d["series"]]} if "series" in d else {})}
                                    for d in stored["dashcards"]]}


def list_dashboards(session: Session, user: User, f: str | None) -> list[dict]:
    """GET /api/dashboard/: readable dashboards by name; `mine` the caller's, `archived` the archived ones."""
    f = f or "all"
    query = select(Dashboard).where(Dashboard.archived.is_(f == "archived")).order_by(func.lower(Dashboard.name),
                                                                                      Dashboard.id)
    if f == "mine":
        query = query.where(Dashboard.creator_id == user.id)
    access = Access(session, user)
    return summaries_json(session, [d for d in session.scalars(query) if access.can_read(d.collection_id)])


# --------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------


def create_dashboard(session: Session, user: User, body) -> Dashboard:
    check_target(session, user, body.collection_id)
    dashboard = Dashboard(name=body.name, description=body.description, parameters=body.parameters or [],
                          cache_ttl=body.cache_ttl, collection_id=body.collection_id,
                          collection_position=body.collection_position, creator_id=user.id,
                          entity_id=new_entity_id())
    session.add(dashboard)
    session.flush()
    revisions.record(session, user, dashboard, creation=True)
    session.commit()
    events.emit("dashboard-create", user.id, dashboard)
    return dashboard


def _dashcard_values(item) -> dict:
    """A dashcard of a PUT body as dashcards.sync takes it: the keys the client sent."""
    given = item.model_fields_set
    out = {k: getattr(item, k) for k in dashcards.DASHCARD_KEYS if k in given}
    out["id"] = item.id
    if "parameter_mappings" in out:
        out["parameter_mappings"] = [m.model_dump(exclude_unset=True) for m in item.parameter_mappings or []]
    if "visualization_settings" in out and out["visualization_settings"] is None:
        out["visualization_settings"] = {}
    if item.series is not None:
        out["series"] = [s.id for s in item.series]
    return out


def layout_lists(tabs, cards) -> tuple[list[dict] | None, list[dict] | None]:
    return ([{"id": t.id, "name": t.name} for t in tabs] if tabs is not None else None,
            [_dashcard_values(c) for c in cards] if cards is not None else None)


def _embedding_changes(session: Session, user: User, dashboard: Dashboard, body, changes: dict) -> None:
    """Embedding may change only for an administrator while embedding is enabled (Metabase)."""
    wanted = {}
    if body.enable_embedding is not None and body.enable_embedding != dashboard.enable_embedding:
        wanted["enable_embedding"] = body.enable_embedding
    if body.embedding_params is not None and body.embedding_params != dashboard.embedding_params:
        wanted["embedding_params"] = body.embedding_params
    if not wanted:
        return
    if not user.is_superuser:
        raise Forbidden()
    sharing.check_embedding(session)
    changes.update(wanted)


def update_dashboard(session: Session, user: User, dashboard_id: int, body) -> Dashboard:
    """PUT /api/dashboard/:id: everything is checked before anything is written, and written at once."""
    dashboard = writable_dashboard(session, user, dashboard_id)
    given = body.model_fields_set
    changes = {k: getattr(body, k) for k in WHEN_PRESENT if k in given}
    changes.update({k: getattr(body, k) for k in WHEN_NOT_NULL if getattr(body, k) is not None})
    if "width" in changes and changes["width"] is None:
        del changes["width"]
    if "collection_id" in given and body.collection_id != dashboard.collection_id:
        check_target(session, user, body.collection_id)
        changes["collection_id"] = body.collection_id
    _embedding_changes(session, user, dashboard, body, changes)
    if body.archived is not None and body.archived != dashboard.archived:
        changes["archived"] = body.archived
        changes["archived_directly"] = body.archived
        if body.archived:
            changes["collection_position"] = None
    tabs, cards = layout_lists(body.tabs, body.dashcards)
    if tabs is not None or cards is not None:
        dashcards.sync(session, user, dashboard.id, tabs, cards)
    for key, value in changes.items():
        if getattr(dashboard, key) != value:
            setattr(dashboard, key, value)
    revisions.record(session, user, dashboard)
    session.commit()
    events.emit("dashboard-update", user.id, dashboard)
    return dashboard


def update_cards(session: Session, user: User, dashboard_id: int, body) -> dict:
    """The deprecated PUT /api/dashboard/:id/cards: the same layout sync; answers {cards, tabs}."""
    dashboard = writable_dashboard(session, user, dashboard_id)
    if dashboard.archived:
        raise Archived()
    tabs, cards = layout_lists(body.tabs, body.cards)
    dashcards.sync(session, user, dashboard.id, tabs, cards)
    revisions.record(session, user, dashboard)
    session.commit()
    events.emit("dashboard-update", user.id, dashboard)
    layout = dashcards.load_layout(session, dashboard.id)
    return {"cards": dashcards_json(session, Access(session, user), layout), "tabs": [tab_json(t) for t in layout.tabs]}


def delete_dashboard(session: Session, user: User, dashboard_id: int) -> None:
    """A hard delete (archiving is PUT archived=true); its tabs, dashcards and series go with it."""
    dashboard = writable_dashboard(session, user, dashboard_id)
    ids = select(DashboardCard.id).where(DashboardCard.dashboard_id == dashboard.id)
    session.execute(delete(DashboardCardSeries).where(DashboardCardSeries.dashboardcard_id.in_(ids)))
    session.execute(delete(DashboardCard).where(DashboardCard.dashboard_id == dashboard.id))
    session.execute(delete(DashboardTab).where(DashboardTab.dashboard_id == dashboard.id))
    session.execute(delete(DashboardBookmark).where(DashboardBookmark.dashboard_id == dashboard.id))
    session.delete(dashboard)
    session.commit()
    events.emit("dashboard-delete", user.id, dashboard)


# --------------------------------------------------------------------------------------------------
# Related entities, and what core.content.related asks through hooks
# --------------------------------------------------------------------------------------------------


def related(session: Session, user: User, dashboard_id: int) -> dict:
    """Metabase's related for a dashboard: questions similar to its cards that are not on it."""
    dashboard = readable_dashboard(session, user, dashboard_id)
    card_ids = list(dict.fromkeys(session.scalars(
        select(DashboardCard.card_id).where(DashboardCard.dashboard_id == dashboard.id,
                                            DashboardCard.card_id.is_not(None)).order_by(DashboardCard.id))))
    return core_related.for_dashboard(session, user, card_ids)


def dashboard_cards(session: Session, card_ids, dashboard_ids) -> list[tuple[int, int]]:
    query = select(DashboardCard.dashboard_id, DashboardCard.card_id).where(DashboardCard.card_id.is_not(None))
    if card_ids is not None:
        query = query.where(DashboardCard.card_id.in_(list(card_ids)))
    if dashboard_ids is not None:
        query = query.where(DashboardCard.dashboard_id.in_(list(dashboard_ids)))
    return [tuple(row) for row in session.execute(query.order_by(DashboardCard.dashboard_id, DashboardCard.id))]


def visible_dashboards(session: Session, user: User, dashboard_ids) -> list[dict]:
    ids = list(dashboard_ids)
    rows = {d.id: d for d in session.scalars(select(Dashboard).where(Dashboard.id.in_(ids)))} if ids else {}
    access = Access(session, user)
    return [base_json(rows[i]) for i in ids
            if i in rows and not rows[i].archived and access.can_read(rows[i].collection_id)]
