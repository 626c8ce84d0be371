"""A DB-API 2.0 module over Spark Connect, and the small SQLAlchemy dialect that uses it.

Spark Connect (gRPC, `sc://host:port`) has no DB-API driver of its own, and Tessera's SQLDriver runs
everything through SQLAlchemy, so this module is the bridge: one DB-API connection is one Spark
Connect session (`SparkSession.builder.remote(url).create()`), a cursor runs `session.sql(text,
args=...)` with Spark's own named parameter markers (`:p1`, bound by the server, never spliced into
the text) and streams rows with `toLocalIterator()` (Arrow batches, never the whole result).

A connection in `queries_only` mode (the driver's lockdown switches it on) sends every statement as
the body of a subquery, `SELECT * FROM (<statement>)`: Spark's parser accepts only a query there, so
INSERT, DDL, SET, ADD JAR, CACHE and a second statement are refused by the engine before anything
runs, much as PostgreSQL's `DECLARE ... CURSOR FOR` takes only a query. It also refuses statements that
name `reflect`, `java_method` or `try_reflect`: a query can call any static Java method on the cluster
through them, and Spark has no setting that turns them off. The word is refused wherever it stands (in
a string or a column name too): a rare false refusal costs less than a way round the check.

Stopping a statement (a timeout, a client gone, a result abandoned) is `Connection.interrupt`, one
mechanism for all three: it interrupts the session's operations and keeps doing so until
`reset_interrupt` says the statement has ended.
"""
from __future__ import annotations

import datetime as dt
import re
import threading

from sqlalchemy.engine.default import DefaultDialect

from core.driver.deadlines import call_later

apilevel = "2.0"
threadsafety = 1
paramstyle = "named"
# How often an interrupt is sent again while the statement it is meant for has not ended.
REINTERRUPT_SECONDS = 0.5


class Error(Exception):
    pass


class Warning(Exception):  # noqa: A001 - the DB-API name
    pass


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class OperationalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class DataError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


class QueryInterrupted(OperationalError):
    """The statement was stopped by `Connection.interrupt` (a timeout or a gone client)."""


def _error(error: BaseException, interrupted: str | None) -> Error:
    message = str(error).strip().split("\n\nJVM stacktrace:")[0].strip() or type(error).__name__
    if interrupted:
        return QueryInterrupted(f"{interrupted}: {message.splitlines()[0]}")
    return (ProgrammingError if "ParseException" in type(error).__name__ or "Analysis" in type(error).__name__
            else OperationalError)(message)


def connect(url: str, address: tuple[str, int] | None = None, timeout: float = 10) -> "Connection":
    import socket

    from pyspark.sql import SparkSession

    if address is not None:
        # The Spark Connect client retries an unreachable server for minutes: ask the socket first.
        try:
            socket.create_connection(address, timeout=timeout).close()
        except OSError as error:
            raise OperationalError(f"Cannot reach the Spark Connect server at {address[0]}:{address[1]}: {error}") from error
    try:
        session = SparkSession.builder.remote(url).create()
    except Exception as error:  # grpc and pyspark errors: the server does not answer or refuses us
        raise OperationalError(f"Cannot open a Spark Connect session: {str(error).strip().splitlines()[0]}") from error
    return Connection(session)


class Connection:
    def __init__(self, session):
        self.session = session
        self.queries_only = False
        self._interrupted: str | None = None
        self._lock = threading.Lock()
        self._again = None  # the scheduled re-send of an interrupt (core.driver.deadlines handle)

    def cursor(self) -> "Cursor":
        return Cursor(self)

    def commit(self) -> None:  # Spark SQL has no transactions: every statement stands alone
        pass

    def rollback(self) -> None:
        pass

    def close(self) -> None:
        try:
            self.session.stop()
        except Exception:  # noqa: BLE001 - a session on a dead server is gone anyway
            pass

    def interrupt(self, reason: str = "Query was cancelled") -> None:
        """Stop what this session runs (from another thread); the running cursor raises QueryInterrupted.

        Sent again every REINTERRUPT_SECONDS until `reset_interrupt`: an interrupt that reaches the
        server before it has registered the statement's operation finds nothing to stop."""
        with self._lock:
            sending = self._interrupted is None  # a second reason joins the interrupts already sent
            self._interrupted = reason
        if sending:
            self._send_interrupt()

    def _send_interrupt(self) -> None:
        try:
            self.session.interruptAll()
        except Exception:  # noqa: BLE001 - nothing left to interrupt, or the server is gone
            pass
        with self._lock:
            if self._interrupted is not None:
                self._again = call_later(REINTERRUPT_SECONDS, self._send_interrupt)

    def reset_interrupt(self) -> None:
        """The statement has ended: no more interrupts, and the next statement runs uninterrupted."""
        with self._lock:
            self._interrupted = None
            again, self._again = self._again, None
        if again is not None:
            again.cancel()  # waits for a re-send in progress, which then schedules none


# Spark's functions that call Java by reflection; quoting (`reflect`) or comments before the parenthesis
# still name the function, so the bare word is what is matched.
JAVA_CALLS = re.compile(r"(?i)(?<![A-Za-z0-9_])(reflect|java_method|try_reflect)(?![A-Za-z0-9_])")


