"""One process at a time, across every worker and instance on one app DB: the start-up lock, and named
locks of the same kind (`sync-<database id>`: one sync of a database at a time, core.sync.schema).

Several instances (and, without gunicorn's preload, every worker of each) run create_app at once.
Alembic does not guard against a concurrent upgrade: two processes that both find a revision missing
both run its DDL, and the second fails (a duplicate table) or deadlocks. Seeding start-up hooks (the
setup token) would race the same way. AppDatabase.exclusive() is held around the migration run and
around the start-up hooks, so the first process migrates and seeds, and the others find it done.

The lock is the backend's (core.appdb.db.AppBackend.lock):
- PostgreSQL: a session-level advisory lock on a connection of its own, released on that connection
  before it goes back to the pool. A process that dies while holding it loses its session, which
  releases the lock: nobody waits for a dead instance. A named lock's key is a hash of its name.
- SQLite: flock on a file next to the database file (`<file>.lock`, a named one `<file>.<name>.lock`),
  which every process of the machine shares; the kernel releases it when the holder exits. An
  in-memory database needs none.
Not reentrant, and per connection or open file: threads of one process are kept apart by the caller.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine

log = logging.getLogger("tessera.appdb.locks")

# The advisory lock key, one bigint for the whole app DB ("tessera1" in ASCII).
STARTUP_KEY = int.from_bytes(b"tessera1", "big")


def key_for(name: str | None) -> int:
    """The advisory lock key of a named lock (a signed bigint); the start-up lock's without a name."""
    if name is None:
        return STARTUP_KEY
    return int.from_bytes(hashlib.sha256(f"tessera:{name}".encode()).digest()[:8], "big", signed=True)


@contextlib.contextmanager
def advisory_lock(engine: Engine, name: str | None = None):
    """PostgreSQL's pg_advisory_lock held for the block, on a connection no one else uses."""
    key = key_for(name)
    conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    try:
        if not conn.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}).scalar():
            log.info("another Tessera process holds the app-DB %s lock: waiting for it", name or "start-up")
            conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": key})
        try:
            yield
        finally:
            try:
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
            except Exception:
                # The session is gone or unusable: it must not return to the pool still holding the lock.
                log.warning("app-DB %s lock not released on its connection", name or "start-up", exc_info=True)
                conn.invalidate()
    finally:
        conn.close()


@contextlib.contextmanager
def file_lock(engine: Engine, name: str | None = None):
    """flock on `<database file>.lock` (`.<name>.lock`); nothing for an in-memory database (one process only)."""
    database = engine.url.database
    if database in (None, "", ":memory:") or database.startswith("file::memory:"):
        yield
        return
    path = Path(database)
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = ".lock" if name is None else f".{name}.lock"
    with open(path.with_name(path.name + suffix), "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another Tessera process holds the app-DB %s lock: waiting for it", name or "start-up")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
