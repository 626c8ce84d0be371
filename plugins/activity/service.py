"""Recent and popular items in Metabase's RecentItem shape (id, name, model, description, timestamp,
can_write, parent_collection, and for cards database_id, display and moderated_status).

Recent: the caller's runs in the query log of a saved card as a question (context "question") and of a
dashboard's cards (context "dashboard", counted as the dashboard), the newest run of each item first.
They are read by a loose index scan (query_execution's recent-items indexes): one seek finds the next
item, one its newest run, so the read costs a few seeks per distinct item the caller ran, however many
runs they logged.
Popular: the stored view counts of cards and dashboards, most viewed first. Both drop items in the
trash and items whose collection the caller may not read (core.policy.permissions), as search does, and
read more candidates than they show so that what is dropped does not leave the list short.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Collection, QueryExecution, User
from core.content import kinds
from core.policy import permissions

RECENT_SHOWN = 20
POPULAR_SHOWN = 5
CANDIDATES = 50
CARD_MODELS = {"question": "card", "model": "dataset", "metric": "metric"}

def _newest_runs(item, *kind):
    """The caller's CANDIDATES items of one kind (`item` the column naming them, `kind` the conditions
    on their runs) with the newest runs, each with its newest run's start, newest first."""
    mine = (QueryExecution.executor_id == bindparam("user_id"), *kind)
    # Each next item id from the last one (a min above it) rather than a GROUP BY over every run.
    items = select(func.min(item).label("item_id")).where(*mine).cte("items", recursive=True)
    items = items.union_all(select(select(func.min(item)).where(*mine, item > items.c.item_id).scalar_subquery())
                            .where(items.c.item_id.is_not(None)))
    run_at = (select(func.max(QueryExecution.started_at)).where(*mine, item == items.c.item_id)
              .scalar_subquery().label("run_at"))
    # A tie at the last place is settled as recent_views orders the candidates, not left to the engine.
    return (select(items.c.item_id, run_at).where(items.c.item_id.is_not(None))
            .order_by(run_at.desc(), items.c.item_id.desc()).limit(CANDIDATES))


_RECENT_CARDS = _newest_runs(QueryExecution.card_id, QueryExecution.context == "question",
                             QueryExecution.dashboard_id.is_(None))
_RECENT_DASHBOARDS = _newest_runs(QueryExecution.dashboard_id, QueryExecution.context == "dashboard")
_MOST_VIEWED_CARDS = (select(Card.id, Card.view_count, Card.last_used_at)
                      .where(Card.archived.is_(False), Card.view_count > 0)
                      .order_by(Card.view_count.desc(), Card.id).limit(CANDIDATES))


def recent_views(session: Session, user: User) -> list[dict]:
    params = {"user_id": user.id}
    candidates = [("card", card_id, at) for card_id, at in session.execute(_RECENT_CARDS, params)]
    candidates += [("dashboard", dashboard_id, at) for dashboard_id, at in session.execute(_RECENT_DASHBOARDS, params)]
    candidates.sort(key=lambda c: (_aware(c[2]), c[1]), reverse=True)
    return _shown(session, user, [(kind, item_id, at) for kind, item_id, at in candidates])[:RECENT_SHOWN]


def popular_items(session: Session, user: User) -> list[dict]:
    candidates = [(count, "card", card_id, at) for card_id, count, at in session.execute(_MOST_VIEWED_CARDS)]
    dashboards = kinds.kind("dashboard")
    if dashboards is not None and dashboards.most_viewed is not None:
        candidates += [(count, "dashboard", item_id, at) for item_id, count, at in dashboards.most_viewed(session, CANDIDATES)]
    candidates.sort(key=lambda c: (c[0], c[1] == "dashboard", -c[2]), reverse=True)
    return _shown(session, user, [(kind, item_id, at) for _, kind, item_id, at in candidates])[:POPULAR_SHOWN]


def _aware(moment: dt.datetime | None) -> dt.datetime:
    if moment is None:
        return dt.datetime.min.replace(tzinfo=dt.timezone.utc)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


# The columns a RecentItem shows of a card: not the whole row, whose JSON columns (query, settings,
# result metadata) cost more to decode than the rest of the answer.
_CARDS_SHOWN = select(Card.id, Card.name, Card.description, Card.archived, Card.collection_id, Card.type,
                      Card.display, Card.database_id).where(Card.id.in_(bindparam("ids", expanding=True)))


def _shown(session: Session, user: User, candidates: list[tuple[str, int, object]]) -> list[dict]:
    """The candidates that exist, are not in the trash and that `user` may read, in their order, as
    RecentItems."""
    card_ids = [item_id for kind, item_id, _ in candidates if kind == "card"]
    cards = {card.id: card for card in session.execute(_CARDS_SHOWN, {"ids": card_ids})} if card_ids else {}
    dashboards = kinds.lookup(session, "dashboard", [item_id for kind, item_id, _ in candidates if kind == "dashboard"])
    places = _collections(session, {c.collection_id for c in cards.values()} | {d.collection_id for d in dashboards.values()})
    readable: dict[int | None, bool] = {}
    out = []
    for kind, item_id, at in candidates:
        item = cards.get(item_id) if kind == "card" else dashboards.get(item_id)
        if item is None or item.archived:
            continue
        place = item.collection_id
        if place not in readable:
            readable[place] = permissions.can_read_item(session, user, place)
        if not readable[place]:
            continue
        shown = {"id": item.id, "name": item.name, "model": kind, "description": item.description,
                 "timestamp": at, "can_write": permissions.can_write_item(session, user, place),
                 "parent_collection": places.get(place) or {"id": None, "name": "Our analytics",
                                                            "authority_level": None}}
        if kind == "card":
            shown.update(model=CARD_MODELS.get(item.type, "card"), display=item.display, database_id=item.database_id,
                         moderated_status=None)
        out.append(shown)
    return out


def _collections(session: Session, ids: set) -> dict[int, dict]:
    ids = {i for i in ids if i is not None}
    if not ids:
        return {}
    rows = session.execute(select(Collection.id, Collection.name, Collection.authority_level)
                           .where(Collection.id.in_(ids)))
    return {row.id: {"id": row.id, "name": row.name, "authority_level": row.authority_level} for row in rows}
