"""Writes that reads cause (view counts, last-used times, the query-execution log, expired login
sessions): buffered in process and written in batches off the request path.

A read must not write to the app DB while it is served: a commit per GET serialises every worker on a
SQLite file and costs the request a transaction. Callers put the write here instead; a background
thread of the app DB (one per process) writes everything pending about once a second in ONE
transaction, aggregated (`view_count = view_count + n` once per row, the latest timestamp), and the
buffer is written when the app DB is disposed, at process exit and at gunicorn's worker_exit
(contrib/gunicorn.conf.py). A crash loses at most the last interval's bookkeeping, never content.

Four kinds of write, each aggregated in its own way:
- `bump(table, id, add={...}, latest={...})`: add to counters and keep the newest value of columns
  such as last_used_at; a counter is no edit, so columns with an onupdate (updated_at) keep their value.
- `insert(table, row)`: rows appended in one executemany per table.
- `delete(table, column, value)`: rows deleted by key, one IN per table and column.
- `fold(handler, item)`: anything else: `handler(conn, items)` receives every pending item of its kind
  in order, inside the same transaction (the query log's running averages).
`pending(table, id)` tells a read of the same process what it has not written yet, so that a GET shows
its own and earlier views at once; `flush()` writes now (tests, shutdown).
"""
from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections import defaultdict, deque
from typing import Any, Callable

from sqlalchemy import Table, bindparam, delete, insert, update
from sqlalchemy.engine import Connection, Engine

from .changes import CHANGES_OPTION, counts_of

log = logging.getLogger("tessera.counters")
INTERVAL_SECONDS = 1.0
IDLE_ROUNDS = 30  # intervals without work before the thread stops (the next write starts one)
_INSERT, _DELETE, _FOLD = "insert", "delete", "fold"  # the queued kinds of write

_live: weakref.WeakSet = weakref.WeakSet()


def _table(table) -> Table:
    return getattr(table, "__table__", table)  # an ORM class or a Core table


def _merge(adds: dict, latests: dict, more_adds, more_latests) -> None:
    """Counter increments added up, the newest of each latest value kept (into `adds` and `latests`)."""
    for column, n in more_adds:
        adds[column] = adds.get(column, 0) + n
    for column, value in more_latests:
        if column not in latests or value > latests[column]:
            latests[column] = value


class _ThreadBumps:
    """One thread's bumps not written yet: (table, key) -> (counter increments, latest values). Its lock
    is taken by its thread and by the flush, never by another request's thread."""

    __slots__ = ("lock", "rows")

    def __init__(self):
        self.lock = threading.Lock()
        self.rows: dict[tuple[Table, Any], tuple[dict, dict]] = {}


