"""Reads that count a view (GET /api/card/:id, GET /api/dashboard/:id): the view is a write-behind
bump (core.appdb.counters: a read commits nothing), and the stored counts and this process's views
not written yet are laid over the kept JSON.

The counts come from a read of their own: the write-behind's flush moves `<table>#counts`
(core.appdb.changes), not the table's counter, so the object's kept JSON outlives a flush of views
while the counts, kept under that counter, are read again after it."""
from __future__ import annotations

from typing import Iterable

from sqlalchemy import and_, bindparam, or_, select
from sqlalchemy.orm import Session

from core.appdb import counters, memo
from core.appdb.changes import counts_of
from core.appdb.models import utcnow

_COUNTS: dict[tuple, object] = {}  # (table name, latest column, blocks) -> the statement reading their counts

# The ids whose counts one memo answer keeps. The write-behind's flush moves `<table>#counts` about
# once a second, after which every count kept is read again: kept per block of ids rather than per
# object, a flush costs one statement per block read again, not one per card or dashboard viewed.
BLOCK = 64


def _counts_statement(table, latest_column: str, blocks: int):
    """The counts of the rows whose ids fall in `blocks` ranges [low_i, high_i)."""
    statement = _COUNTS.get((table.name, latest_column, blocks))
    if statement is None:
        key = next(iter(table.primary_key.columns))
        statement = _COUNTS[(table.name, latest_column, blocks)] = select(
            key, table.c.view_count, table.c[latest_column]).where(or_(*(
                and_(key >= bindparam(f"low_{n}"), key < bindparam(f"high_{n}")) for n in range(blocks))))
    return statement


def _read_blocks(session: Session, table, latest_column: str, blocks: list[int]) -> dict[int, dict]:
    """block -> {id: (view_count, latest use)} of every row whose id falls in one of the blocks."""
    ranges = {}
    for n, block in enumerate(blocks):
        ranges[f"low_{n}"], ranges[f"high_{n}"] = block * BLOCK, (block + 1) * BLOCK
    found: dict[int, dict] = {block: {} for block in blocks}
    for key, count, latest in session.execute(_counts_statement(table, latest_column, len(blocks)), ranges):
        found[key // BLOCK][key] = (count, latest)
    return found


def stored_counts(session: Session, table, ids: Iterable[int], latest_column: str) -> dict[int, tuple]:
    """id -> (view_count, latest use) as the app DB has them, kept per block of ids while no view
    count was written. A block not kept has every block this call asks read with it, in one statement."""
    table = getattr(table, "__table__", table)
    wanted: dict[int, list[int]] = {}
    for key in ids:
        wanted.setdefault(key // BLOCK, []).append(key)
    read: dict[int, dict] = {}

    def compute(block: int) -> dict[int, tuple]:
        if not read:
            read.update(_read_blocks(session, table, latest_column, list(wanted)))
        return read[block]

    found: dict[int, tuple] = {}
    for block, keys in wanted.items():
        # Shared between requests, never modified. The table is declared: a block may come from the
        # statement that another block's compute ran.
        counts = memo.get_or_compute(session, ("stored counts", table.name, latest_column, block),
                                     lambda block=block: compute(block),
                                     depends=(counts_of(table.name), table.name), alone=True)
        for key in keys:
            if key in counts:
                found[key] = counts[key]
    return found


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
