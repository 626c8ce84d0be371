"""Dashboards as collection content: the ContentKind this plugin contributes (register_content_kinds),
through which the collections, search, bookmarks and cards plugins show dashboards without importing
this plugin.

A dashboard is read and written exactly as its collection (root when `collection_id` is null), so every
listing here keeps only dashboards in collections the caller may read. A dashboard archived with its
collection has `archived_directly` false and comes back with it; one archived on its own stays archived.
"""
from __future__ import annotations

import functools

from sqlalchemy import bindparam, func, select, union, update
from sqlalchemy.orm import Session

from core import ContentKind, ItemRef
from core.content.collections import children_location
from core.content.items import Context, Key, edit_key, pinned_clause, with_last_edit
from core.content.search import (
    SearchContext,
    matched,
    nothing_matches,
    place,
    result,
    text_clause,
    text_shape,
    with_place,
)

from .models import Dashboard, DashboardBookmark, DashboardCard, DashboardCardSeries

REVISION_MODEL = "Dashboard"


@functools.cache
def _keys(root: bool, pinned_state: str | None):
    """Dashboards' sort keys in one collection (or the root), built once per shape."""
    query = with_last_edit(select(Dashboard.id, Dashboard.name), REVISION_MODEL, Dashboard.id).where(
        Dashboard.archived == bindparam("archived"),
        Dashboard.collection_id.is_(None) if root else Dashboard.collection_id == bindparam("collection_id"))
    pinned = pinned_clause(Dashboard.collection_position, pinned_state)
    return query if pinned is None else query.where(pinned)


_ROWS = select(Dashboard.id, Dashboard.name, Dashboard.description, Dashboard.entity_id,
               Dashboard.collection_position, Dashboard.last_viewed_at, Dashboard.archived,
               Dashboard.archived_directly).where(Dashboard.id.in_(bindparam("ids", expanding=True)))
_HOLDS = {
    False: select(Dashboard.collection_id).distinct().where(
        Dashboard.archived.is_(False), Dashboard.collection_id.in_(bindparam("ids", expanding=True))),
    True: select(Dashboard.collection_id).distinct().where(
        Dashboard.archived.is_(False), Dashboard.collection_id.is_not(None)),
}


class DashboardSource:
    """Dashboards in /api/collection/:id/items, in the tree's here/below, and in the archive cascade."""

    models = ("dashboard",)
    namespaces = (None,)
    last_use = (Dashboard, "last_viewed_at")

    def keys(self, ctx: Context, model: str) -> list[Key]:
        rows = ctx.session.execute(_keys(ctx.collection is None, ctx.options.pinned_state),
                                   {"archived": ctx.options.archived, "collection_id": ctx.collection_id})
        return [edit_key("dashboard", did, name, *edit) for did, name, *edit in rows]

    def hydrate(self, ctx: Context, keys: list[Key]) -> dict[tuple[str, int], dict]:
        edits = {k.id: k.last_edit for k in keys}
        rows = ctx.session.execute(_ROWS, {"ids": list(edits)})
        can_write = ctx.access.can_write(ctx.collection_id)
        location = children_location(ctx.collection)
        out = {}
        for d in rows:
            item = {
                "id": d.id, "name": d.name, "description": d.description, "entity_id": d.entity_id,
                "collection_position": d.collection_position, "collection_id": ctx.collection_id,
                "last_used_at": d.last_viewed_at, "archived": d.archived, "archived_directly": d.archived_directly,
                "model": "dashboard", "location": location, "moderated_status": None, "can_write": can_write,
                "can_restore": bool(d.archived and d.archived_directly and can_write and not ctx.parent_archived),
                "can_delete": bool(d.archived and can_write),
            }
            if edits.get(d.id) is not None:
                item["last-edit-info"] = edits[d.id]
            out[("dashboard", d.id)] = item
        return out

    def holds(self, session: Session, collection_ids: list[int] | None):
        ids = session.scalars(_HOLDS[collection_ids is None], {"ids": list(collection_ids or ())})
        return [(collection_id, "dashboard") for collection_id in ids]

    def archive(self, session: Session, collection_ids: list[int], archived: bool) -> None:
        session.execute(update(Dashboard).where(Dashboard.collection_id.in_(collection_ids),
                                                Dashboard.archived_directly.is_not(True))
                        .values(archived=archived), execution_options={"synchronize_session": False})


_CARD_COUNT = (select(func.count()).where(DashboardCard.dashboard_id == Dashboard.id)
               .correlate(Dashboard).scalar_subquery())


