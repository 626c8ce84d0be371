"""The PostgreSQL driver (psycopg 3), locked down as compat/security.md section 2 says.

A read-only transaction does not stop `COPY ... TO PROGRAM`, so the role itself must be harmless:
every new connection checks it and refuses superusers, roles that can create roles (they could
grant themselves the next three) and members of pg_execute_server_program, pg_read_server_files
and pg_write_server_files. Sessions default to read-only; each statement also runs in its own
`SET TRANSACTION READ ONLY` transaction with `SET LOCAL statement_timeout`, which the server enforces.
Connection parameters come only from the Details allowlist; no option string reaches libpq.
"""
from __future__ import annotations

import contextlib

from sqlalchemy.engine import Engine

from core import hookimpl
from core.driver import LockdownError, NetworkDetails, SQLDriver
from core.driver.records import TableMeta

ROLE_CHECK = """
SELECT r.rolsuper, r.rolcreaterole,
       pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER'),
       pg_has_role(current_user, 'pg_read_server_files', 'MEMBER'),
       pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')
  FROM pg_roles r WHERE r.rolname = current_user
"""
PRIVILEGES = ("is a superuser", "can create roles", "is a member of pg_execute_server_program",
              "is a member of pg_read_server_files", "is a member of pg_write_server_files")


class PostgresDetails(NetworkDetails):
    pass


def role_problems(dbapi_connection) -> list[str]:
    with dbapi_connection.cursor() as cursor:
        cursor.execute(ROLE_CHECK)
        row = cursor.fetchone()
    return [why for flag, why in zip(row or (True,) * len(PRIVILEGES), PRIVILEGES) if flag]


class PostgresDriver(SQLDriver):
    engine = "postgres"
    display_name = "PostgreSQL"
    sqlglot_dialect = "postgres"
    sqlalchemy_dialect = "postgresql+psycopg"
    default_port = 5432
    Details = PostgresDetails
    dbapi_modules = ("psycopg",)
    features = frozenset({
        "basic-aggregations", "standard-deviation-aggregations", "expressions", "native-parameters",
        "nested-queries", "binning", "case-sensitivity-string-filter-options", "left-join", "right-join",
        "inner-join", "full-join", "foreign-keys", "regex", "percentile-aggregations", "schemas",
        "convert-timezone", "window-functions/offset", "window-functions/cumulative", "persist-models", "actions",
    })
    timeout_markers = ("QueryCanceled", "canceling statement due to statement timeout")
    type_map = (
        ("interval", "type/*"), ("inet", "type/IPAddress"), ("bigint", "type/BigInteger"), ("int8", "type/BigInteger"), ("bigserial", "type/BigInteger"),
        ("integer", "type/Integer"), ("int", "type/Integer"), ("smallint", "type/Integer"),
        ("serial", "type/Integer"), ("oid", "type/Integer"),
        ("numeric", "type/Decimal"), ("decimal", "type/Decimal"), ("money", "type/Decimal"),
        ("double precision", "type/Float"), ("float", "type/Float"), ("real", "type/Float"),
        ("character varying", "type/Text"), ("varchar", "type/Text"), ("character", "type/Text"),
        ("char", "type/Text"), ("bpchar", "type/Text"), ("text", "type/Text"), ("name", "type/Text"),
        ("citext", "type/Text"), ("boolean", "type/Boolean"), ("bool", "type/Boolean"),
        ("timestamp with time zone", "type/DateTimeWithLocalTZ"), ("timestamptz", "type/DateTimeWithLocalTZ"),
        ("timestamp", "type/DateTime"), ("date", "type/Date"),
        ("time with time zone", "type/TimeWithLocalTZ"), ("timetz", "type/TimeWithLocalTZ"), ("time", "type/Time"),
        ("uuid", "type/UUID"), ("jsonb", "type/JSON"), ("json", "type/JSON"),
    )

    @classmethod
    def engine_options(cls, details: PostgresDetails) -> dict:
        # Recycling re-runs the role check, so a role granted server privileges later is caught.
        return {"connect_args": {"connect_timeout": 10, "application_name": "Tessera",
                                 "sslmode": "require" if details.ssl else "prefer"},
                "pool_recycle": 1800}

    @classmethod
    def lockdown(cls, dbapi_connection, details) -> None:
        problems = role_problems(dbapi_connection)
        if problems:
            dbapi_connection.rollback()
            raise LockdownError(
                f"The role {details.user!r} {' and '.join(problems)}; connect Tessera with a role that can only read.")
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        dbapi_connection.commit()

    owned_schema = "tessera_cache"

    @classmethod
    @contextlib.contextmanager
    def writable(cls, engine, details, timeout=None):
        with engine.connect() as conn, conn.begin():
            # The session default is read-only (lockdown); this transaction alone may write.
            conn.exec_driver_sql("SET TRANSACTION READ WRITE")
            if timeout is not None:
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(timeout * 1000))}")
            yield conn

    @classmethod
    @contextlib.contextmanager
    def guard(cls, conn, timeout):
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")
        if timeout is not None:
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(timeout * 1000))}")
        yield

    @classmethod
    def canceller(cls, conn):
        # A cancel request on its own connection to the server (psycopg's cancel_safe waits for it).
        raw = conn.connection.dbapi_connection
        return getattr(raw, "cancel_safe", None) or raw.cancel

    @classmethod
    def result_type_name(cls, entry, cursor) -> str:
        info = cursor.connection.adapters.types.get(entry[1])
        return info.name if info is not None else str(entry[1])

    @classmethod
    def syncable_schemas(cls, engine: Engine) -> list[str | None]:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT nspname FROM pg_namespace WHERE nspname <> 'information_schema' AND left(nspname, 3) <> 'pg_' "
                "AND has_schema_privilege(current_user, nspname, 'USAGE') ORDER BY nspname").all()
        return [row[0] for row in rows]

    @classmethod
    def estimate_row_counts(cls, engine: Engine, tables: list[TableMeta]) -> dict[tuple[str, str], int]:
        # The planner's estimate (pg_class.reltuples, kept by VACUUM and ANALYZE); -1 before the first one.
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT n.nspname, c.relname, c.reltuples FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind IN ('r', 'p', 'm', 'f') AND c.reltuples >= 0").all()
        return {(schema, name): round(tuples) for schema, name, tuples in rows}


@hookimpl
def register_drivers():
    return [PostgresDriver]
