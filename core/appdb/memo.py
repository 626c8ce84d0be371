"""Answers computed from the app DB alone, kept per process while the tables they read are unchanged.

A repeated read of an unchanged app DB (the session token's user, a card's or a dashboard's JSON)
need not run its SQL again: `get_or_compute(session, key, compute)` returns what `compute()` returned for the
same key while the change counters (core.appdb.changes) of every table its request had read when it
was computed are what they were, and computes otherwise. A commit, by any worker or instance, moves
the counters of the tables it wrote, so a logout, a deactivation, a permission change or an edit is
seen by the next request, while a commit of other tables (the write-behind's view counts, the query
log) leaves the answer alone.

What an answer depends on is found, not declared: every statement the request has run on this thread
so far (core.appdb.changes.reading: the tables its SQL names), the tables of every memo answer it was
given, and `depends` (counters read by no statement of the request: `report_card#counts`). Counting
from the start of the request rather than from the start of `compute` keeps it sound when compute
uses objects read earlier (the user, a card in the session's identity map) without SQL.

It serves pure reads only: once the request's session has written (flushed, or executed anything but
a SELECT) it neither answers nor stores, since the counters do not know that request's uncommitted
writes. Callers key by everything besides the app DB that decides the answer (user, arguments) and
treat what they get as read-only: it is shared between threads. Large values (stored result bodies)
declare their weight, which the memo's byte budget bounds.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Iterable

from sqlalchemy import event
from sqlalchemy.orm import Session

from .changes import CATCH_ALL, reading

WROTE = "tessera.wrote"
CHANGES = "tessera.changes"  # in the WSGI environ: the counters, read once per request, whatever the app context
MEMO_INFO = "tessera.memo"  # in a request session's info: (the app's Memo, the request's counters)
READS = "tessera.reads"  # in a request session's info: the tables (counter names) the request has read
MISSING = object()
DEFAULT_SIZE = 4096
DEFAULT_BUDGET = 64 * 1024 * 1024
FLIGHT_WAIT_SECONDS = 10  # a waiting request computes itself after this (a leader stuck on a lock)


def stamp(counters, names: Iterable[str]) -> tuple:
    """The counters of `names` (and the catch-all's) in `counters`: what an answer is kept under."""
    return tuple((name, counters.get(name, 0)) for name in sorted({CATCH_ALL, *names}))


def current(counters, kept_stamp: tuple) -> bool:
    """Whether every counter of `kept_stamp` still has its value in `counters`."""
    for name, counter in kept_stamp:
        if counters.get(name, 0) != counter:
            return False
    return True


class Memo:
    """A bounded, thread-safe LRU of key -> [stamp, value, weight, names, counters last found current]:
    at most `size` entries and `budget` bytes of the weights callers declare (stored result bodies), the
    least recent dropped. An entry answers while the counters it was stamped with are current; the
    counters it was last found current under are remembered, so that the next request under the same
    Snapshot object (core.appdb.changes reuses it while nothing moved) does not compare again."""

    def __init__(self, size: int = DEFAULT_SIZE, budget: int = DEFAULT_BUDGET):
        self.size = size
        self.budget = budget
        self._entries: OrderedDict = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()
        self._flights: dict = {}  # (counters' total, key) -> (event set when computed, leader's thread id)

    def get(self, counters, key) -> tuple[Any, frozenset] | Any:
        """(value, the counter names it depends on) kept for `key` and current under `counters`, else MISSING.
        Takes no lock to look: a request asks about ten times, and with the lock every thread of a busy
        worker queued behind a holder that had lost the GIL (measured: 9 in 10 of the threads' time, and
        a fifth of the CPU in futex calls). A dict lookup is atomic under the GIL (keys are tuples of
        plain values, hashed and compared in C), an entry replaced meanwhile is a list no one changes but
        its last-current mark, and the recency is noted only when the lock is free at once."""
        entry = self._entries.get(key)
        if entry is None:
            return MISSING
        if entry[4] is not counters:
            if not current(counters, entry[0]):
                return MISSING
            entry[4] = counters
        if self._lock.acquire(blocking=False):
            try:
                if self._entries.get(key) is entry:
                    self._entries.move_to_end(key)
            finally:
                self._lock.release()
        return entry[1], entry[3]

    def put(self, counters, key, value, names: Iterable[str], weight: int = 0) -> None:
        if weight > self.budget:
            return
        kept_stamp = stamp(counters, names)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._weight -= old[2]
            self._entries[key] = [kept_stamp, value, weight, frozenset(name for name, _ in kept_stamp), counters]
            self._weight += weight
            while len(self._entries) > self.size or self._weight > self.budget:
                self._weight -= self._entries.popitem(last=False)[1][2]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weight = 0

    def join(self, counters, key) -> tuple[threading.Event, bool]:
        """The flight computing `key` under `counters`, and whether this thread leads it (computes)
        rather than waits for it. After a commit, every request in flight that read what it wrote
        misses at once: one computes each answer while the others wait for it instead of computing
        it too (under a busy worker's GIL, a stampede of the same computation never settled)."""
        flight_key = (getattr(counters, "total", None), key)
        with self._lock:
            flight = self._flights.get(flight_key)
            if flight is not None and flight[1] != threading.get_ident():
                return flight[0], False
            if flight is not None:  # the leader asks again while computing: it computes alone
                return threading.Event(), True
            event = threading.Event()
            self._flights[flight_key] = (event, threading.get_ident())
            return event, True

    def land(self, counters, key, event: threading.Event) -> None:
        flight_key = (getattr(counters, "total", None), key)
        with self._lock:
            if self._flights.get(flight_key, (None,))[0] is event:
                del self._flights[flight_key]
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


@contextmanager
def fresh_session(db_session: Session):
    """A session on `db_session`'s connection and transaction with an empty identity map, for a compute
    kept `alone` that loads ORM objects: each object it loads is read with SQL (the request's session
    could hand back one it loaded earlier without any), so its answer depends on every table it used."""
    fresh = Session(bind=db_session.connection(), autoflush=False)
    try:
        yield fresh
    finally:
        fresh.close()


def get_or_compute(db_session: Session, key, compute: Callable[[], Any],
                   weigh: Callable[[Any], int] | None = None, keep: Callable[[Any], bool] | None = None,
                   depends: Iterable[str] = (), alone: bool = False) -> Any:
    """`compute()`, or what it returned for `key` in an earlier request, while the counters of what
    that request had read (and of `depends`) are unchanged.
    Only on a request's own session (core.appdb.db.session puts the memo, the counters it read for the
    request before its first query and the set of tables the request reads in the session's info); on
    any other session (a CLI, a background job, a test's app context) it computes.
    `keep(value)` false: the value is returned but not stored (it depends on more than the app DB).
    `alone`: the answer depends only on the statements `compute` runs (and the answers it is given),
    not on what the request read before: for a compute that uses nothing but its key's plain values
    (ids), never an object loaded earlier (which the session may hand back without SQL)."""
    held = db_session.info.get(MEMO_INFO)
    if held is None or held[1] is None or wrote(db_session):
        return compute()
    memo, counters = held
    reads = reading.get()
    if reads is None:
        reads = db_session.info[READS]
    found = memo.get(counters, key)
    if found is not MISSING:
        reads |= found[1]
        return found[0]
    flight, leader = memo.join(counters, key)
    if not leader:
        flight.wait(FLIGHT_WAIT_SECONDS)
        found = memo.get(counters, key)
        if found is not MISSING:
            reads |= found[1]
            return found[0]
        return _compute(db_session, memo, counters, reads, key, compute, weigh, keep, depends, alone)  # the leader kept nothing
    try:
        return _compute(db_session, memo, counters, reads, key, compute, weigh, keep, depends, alone)
    finally:
        memo.land(counters, key, flight)


def _compute(db_session: Session, memo: Memo, counters, reads: set, key, compute, weigh, keep, depends,
             alone: bool) -> Any:
    if alone:
        own = set(depends)
        token = reading.set(own)
        try:
            value = compute()
        finally:
            reading.reset(token)
        reads.update(own)  # the request read them all the same (its later memo answers depend on them)
    else:
        reads.update(depends)
        value = compute()
        own = reads
    if not wrote(db_session) and (keep is None or keep(value)):
        memo.put(counters, key, value, own, weigh(value) if weigh is not None else 0)
    return value
