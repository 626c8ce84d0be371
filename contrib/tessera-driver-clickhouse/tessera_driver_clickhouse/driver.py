"""ClickHouse as a Tessera database: the driver class (details, types, sync, read-only and timeouts).

The connection layer is transport.connect: clickhouse-connect over HTTP to a server, or chDB (the same
engine embedded) when the details name a database directory. A ClickHouse "database" is what Tessera
calls the database; its tables are synced from `system.tables` / `system.columns`. The SQL forms that
differ from the defaults are in `dialect.ClickHouseDialect`.
"""
from __future__ import annotations

import contextlib

from pydantic import Field
from sqlalchemy import text
from sqlalchemy.engine import URL, Engine
from sqlalchemy.pool import NullPool

from core.driver import ConnectionPolicy, FieldMeta, FKMeta, NetworkDetails, TableMeta, check_file_path
from core.driver.sql import SQLDriver

from . import sa as _sa  # noqa: F401 - registers the SQLAlchemy dialect
from .dialect import ClickHouseDialect
from .transport import connect

WRAPPERS = ("nullable(", "lowcardinality(")


class ClickHouseDetails(NetworkDetails):
    port: int | None = Field(None, title="Port", ge=1, le=65535,
                             description="The HTTP(S) port: 8123, or 8443 with a secure connection.")
    dbname: str = Field("default", title="Database name", json_schema_extra={"placeholder": "default"})
    user: str = Field("default", title="Username", json_schema_extra={"placeholder": "tessera_reader"},
                      description="Use a user without write grants; every statement also runs with readonly=1.")
    read_timeout: int = Field(300, title="Read timeout (seconds)", ge=1, le=86400)
    chdb_path: str | None = Field(None, title="Embedded chDB directory",
                                  description="Instead of a server: a chDB (embedded ClickHouse) database directory "
                                              "inside TESSERA_FILE_DB_DIRS, opened in this process.")


class ClickHouseDriver(ClickHouseDialect, SQLDriver):
    engine = "clickhouse"
    display_name = "ClickHouse"
    source_type = "community"
    sqlglot_dialect = "clickhouse"
    sqlalchemy_dialect = "tessera_clickhouse"
    Details = ClickHouseDetails
    dbapi_modules = ("clickhouse_connect",)
    default_port = 8123
    features = frozenset({
        "basic-aggregations", "standard-deviation-aggregations", "expressions", "native-parameters",
        "nested-queries", "binning", "case-sensitivity-string-filter-options", "left-join", "right-join",
        "inner-join", "full-join", "regex", "percentile-aggregations", "convert-timezone",
        "window-functions/offset", "window-functions/cumulative",
    })
    timeout_markers = ("TIMEOUT_EXCEEDED", "Code: 159.", "QUERY_WAS_CANCELLED")
    type_map = (
        ("bool", "type/Boolean"), ("int8", "type/Integer"), ("int16", "type/Integer"), ("int32", "type/Integer"),
        ("int64", "type/BigInteger"), ("int128", "type/BigInteger"), ("int256", "type/BigInteger"),
        ("uint8", "type/Integer"), ("uint16", "type/Integer"), ("uint32", "type/BigInteger"),
        ("uint", "type/BigInteger"), ("float", "type/Float"), ("decimal", "type/Decimal"),
        ("string", "type/Text"), ("fixedstring", "type/Text"), ("enum", "type/Text"), ("uuid", "type/UUID"),
        ("datetime64(", "type/DateTime"), ("datetime", "type/DateTime"), ("date", "type/Date"),
        ("time", "type/Time"), ("json", "type/JSON"), ("ipv4", "type/IPAddress"), ("ipv6", "type/IPAddress"),
        ("array", "type/Array"), ("map", "type/Dictionary"),
    )

    @classmethod
    def available(cls) -> bool:
        if super().available():
            return True
        import importlib.util

        return importlib.util.find_spec("chdb") is not None  # embedded use needs no server client

    @classmethod
    def url(cls, details: ClickHouseDetails) -> URL:
        return URL.create(cls.sqlalchemy_dialect)  # connections come from transport.connect

    @classmethod
    def engine_options(cls, details: ClickHouseDetails) -> dict:
        options = {"creator": lambda: connect(details)}
        if details.chdb_path:
            # A locked chDB session keeps readonly for good and takes its timeout before its first
            # statement, so each query gets a fresh one (no pool, no pre-ping).
            options.update(poolclass=NullPool, pool_pre_ping=False)
        return options

    @classmethod
    def check_details(cls, details: ClickHouseDetails, policy: ConnectionPolicy) -> ClickHouseDetails:
        if details.chdb_path:
            real = check_file_path(details.chdb_path, policy, "chdb_path", directory=True)
            return details.model_copy(update={"chdb_path": real})
        return super().check_details(details, policy)

    @classmethod
    def lockdown(cls, dbapi_connection, details) -> None:
        # Every statement on this connection runs with readonly=1 (ClickHouse refuses writes, DDL,
        # setting changes and the file/url/remote table functions under it).
        dbapi_connection.lock()

    @classmethod
    @contextlib.contextmanager
    def guard(cls, conn, timeout):
        raw = conn.connection.dbapi_connection
        raw.timeout = timeout
        try:
            yield
        finally:
            raw.timeout = None

    @classmethod
    def canceller(cls, conn):
        # HTTP: closing the response stops the query. chDB cannot stop a running statement from
        # another thread (its stream's cancel waits for it), so there only the timeout does.
        return getattr(conn.connection.dbapi_connection, "cancel", None)

    @classmethod
    def base_type(cls, database_type: str) -> str:
        lowered = database_type.lower()
        while lowered.startswith(WRAPPERS):
            lowered = lowered.split("(", 1)[1].rsplit(")", 1)[0]
        if lowered.startswith("datetime64") and "," in lowered or lowered.startswith("datetime("):
            return "type/DateTimeWithLocalTZ"  # a column with its own zone
        return super().base_type(lowered)

    # ---- sync through the engine's own catalog ------------------------------------------------------

    @classmethod
    def _catalog(cls, engine: Engine, sql: str, **params) -> list[tuple]:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql), params)]

    @classmethod
    def describe_tables(cls, engine: Engine) -> list[TableMeta]:
        rows = cls._catalog(engine, "SELECT name, comment FROM system.tables WHERE database = currentDatabase() "
                                    "AND NOT is_temporary AND name NOT LIKE '.inner%' ORDER BY name")
        return [TableMeta(name=name, description=comment or None) for name, comment in rows]

    @classmethod
    def describe_fields(cls, engine: Engine, table: TableMeta) -> list[FieldMeta]:
        rows = cls._catalog(engine, "SELECT name, type, position, is_in_primary_key, comment FROM system.columns "
                                    "WHERE database = currentDatabase() AND table = :t ORDER BY position", t=table.name)
        return [FieldMeta(name=name, database_type=kind, base_type=cls.base_type(kind), position=int(position) - 1,
                          pk=bool(pk), required=not kind.startswith("Nullable("), description=comment or None)
                for name, kind, position, pk, comment in rows]

    @classmethod
    def describe_fks(cls, engine: Engine, table: TableMeta) -> list[FKMeta]:
        return []  # ClickHouse has no foreign keys

    @classmethod
    def dbms_version(cls, engine: Engine) -> dict:
        version = cls._catalog(engine, "SELECT version()")[0][0]
        parts = [int(p) for p in version.split(".") if p.isdigit()]
        return {"flavor": cls.display_name, "version": version, "semantic-version": parts[:3]}


def register_drivers():
    return [ClickHouseDriver]
