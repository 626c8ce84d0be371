"""One process at a time, across every worker and instance on one app DB: the start-up lock.

Several instances (and, without gunicorn's preload, every worker of each) run create_app at once.
Alembic does not guard against a concurrent upgrade: two processes that both find a revision missing
both run its DDL, and the second fails (a duplicate table) or deadlocks. Seeding start-up hooks (the
setup token) would race the same way. AppDatabase.exclusive() is held around the migration run and
around the start-up hooks, so the first process migrates and seeds, and the others find it done.

The lock is the backend's (core.appdb.db.AppBackend.lock):
- PostgreSQL: a session-level advisory lock on a connection of its own, released on that connection
  before it goes back to the pool. A process that dies while holding it loses its session, which
  releases the lock: nobody waits for a dead instance.
- SQLite: flock on a file next to the database file (`<file>.lock`), which every process of the
  machine shares; the kernel releases it when the holder exits. An in-memory database needs none.
"""
from __future__ import annotations

import contextlib
import fcntl
import logging
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine

log = logging.getLogger("tessera.appdb.locks")

# The advisory lock key, one bigint for the whole app DB ("tessera1" in ASCII).
STARTUP_KEY = int.from_bytes(b"tessera1", "big")


@contextlib.contextmanager
def advisory_lock(engine: Engine, key: int = STARTUP_KEY):
    """PostgreSQL's pg_advisory_lock(key) held for the block, on a connection no one else uses."""
    conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    try:
        if not conn.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}).scalar():
            log.info("another Tessera process holds the app-DB start-up lock: waiting for it")
            conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": key})
        try:
            yield
        finally:
            try:
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
            except Exception:
                # The session is gone or unusable: it must not return to the pool still holding the lock.
                log.warning("app-DB start-up lock not released on its connection", exc_info=True)
                conn.invalidate()
    finally:
        conn.close()


@contextlib.contextmanager
def file_lock(engine: Engine):
    """flock on `<database file>.lock`; nothing for an in-memory database (one process only)."""
    database = engine.url.database
    if database in (None, "", ":memory:") or database.startswith("file::memory:"):
        yield
        return
    path = Path(database)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another Tessera process holds the app-DB start-up lock: waiting for it")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
