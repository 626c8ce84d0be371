"""The DuckDB driver (duckdb + duckdb-engine), locked down as compat/security.md section 2 says.

The file opens `read_only` with external access off (no file reads or writes beyond the database
itself, no ATTACH, no extension install or load, no network), memory and threads capped and the
configuration locked, so a query cannot switch any of it back on. The settings are read back from
the engine and a connection that is not locked is refused: once per database instance when the
Anchor opens it (its per-query sessions cannot change any of them, lock_configuration forbids even
SET SESSION), and on every other connection handed to `lockdown`. Timeouts call `interrupt()` from
the process's timer thread (core.driver.deadlines), the one way DuckDB stops a running statement.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time

from pydantic import Field
from sqlalchemy.engine import URL, Engine
from sqlalchemy.pool import NullPool
from sqlglot import exp

from core import hookimpl
from core.driver import (
    FieldMeta,
    FileDetails,
    FKMeta,
    LockdownError,
    QueryResult,
    SQLDriver,
    TableMeta,
)
from core.driver.dialect import lit

LOCKED_CONFIG = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "memory_limit": os.environ.get("TESSERA_DUCKDB_MEMORY_LIMIT", "1GB"),
    "threads": min(4, os.cpu_count() or 1),
    # Last: nothing above can be changed by SQL once the connection is up.
    "lock_configuration": True,
}


# What lockdown reads back; the rest of LOCKED_CONFIG cannot change once lock_configuration is on.
EXPECTED = {"enable_external_access": "false", "lock_configuration": "true",
            "autoload_known_extensions": "false", "autoinstall_known_extensions": "false"}
VERIFIED = "_tessera_verified_instance"


def unlocked_settings(connection) -> list[str]:
    """The EXPECTED settings this DuckDB connection has otherwise, read from the engine itself."""
    # current_setting() per name costs ~0.5 ms; scanning duckdb_settings() cost ~7 ms.
    values = connection.execute("SELECT " + ", ".join(f"current_setting('{name}')" for name in EXPECTED)).fetchone()
    return sorted(name for name, value in zip(EXPECTED, values) if str(value).lower() != EXPECTED[name])


_SESSION_CLASS = None


def _session_class():
    """duckdb-engine's connection wrapper without explicit transactions. A session runs one
    statement of a read-only database and is closed after it (SessionPerQuery), so DuckDB's own
    per-statement transaction is all there is to have: BEGIN and ROLLBACK cost 0.4 ms each and
    discarding the session ends whatever a statement began."""
    global _SESSION_CLASS
    if _SESSION_CLASS is None:
        from duckdb_engine import ConnectionWrapper

        class Session(ConnectionWrapper):
            def begin(self) -> None:
                pass

            def rollback(self) -> None:
                pass

        _SESSION_CLASS = Session
    return _SESSION_CLASS


class Anchor:
    """One locked-down, read-only connection per engine; each checkout is a fresh session on it."""

    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        self.connection = None

    def __call__(self):
        import duckdb  # here, not at import time: without duckdb the driver is hidden, not broken

        with self.lock:
            if self.connection is None:
                connection = duckdb.connect(self.path, read_only=True, config=dict(LOCKED_CONFIG))
                wrong = unlocked_settings(connection)
                if wrong:
                    connection.close()
                    raise LockdownError(f"DuckDB connection is not locked down ({', '.join(wrong)})")
                self.connection = connection
            # cursor() is a new DuckDB connection (session) on the same database instance: 0.6 ms.
            # Its settings are the instance's, checked above and locked, so lockdown need not read
            # them again per query (~0.6 ms each).
            session = _session_class()(self.connection.cursor())
            setattr(session, VERIFIED, self.connection)
            return session

    def close(self) -> None:
        with self.lock:
            if self.connection is not None:
                self.connection.close()
                self.connection = None


class SessionPerQuery(NullPool):
    """No pooled sessions: `SET search_path`, temporary tables, macros and variables are session
    state that DuckDB allows even when locked, so a pooled session would carry one user's changes
    into the next user's query. Disposing the engine closes the anchor (and releases the file)."""

    def dispose(self) -> None:
        close = getattr(self._creator, "close", None)
        if close is not None:
            close()


class DuckDBDetails(FileDetails):
    file_field = "database_file"
    database_file: str = Field(title="Database file", description="A DuckDB file inside one of the directories in "
                               "TESSERA_FILE_DB_DIRS; it is opened read-only.",
                               json_schema_extra={"placeholder": "/srv/tessera/files/warehouse.duckdb"})


