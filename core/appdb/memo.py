"""Answers computed from the app DB alone, kept per process while the app DB's generation stays the same.

A repeated read of an unchanged app DB (the session token's user, a card's or a dashboard's JSON)
need not run its SQL again: `get_or_compute(key, compute)` returns what `compute()` returned for the
same key under the request's generation (core.appdb.generation), and computes otherwise. Any commit,
by any worker or instance, changes the generation, so a logout, a deactivation, a permission change or
an edit is seen by the next request. It serves pure reads only: once the request's session has written
(flushed, or executed anything but a SELECT) it neither answers nor stores, since the generation does
not know that request's uncommitted writes. Callers key by everything besides the app DB that decides
the answer (user, arguments) and treat what they get as read-only: it is shared between threads.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

from flask import g
from sqlalchemy import event
from sqlalchemy.orm import Session

WROTE = "tessera.wrote"
MISSING = object()
DEFAULT_SIZE = 4096


class Memo:
    """A bounded, thread-safe LRU of key -> (generation, value)."""

    def __init__(self, size: int = DEFAULT_SIZE):
        self.size = size
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, generation, key) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != generation:
                return MISSING
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, generation, key, value) -> None:
        with self._lock:
            self._entries[key] = (generation, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


@event.listens_for(Session, "after_flush")
def _flushed(session: Session, _context) -> None:
    session.info[WROTE] = True


@event.listens_for(Session, "do_orm_execute")
def _executed(state) -> None:
    if not state.is_select:
        state.session.info[WROTE] = True


def wrote(session: Session) -> bool:
    """Whether the session has written or holds changes not flushed yet."""
    return bool(session.info.get(WROTE) or session.new or session.dirty or session.deleted)


def get_or_compute(key, compute: Callable[[], Any]) -> Any:
    """`compute()`, or what it returned for `key` in an earlier request under the same generation."""
    from .db import app_db, session

    db_session = session()  # opening the request's session reads the generation
    generation = g.get("tessera_generation")
    if generation is None or wrote(db_session):
        return compute()
    memo = app_db().memo
    value = memo.get(generation, key)
    if value is MISSING:
        value = compute()
        if not wrote(db_session):
            memo.put(generation, key, value)
    return value