class WriteBehind:
    """The buffer of one app DB engine, with its flushing thread (started on the first write)."""

    def __init__(self, engine: Engine, interval: float = INTERVAL_SECONDS):
        self.engine = engine
        self.interval = interval
        self._reset()
        _live.add(self)

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._flushing = threading.Lock()  # one batch at a time: batches stay in order
        self._starting = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._clear()

    def _clear(self) -> None:
        # No request takes a lock another request's thread takes: under the GIL such a lock convoys (a
        # holder asked to give up the GIL keeps it while the other threads run into it and sleep), and
        # with one lock for every write the threads of a busy worker spent most of their time queued
        # there (measured: 4 in 10 of it for the query log's rows, 8 in 10 for the view counts).
        # Inserts, deletes and folds, in order, as (kind, what, value): appended and taken one at a time
        # with no lock (a deque's append and popleft are atomic).
        self._queue: deque = deque()
        # Bumps are aggregated per thread (each thread's own, see _ThreadBumps) and read back by pending().
        self._local = threading.local()
        self._bumpers: list[_ThreadBumps] = []  # every thread's, appended under the lock

    def _pending_work(self) -> bool:
        return bool(self._queue) or any(bumps.rows for bumps in tuple(self._bumpers))

    # ---------------------------------------------------------------------------------------------
    # Putting writes in
    # ---------------------------------------------------------------------------------------------

    def bump(self, table, key, add: dict[str, int] | None = None, latest: dict[str, Any] | None = None) -> None:
        self._forked()
        mine = self._own_bumps()
        with mine.lock:
            adds, latests = mine.rows.setdefault((_table(table), key), ({}, {}))
            _merge(adds, latests, (add or {}).items(), (latest or {}).items())
        self._started()

    def insert(self, table, row: dict) -> None:
        self._queued(_INSERT, _table(table), row)

    def delete(self, table, column: str, value) -> None:
        self._queued(_DELETE, (_table(table), column), value)

    def fold(self, handler: Callable[[Connection, list], None], item) -> None:
        self._queued(_FOLD, handler, item)

    def pending(self, table, key) -> tuple[dict, dict]:
        """(counter increments, latest values) not written yet for this row, in this process. Read without
        the threads' locks: each dict lookup and copy is one C call, atomic under the GIL."""
        row = (_table(table), key)
        adds: dict[str, int] = {}
        latests: dict[str, Any] = {}
        for bumps in tuple(self._bumpers):
            found = bumps.rows.get(row)
            if found is not None:
                _merge(adds, latests, tuple(found[0].items()), tuple(found[1].items()))
        return adds, latests

    def _own_bumps(self) -> _ThreadBumps:
        mine = getattr(self._local, "bumps", None)
        if mine is None:
            mine = self._local.bumps = _ThreadBumps()
            with self._lock:
                self._bumpers.append(mine)
        return mine

    def _taken_bumps(self) -> dict:
        """Every thread's bumps, taken and merged."""
        with self._lock:
            every = tuple(self._bumpers)
        merged: dict[tuple[Table, Any], tuple[dict, dict]] = {}
        for bumps in every:
            with bumps.lock:
                rows, bumps.rows = bumps.rows, {}
            for row, (adds, latests) in rows.items():
                _merge(*merged.setdefault(row, ({}, {})), adds.items(), latests.items())
        return merged

    def _queued(self, kind: str, what, value) -> None:
        self._forked()
        self._queue.append((kind, what, value))
        self._started()

    def _forked(self) -> None:
        if self._pid != os.getpid():  # a forked worker: the parent's lock, thread and items are not ours
            self._reset()

    def _started(self) -> None:
        """After an item is in: a thread that is stopping sees it (_run looks again once it has let go of
        its place), or this starts another."""
        if self._thread is None:
            self._start()

    def _start(self) -> None:
        with self._starting:
            if self._closed or self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name="tessera-write-behind", daemon=True)
            self._thread.start()

    # ---------------------------------------------------------------------------------------------
    # Writing them out
    # ---------------------------------------------------------------------------------------------

    def _run(self) -> None:
        idle = 0
        while not self._closed:
            self._wake.wait(self.interval)
            self._wake.clear()
            if self._pending_work():
                idle = 0
                self.flush()
                continue
            idle += 1
            if idle >= IDLE_ROUNDS:  # a quiet process (or an app nobody disposed) keeps no thread
                with self._starting, self._lock:
                    thread, self._thread = self._thread, None
                    if not self._pending_work():  # an item added from here on starts another thread
                        return
                    self._thread = thread
                idle = 0

    def flush(self) -> None:
        """Write everything pending now, in one transaction; when it fails, each part in its own, and a
        part that still fails is logged and dropped (bookkeeping must never fail a request or retry a
        broken row forever)."""
        with self._flushing:
            if self._pid != os.getpid() or not self._pending_work():
                return
            bumps = self._taken_bumps()
            inserts, deletes, folds = self._taken()
            parts = [lambda conn, t=table, c=column, k=keys: conn.execute(delete(t).where(t.c[c].in_(sorted(k, key=str))))
                     for (table, column), keys in deletes.items()]
            parts += [lambda conn, t=table, r=rows: conn.execute(insert(t), r) for table, rows in inserts.items()]
            if bumps:
                parts.append(lambda conn: _write_bumps(conn, bumps))
            parts += [lambda conn, h=handler, i=items: h(conn, i) for handler, items in folds.items()]
            try:
                with self.engine.begin() as conn:
                    for part in parts:
                        part(conn)
            except Exception:
                # One bad part (a row whose parent was deleted meanwhile) must not cost the others.
                log.warning("a batch of buffered writes failed; writing its parts one by one", exc_info=True)
                for part in parts:
                    try:
                        with self.engine.begin() as conn:
                            part(conn)
                    except Exception:
                        log.exception("could not write buffered bookkeeping")

    def _taken(self) -> tuple[dict, dict, dict]:
        """The queued inserts (per table), deletes (per table and column) and folds (per handler), taken
        off the queue in order; what is added meanwhile waits for the next batch."""
        inserts: dict[Table, list[dict]] = defaultdict(list)
        deletes: dict[tuple[Table, str], set] = defaultdict(set)
        folds: dict[Callable, list] = defaultdict(list)
        listed = {_INSERT: inserts, _FOLD: folds}
        queue = self._queue
        while True:
            try:
                kind, what, value = queue.popleft()
            except IndexError:
                return inserts, deletes, folds
            if kind == _DELETE:
                deletes[what].add(value)
            else:
                listed[kind][what].append(value)

    def close(self) -> None:
        """Write what is pending and stop the thread (the app DB is being disposed)."""
        self._closed = True
        self._wake.set()
        self.flush()


def _write_bumps(conn: Connection, bumps: dict) -> None:
    """One executemany per table and set of columns: `col = col + :n`, `col = :latest`. Tables and rows
    are written in one order (table name, then key), whatever order the views came in: the flushes of
    several workers update the same rows at once, and two that took the same row locks in opposite
    orders deadlocked (PostgreSQL breaks a deadlock after a second and fails one batch)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for (table, key), (adds, latests) in bumps.items():
        groups[(table, tuple(sorted(adds)), tuple(sorted(latests)))].append(
            {"_key": key, **{f"_add_{c}": n for c, n in adds.items()}, **{f"_set_{c}": v for c, v in latests.items()}})
    for (table, adds, latests), rows in sorted(groups.items(), key=lambda group: (group[0][0].name, *group[0][1:])):
        rows.sort(key=lambda row: row["_key"])
        values = {c: table.c[c] + bindparam(f"_add_{c}") for c in adds}
        values.update({c: bindparam(f"_set_{c}") for c in latests})
        # A counter is no edit: a column that changes on every UPDATE (updated_at) keeps its value.
        values.update({c.name: c for c in table.c if c.onupdate is not None and c.name not in values})
        key = next(iter(table.primary_key.columns))
        # Moves `<table>#counts`, not the table's own counter: kept card and dashboard JSON stays
        # (core.content.viewing reads the counts through an answer that depends on this counter).
        conn.execute(update(table).where(key == bindparam("_key")).values(values)
                     .execution_options(**{CHANGES_OPTION: counts_of(table.name)}), rows)


def flush_all() -> None:
    """Every buffer of this process (gunicorn worker_exit, process exit)."""
    for buffer in list(_live):
        try:
            buffer.flush()
        except Exception:
            log.exception("could not flush a write-behind buffer")


atexit.register(flush_all)


def buffer() -> WriteBehind:
    """The current app's buffer."""
    from flask import current_app

    return current_app.extensions["tessera"].db.write_behind


def flush(app) -> None:
    """Write the app's buffer now: what tests call before reading what a request counted or logged."""
    app.extensions["tessera"].db.write_behind.flush()
