"""Reads that count a view (GET /api/card/:id, GET /api/dashboard/:id): the view is a write-behind
bump (core.appdb.counters: a read commits nothing), this process's views not written yet are laid over
the stored JSON, and the answer may be kept (core.http.kept) with the view counted again for every
kept copy served."""
from __future__ import annotations

import functools
import math

from sqlalchemy.orm import Session

from core.appdb import counters
from core.appdb.models import utcnow
from core.http import kept
from core.http.api import dumps


@kept.replayable
def count_view(views: counters.WriteBehind, table, key: int, latest_column: str) -> None:
    views.bump(table, key, add={"view_count": 1}, latest={latest_column: utcnow()})


def with_pending_views(stored: dict, views: counters.WriteBehind, table, key: int, latest_column: str) -> dict:
    counted, latest = views.pending(table, key)
    if not counted:  # written meanwhile: the next generation shows them
        return stored
    return {**stored, "view_count": (stored["view_count"] or 0) + counted["view_count"],
            latest_column: latest[latest_column]}


def viewed_json(session: Session, stored: dict, table, key: int, latest_column: str, count: bool = True) -> dict:
    """`stored` (the object's JSON as the app DB has it, read on `session`) with its views: this one
    counted unless `count` is false; kept while the app DB is unchanged."""
    views = counters.buffer()
    if count:
        count_view(views, table, key, latest_column)
    answer = functools.partial(with_pending_views, stored, views, table, key, latest_column)
    kept.allow(session, math.inf, lambda: dumps(answer()))
    return answer()