@functools.cache
def _search_statement(text: str | None, by_creator: bool, by_ids: bool):
    """Dashboards with everything a search result shows, built once per filter shape."""
    query = with_place(select(Dashboard.id, Dashboard.name, Dashboard.description, Dashboard.archived,
                              Dashboard.collection_id, Dashboard.collection_position, Dashboard.creator_id,
                              Dashboard.created_at, Dashboard.updated_at, Dashboard.view_count,
                              Dashboard.last_viewed_at, _CARD_COUNT),
                       REVISION_MODEL, Dashboard.id, Dashboard.collection_id, Dashboard.creator_id)
    query = query.where(Dashboard.archived == bindparam("archived"))
    if text == "index":
        query = query.where(Dashboard.id.in_(bindparam("matched", expanding=True)))
    if by_creator:
        query = query.where(Dashboard.creator_id.in_(bindparam("creators", expanding=True)))
    if by_ids:
        query = query.where(Dashboard.id.in_(bindparam("ids", expanding=True)))
    return query


def search(ctx: SearchContext) -> list[dict]:
    """Readable dashboards matching the search, with Metabase's dashboard keys (dashboardcard_count,
    view_count, last_viewed_at); dashboards have no database, so a table_db_id filter excludes them."""
    f = ctx.filters
    if f.table_db_id is not None or nothing_matches(ctx, "dashboard"):
        return []
    shape = text_shape(ctx)
    statement = _search_statement(shape, bool(f.created_by), bool(f.ids))
    if shape == "columns":
        statement = statement.where(text_clause(ctx, "dashboard", Dashboard.id, Dashboard.name,
                                                Dashboard.description))
    params = {"archived": f.archived, "matched": matched(ctx, "dashboard"), "creators": list(f.created_by),
              "ids": list(f.ids)}
    out = []
    for row in ctx.session.execute(statement, params):
        (dashboard_id, name, description, archived, collection_id, collection_position, creator_id, created_at,
         updated_at, view_count, last_viewed_at, card_count) = row[:12]
        shown = place(ctx, collection_id, row[12:])
        if shown is None:
            continue
        out.append(result(
            "dashboard", dashboard_id, name, description=description, archived=archived,
            collection_position=collection_position, creator_id=creator_id, created_at=created_at,
            updated_at=updated_at, dashboardcard_count=card_count, view_count=view_count,
            last_viewed_at=last_viewed_at, **shown, _texts=[name, description],
            _pinned=collection_position is not None, _updated=updated_at))
    return out


def lookup(session: Session, ids: list[int]) -> dict[int, ItemRef]:
    rows = session.execute(select(Dashboard.id, Dashboard.name, Dashboard.collection_id, Dashboard.archived,
                                  Dashboard.description).where(Dashboard.id.in_(ids)))
    return {row.id: ItemRef(row.id, row.name, row.collection_id, row.archived, row.description) for row in rows}


_CARD_COUNTS = (select(DashboardCard.card_id, func.count())
                .where(DashboardCard.card_id.in_(bindparam("ids", expanding=True))).group_by(DashboardCard.card_id))


def card_counts(session: Session, card_ids: list[int]) -> dict[int, int]:
    """Dashcards showing each card (Metabase's dashboard_count counts placements, series not included)."""
    return dict(session.execute(_CARD_COUNTS, {"ids": list(card_ids)}).all())


def card_holders(session: Session, card_id: int) -> list[int]:
    """Dashboards showing the card on a dashcard or as one of a dashcard's series."""
    direct = select(DashboardCard.dashboard_id).where(DashboardCard.card_id == card_id)
    series = (select(DashboardCard.dashboard_id)
              .join(DashboardCardSeries, DashboardCardSeries.dashboardcard_id == DashboardCard.id)
              .where(DashboardCardSeries.card_id == card_id))
    return sorted(session.scalars(union(direct, series)))


_MOST_VIEWED = (select(Dashboard.id, Dashboard.view_count, Dashboard.last_viewed_at)
                .where(Dashboard.archived.is_(False), Dashboard.view_count > 0)
                .order_by(Dashboard.view_count.desc(), Dashboard.id).limit(bindparam("limit")))


def most_viewed(session: Session, limit: int) -> list[tuple]:
    """(id, view_count, last_viewed_at) of the most viewed dashboards not in the trash."""
    return [tuple(row) for row in session.execute(_MOST_VIEWED, {"limit": limit})]


KIND = ContentKind(model="dashboard", items=DashboardSource(), search=search,
                   bookmark=(DashboardBookmark, DashboardBookmark.dashboard_id), lookup=lookup,
                   card_counts=card_counts, card_holders=card_holders, most_viewed=most_viewed)
