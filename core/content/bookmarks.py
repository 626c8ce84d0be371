"""Which items a user has bookmarked: the questions every listing asks (f=bookmarked cards, the
`bookmark` flag of search results) and the rows of the user's bookmark list.

Bookmarks are never deleted when their item is archived or becomes unreadable: Metabase keeps the
row and hides it at read time, so unarchiving (or getting access back) shows it again. Readers here
return every stored bookmark; callers filter by archived state and read permission.
"""
from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import BookmarkOrdering, CardBookmark, CollectionBookmark, User

from . import kinds

# The kinds Metabase's bookmark API accepts; a dashboard has a table only while the dashboards plugin
# is enabled (its ContentKind.bookmark).
TYPES = ("card", "dashboard", "collection")
TABLES = {
    "card": (CardBookmark, CardBookmark.card_id),
    "collection": (CollectionBookmark, CollectionBookmark.collection_id),
}


def tables() -> dict[str, tuple]:
    """kind -> (ORM model, item-id column): the built-in tables, then the contributed kinds' ones."""
    return {**TABLES, **{k: v for k, v in kinds.bookmark_tables().items() if k in TYPES}}


@dataclass(frozen=True)
class Bookmark:
    type: str
    item_id: int
    created_at: dt.datetime
    ordering: int | None


def bookmarked_ids(session: Session, user: User, kind: str, candidates=None) -> set[int]:
    """Ids of `kind` items ("card", "collection", "dashboard") the user has bookmarked, optionally
    only among `candidates`."""
    table = tables().get(kind)
    if table is None:
        return set()
    model, column = table
    query = select(column).where(model.user_id == user.id)
    if candidates is not None:
        candidates = list(candidates)
        if not candidates:
            return set()
        query = query.where(column.in_(candidates))
    return set(session.scalars(query))


def kept_bookmarked_ids(session: Session, user: User, kind: str) -> frozenset[int]:
    """bookmarked_ids of every `kind` item, kept between requests while the bookmarks are unchanged
    (core.appdb.memo; its statement uses the user's id only)."""
    user_id = user.id

    def read() -> frozenset[int]:
        table = tables().get(kind)
        return frozenset(session.scalars(_by_user(*table), {"user_id": user_id})) if table else frozenset()

    return memo.get_or_compute(session, ("bookmarks", user_id, kind), read, alone=True)


@functools.cache
def _by_user(model, column):
    return select(column).where(model.user_id == bindparam("user_id"))


def bookmarks(session: Session, user: User) -> list[Bookmark]:
    """Every bookmark of the user in their order: ordered ones first by position, then the newest. Kept
    while the bookmark tables are unchanged (the app's navigation asks on every page; its statements
    use the user's id only)."""
    user_id = user.id

    def read() -> tuple[Bookmark, ...]:
        positions = {(t, i): o for t, i, o in session.execute(
            select(BookmarkOrdering.type, BookmarkOrdering.item_id, BookmarkOrdering.ordering)
            .where(BookmarkOrdering.user_id == user_id))}
        out = []
        for kind, (model, column) in tables().items():
            for item_id, created_at in session.execute(select(column, model.created_at).where(model.user_id == user_id)):
                out.append(Bookmark(kind, item_id, created_at, positions.get((kind, item_id))))
        newest_first = sorted(out, key=lambda b: b.created_at, reverse=True)
        return tuple(sorted(newest_first, key=lambda b: (b.ordering is None, b.ordering or 0)))

    return list(memo.get_or_compute(session, ("bookmark list", user_id), read, alone=True))
