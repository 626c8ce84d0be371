"""The app database: one SQLAlchemy engine and session factory per app, and the request's session.

The app DB is a SQLite file in TESSERA_DATA_DIR by default and PostgreSQL in production
(TESSERA_DB_URL=postgresql+psycopg://...). Alembic migrations (core/appdb/migrations) own the schema.
"""
from __future__ import annotations

import contextlib
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import orjson
from flask import current_app, g, has_request_context, request
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker

from . import changes, contention, pooling
from .changes import Changes
from .counters import WriteBehind
from .locks import advisory_lock, file_lock
from .memo import CHANGES, MEMO_INFO, READS, Memo
from .search_engines import PostgresIndex, SQLiteIndex
from .wal_mark import open_mark

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


@dataclass(frozen=True)
class AppBackend:
    """What differs between the SQL backends the app DB runs on; looked up by SQLAlchemy dialect name
    (`backend_of`), so the rest of core asks a question instead of comparing names."""

    engine_options: dict = field(default_factory=dict)  # create_engine keywords besides future=True
    # The database is a local file named by the URL (its directory is created, its path kept from data sources).
    file_backed: bool = False
    # DateTime(timezone=True) keeps no zone: write naive UTC wall-clock time.
    naive_timestamps: bool = False
    # ALTER TABLE cannot change columns or constraints: Alembic recreates tables (render_as_batch).
    batch_migrations: bool = False
    on_connect: Callable | None = None  # runs on every new DBAPI connection
    # Per-table change counters (core.appdb.changes: an upsert on commit); False: nothing is memoised.
    counts_changes: bool = False
    # A cheap question whose answer moves whenever another connection commits (SQLite's data_version):
    # the counters are read again only when it moved; None: they are read for every request.
    changes_precheck: str | None = None
    # Whether any connection has committed, looked at in memory with no statement (SQLite's WAL-index,
    # core.appdb.wal_mark): (engine, database file) -> a mark or None. While it has not moved, the
    # counters read last are answered again; None: they are read (or prechecked) for every request.
    commit_mark: Callable | None = None
    # How the counters' statement, run for every request, runs: (connection, sql, parameters) -> rows
    # whose values int() and str() take; None: on a DBAPI cursor (core.appdb.changes.cursor_rows).
    changes_fetch: Callable | None = None
    # The start-up and named locks (core.appdb.locks), called with the engine and a name (None: the
    # start-up lock); None: no other process can share the DB.
    lock: Callable | None = None
    # The search index's engine-specific part (core.appdb.search_index); None: no index, search
    # filters the content tables.
    search_index: Any = None
    # Plain reads run in autocommit until a statement needs a transaction (core.appdb.pooling): a read
    # sends no BEGIN and no ROLLBACK. SQLite's driver does so by itself.
    reads_outside_transactions: bool = False
    # The pool's check at checkout pings only a connection idle longer than this or whose socket has
    # something to say (core.appdb.pooling), instead of pool_pre_ping's round trip at every checkout.
    ping_after_idle_seconds: float | None = None


def _sqlite_pragmas(dbapi_connection, _record):
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    # WAL stays consistent without an fsync per commit; a power cut may lose the last commits only.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


PREPARED = "tessera.prepared"  # in a connection's info: SQL -> the name libpq prepared it under


