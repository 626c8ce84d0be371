"""Reads that count a view (GET /api/card/:id, GET /api/dashboard/:id): the view is a write-behind
bump (core.appdb.counters: a read commits nothing), and the stored counts and this process's views
not written yet are laid over the kept JSON.

The counts come from a read of their own: the write-behind's flush moves `<table>#counts`
(core.appdb.changes), not the table's counter, so the object's kept JSON outlives a flush of views
while the counts, kept under that counter, are read again after it."""
from __future__ import annotations

from typing import Iterable

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from core.appdb import counters, memo
from core.appdb.changes import counts_of
from core.appdb.models import utcnow

_COUNTS: dict[tuple, object] = {}  # (table name, latest column) -> the statement reading the counts of some ids


def _counts_statement(table, latest_column: str):
    table = getattr(table, "__table__", table)
    statement = _COUNTS.get((table.name, latest_column))
    if statement is None:
        key = next(iter(table.primary_key.columns))
        statement = _COUNTS[(table.name, latest_column)] = select(
            key, table.c.view_count, table.c[latest_column]).where(key.in_(bindparam("ids", expanding=True)))
    return statement


def stored_counts(session: Session, table, ids: Iterable[int], latest_column: str) -> dict[int, tuple]:
    """id -> (view_count, latest use) as the app DB has them, kept while no view count was written."""
    ids = tuple(sorted(set(ids)))
    if not ids:
        return {}
    table = getattr(table, "__table__", table)
    return memo.get_or_compute(
        session, ("stored counts", table.name, latest_column, ids),
        lambda: {row[0]: (row[1], row[2]) for row in session.execute(_counts_statement(table, latest_column),
                                                                     {"ids": list(ids)})},
        depends=(counts_of(table.name),), alone=True)


def count_view(views: counters.WriteBehind, table, key: int, latest_column: str) -> None:
    views.bump(table, key, add={"view_count": 1}, latest={latest_column: utcnow()})


def with_pending_views(stored: dict, views: counters.WriteBehind, table, key: int, latest_column: str) -> dict:
    counted, latest = views.pending(table, key)
    if not counted:  # written meanwhile: the next read of the counts shows them
        return stored
    return {**stored, "view_count": (stored["view_count"] or 0) + counted["view_count"],
            latest_column: latest[latest_column]}


def viewed_json(session: Session, stored: dict, table, key: int, latest_column: str, count: bool = True) -> dict:
    """`stored` (the object's JSON as the app DB has it, read on `session`, its counts perhaps older) with
    its stored counts and its views: this one counted unless `count` is false; kept while the tables
    read are unchanged."""
    views = counters.buffer()
    if count:
        count_view(views, table, key, latest_column)
    found = stored_counts(session, table, (key,), latest_column).get(key)
    if found is not None:
        stored = {**stored, "view_count": found[0], latest_column: found[1]}
    return with_pending_views(stored, views, table, key, latest_column)
