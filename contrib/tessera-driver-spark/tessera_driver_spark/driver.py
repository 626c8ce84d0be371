"""Spark SQL through Spark Connect: connection details, lockdown, timeouts, sync through Spark's
catalog, and the compiled-MBQL forms Spark writes differently from PostgreSQL.

Read-only: Spark SQL has no read-only transaction, so the lockdown puts each connection in
`queries_only` mode (dbapi.py): every statement is parsed by Spark as the body of a subquery, where
only a query is valid. The lockdown also switches off SQL on files (SELECT ... FROM parquet.`/path`), fixes the
session time zone to UTC and starts the session in the database the details name, then reads each
setting back and refuses a connection whose server would not take them.
"""
from __future__ import annotations

import contextlib
import re
from functools import partial
from typing import Callable, ClassVar

from pydantic import Field, SecretStr, field_validator
from sqlalchemy.dialects import registry
from sqlalchemy.engine import URL, Connection, Engine
from sqlglot import exp

from core.driver import Details, FieldMeta, LockdownError, SQLDriver, TableMeta
from core.driver.deadlines import call_later
from core.driver.dialect import lit

from . import dbapi

registry.register("tessera_spark", "tessera_driver_spark.dbapi", "SparkConnectDialect")

# Settings every data connection must have; read back after setting them (a server may refuse one).
LOCKED_CONFS = {"spark.sql.runSQLOnFiles": "false", "spark.sql.session.timeZone": "UTC"}
# Rows stream as Arrow batches of this many rows (Spark's default of 10,000 holds more in memory).
# Adaptive execution is off because with it an interrupt does not always stop the statement: AQE
# submits each shuffle stage's job from a thread of its own, and when the interrupt lands while
# that stage is being prepared, Spark cancels the operation's jobs before that job exists; it is
# then submitted anyway and runs to its end with no operation left to interrupt (seen in about a
# third of timeouts shorter than 0.2 s). Without AQE the operation's own thread submits its jobs,
# and an interrupt that lands before the submission still cancels the job once its wait begins.
# Not covered: scalar subqueries (and broadcast joins) still run their jobs from thread pools of
# their own, and leave a job behind as often (10 of 20 timeouts under 0.2 s on a subquery).
SESSION_CONFS = {"spark.sql.execution.arrow.maxRecordsPerBatch": "1000", "spark.sql.adaptive.enabled": "false"}
TIMEOUT_REASON = "Query exceeded the timeout and was interrupted"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _plain_name(value: str | None) -> str | None:
    # These go into the Spark Connect URL (`sc://host:port/;user_id=...`): no separators, no options.
    if value is not None and not _NAME.match(value):
        raise ValueError("must be a plain name (letters, digits, '.', '_', '-')")
    return value


class SparkDetails(Details):
    host: str = Field("localhost", title="Host", json_schema_extra={"placeholder": "spark-connect.example.com"},
                      description="The Spark Connect server (Spark 3.5 or later; start-connect-server.sh).")
    port: int = Field(15002, title="Port", ge=1, le=65535)
    dbname: str = Field("default", title="Database", description="The database queries start in; every database "
                        "of the session's catalog is synced.")
    user: str | None = Field(None, title="User name", description="Sent to Spark Connect as user_id.")
    token: SecretStr | None = Field(None, title="Access token", description="A bearer token; it is sent over TLS only.")
    ssl: bool = Field(False, title="Use a secure connection (TLS)")

    _check_names = field_validator("host", "dbname", "user")(_plain_name)

    @field_validator("token")
    @classmethod
    def _check_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and re.search(r"[;\s/]", value.get_secret_value()):
            raise ValueError("must not contain ';', '/' or spaces")
        return value


def connect_url(details: SparkDetails) -> str:
    """The Spark Connect connection string (checked parts only; a client never supplies a URL)."""
    params = []
    if details.ssl or details.token:
        params.append("use_ssl=true")
    if details.user:
        params.append(f"user_id={details.user}")
    if details.token:
        params.append(f"token={details.token.get_secret_value()}")
    return f"sc://{details.host}:{details.port}/" + "".join(f";{p}" for p in params)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _session(conn: Connection):
    return conn.connection.dbapi_connection