class Cursor:
    arraysize = 1000

    def __init__(self, connection: Connection):
        self.connection = connection
        self.description = None
        self.rowcount = -1
        self._rows = None
        self._done = True

    def execute(self, sql: str, parameters: dict | None = None):
        conn = self.connection
        try:
            if conn.queries_only:
                called = JAVA_CALLS.search(sql)
                if called:
                    raise DatabaseError(f"{called.group(1)}() calls Java on the cluster and is not allowed.")
                # Newlines keep a trailing `--` comment from swallowing the closing parenthesis.
                self._stream(conn.session, f"SELECT * FROM (\n{sql.rstrip().rstrip(';')}\n)", parameters)
            else:  # an unguarded (admin) connection: commands run eagerly, as session.sql runs them
                frame = conn.session.sql(sql, args=dict(parameters) if parameters else None)
                self._stream(conn.session, frame, None)
        except Exception as error:
            raise _error(error, conn._interrupted) from error
        return self

    def _stream(self, session, query, parameters) -> None:
        """One ExecutePlan call: its first answer (the schema, or the first Arrow batch) gives the
        description, the rest are read batch by batch as the consumer asks. A query is sent as a lazy
        SQL relation, not through session.sql(), which would first run it as a command (a round trip)."""
        from pyspark.sql.connect import functions as F
        from pyspark.sql.connect.dataframe import DataFrame
        from pyspark.sql.connect.plan import SQL

        frame = query if not isinstance(query, str) else DataFrame(
            SQL(query, [], {k: F.lit(v) for k, v in (parameters or {}).items()}, []), session)
        stream = session.client.to_table_as_iterator(frame._plan.to_proto(session.client), {})
        first = next(stream, None)
        names = types = None
        if first is not None and hasattr(first, "fields"):  # the StructType the server sends first
            names, types = [f.name for f in first.fields], [f.dataType.simpleString() for f in first.fields]
            first = None
        elif first is not None:
            from pyspark.sql.pandas.types import from_arrow_schema

            schema = from_arrow_schema(first.schema, prefer_timestamp_ntz=True)
            names, types = [f.name for f in schema.fields], [f.dataType.simpleString() for f in schema.fields]
        self.description = [(n, t, None, None, None, None, True) for n, t in zip(names, types)] if names else None
        self._rows = self._tuples(first, stream)
        self._done = False

    @staticmethod
    def _tuples(first, stream):
        import itertools

        for table in itertools.chain([first] if first is not None else [], stream):
            columns = []
            for column in table.columns:
                values = column.to_pylist()
                if getattr(column.type, "tz", None):  # zoned timestamps: the UTC wall-clock time
                    values = [v if v is None else v.astimezone(dt.timezone.utc).replace(tzinfo=None) for v in values]
                columns.append(values)
            yield from zip(*columns)

    def executemany(self, sql: str, seq_of_parameters):
        for parameters in seq_of_parameters:
            self.execute(sql, parameters)
            self.fetchall()

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        if self._rows is None:
            raise ProgrammingError("no statement was executed")
        batch = []
        try:
            for row in self._rows:
                batch.append(row)
                if len(batch) >= (size or self.arraysize):
                    break
            else:
                self._done = True
        except Exception as error:
            self._done = True
            raise _error(error, self.connection._interrupted) from error
        return batch

    def fetchone(self):
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def fetchall(self) -> list[tuple]:
        rows = []
        while True:
            batch = self.fetchmany(self.arraysize)
            if not batch:
                return rows
            rows.extend(batch)

    def close(self) -> None:
        rows, self._rows = self._rows, None
        if rows is not None and not self._done:
            # An abandoned stream: stop the server's work instead of reading the rest.
            self.connection.interrupt("Result abandoned")
            close = getattr(rows, "close", None)
            if close:
                try:
                    close()
                except Exception:  # noqa: BLE001 - the interrupted stream may complain on close
                    pass
            self.connection.reset_interrupt()

    def setinputsizes(self, sizes):
        pass

    def setoutputsize(self, size, column=None):
        pass


class SparkConnectDialect(DefaultDialect):
    """Just enough SQLAlchemy for Tessera's use: text() statements, pooling, pings. Introspection goes
    through the Spark catalog API (see driver.py), never through this dialect."""

    name = "tessera_spark"
    driver = "connect"
    paramstyle = "named"
    supports_statement_cache = True
    supports_native_boolean = True
    supports_native_decimal = True
    supports_sane_rowcount = False
    supports_server_side_cursors = False
    supports_multivalues_insert = False

    @classmethod
    def import_dbapi(cls):
        import sys

        return sys.modules[__name__]

    def create_connect_args(self, url):
        return [], {}  # connections come from the driver's creator

    def initialize(self, connection):
        self.server_version_info = self._get_server_version_info(connection)
        self.default_schema_name = self._get_default_schema_name(connection)
        self.default_isolation_level = "AUTOCOMMIT"

    def _get_server_version_info(self, connection):
        version = connection.connection.dbapi_connection.session.version
        return tuple(int(p) if p.isdigit() else p for p in version.replace("-", ".").split("."))

    def _get_default_schema_name(self, connection):
        return connection.connection.dbapi_connection.session.catalog.currentDatabase()

    def get_isolation_level(self, dbapi_connection):
        return "AUTOCOMMIT"

    def set_isolation_level(self, dbapi_connection, level):
        pass

    def do_rollback(self, dbapi_connection):
        pass

    def do_commit(self, dbapi_connection):
        pass

    def do_ping(self, dbapi_connection):
        # A configuration read is one round trip to the session without planning a query (SELECT 1
        # costs Spark a parse, an analysis and a job); it fails the same way on a gone session.
        try:
            dbapi_connection.session.conf.get("spark.sql.session.timeZone")
        except Exception as error:
            raise OperationalError(str(error).strip().splitlines()[0] if str(error).strip() else "ping failed") from error
        return True
