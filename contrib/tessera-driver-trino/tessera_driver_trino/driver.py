"""Trino as a Tessera database: the driver class (details, types, sync, timeouts).

A Tessera database is one Trino catalog; its schemas and tables are synced from the catalog's own
`information_schema`. Trino has no per-session read-only switch that every connector honours, so
read-only access is the Trino side's job (a user whose access control grants SELECT only); Tessera
bounds each statement with the `query_max_execution_time` session property. The SQL forms that differ
from the defaults are in `dialect.TrinoDialect`.
"""
from __future__ import annotations

import contextlib

from pydantic import Field
from sqlalchemy import text
from sqlalchemy.engine import URL, Engine

from core.driver import FieldMeta, FKMeta, NetworkDetails, TableMeta
from core.driver.sql import SQLDriver

from .dialect import TrinoDialect


class TrinoDetails(NetworkDetails):
    port: int | None = Field(None, title="Port", ge=1, le=65535, description="8080, or 443 with a secure connection.")
    dbname: str = Field(title="Catalog", json_schema_extra={"placeholder": "hive"})
    schema_name: str | None = Field(None, title="Schema (optional)", description="Sync only this schema.")
    user: str = Field(title="Username", json_schema_extra={"placeholder": "tessera_reader"},
                      description="Use a user whose access control allows SELECT only.")


class TrinoDriver(TrinoDialect, SQLDriver):
    engine = "trino"
    display_name = "Trino"
    source_type = "community"
    sqlglot_dialect = "trino"
    sqlalchemy_dialect = "trino"
    Details = TrinoDetails
    dbapi_modules = ("trino",)
    default_port = 8080
    features = frozenset({
        "basic-aggregations", "standard-deviation-aggregations", "expressions", "native-parameters",
        "nested-queries", "binning", "case-sensitivity-string-filter-options", "left-join", "right-join",
        "inner-join", "full-join", "regex", "schemas", "convert-timezone",
        "window-functions/offset", "window-functions/cumulative",
    })
    timeout_markers = ("EXCEEDED_TIME_LIMIT", "Query exceeded maximum time limit")
    type_map = (
        ("boolean", "type/Boolean"), ("tinyint", "type/Integer"), ("smallint", "type/Integer"),
        ("integer", "type/Integer"), ("bigint", "type/BigInteger"), ("real", "type/Float"), ("double", "type/Float"),
        ("decimal", "type/Decimal"), ("varchar", "type/Text"), ("char", "type/Text"), ("json", "type/JSON"),
        ("uuid", "type/UUID"), ("ipaddress", "type/IPAddress"), ("date", "type/Date"),
        ("timestamp with time zone", "type/DateTimeWithLocalTZ"), ("timestamp", "type/DateTime"),
        ("time", "type/Time"), ("array", "type/Array"), ("map", "type/Dictionary"), ("row", "type/Structured"),
        ("varbinary", "type/*"),
    )

    @classmethod
    def url(cls, details: TrinoDetails) -> URL:
        database = details.dbname + (f"/{details.schema_name}" if details.schema_name else "")
        return URL.create("trino", username=details.user, host=details.host,
                          port=details.port or (443 if details.ssl else cls.default_port), database=database)

    @classmethod
    def engine_options(cls, details: TrinoDetails) -> dict:
        args: dict = {"http_scheme": "https" if details.ssl else "http", "source": "tessera"}
        if details.password:
            from trino.auth import BasicAuthentication

            args["auth"] = BasicAuthentication(details.user, details.password.get_secret_value())
        return {"connect_args": args}

    @classmethod
    def check_details(cls, details: TrinoDetails, policy):
        if details.password and not details.ssl:
            from core.http.errors import Invalid

            raise Invalid({"ssl": "Trino accepts passwords only over a secure connection."},
                          message="Trino accepts passwords only over a secure connection.")
        return super().check_details(details, policy)

    @classmethod
    def lockdown(cls, dbapi_connection, details) -> None:
        # Trino connections are stateless HTTP: nothing to switch on per connection. What a user may
        # do is Trino's access control (see the module docstring).
        return None

    @classmethod
    @contextlib.contextmanager
    def guard(cls, conn, timeout):
        if timeout is not None:
            conn.exec_driver_sql(f"SET SESSION query_max_execution_time = '{max(1, int(timeout))}s'")
        try:
            yield
        finally:
            if timeout is not None:
                conn.exec_driver_sql("RESET SESSION query_max_execution_time")

    @classmethod
    def _catalog(cls, engine: Engine, sql: str, **params) -> list[tuple]:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql), params)]

    @classmethod
    def syncable_schemas(cls, engine: Engine) -> list[str | None]:
        schema = engine.url.database.split("/", 1)[1] if "/" in (engine.url.database or "") else None
        if schema:
            return [schema]
        rows = cls._catalog(engine, "SELECT schema_name FROM information_schema.schemata "
                                    "WHERE schema_name <> 'information_schema' ORDER BY schema_name")
        return [row[0] for row in rows]

    @classmethod
    def describe_tables(cls, engine: Engine) -> list[TableMeta]:
        tables = []
        for schema in cls.syncable_schemas(engine):
            rows = cls._catalog(engine, "SELECT table_name FROM information_schema.tables WHERE table_schema = :s "
                                        "ORDER BY table_name", s=schema)
            tables += [TableMeta(name=row[0], schema=schema) for row in rows]
        return tables

    @classmethod
    def describe_fields(cls, engine: Engine, table: TableMeta) -> list[FieldMeta]:
        rows = cls._catalog(engine, "SELECT column_name, data_type, is_nullable, comment FROM information_schema.columns "
                                    "WHERE table_schema = :s AND table_name = :t ORDER BY ordinal_position",
                            s=table.schema, t=table.name)
        return [FieldMeta(name=name, database_type=kind, base_type=cls.base_type(kind), position=i,
                          required=nullable == "NO", description=comment or None)
                for i, (name, kind, nullable, comment) in enumerate(rows)]

    @classmethod
    def describe_fks(cls, engine: Engine, table: TableMeta) -> list[FKMeta]:
        return []  # Trino exposes no foreign keys

    @classmethod
    def dbms_version(cls, engine: Engine) -> dict:
        version = str(cls._catalog(engine, "SELECT node_version FROM system.runtime.nodes LIMIT 1")[0][0])
        parts = [int(p) for p in version.split("-")[0].split(".") if p.isdigit()]
        return {"flavor": cls.display_name, "version": version, "semantic-version": parts[:3] or [0]}
