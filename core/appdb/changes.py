"""Per-table change counters of the app DB: which tables a commit wrote, and which a read read.

The app DB holds one counter per table (`appdb_change`: table_name, counter). Every transaction that
writes a table adds one to that table's counter in the same transaction, just before its commit, so
the new counter is visible exactly when the written rows are (on SQLite and PostgreSQL alike, and
across processes and instances: the counters are rows of the shared app DB). core.appdb.memo keeps
an answer with the counters of the tables its request had read when it was computed, and serves it
while those counters are unchanged: a commit ends only the answers that read what it wrote.

ONE mechanism for every writer, on the engine's connections (so ORM flushes, Core statements, the
write-behind's plain connections, bulk driver SQL and text() all pass through it):
- `before_cursor_execute` classifies each statement by its SQL (once per distinct text): the table an
  INSERT/UPDATE/DELETE writes (plus the tables its foreign keys cascade to) is added to the
  transaction's set; a write it cannot attribute (DDL, a CTE, anything unknown) moves the catch-all
  `*`, which every answer depends on. A statement may name the counter it moves instead with the
  execution option CHANGES_OPTION: the write-behind's counter bumps move `<table>#counts`
  (view_count and last-use columns), which the kept JSON of a card or a dashboard does not depend on
  (core.content.viewing lays the stored counts over it from a read that does).
- Database triggers are invisible to it: whoever creates one declares what it writes (`triggered`).
- The connection's `commit` event writes the set (one upsert, names sorted so that concurrent
  committers take the counter rows' locks in one order); `begin` and `rollback` forget it.
- The tables a read read are every known table name its SQL mentions (a superset: a column named like
  a table adds a dependency, never loses one), added to the set of the request that runs on this thread
  (`reading`, set by core.appdb.db for the request's session).
Migrations run with their writes counted as `*`: a schema change ends every memo answer.

`Changes.read()` is the current counters, read once per request before its first query: PostgreSQL
reads the table (one statement, which libpq runs prepared: core.appdb.db); SQLite first asks `PRAGMA
data_version` on the reader's connection, which moves only when another connection commits, and reads
the table again only then.
"""
from __future__ import annotations

import contextvars
import logging
import os
import re
import threading
from typing import Any, Callable

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

log = logging.getLogger("tessera.appdb.changes")

CHANGE_TABLE = "appdb_change"
CATCH_ALL = "*"  # moved by writes no table can be named for; every memo answer depends on it
COUNTS = "#counts"  # suffix of the counter that write-behind counter bumps move (core.appdb.counters)
CHANGES_OPTION = "tessera_changes"  # execution option: the counter a statement's write moves instead
WRITTEN = "tessera.written"  # in a DBAPI connection's info: the counters its transaction moves

_READ_ONLY_WORDS = frozenset({"SELECT", "PRAGMA", "EXPLAIN", "SAVEPOINT", "RELEASE", "ROLLBACK", "BEGIN",
                              "COMMIT", "SHOW", "SET", "VALUES"})
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TARGET = re.compile(r'^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)'
                     r'\s+"?([A-Za-z_][A-Za-z0-9_]*)"?\s*(?:\(|SET\b|VALUES\b|WHERE\b|RETURNING\b|$|\s)',
                     re.IGNORECASE)
