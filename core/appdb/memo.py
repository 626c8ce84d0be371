"""Answers computed from the app DB alone, kept per process while the app DB's generation stays the same.

A repeated read of an unchanged app DB (the session token's user, a card's or a dashboard's JSON)
need not run its SQL again: `get_or_compute(session, key, compute)` returns what `compute()` returned for the
same key under the request's generation (core.appdb.generation), and computes otherwise. Any commit,
by any worker or instance, changes the generation, so a logout, a deactivation, a permission change or
an edit is seen by the next request. It serves pure reads only: once the request's session has written
(flushed, or executed anything but a SELECT) it neither answers nor stores, since the generation does
not know that request's uncommitted writes. Callers key by everything besides the app DB that decides
the answer (user, arguments) and treat what they get as read-only: it is shared between threads.
Large values (stored result bodies) declare their weight, which the memo's byte budget bounds.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

from sqlalchemy import event
from sqlalchemy.orm import Session

WROTE = "tessera.wrote"
GENERATION = "tessera.generation"  # in the WSGI environ: once per request, whatever the app context
MEMO_INFO = "tessera.memo"  # in a request session's info: (the app's Memo, the request's generation)
MISSING = object()
DEFAULT_SIZE = 4096
DEFAULT_BUDGET = 64 * 1024 * 1024
FLIGHT_WAIT_SECONDS = 10  # a waiting request computes itself after this (a leader stuck on a lock)


class Memo:
    """A bounded, thread-safe LRU of key -> (generation, value, weight): at most `size` entries and
    `budget` bytes of the weights callers declare (stored result bodies), the least recent dropped."""

    def __init__(self, size: int = DEFAULT_SIZE, budget: int = DEFAULT_BUDGET):
        self.size = size
        self.budget = budget
        self._entries: OrderedDict = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()
        self._flights: dict = {}  # (generation, key) -> (event set when computed, leader's thread id)

    def get(self, generation, key) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != generation:
                return MISSING
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, generation, key, value, weight: int = 0) -> None:
        if weight > self.budget:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._weight -= old[2]
            self._entries[key] = (generation, value, weight)
            self._weight += weight
            while len(self._entries) > self.size or self._weight > self.budget:
                self._weight -= self._entries.popitem(last=False)[1][2]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weight = 0

    def join(self, generation, key) -> tuple[threading.Event, bool]:
        """The flight computing `key` under `generation`, and whether this thread leads it (computes)
        rather than waits for it. After a commit, every request in flight misses at once: one
        computes each answer while the others wait for it instead of computing it too (under a
        busy worker's GIL, a stampede of the same computation never settled)."""
        with self._lock:
            flight = self._flights.get((generation, key))
            if flight is not None and flight[1] != threading.get_ident():
                return flight[0], False
            if flight is not None:  # the leader asks again while computing: it computes alone
                return threading.Event(), True
            event = threading.Event()
            self._flights[(generation, key)] = (event, threading.get_ident())
            return event, True

    def land(self, generation, key, event: threading.Event) -> None:
        with self._lock:
            if self._flights.get((generation, key), (None,))[0] is event:
                del self._flights[(generation, key)]
        event.set()


@event.listens_for(Session, "after_flush")
def _flushed(session: Session, _context) -> None:
    session.info[WROTE] = True


@event.listens_for(Session, "do_orm_execute")
def _executed(state) -> None:
    if not state.is_select:
        state.session.info[WROTE] = True


def wrote(session: Session) -> bool:
    """Whether the session has written or holds changes not flushed yet."""
    if session.info.get(WROTE):
        return True
    try:
        # The session's own records (Session.new, .dirty and .deleted build sets on every call, and
        # .dirty checks each modified object's history): anything added, deleted or modified.
        return bool(session._new or session._deleted or session.identity_map._modified)
    except AttributeError:  # another SQLAlchemy's internals: the public (slower) questions
        return bool(session.new or session.dirty or session.deleted)


def usable(db_session: Session) -> bool:
    """Whether get_or_compute can answer or store for this session now (a caller whose compute costs
    more when it is to be stored checks first)."""
    held = db_session.info.get(MEMO_INFO)
    return held is not None and held[1] is not None and not wrote(db_session)


def get_or_compute(db_session: Session, key, compute: Callable[[], Any],
                   weigh: Callable[[Any], int] | None = None, keep: Callable[[Any], bool] | None = None) -> Any:
    """`compute()`, or what it returned for `key` in an earlier request under the same generation.
    Only on a request's own session (core.appdb.db.session puts the memo and the generation it read
    for the request, before its first query, in the session's info); on any other session (a CLI, a
    background job, a test's app context) it computes.
    `keep(value)` false: the value is returned but not stored (it depends on more than the app DB)."""
    held = db_session.info.get(MEMO_INFO)
    if held is None or held[1] is None or wrote(db_session):
        return compute()
    memo, generation = held
    value = memo.get(generation, key)
    if value is not MISSING:
        return value
    flight, leader = memo.join(generation, key)
    if not leader:
        flight.wait(FLIGHT_WAIT_SECONDS)
        value = memo.get(generation, key)
        if value is not MISSING:
            return value
        return _compute(db_session, memo, generation, key, compute, weigh, keep)  # the leader kept nothing
    try:
        return _compute(db_session, memo, generation, key, compute, weigh, keep)
    finally:
        memo.land(generation, key, flight)


def _compute(db_session: Session, memo: Memo, generation, key, compute, weigh, keep) -> Any:
    value = compute()
    if not wrote(db_session) and (keep is None or keep(value)):
        memo.put(generation, key, value, weigh(value) if weigh is not None else 0)
    return value