def _libpq_rows(conn, sql: str, parameters: tuple) -> list[tuple]:
    """A statement run for every request (the change counters' read) by libpq itself, on psycopg's
    connection: prepared once per connection and then executed with no cursor, adapter or generator
    of psycopg's around it, which cost several times the CPU of the round trip (measured: ~100 us
    against ~20 us). Text in and out: the values come back as str (None for NULL). libpq releases the
    GIL while it waits for the server."""
    from psycopg import OperationalError, pq

    pgconn = conn.connection.dbapi_connection.pgconn
    prepared = conn.info.setdefault(PREPARED, {})  # cleared with the connection's info when it is invalidated
    name = prepared.get(sql)
    if name is None:
        name = f"tessera_{len(prepared)}".encode()
        numbered, count = sql, 0
        while "%s" in numbered:
            count += 1
            numbered = numbered.replace("%s", f"${count}", 1)
        result = pgconn.prepare(name, numbered.encode(), None)
        if result.status != pq.ExecStatus.COMMAND_OK:
            raise OperationalError(result.get_error_message())
        prepared[sql] = name
    result = pgconn.exec_prepared(name, [None if value is None else str(value).encode() for value in parameters])
    if result.status != pq.ExecStatus.TUPLES_OK:
        raise OperationalError(result.get_error_message())
    columns = range(result.nfields)
    return [tuple(None if value is None else value.decode()
                  for value in (result.get_value(row, column) for column in columns))
            for row in range(result.ntuples)]


# A server (PostgreSQL, the production choice) is the default; SQLite is the file in TESSERA_DATA_DIR.
SERVER_BACKEND = AppBackend(engine_options={"pool_pre_ping": True})
BACKENDS = {
    # The pool keeps more connections than a worker has threads: each request thread's, and the change
    # counters' readers (core.appdb.changes: one per request reading them at that instant).
    "postgresql": AppBackend(engine_options={"pool_size": 20, "max_overflow": 20},
                             counts_changes=True, lock=advisory_lock,
                             changes_fetch=_libpq_rows,
                             search_index=PostgresIndex(), reads_outside_transactions=True,
                             ping_after_idle_seconds=10.0),
    # Background sync threads and gunicorn threads share the file: wait instead of failing. The pool
    # keeps a connection for each thread a worker runs (contrib/gunicorn.conf.py: 8, plus a change
    # counter reader for each thread reading at once, and background threads): a connection closed
    # past a smaller pool is opened again on the next request, and a new SQLite connection parses the
    # whole schema on its first statement.
    "sqlite": AppBackend(engine_options={"connect_args": {"timeout": 30, "check_same_thread": False},
                                         "pool_size": 20, "max_overflow": 20},
                         file_backed=True, naive_timestamps=True, batch_migrations=True, on_connect=_sqlite_pragmas,
                         counts_changes=True, changes_precheck="PRAGMA data_version", commit_mark=open_mark,
                         lock=file_lock,
                         search_index=SQLiteIndex()),
}


def backend_of(dialect_name: str) -> AppBackend:
    """The app-DB backend for a SQLAlchemy dialect name (engine.dialect.name, a URL's backend name)."""
    return BACKENDS.get(dialect_name, SERVER_BACKEND)