_CASCADING = frozenset({"CASCADE", "SET NULL", "SET DEFAULT"})
_WRITE_IN_CTE = re.compile(r"\b(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)

# The request reading on this thread: the set of table names its statements read (core.appdb.db).
reading: contextvars.ContextVar[set | None] = contextvars.ContextVar("tessera.appdb.reading", default=None)


def counts_of(table_name: str) -> str:
    """The counter the write-behind's counter bumps on `table_name` move."""
    return table_name + COUNTS


class _Schema:
    """What the statement classifier knows of the app DB's tables: their names and where deletes and
    key updates cascade (ON DELETE CASCADE / SET NULL change rows of other tables). Rebuilt when more
    models are registered (plugins import theirs after the core's)."""

    def __init__(self):
        self._size = -1
        self.names: frozenset = frozenset()
        self.cascades: dict[str, frozenset] = {}  # table -> the tables a delete of its rows changes too
        self.key_cascades: dict[str, frozenset] = {}  # table -> the tables a key update changes too
        self._statements: dict[str, tuple[frozenset, frozenset]] = {}
        self._lock = threading.Lock()
        self.triggers: dict[str, frozenset] = {}  # table -> tables its triggers write (declared: `triggered`)
        self.metadata = None  # the app DB's models' MetaData, given by core.appdb.models.base (`describe`)

    def _refresh(self) -> None:
        tables = self.metadata.tables if self.metadata is not None else {}
        if len(tables) == self._size:
            return
        with self._lock:
            deleted: dict[str, set] = {}  # parent -> children whose rows a delete of its rows deletes
            touched: dict[str, set] = {}  # parent -> children whose rows a delete (or key update) changes
            updated: dict[str, set] = {}  # parent -> children whose rows a key update changes
            for table in tables.values():
                for fk in table.foreign_keys:
                    parent, on_delete, on_update = fk.column.table.name, (fk.ondelete or "").upper(), fk.onupdate
                    if on_delete == "CASCADE":
                        deleted.setdefault(parent, set()).add(table.name)
                    if on_delete in _CASCADING:
                        touched.setdefault(parent, set()).add(table.name)
                    if on_update:
                        updated.setdefault(parent, set()).add(table.name)
            cascades = {}
            for name in set(touched) | set(updated):
                # Deleted rows delete (or change) rows of their own children in turn; changed rows
                # whose key stays do not reach further.
                gone, todo = {name}, [name]
                while todo:
                    for child in deleted.get(todo.pop(), ()):
                        if child not in gone:
                            gone.add(child)
                            todo.append(child)
                reached = set(gone)
                for parent in gone:
                    reached |= touched.get(parent, set())
                reached.discard(name)
                cascades[name] = frozenset(reached)
            self.key_cascades = {name: frozenset(children) for name, children in updated.items()}
            self.names = frozenset(table.name for table in tables.values())
            self.cascades = cascades
            self._statements = {}
            self._size = len(tables)

    def classify(self, sql: str) -> tuple[frozenset, frozenset]:
        """(tables the statement reads, counters its write moves) for one SQL text."""
        self._refresh()
        known = self._statements.get(sql)
        if known is not None:
            return known
        words = _WORDS.findall(sql)
        reads = frozenset(w.lower() for w in words) & self.names
        first = words[0].upper() if words else ""
        writes: frozenset = frozenset()
        if first == "WITH":
            if _WRITE_IN_CTE.search(sql):
                writes = frozenset({CATCH_ALL})
        elif first and first not in _READ_ONLY_WORDS:
            target = _TARGET.match(sql)
            if target is None:
                writes = frozenset({CATCH_ALL})
            else:
                name = target.group(1).lower()
                # Foreign keys that cascade change other tables' rows (an insert changes none).
                replaces = first == "REPLACE" or re.match(r"\s*INSERT\s+OR\s+REPLACE", sql, re.IGNORECASE)
                cascades = self.cascades if first == "DELETE" or replaces else \
                    self.key_cascades if first == "UPDATE" else {}
                writes = frozenset({name}) | cascades.get(name, frozenset()) | self.triggers.get(name, frozenset())
        if len(self._statements) > 20000:  # driver SQL with values in its text: bounded
            self._statements = {}
        self._statements[sql] = known = (reads, writes)
        return known


_schema = _Schema()


def describe(metadata) -> None:
    """The MetaData of the app DB's models (core.appdb.models.base gives it as it defines Base): the tables
    the classifier knows, and their foreign keys' cascades; models registered later are read as they come."""
    with _schema._lock:
        _schema.metadata, _schema._size, _schema._statements = metadata, -1, {}


def triggered(table_name: str, *written: str) -> None:
    """Declare that a database trigger on `table_name` writes `written` tables (the search index kept
    by triggers on the content tables): a write of `table_name` moves their counters too. The
    database's own triggers are invisible to the statement classifier; whoever creates one declares it."""
    with _schema._lock:
        _schema.triggers = {**_schema.triggers, table_name: _schema.triggers.get(table_name, frozenset()) | set(written)}
        _schema._statements = {}


def classify(sql: str) -> tuple[frozenset, frozenset]:
    return _schema.classify(sql)


def _before_cursor_execute(conn, _cursor, statement, _parameters, context, _executemany) -> None:
    compiled = getattr(context, "compiled", None)
    reads, writes = _schema.classify(compiled.string if compiled is not None and compiled.string else statement)
    collecting = reading.get()
    if collecting is not None and reads:
        collecting.update(reads)
    if writes:
        options = context.execution_options if context is not None else {}
        named = options.get(CHANGES_OPTION)
        if named is not None:
            writes = (named,) if isinstance(named, str) else named
        written = conn.info.get(WRITTEN)
        if written is None:
            written = conn.info[WRITTEN] = set()
        written.update(writes)


def _after_cursor_execute(conn, _cursor, _statement, _parameters, context, _executemany) -> None:
    # An autocommit connection's write is committed by the statement itself: its counters move right
    # after it (never before: a reader would keep the old rows under the new counter).
    if context is not None and context.execution_options.get("isolation_level") == "AUTOCOMMIT":
        written = conn.info.pop(WRITTEN, None)
        if written:
            _bump(conn, written)


def _forget(conn) -> None:
    conn.info.pop(WRITTEN, None)


def _commit(conn) -> None:
    written = conn.info.pop(WRITTEN, None)
    if written:
        _bump(conn, written)


def _bump(conn: Connection, names) -> None:
    """Add one to each counter, on the connection's own transaction (its DBAPI cursor: this statement
    is no write of the caller's and passes no listener)."""
    names = sorted(names)
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    sql = (f"INSERT INTO {CHANGE_TABLE} (table_name, counter) VALUES "
           + ", ".join(f"({mark}, 1)" for _ in names)
           + f" ON CONFLICT (table_name) DO UPDATE SET counter = {CHANGE_TABLE}.counter + 1")
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(sql, names)
    finally:
        cursor.close()


def track(engine: Engine) -> None:
    """Count the writes of every transaction on `engine` (see the module's docstring)."""
    event.listen(engine, "before_cursor_execute", _before_cursor_execute)
    event.listen(engine, "after_cursor_execute", _after_cursor_execute)
    event.listen(engine, "begin", _forget)
    event.listen(engine, "rollback", _forget)
    event.listen(engine, "commit", _commit)


def touch(engine: Engine, names=(CATCH_ALL,)) -> None:
    """Move counters in a transaction of their own (after migrations: `*`)."""
    with engine.begin() as conn:
        _bump(conn, names)


def cursor_rows(conn: Connection, sql: str, parameters: tuple) -> list[tuple]:
    """The rows of one statement run on the connection's DBAPI cursor."""
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(sql, parameters)
        return cursor.fetchall()
    finally:
        cursor.close()


# Connections (and commit marks, which hold one) opened in a parent process: never used, closed nor
# collected in a forked child (closing would end the parent's session on a server).
_inherited: list = []


class Snapshot(dict):
    """The counters as read at one instant: table name -> counter (a table never written: absent, 0).
    `total` grows whenever any counter does (counters only grow): one number saying "something
    changed"."""

    __slots__ = ("total",)

    def __init__(self, rows):
        super().__init__(rows)
        self.total = sum(self.values())


class _Reader:
    """One autocommit connection of the counter reader, with what it last saw: the precheck's answer
    (whose values compare only between reads of one connection) and the snapshot read with it."""

    __slots__ = ("conn", "mark", "snapshot")

    def __init__(self, conn: Connection):
        self.conn, self.mark, self.snapshot = conn, None, None


class Changes:
    """The counter reader of one app DB engine, on autocommit connections of its own that never write
    (a fork opens its own): as many as requests read at once, each taken from an idle list and given
    back, and no lock held across a statement. (With one connection under a lock, the threads of a
    gthread worker queued at the lock whenever its holder waited for the GIL to come back after its
    statement: on SQLite, a sixth of a busy worker's time.)
    With a `precheck` (SQLite's data_version, which moves only when another connection commits) a
    connection reads the table only when the precheck's answer moved since its own last read. Without
    (PostgreSQL), the statement returns the counters' sum alone while it equals the sum of the newest
    snapshot read (counters only grow, so an equal sum is equal counters), and that Snapshot object is
    answered again.
    With a `commit_mark` (SQLite's WAL-index header, core.appdb.wal_mark: a look at memory that moves with
    every commit of any connection) the newest snapshot is answered again, without a statement, while
    the mark is the one looked at just before it was read: nothing committed since."""

    def __init__(self, engine: Engine, enabled: bool, precheck: str | None, fetch: Callable | None = None,
                 commit_mark: Callable[[], Any] | None = None):
        self.engine = engine
        self.enabled = enabled
        self.precheck = precheck
        self.fetch = fetch or cursor_rows  # (connection, sql, parameters) -> rows: how the statement runs
        mark = "?" if engine.dialect.paramstyle == "qmark" else "%s"
        self.sql = (f"SELECT total.counter, c.table_name, c.counter FROM "
                    f"(SELECT coalesce(sum(counter), 0) AS counter FROM {CHANGE_TABLE}) AS total "
                    f"LEFT JOIN {CHANGE_TABLE} AS c ON total.counter <> {mark}")
        self._lock = threading.Lock()  # held only to take or give back a reader, never across a statement
        self._idle: list[_Reader] = []  # readers no read is using (in use: held by their read)
        self._pid = os.getpid()
        self._closed = False
        self._last: Snapshot | None = None  # the newest snapshot read (the same object while nothing moved)
        self._mark_opener = commit_mark  # () -> a mark (core.appdb.wal_mark.WalMark) or None
        self._mark_tried: int | None = None  # the process that opened (or failed to open) the mark
        self._mark = None  # this process's mark
        self._marked: tuple[bytes, Snapshot] | None = None  # (the mark before a read, the snapshot it read)

    @property
    def closed(self) -> bool:
        return self._closed

    def read(self) -> Snapshot | None:
        """The current counters, or None when they cannot be known (then nothing is kept)."""
        if not self.enabled or self._closed:
            return None
        mark = self._mark
        seen = None
        if mark is not None and mark.pid == os.getpid():
            seen = mark.mark()
            marked = self._marked
            if marked is not None and marked[0] == seen:
                return marked[1]
        snapshot = self._read()
        if seen is not None and snapshot is not None:
            # Looked at before the read: a commit in between moved the mark, and the next read reads again.
            self._marked = (seen, snapshot)
        elif self._mark_opener is not None and self._mark_tried != os.getpid():
            self._start_marking()
        return snapshot

    def _start_marking(self) -> None:
        """Open this process's commit mark, once (at its first read, a forked worker's included)."""
        with self._lock:
            if self._mark_tried == os.getpid():
                return
            self._mark_tried = os.getpid()
        try:
            mark = self._mark_opener()
        except Exception:
            log.warning("app-DB commit mark not opened: each request asks the database", exc_info=True)
            return
        if mark is None:
            return
        with self._lock:
            if not self._closed and self._pid == os.getpid():
                self._mark, mark = mark, None
        if mark is not None:  # closed meanwhile
            mark.close()

    def _read(self) -> Snapshot | None:
        with self._lock:
            self._forked()
            reader = self._idle.pop() if self._idle else None
            last = self._last
        try:
            if reader is None:
                reader = _Reader(self._open())
            snapshot = self._current(reader, last)
        except Exception:  # a broken connection (or no table yet): nothing kept now, a new one next time
            log.warning("app-DB change counters not read", exc_info=True)
            self._discard(reader.conn if reader is not None else None)
            return None
        with self._lock:
            if self._closed:
                self._close(reader.conn)
            else:
                self._idle.append(reader)
            if self._last is None or snapshot.total > self._last.total:
                self._last = snapshot
            elif snapshot.total == self._last.total:
                snapshot = self._last
        return snapshot

    def _current(self, reader: _Reader, last: Snapshot | None) -> Snapshot:
        """The counters through one reader: its own last snapshot while its precheck has not moved."""
        if self.precheck is not None:
            cursor = reader.conn.connection.dbapi_connection.cursor()
            try:
                cursor.execute(self.precheck)
                mark = cursor.fetchone()[0]
            finally:
                cursor.close()
            if reader.snapshot is not None and reader.mark == mark:
                return reader.snapshot
            reader.mark, reader.snapshot = mark, self._counters(reader.conn, last)
            return reader.snapshot
        return self._counters(reader.conn, last)

    def _counters(self, conn: Connection, last: Snapshot | None) -> Snapshot:
        """The counters, below SQLAlchemy's statement machinery (which cost more than the read);
        `last` itself while their sum is its total."""
        rows = self.fetch(conn, self.sql, (last.total if last is not None else -1,))
        if last is not None and int(rows[0][0]) == last.total:
            return last
        return Snapshot((name, int(counter)) for _, name, counter in rows if name is not None)

    def _open(self) -> Connection:
        # Autocommit: each read sees the latest commits and no transaction stays open.
        return self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")

    def _forked(self) -> None:
        """In a forked child (under the lock): the parent's connections are left alone, never used,
        closed nor collected (closing would end the parent's sessions on a server)."""
        if self._pid != os.getpid():
            _inherited.extend(reader.conn for reader in self._idle)
            self._idle, self._pid, self._last = [], os.getpid(), None
            if self._mark is not None:  # the parent's: its connection holds the parent's lock, not ours
                _inherited.append(self._mark)
            self._mark = self._marked = None

    @staticmethod
    def _close(conn: Connection) -> None:
        try:
            conn.close()
        except Exception:
            log.debug("change counter connection not closed", exc_info=True)

    def _discard(self, conn: Connection | None) -> None:
        """A connection that failed: never pooled again."""
        if conn is None:
            return
        try:
            conn.invalidate()
        except Exception:
            log.debug("change counter connection not invalidated", exc_info=True)
        self._close(conn)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._pid == os.getpid():
                for reader in self._idle:
                    self._close(reader.conn)
                if self._mark is not None:
                    self._mark.close()
            self._idle, self._mark, self._marked = [], None, None
