"""The app DB's generation: a cheap value that changes whenever anything is committed to the app DB,
by anyone (any worker, any instance, the write-behind flusher, a migration, a test's own session).

Whatever a request computes from the app DB alone is the same for an unchanged generation, so
core.appdb.memo keeps such answers under it. The generation is read on ONE connection per process
that never writes, with the backend's question (AppBackend.generation_sql):
- SQLite: `PRAGMA data_version`, which changes on a connection when any OTHER connection commits
  (this process's pool connections included); the pragma itself, on the DBAPI cursor: its table-valued
  form `SELECT data_version FROM pragma_data_version` cost 20 times as much (a virtual table per read);
- PostgreSQL: `pg_current_snapshot()`, which changes when any transaction of the cluster commits and,
  unlike a WAL position, only once that commit is visible (extra changes are harmless, missed ones not).
It is read once per request, before the request's first app-DB query (core.appdb.db.session), so
that nothing a request reads is older than the generation it is stored under. None when it cannot be
known (an in-memory database, no question for the backend, an error): then nothing is memoised.
"""
from __future__ import annotations

import logging
import os
import threading

from sqlalchemy.engine import Connection, Engine

log = logging.getLogger("tessera.appdb.generation")

# Connections opened in a parent process: never used, closed nor collected in a forked child (closing
# would end the parent's session on a server).
_inherited: list[Connection] = []


class Generation:
    """The generation reader of one app DB engine (thread-safe; a fork opens its own connection)."""

    def __init__(self, engine: Engine, sql: str | None):
        self.engine = engine
        self.sql = sql
        self._lock = threading.Lock()
        self._conn: Connection | None = None
        self._pid = os.getpid()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def read(self):
        """The current generation, or None when it cannot be known."""
        if self.sql is None or self._closed:
            return None
        with self._lock:
            try:
                # On the DBAPI connection itself: SQLAlchemy's statement machinery cost more than the read.
                cursor = self._connection().connection.dbapi_connection.cursor()
                try:
                    cursor.execute(self.sql)
                    return cursor.fetchone()[0]
                finally:
                    cursor.close()
            except Exception:  # a broken connection: memo off for this request, a new one next time
                log.warning("app-DB generation not read", exc_info=True)
                self._drop()
                return None

    def _connection(self) -> Connection:
        if self._pid != os.getpid():
            if self._conn is not None:
                _inherited.append(self._conn)
            self._conn, self._pid = None, os.getpid()
        if self._conn is None:
            # Autocommit: each read sees the latest commits and no transaction stays open.
            self._conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        return self._conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.invalidate()
                conn.close()
            except Exception:
                log.debug("generation connection not closed", exc_info=True)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._pid == os.getpid() and self._conn is not None:
                try:
                    self._conn.close()
                except Exception:
                    log.debug("generation connection not closed", exc_info=True)
            self._conn = None