class DuckDBDriver(SQLDriver):
    engine = "duckdb"
    display_name = "DuckDB"
    sqlglot_dialect = "duckdb"
    sqlalchemy_dialect = "duckdb"
    Details = DuckDBDetails
    dbapi_modules = ("duckdb", "duckdb_engine")
    features = frozenset({
        "basic-aggregations", "standard-deviation-aggregations", "expressions", "native-parameters",
        "nested-queries", "binning", "case-sensitivity-string-filter-options", "left-join", "right-join",
        "inner-join", "full-join", "foreign-keys", "regex", "percentile-aggregations", "schemas",
        "convert-timezone", "window-functions/offset", "window-functions/cumulative",
    })
    timeout_markers = ("InterruptException", "Interrupted")
    type_map = (
        ("interval", "type/*"), ("hugeint", "type/BigInteger"), ("ubigint", "type/BigInteger"), ("bigint", "type/BigInteger"),
        ("int", "type/Integer"), ("smallint", "type/Integer"), ("tinyint", "type/Integer"),
        ("usmallint", "type/Integer"), ("utinyint", "type/Integer"), ("uinteger", "type/Integer"),
        ("decimal", "type/Decimal"), ("numeric", "type/Decimal"),
        ("double", "type/Float"), ("float", "type/Float"), ("real", "type/Float"),
        ("varchar", "type/Text"), ("text", "type/Text"), ("string", "type/Text"), ("char", "type/Text"),
        ("boolean", "type/Boolean"), ("bool", "type/Boolean"),
        ("timestamp with time zone", "type/DateTimeWithLocalTZ"), ("timestamptz", "type/DateTimeWithLocalTZ"),
        ("timestamp", "type/DateTime"), ("datetime", "type/DateTime"), ("date", "type/Date"),
        ("time", "type/Time"), ("uuid", "type/UUID"), ("json", "type/JSON"),
    )

    @classmethod
    def url(cls, details: DuckDBDetails) -> URL:
        return URL.create("duckdb", database=details.database_file)

    @classmethod
    def engine_options(cls, details: DuckDBDetails) -> dict:
        # The session is closed on check-in; its Connection already rolled back (0.4 ms a reset).
        return {"creator": Anchor(details.database_file), "poolclass": SessionPerQuery, "pool_reset_on_return": None}

    @classmethod
    def lockdown(cls, dbapi_connection, details) -> None:
        # A session the Anchor opened on an instance it verified is as locked as that instance.
        if getattr(dbapi_connection, VERIFIED, None) is not None:
            return
        wrong = unlocked_settings(dbapi_connection)
        if wrong:
            raise LockdownError(f"DuckDB connection is not locked down ({', '.join(wrong)})")

    @classmethod
    @contextlib.contextmanager
    def guard(cls, conn, timeout):
        if timeout is None:
            yield
            return
        from core.driver.deadlines import call_later

        deadline = call_later(timeout, conn.connection.dbapi_connection.interrupt)
        try:
            yield
        finally:
            deadline.cancel()

    @classmethod
    def canceller(cls, conn):
        return conn.connection.dbapi_connection.interrupt

    @classmethod
    @contextlib.contextmanager
    def open_result(cls, conn, sql, params, max_rows):
        # As SQLDriver's, plus CSV text written by DuckDB itself (drivers/duckdb_csv.py) for a
        # query whose first execution was quick enough to run again.
        from sqlalchemy import text

        from . import duckdb_csv

        started = time.monotonic()
        result = conn.execute(text(sql), params or {}, execution_options={
            "stream_results": True, "max_row_buffer": cls.stream_batch})
        quick = time.monotonic() - started < duckdb_csv.RERUN_BELOW
        read = {"all": False}
        writer = None
        try:
            columns = cls.column_meta(result.cursor) if result.returns_rows else []
            if quick and columns:
                writer = duckdb_csv.CsvWriter(conn, sql, params, columns, result.close)
            yield QueryResult(columns, cls._rows(result, max_rows, read), writer)
        finally:
            if writer is not None:
                writer.close()
            if read["all"]:
                result.close()
            else:
                cls.abandon(conn, result)

    @classmethod
    def syncable_schemas(cls, engine: Engine) -> list[str | None]:
        # The inspector names schemas "catalog.schema" across attached catalogs; only this file's count.
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT schema_name FROM information_schema.schemata WHERE catalog_name = current_database() "
                "AND schema_name NOT IN ('information_schema', 'pg_catalog') ORDER BY schema_name").all()
        return [row[0] for row in rows]

    @classmethod
    def dbms_version(cls, engine: Engine) -> dict:
        # duckdb-engine reports a fixed (8, 0); the engine knows its own version.
        with engine.connect() as conn:
            version = conn.exec_driver_sql("SELECT version()").scalar().lstrip("v")
        return {"flavor": "DuckDB", "version": version,
                "semantic-version": [int(p) for p in version.split("-")[0].split(".") if p.isdigit()][:3]}

    # duckdb-engine reflects through PostgreSQL catalog queries that SQLAlchemy 2.1 writes with
    # REGCLASS casts and pg_collation, which DuckDB lacks; DuckDB's own catalog functions are exact.

    @classmethod
    def _catalog(cls, engine: Engine, sql: str, **params) -> list:
        from sqlalchemy import text

        with engine.connect() as conn:
            return conn.execute(text(sql), params).all()

    @classmethod
    def describe_tables(cls, engine: Engine) -> list[TableMeta]:
        rows = cls._catalog(engine, """
            SELECT schema_name, table_name, comment FROM duckdb_tables()
             WHERE database_name = current_database() AND NOT temporary
            UNION ALL
            SELECT schema_name, view_name, comment FROM duckdb_views()
             WHERE database_name = current_database() AND NOT temporary AND NOT internal
            ORDER BY 1, 2""")
        return [TableMeta(name=name, schema=schema, description=comment) for schema, name, comment in rows]

    @classmethod
    def estimate_row_counts(cls, engine: Engine, tables: list[TableMeta]) -> dict[tuple[str, str], int]:
        # DuckDB's own count of a table's rows (duckdb_tables().estimated_size).
        rows = cls._catalog(engine, """
            SELECT schema_name, table_name, estimated_size FROM duckdb_tables()
             WHERE database_name = current_database() AND NOT temporary""")
        return {(schema, name): int(size) for schema, name, size in rows if size is not None}

    @classmethod
    def _constraints(cls, engine: Engine, table: TableMeta, kind: str) -> list:
        return cls._catalog(engine, """
            SELECT constraint_column_names, referenced_table, referenced_column_names FROM duckdb_constraints()
             WHERE database_name = current_database() AND schema_name = :schema AND table_name = :table
               AND constraint_type = :kind""", schema=table.schema or "main", table=table.name, kind=kind)

    @classmethod
    def describe_fields(cls, engine: Engine, table: TableMeta) -> list[FieldMeta]:
        pk = {column for row in cls._constraints(engine, table, "PRIMARY KEY") for column in row[0]}
        rows = cls._catalog(engine, """
            SELECT column_name, data_type, is_nullable, column_default, comment FROM duckdb_columns()
             WHERE database_name = current_database() AND schema_name = :schema AND table_name = :table
             ORDER BY column_index""", schema=table.schema or "main", table=table.name)
        return [FieldMeta(name=name, database_type=database_type, base_type=cls.base_type(database_type),
                          position=position, pk=name in pk, required=not nullable,
                          auto_increment="nextval(" in (default or ""), description=comment)
                for position, (name, database_type, nullable, default, comment) in enumerate(rows)]

    @classmethod
    def describe_fks(cls, engine: Engine, table: TableMeta) -> list[FKMeta]:
        return [FKMeta(column=column, target_table=target_table, target_column=target, target_schema=table.schema)
                for columns, target_table, targets in cls._constraints(engine, table, "FOREIGN KEY")
                for column, target in zip(columns, targets)]


    # ---- compiled MBQL -----------------------------------------------------------------------------

    @classmethod
    def regex_match_first(cls, expr, pattern):
        # REGEXP_EXTRACT answers '' when nothing matches; NULL is what the other engines answer.
        return exp.Nullif(this=exp.RegexpExtract(this=expr, expression=lit(pattern)), expression=lit(""))

    @classmethod
    def url_part(cls, expr, part):
        from core.driver import urls

        extract = exp.RegexpExtract(this=expr, expression=lit(urls.GROUPED[part]), group=lit(1))
        return exp.Nullif(this=extract, expression=lit(""))

    @classmethod
    def percentile(cls, expr, p):
        # sqlglot renders the WITHIN GROUP form wrongly for DuckDB; QUANTILE_CONT is its own spelling.
        return exp.PercentileCont(this=expr, expression=lit(p))


@hookimpl
def register_drivers():
    return [DuckDBDriver]
