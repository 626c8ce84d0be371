"""SQLite's commit mark, read from the WAL-index in shared memory: whether any connection of any process
has committed to the app DB since an earlier look, answered without a statement.

Every request reads the change counters (core.appdb.changes). On SQLite that began with `PRAGMA
data_version`, a statement: the sqlite3 module releases the GIL around it, and in a gthread worker
whose other threads wait for the GIL each release hands it over and takes it back (two context
switches and the futex calls), about 15% of a memo-answered read's CPU with 8 threads. The WAL-index
says the same thing from memory: in WAL mode every commit rewrites the index header (its change count
and last frame move) in the database's `-shm` file, which every connection maps, and a reader learns
of a commit exactly when that header shows it. An unchanged header is no commit since.

The layout is the one https://www.sqlite.org/walformat.html documents for the unix VFS: two copies of
a 48-byte header at the start of the file, the first written last by a committer; its first field is
the index format's version (3007000 since SQLite 3.7.0). Any other version, a header not initialised,
a database not in WAL mode or a file that cannot be mapped: no mark, and the counters are asked of
the database as before.

The mark keeps a connection of its own open while it maps the file: a connection holds SQLite's shared
lock on the index, so no other connection may truncate or delete the file under the map (SQLite does
so only when it finds no other connection). A forked process maps again through a connection of its
own (core.appdb.changes).
"""
from __future__ import annotations

import logging
import mmap
import os
import sys
from pathlib import Path

from sqlalchemy.engine import Connection, Engine

log = logging.getLogger("tessera.appdb.wal_mark")

INDEX_VERSION = 3007000  # the WAL-index format SQLite has written since 3.7.0
HEADER_BYTES = 48  # one copy of the index header; the first copy is the one a commit completes with
MAPPED_BYTES = 136  # both header copies and the checkpoint information: the whole index header
_INIT_OFFSET = 12  # isInit: 1 once a connection has built the index


class WalMark:
    """A read-only map of one database's WAL-index header, and the connection that keeps it valid."""

    def __init__(self, conn: Connection, index: mmap.mmap):
        self._conn = conn
        self._index = index
        self.pid = os.getpid()

    def mark(self) -> bytes | None:
        """The header as it is now (a commit by any connection changes it); None once closed."""
        try:
            return self._index[:HEADER_BYTES]
        except ValueError:  # closed by another thread (the app DB disposed)
            return None

    def close(self) -> None:
        self._index.close()
        try:
            self._conn.close()
        except Exception:
            log.debug("WAL-index mark connection not closed", exc_info=True)


def open_mark(engine: Engine, database: Path) -> WalMark | None:
    """The mark of the SQLite database file `database` on `engine`, or None when it cannot be read
    from memory (then each request asks the database)."""
    conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    index = None
    try:
        if str(conn.exec_driver_sql("PRAGMA journal_mode").scalar()).lower() == "wal":
            # A read maps the index and takes this connection's shared lock on it, held until it closes.
            conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar()
            real = Path(os.path.realpath(database))  # SQLite names the index after the file links resolve to
            index = _map(real.with_name(real.name + "-shm"))
    except Exception:
        log.debug("WAL-index not mapped", exc_info=True)
        index = None
    if index is None:
        conn.close()
        return None
    return WalMark(conn, index)


def _map(shm: Path) -> mmap.mmap | None:
    fd = os.open(shm, os.O_RDONLY)
    try:
        if os.fstat(fd).st_size < MAPPED_BYTES:
            return None
        index = mmap.mmap(fd, MAPPED_BYTES, mmap.MAP_SHARED, mmap.PROT_READ)
    finally:
        os.close(fd)  # the map holds the file
    header = index[:HEADER_BYTES]
    if int.from_bytes(header[:4], sys.byteorder) != INDEX_VERSION or not header[_INIT_OFFSET]:
        index.close()
        return None
    return index
