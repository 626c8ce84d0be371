"""Pools of databases that another process deleted or re-pointed: closed within seconds, everywhere.

Each process keeps a pool per database it has used (core.driver.connections). The process that deletes a
database or changes its details closes its own pool at once; every other worker and instance on the
same app DB learns of it here. While a process holds pools, a daemon thread of its own looks every
INTERVAL_SECONDS whether the change counter of metabase_database (core.appdb.changes) moved, or whether
a pool was built since it last looked (a sync that loaded the row before the change may rebuild one from
the old details after it); then it asks core.driver.connections to close the pools of databases deleted
or changed (connections.close_stale; the two functions come from there, so that this module imports
nothing of it). Without it such a pool stayed open until the process restarted: its connections kept a
dropped warehouse database busy (PostgreSQL refuses DROP DATABASE while any are open) or logged in with
replaced credentials.
"""
from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from typing import Callable

log = logging.getLogger("tessera.driver.pools")
INTERVAL_SECONDS = 2.0
MARKER = "_stale_pool_watcher"  # in state.extras: (pid, thread) of the process's watcher

_start_lock = threading.Lock()


def watch(app, state, held: Callable[[object], frozenset], close_stale: Callable[[object], object]) -> None:
    """Make sure this process watches `app`'s pools (called whenever a pool is added): while
    `held(state)` (what the pools were built from) is not empty, `close_stale(state)` runs in the app's
    context each time the databases' counter or `held(state)` changed. Not for an app DB whose counters
    cannot be known: an in-memory one, which no other process shares."""
    if not state.db.changes.enabled:
        return
    with _start_lock:
        running = state.extras.get(MARKER)
        if running is not None and running[0] == os.getpid() and running[1].is_alive():
            return
        thread = threading.Thread(target=_run, args=(weakref.ref(app), held, close_stale), daemon=True,
                                  name="tessera-stale-pools")
        state.extras[MARKER] = (os.getpid(), thread)
        thread.start()


def _run(app_ref, held, close_stale) -> None:
    seen = None  # (databases' counter, held pools) when close_stale last ran
    while True:
        time.sleep(INTERVAL_SECONDS)
        app = app_ref()
        if app is None:
            return
        state = app.extensions["tessera"]
        with _start_lock:
            # No pool left (or the app DB closed): this thread ends; the next pool starts another.
            pools = held(state)
            if not pools or state.db.changes.closed:
                state.extras.pop(MARKER, None)
                return
        counters = state.db.changes.read()
        databases = None if counters is None else counters.get("metabase_database", 0)
        if databases is None or (databases, pools) != seen:
            try:
                with app.app_context():
                    close_stale(state)
                # What was checked, not what is held now: a pool built while close_stale ran (by a sync
                # that read the row before the change) makes the next look check again.
                seen = (databases, pools)
            except Exception:
                log.warning("stale connection pools not checked", exc_info=True)
        del app, state