class SparkDriver(SQLDriver):
    engine = "sparksql"  # Metabase's name, which clients send; `spark` rows are renamed by migrations/
    display_name = "Spark SQL"
    source_type = "community"
    sqlglot_dialect = "spark"
    sqlalchemy_dialect = "tessera_spark"
    Details = SparkDetails
    dbapi_modules = ("pyspark.sql.connect", "grpc", "pyarrow")
    features = frozenset({
        "basic-aggregations", "standard-deviation-aggregations", "expressions", "native-parameters",
        "nested-queries", "binning", "case-sensitivity-string-filter-options", "left-join", "right-join",
        "inner-join", "full-join", "regex", "percentile-aggregations", "schemas", "convert-timezone",
        "window-functions/offset", "window-functions/cumulative",
    })
    timeout_markers = (TIMEOUT_REASON,)
    type_map: ClassVar[tuple[tuple[str, str], ...]] = (
        ("interval", "type/*"), ("tinyint", "type/Integer"), ("smallint", "type/Integer"), ("bigint", "type/BigInteger"),
        ("int", "type/Integer"), ("float", "type/Float"), ("double", "type/Float"), ("decimal", "type/Decimal"),
        ("string", "type/Text"), ("varchar", "type/Text"), ("char", "type/Text"), ("boolean", "type/Boolean"),
        ("date", "type/Date"), ("timestamp_ntz", "type/DateTime"), ("timestamp", "type/DateTimeWithLocalTZ"),
        ("time", "type/Time"), ("array", "type/Array"), ("map", "type/Dictionary"), ("struct", "type/Dictionary"),
    )

    # ---- connecting ------------------------------------------------------------------------------

    @classmethod
    def url(cls, details: SparkDetails) -> URL:
        return URL.create(cls.sqlalchemy_dialect, host=details.host, port=details.port, database=details.dbname)

    @classmethod
    def engine_options(cls, details: SparkDetails) -> dict:
        return {"creator": partial(dbapi.connect, connect_url(details), (details.host, details.port))}

    @classmethod
    def lockdown(cls, dbapi_connection, details: SparkDetails) -> None:
        session = dbapi_connection.session
        try:
            for key, value in {**SESSION_CONFS, **LOCKED_CONFS}.items():
                session.conf.set(key, value)
            wrong = [key for key, value in LOCKED_CONFS.items() if str(session.conf.get(key)).lower() != value.lower()]
            if details is not None:
                session.catalog.setCurrentDatabase(details.dbname)
        except Exception as error:  # the server refused a setting or the database does not exist
            raise LockdownError(f"Spark session could not be locked down: {str(error).strip().splitlines()[0]}") from error
        if wrong:
            raise LockdownError(f"Spark session is not locked down ({', '.join(wrong)})")
        dbapi_connection.queries_only = True

    @classmethod
    @contextlib.contextmanager
    def guard(cls, conn: Connection, timeout: float | None):
        connection = _session(conn)
        timer = call_later(timeout, partial(connection.interrupt, TIMEOUT_REASON)) if timeout else None
        try:
            yield
        finally:
            if timer is not None:
                timer.cancel()  # first: a timeout firing now must not start interrupts after the reset
            connection.reset_interrupt()

    @classmethod
    def canceller(cls, conn: Connection) -> Callable[[], object] | None:
        return partial(_session(conn).interrupt, "Query was cancelled")

    # ---- introspection through the catalog API -----------------------------------------------------

    @classmethod
    @contextlib.contextmanager
    def _catalog(cls, engine: Engine):
        with engine.connect() as conn:
            try:
                yield _session(conn).session.catalog
            except Exception as error:  # noqa: BLE001 - pyspark errors, reported as the engine's
                raise cls.translate_error(error) from error

    @classmethod
    def syncable_schemas(cls, engine: Engine) -> list[str | None]:
        with cls._catalog(engine) as catalog:
            return sorted(db.name for db in catalog.listDatabases())

    @classmethod
    def describe_tables(cls, engine: Engine) -> list[TableMeta]:
        tables = []
        with cls._catalog(engine) as catalog:
            for schema in sorted(db.name for db in catalog.listDatabases()):
                tables += [TableMeta(name=t.name, schema=schema, description=t.description or None)
                           for t in catalog.listTables(dbName=schema) if not t.isTemporary]
        return tables

    @classmethod
    def describe_fields(cls, engine: Engine, table: TableMeta) -> list[FieldMeta]:
        with cls._catalog(engine) as catalog:
            columns = catalog.listColumns(".".join(_quoted(p) for p in (table.schema, table.name) if p))
        return [FieldMeta(name=c.name, database_type=c.dataType, base_type=cls.base_type(c.dataType), position=i,
                          description=c.description or None) for i, c in enumerate(columns)]

    @classmethod
    def describe_fks(cls, engine: Engine, table: TableMeta) -> list:
        return []  # Spark's catalog keeps no foreign keys

    @classmethod
    def dbms_version(cls, engine: Engine) -> dict:
        with engine.connect() as conn:
            version = _session(conn).session.version
        numbers = [int(p) for p in re.findall(r"\d+", version)[:3]]
        return {"flavor": cls.display_name, "version": version, "semantic-version": numbers}

    # ---- compiled MBQL: Spark's forms -------------------------------------------------------------

    @classmethod
    def weekday_from_sunday(cls, expr: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this="DAYOFWEEK", expressions=[expr])  # Sunday 1 .. Saturday 7 already

    @classmethod
    def date_add(cls, expr: exp.Expression, amount: exp.Expression, unit: str) -> exp.Expression:
        # TIMESTAMPADD keeps the time of day (DATE_ADD returns a DATE) and knows QUARTER.
        return exp.Anonymous(this="TIMESTAMPADD", expressions=[exp.var(unit.upper()), amount, expr])

    @classmethod
    def days_between(cls, start: exp.Expression, end: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this="DATEDIFF", expressions=[cls.cast_date(end), cls.cast_date(start)])

    @classmethod
    def seconds_between(cls, start: exp.Expression, end: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this="TIMESTAMPDIFF", expressions=[exp.var("SECOND"), start, end])

    @classmethod
    def temporal_literal(cls, value):
        import datetime as dt

        if isinstance(value, dt.datetime):
            return exp.Cast(this=lit(value.isoformat(sep=" ")), to=exp.DataType.build("timestamp_ntz", dialect="spark"))
        return super().temporal_literal(value)

    @classmethod
    def regex_match_first(cls, expr: exp.Expression, pattern: str) -> exp.Expression:
        # REGEXP_EXTRACT gives '' for no match: NULL is asked for, so test the match first.
        group = 1 if re.compile(pattern).groups else 0
        extract = exp.Anonymous(this="REGEXP_EXTRACT", expressions=[expr.copy(), lit(pattern), lit(group)])
        matches = exp.RegexpLike(this=expr, expression=lit(pattern))
        return exp.Case(ifs=[exp.If(this=matches, true=extract)])

    @classmethod
    def from_unix(cls, expr: exp.Expression, divisor: int) -> exp.Expression:
        name = {1: "TIMESTAMP_SECONDS", 1000: "TIMESTAMP_MILLIS", 1_000_000: "TIMESTAMP_MICROS"}.get(divisor)
        if name is None:
            return super().from_unix(expr, divisor)
        # The session time zone is UTC, so the instant's wall-clock time is its UTC time.
        return exp.Cast(this=exp.Anonymous(this=name, expressions=[expr]),
                        to=exp.DataType.build("timestamp_ntz", dialect="spark"))

    @classmethod
    def zoned_to_utc(cls, expr: exp.Expression) -> exp.Expression:
        return exp.Cast(this=expr, to=exp.DataType.build("timestamp_ntz", dialect="spark"))

    @classmethod
    def zone_to_utc(cls, expr: exp.Expression, zone: str) -> exp.Expression:
        return exp.Anonymous(this="TO_UTC_TIMESTAMP", expressions=[expr, lit(zone)])

    @classmethod
    def utc_to_zone(cls, expr: exp.Expression, zone: str) -> exp.Expression:
        return exp.Anonymous(this="FROM_UTC_TIMESTAMP", expressions=[expr, lit(zone)])

    @classmethod
    def transform(cls, tree: exp.Expression) -> exp.Expression:
        # sqlglot writes PERCENTILE_CONT ... WITHIN GROUP for Spark as PERCENTILE_APPROX, an estimate.
        def exact(node):
            if isinstance(node, exp.WithinGroup) and isinstance(node.this, exp.PercentileCont):
                order = node.expression.expressions[0]
                return cls.percentile(order.this, node.this.this)
            return node
        return tree.transform(exact, copy=False)

    @classmethod
    def percentile(cls, expr: exp.Expression, p: float) -> exp.Expression:
        return exp.Anonymous(this="PERCENTILE", expressions=[expr, p if isinstance(p, exp.Expression) else lit(p)])  # exact, interpolated