def database_file(url: str) -> Path | None:
    """The file an app-DB URL keeps its data in; None for a server or an in-memory database."""
    parsed = make_url(url)
    if not backend_of(parsed.get_backend_name()).file_backed or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def _json_loads(text: str):
    """JSON columns decoded by orjson (every GET decodes a card's query and settings); the standard
    module still reads what orjson refuses (NaN and Infinity, which json.dumps writes)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


class AppDatabase:
    def __init__(self, url: str):
        contention.install()  # every request makes a Session: numbered without SQLAlchemy's lock
        self.url = url
        self.backend = backend_of(make_url(url).get_backend_name())
        path = database_file(url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.engine: Engine = create_engine(url, future=True, json_deserializer=_json_loads,
                                            **self.backend.engine_options)
        if self.backend.on_connect is not None:
            event.listen(self.engine, "connect", self.backend.on_connect)
        self.Session = sessionmaker(self.engine, expire_on_commit=False)
        if self.backend.counts_changes:
            changes.track(self.engine)  # every commit moves the counters of the tables it wrote
        if self.backend.reads_outside_transactions:
            pooling.reads_outside_transactions(self.engine)
        if self.backend.ping_after_idle_seconds is not None:
            pooling.ping_when_doubtful(self.engine, self.backend.ping_after_idle_seconds)
        self.write_behind = WriteBehind(self.engine)  # what reads write, off the request path
        # An in-memory SQLite database lives on one shared connection: no other connection to compare with.
        known = path is not None or not self.backend.file_backed
        mark = (functools.partial(self.backend.commit_mark, self.engine, path)
                if self.backend.commit_mark is not None and path is not None else None)
        self.changes = Changes(self.engine, self.backend.counts_changes and known, self.backend.changes_precheck,
                               self.backend.changes_fetch, mark)
        self.memo = Memo()  # answers kept while the tables they read are unchanged (core.appdb.memo)

    @contextlib.contextmanager
    def session(self):
        """A session for work outside a request (CLI, background jobs): commit on success."""
        session = self.Session()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def exclusive(self, name: str | None = None):
        """A context manager that one process at a time holds, among all processes on this app DB
        (core.appdb.locks): around migrations and start-up hooks; with `name`, a lock of that name
        instead (`sync-<database id>`). Not reentrant."""
        return self.backend.lock(self.engine, name) if self.backend.lock is not None else contextlib.nullcontext()

    def migrate(self, plugin_migrations=()) -> None:
        """The core's revisions, then each plugin's (core.assembly.records.Migrations), each set in
        its own version table; under the start-up lock, so that of several processes starting together
        one migrates and the others find the schema up to date."""
        from alembic import command

        with self.exclusive():
            command.upgrade(alembic_config(self.url, self.engine), "heads")
            for migrations in plugin_migrations:
                cfg = alembic_config(self.url, self.engine, migrations.directory, migrations.version_table)
                command.upgrade(cfg, "heads")
            if self.backend.counts_changes:  # a schema change: every memo answer ends (its writes were not counted)
                changes.touch(self.engine)

    def dispose(self) -> None:
        self.write_behind.close()
        self.changes.close()
        self.engine.dispose()


def alembic_config(url: str, engine: Engine | None = None, versions: Path | None = None,
                   version_table: str = "alembic_version"):
    """The core's environment; with `versions`, a plugin's revision directory run in the same
    environment and recorded in its own `version_table`."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("path_separator", "os")
    if versions is not None:
        cfg.set_main_option("version_locations", str(versions))
    cfg.attributes["version_table"] = version_table
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["engine"] = engine
    return cfg


def app_db() -> AppDatabase:
    return current_app.extensions["tessera"].db


# SQLAlchemy's identity map holds objects weakly: a collection or user read for one part of a response
# and dropped is read again by the next `session.get`. The request's session keeps every object it
# loads until it closes, so that a GET reads each row once.
HELD = "tessera.held"


@event.listens_for(Session, "loaded_as_persistent")
def _hold(db_session: Session, instance) -> None:
    held = db_session.info.get(HELD)
    if held is not None:
        held.append(instance)


def session() -> Session:
    """The request's app-DB session, opened on first use and closed when the request ends. The app
    DB's change counters are read as it opens, before the request's first query, and the tables the
    request's statements read are collected from then on (core.appdb.memo)."""
    # Asked many times per request: the app context's globals are looked up once (each use of the
    # `g` proxy looks them up again).
    app_globals = g._get_current_object()
    db_session = app_globals.__dict__.get("db_session")
    if db_session is None:
        db_session = app_globals.db_session = _open_session()
    reads = db_session.info.get(READS)
    if reads is not None and changes.reading.get() is not reads:  # its statements' tables are collected
        changes.reading.set(reads)
    return db_session


def _open_session() -> Session:
    database = app_db()
    info = {HELD: []}
    if has_request_context():  # core.appdb.memo answers on this session, under this request's counters
        environ = request.environ
        if CHANGES not in environ:  # once per request, whatever the app context (tests share one)
            environ[CHANGES] = database.changes.read()
        info[MEMO_INFO] = (database.memo, environ[CHANGES])
        info[READS] = set()
    return database.Session(info=info)


def close_request_session(exc=None) -> None:
    db_session = g.pop("db_session", None)
    if db_session is not None:
        db_session.info.pop(HELD, None)
        if db_session.info.get(READS) is not None:
            changes.reading.set(None)
        if exc is not None:
            db_session.rollback()
        db_session.close()
