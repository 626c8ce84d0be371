"""SQLDriver: the base of every driver for an engine SQLAlchemy speaks.

A driver is a declarative class, in the manner of Superset's db_engine_specs but small: `engine`,
`display_name`, `sqlglot_dialect`, a pydantic `Details` model (which also yields Metabase's
connection properties), `features`, and the DBAPI modules it needs. `SQLDriver` adds what every
SQLAlchemy engine shares: introspection through the inspector, `to_sql` (the one place SQL text is
produced) and `execute` (a read-only, time-limited, streaming run). An engine says only what
differs: how its URL is built, how a fresh DBAPI connection is locked down (`lockdown`) and how a
statement is made read-only and time-limited (`guard`).
"""
from __future__ import annotations

import contextlib
import itertools
from collections import deque
from typing import Any, Callable, ClassVar, Iterator

import sqlglot
from sqlalchemy import inspect, text
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import DBAPIError

from core.driver import disconnects
from core.driver.dialect import QueryDialect
from core.http.errors import Invalid

from .contract import Details, Driver, FileDetails, NetworkDetails
from .records import (
    ColumnMeta,
    FieldMeta,
    FKMeta,
    LockdownError,
    QueryError,
    QueryResult,
    QueryTimeout,
    TableMeta,
)
from .sources import ConnectionPolicy, check_file_path


class SQLDriver(QueryDialect, Driver):
    """A driver for an engine SQLAlchemy speaks. Subclasses declare; they override only what differs.

    The AST methods compiled MBQL needs (truncate_temporal, extract_temporal, date_add, ...) come
    from core.driver.dialect.QueryDialect; a driver overrides those its engine needs differently.

    A concrete driver (one that sets `engine`) must give `sqlalchemy_dialect`, a Details model and
    its own `lockdown` and `guard`; that is checked when the class is defined, not at first use.
    `url()` is built from NetworkDetails; file engines override it (and usually `engine_options`).
    """

    # (lower-cased database type prefix, Metabase base type), first match wins.
    type_map: ClassVar[tuple[tuple[str, str], ...]] = ()
    sqlalchemy_dialect: ClassVar[str]
    default_port: ClassVar[int | None] = None
    # Engine error classes (DBAPI exception types) or message fragments that mean "timed out".
    timeout_markers: ClassVar[tuple[str, ...]] = ()
    stream_batch: ClassVar[int] = 1000
    # What can_connect runs: it must make the engine read the database, not just answer.
    probe_sql: ClassVar[str] = "SELECT 1"

    @classmethod
    def in_process(cls) -> bool:
        """True for file engines (SQLite, DuckDB): the database runs inside this process, so a
        connection cannot go stale (no pre-ping) and threads only contend for the GIL."""
        return issubclass(cls.Details, FileDetails)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "engine" not in cls.__dict__:
            return
        missing = [name for name in ("display_name", "sqlglot_dialect", "sqlalchemy_dialect") if not hasattr(cls, name)]
        missing += [name for name in ("lockdown", "guard") if getattr(cls, name).__func__ is getattr(SQLDriver, name).__func__]
        if not issubclass(cls.Details, NetworkDetails) and cls.url.__func__ is SQLDriver.url.__func__:
            missing.append("url")
        if missing:
            raise TypeError(f"driver {cls.__name__} must define {', '.join(missing)}")

    # ---- connecting ------------------------------------------------------------------------------

    @classmethod
    def url(cls, details: Details) -> URL:
        """The SQLAlchemy URL, built field by field with URL.create: a client never supplies a URL."""
        assert isinstance(details, NetworkDetails)
        password = details.password.get_secret_value() if details.password else None
        return URL.create(cls.sqlalchemy_dialect, username=details.user, password=password or None,
                          host=details.host, port=details.port or cls.default_port, database=details.dbname)

    @classmethod
    def engine_options(cls, details: Details) -> dict:
        """Extra create_engine() keywords (connect_args, poolclass, creator)."""
        return {}

    @classmethod
    def check_details(cls, details: Details, policy: ConnectionPolicy) -> Details:
        """Static checks at registration (no connection yet): file paths, the app DB itself."""
        if isinstance(details, FileDetails):
            real = check_file_path(details.path(), policy, details.file_field)
            return details.model_copy(update={details.file_field: real})
        if isinstance(details, NetworkDetails) and policy.app_db_url:
            from sqlalchemy.engine import make_url

            app = make_url(policy.app_db_url)
            mine = cls.url(details)
            if (app.get_backend_name() == mine.get_backend_name() and app.database == mine.database
                    and (app.port or cls.default_port) == (mine.port or cls.default_port)
                    and _same_host(app.host, mine.host)):
                raise Invalid({"dbname": "The Tessera application database cannot be added as a data source."},
                              message="The Tessera application database cannot be added as a data source.")
        return details

    @classmethod
    def lockdown(cls, dbapi_connection, details: Details) -> None:
        """Runs on every new DBAPI connection before first use; raise LockdownError to refuse it."""

    @classmethod
    @contextlib.contextmanager
    def guard(cls, conn: Connection, timeout: float | None):
        """Around one statement: make it read-only and stop it after `timeout` seconds."""
        yield

    @classmethod
    def canceller(cls, conn: Connection) -> Callable[[], object] | None:
        """A callable that stops the statement running on `conn` from another thread (called when the
        client disconnects, core.driver.disconnects), or None when the engine has no way to."""
        return None

    # ---- Tessera's own tables (persisted models, uploads) -----------------------------------------
    # Only for drivers declaring the `persist-models` feature; DriverConformance checks them.
    # The schema Tessera's tables go in (created on first use); None: the default schema, the tables'
    # names carrying Tessera's prefix instead.
    owned_schema: ClassVar[str | None] = None
    # True for a single-writer file: a writer's commit waits on any reader of the file, so the rows to
    # write are read in full before writing starts.
    read_before_write: ClassVar[bool] = False

    @classmethod
    @contextlib.contextmanager
    def writable(cls, engine: Engine, details: Details, timeout: float | None = None) -> Iterator[Connection]:
        """A connection to the database `engine` reads, in a transaction that may write, committed when
        the block ends. The default is a plain transaction on the engine; a driver whose lockdown makes
        connections read-only lifts that here for this transaction only. With `timeout`, each statement
        is stopped after that many seconds where the engine can (actions' writes; persistence passes none)."""
        with engine.connect() as conn, conn.begin():
            yield conn

    # ---- SQL -------------------------------------------------------------------------------------

    @classmethod
    def transform(cls, tree: sqlglot.exp.Expression) -> sqlglot.exp.Expression:
        """Engine-specific AST fix-ups applied before rendering (sqlglot is wrong for some engines)."""
        return tree

    @classmethod
    def to_sql(cls, tree: sqlglot.exp.Expression, *, owned: bool = False) -> str:
        """The single place SQL text is produced from an AST.

        The passes rewrite the tree in place, so it is copied first, unless the caller hands over a
        tree it built for this call and never uses again (`owned`); the generator then works on that
        private tree without copying it once more.
        """
        tree = cls.transform(tree if owned else tree.copy())
        try:
            return tree.sql(dialect=cls.sql_dialect(), copy=False)
        finally:
            _release(tree)

    @classmethod
    def sql_dialect(cls):
        """The sqlglot dialect SQL is written in: `sqlglot_dialect`, or a subclass of it that fixes
        what sqlglot gets wrong for this engine."""
        return cls.sqlglot_dialect

    # ---- running ---------------------------------------------------------------------------------

    @classmethod
    def is_timeout(cls, error: BaseException) -> bool:
        text_ = f"{type(error).__name__}: {error}"
        return any(marker in text_ for marker in cls.timeout_markers)

    @classmethod
    def translate_error(cls, error: BaseException) -> QueryError:
        original = getattr(error, "orig", None) or error
        message = str(original).strip().splitlines()[0] if str(original).strip() else type(original).__name__
        if cls.is_timeout(original):
            return QueryTimeout(f"Query exceeded the timeout and was cancelled: {message}")
        return QueryError(message)

    @classmethod
    def column_meta(cls, cursor) -> list[ColumnMeta]:
        columns = []
        for entry in cursor.description or ():
            database_type = cls.result_type_name(entry, cursor)
            columns.append(ColumnMeta(entry[0], database_type, cls.base_type(database_type) if database_type else "type/*"))
        return columns

    @classmethod
    def result_type_name(cls, entry, cursor) -> str:
        """The engine's type name for a cursor.description entry ("" when the engine gives none)."""
        return "" if entry[1] is None else str(entry[1])

    @classmethod
    @contextlib.contextmanager
    def execute(cls, engine: Engine, sql: str, params: dict | None = None, *,
                timeout: float | None = None, max_rows: int | None = None) -> Iterator[QueryResult]:
        """Run one statement read-only; yield its columns and a row iterator streamed from the cursor.

        `sql` uses SQLAlchemy text() named parameters (`:p1`), bound by the DBAPI. The statement runs
        in a transaction the engine itself keeps read-only and is stopped after `timeout` seconds;
        failures raise QueryError or QueryTimeout with the engine's message. Rows are read in
        batches from a server-side or unbuffered cursor, never all at once.
        """
        try:
            conn = engine.connect()
        except (DBAPIError, LockdownError) as error:
            raise cls.translate_error(error) from error
        with conn:
            try:
                with cls._translated(), cls.guard(conn, timeout), disconnects.on_disconnect(lambda: cls.canceller(conn)), \
                        cls.open_result(conn, sql, params, max_rows) as result:
                    yield result
            finally:
                if conn.in_transaction():
                    conn.rollback()

    @classmethod
    @contextlib.contextmanager
    def open_result(cls, conn: Connection, sql: str, params: dict | None,
                    max_rows: int | None) -> Iterator[QueryResult]:
        """The statement on a connection `execute` has guarded: yields its QueryResult, and closes
        its cursor when the consumer is done. A driver that reads rows its own way overrides this."""
        result = conn.execute(text(sql), params or {}, execution_options={
            "stream_results": True, "max_row_buffer": cls.stream_batch})
        read = {"all": False}
        try:
            columns = cls.column_meta(result.cursor) if result.returns_rows else []
            yield QueryResult(columns, cls._rows(result, max_rows, read))
        finally:
            if read["all"]:
                result.close()
            else:
                cls.abandon(conn, result)

    @classmethod
    def abandon(cls, conn: Connection, result) -> None:
        """Close a result whose rows were not all read (max_rows reached, consumer gone). It runs
        before the guard resets the session, since an unread unbuffered result would block that."""
        result.close()

    @classmethod
    @contextlib.contextmanager
    def _translated(cls):
        try:
            yield
        except DBAPIError as error:
            raise cls.translate_error(error) from error

    @classmethod
    def _rows(cls, result, max_rows: int | None, read: dict) -> Iterator[tuple]:
        if not result.returns_rows:
            read["all"] = True
            return iter(())
        # Rows flow batch by batch through C iterators (chain, islice): an export of a million rows
        # must not pay for a Python generator step per row.
        rows = itertools.chain.from_iterable(cls._batches(result, read))
        return rows if max_rows is None else itertools.islice(rows, max_rows)

    @classmethod
    def _batches(cls, result, read: dict) -> Iterator[list]:
        # A text() statement has no result processors, so the DBAPI's rows are already the values:
        # reading its cursor directly skips building a SQLAlchemy Row per row (half an export's time).
        # SQLAlchemy's streaming strategy pre-reads a row into its buffer; those rows come first. Any
        # other (or unknown) fetch strategy is read through SQLAlchemy's public API.
        strategy = getattr(result, "cursor_strategy", None)
        kind = type(strategy).__name__
        direct = kind == "CursorFetchStrategy" or (kind == "BufferedRowCursorFetchStrategy"
                                                   and isinstance(getattr(strategy, "_rowbuffer", None), deque))
        try:
            if direct:
                pending = getattr(strategy, "_rowbuffer", None)
                if pending:
                    first = [tuple(row) for row in pending]
                    pending.clear()
                    yield first
                cursor = result.cursor
                while True:
                    batch = cursor.fetchmany(cls.stream_batch)
                    if not batch:
                        break
                    yield batch if type(batch[0]) is tuple else [tuple(row) for row in batch]
            else:
                for partition in result.partitions(cls.stream_batch):
                    yield [tuple(row) for row in partition]
            read["all"] = True
        except Exception as error:  # DBAPI exception classes too: the cursor is read directly here
            raise cls.translate_error(error) from error
        finally:
            if read["all"]:
                result.close()

    # ---- introspection ---------------------------------------------------------------------------

    @classmethod
    def base_type(cls, database_type: str) -> str:
        lowered = database_type.lower()
        for prefix, base in cls.type_map:
            if lowered.startswith(prefix):
                return base
        return "type/*"

    @classmethod
    def describe_tables(cls, engine: Engine) -> list[TableMeta]:
        inspector = inspect(engine)
        schemas = cls.syncable_schemas(engine)
        tables = []
        for schema in schemas:
            for name in inspector.get_table_names(schema=schema) + inspector.get_view_names(schema=schema):
                tables.append(TableMeta(name=name, schema=schema))
        return tables

    @classmethod
    def syncable_schemas(cls, engine: Engine) -> list[str | None]:
        return [None]

    @classmethod
    def column_type_name(cls, column: dict) -> str:
        """The database type of an inspected column, as shown in Field.database_type."""
        return _type_name(column["type"])

    @classmethod
    def describe_fields(cls, engine: Engine, table: TableMeta) -> list[FieldMeta]:
        inspector = inspect(engine)
        pk = set(inspector.get_pk_constraint(table.name, schema=table.schema).get("constrained_columns") or ())
        fields = []
        for position, column in enumerate(inspector.get_columns(table.name, schema=table.schema)):
            database_type = cls.column_type_name(column)
            fields.append(FieldMeta(
                name=column["name"], database_type=database_type, base_type=cls.base_type(database_type),
                position=position, pk=column["name"] in pk, required=not column.get("nullable", True),
                auto_increment=bool(column.get("autoincrement") is True), description=column.get("comment"),
            ))
        return fields

    @classmethod
    def describe_fks(cls, engine: Engine, table: TableMeta) -> list[FKMeta]:
        inspector = inspect(engine)
        fks = []
        for fk in inspector.get_foreign_keys(table.name, schema=table.schema):
            for column, target in zip(fk["constrained_columns"], fk["referred_columns"]):
                fks.append(FKMeta(column=column, target_table=fk["referred_table"], target_column=target,
                                  target_schema=fk.get("referred_schema")))
        return fks

    @classmethod
    def estimate_row_counts(cls, engine: Engine, tables: list[TableMeta]) -> dict[tuple[str, str], int]:
        """Rows per table by (schema or "", name), where the engine keeps a cheap estimate (its catalog's
        statistics); a table it has none for is left out. The sync stores them as the tables'
        estimated_row_count. Never a scan of a big table: an engine without statistics gives {}."""
        return {}

    @classmethod
    def dbms_version(cls, engine: Engine) -> dict:
        """Metabase's `dbms_version` of a database: flavor, version and semantic-version."""
        with engine.connect() as conn:
            info = conn.dialect.server_version_info or ()
        return {"flavor": cls.display_name, "version": ".".join(str(p) for p in info),
                "semantic-version": [p for p in info if isinstance(p, int)][:3]}


def _same_host(a: str | None, b: str | None) -> bool:
    loopback = {None, "", "localhost", "127.0.0.1", "::1"}
    return (a in loopback and b in loopback) or (a or "").lower() == (b or "").lower()


_type_dialects: dict[type, Any] = {}


def _type_name(type_) -> str:
    """str(type_) without building a new dialect for every column (str() does, and on a wide schema
    that costs more than reading the columns). The dialect is the one str() would pick."""
    cls = type(type_)
    dialect = _type_dialects.get(cls)
    if dialect is None:
        dialect = _type_dialects[cls] = type_._default_dialect()
    return type_.compile(dialect=dialect)


def _release(tree: sqlglot.exp.Expression) -> None:
    """Unlink a private tree's nodes from their parents once it has been rendered. Parent links
    make every tree a reference cycle that only the cyclic collector frees; a sync renders a query
    per table, and that garbage made it run full collections of the whole heap (a third of the
    time of a wide sync). Without the links the tree is freed as soon as it is dropped."""
    for node in tree.walk():
        node.parent = None
