"""The ClickHouse driver's connection layer: one DBAPI-shaped connection over one of two transports,
chosen by the details.

- `HTTPConnection`: a ClickHouse server through clickhouse-connect (production).
- `EmbeddedConnection`: chDB, the ClickHouse engine inside this process, on a database directory
  (tests, and single-machine use under TESSERA_FILE_DB_DIRS).

Both speak the same SQL to the same engine; everything above this module (SQL, sync, the read-only
and timeout rules) is shared. Parameters arrive from SQLAlchemy as `%(name)s` and are bound by
ClickHouse itself as typed query parameters (`{name:Type}`), never spliced into the text.
A locked connection (see `ClickHouseDriver.lockdown`) runs every statement with `readonly=1`, which
refuses writes, DDL, settings changes and the file/url/remote table functions; since a chDB session
keeps `readonly` for good once set, chDB sessions are never pooled (one per query).
"""
from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal

paramstyle = "pyformat"
apilevel = "2.0"
threadsafety = 1


class Error(Exception):
    pass


class Warning(Exception):  # noqa: A001 - the DBAPI name
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


_PARAM = re.compile(r"%\((\w+)\)s")
_INSERT_VALUES = re.compile(r"^(\s*INSERT\b.*?\bVALUES\s*)(\(.*\))\s*$", re.S | re.I)


def param_type(value) -> str:
    """The ClickHouse type a Python value is bound as."""
    if value is None:
        return "Nullable(String)"
    if isinstance(value, bool):
        return "Bool"
    if isinstance(value, int):
        return "Int64"
    if isinstance(value, float):
        return "Float64"
    if isinstance(value, Decimal):
        exponent = value.as_tuple().exponent
        return f"Decimal(38, {max(0, -exponent) if isinstance(exponent, int) else 0})"
    if isinstance(value, dt.datetime):
        return "DateTime64(6)"
    if isinstance(value, dt.date):
        return "Date32"
    return "String"


def bind(sql: str, params: dict | None) -> tuple[str, dict]:
    """`%(name)s` -> `{name:Type}` (ClickHouse query parameters); `%%` back to `%`."""
    params = params or {}

    def placeholder(match: re.Match) -> str:
        name = match.group(1)
        if name not in params:
            raise ProgrammingError(f"no value for parameter {name}")
        return "{" + name + ":" + param_type(params[name]) + "}"

    return _PARAM.sub(placeholder, sql).replace("%%", "%"), params


def param_text(value) -> str:
    """A parameter value in the escaped text form ClickHouse parses query parameters from."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (int, float, Decimal, dt.date, dt.time)):
        return str(value)
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _wrap(error: Exception) -> Error:
    kind = OperationalError if "TIMEOUT_EXCEEDED" in str(error) else DatabaseError
    return kind(str(error).strip())


class BaseConnection:
    """What both transports share: the lock, the statement timeout, no transactions."""

    def __init__(self):
        self.locked = False
        self.timeout: float | None = None

    def lock(self) -> None:
        self.locked = True

    # SQL semantics Tessera's compiled queries rely on: outer joins give NULL (not the type's default)
    # for missing rows, and date functions keep dates outside 1970-2149 (Date32 / DateTime64 results).
    SEMANTICS = {"join_use_nulls": 1, "enable_extended_results_for_datetime_functions": 1}

    def settings(self) -> dict:
        if not self.locked:
            return dict(self.SEMANTICS)
        out = {**self.SEMANTICS, "readonly": 1}
        if self.timeout:
            out.update(max_execution_time=max(0.1, float(self.timeout)), timeout_overflow_mode="throw")
        return out

    def commit(self) -> None:  # ClickHouse has no transactions: each statement stands alone
        pass

    def rollback(self) -> None:
        pass


class Cursor:
    """A DBAPI cursor over a stream of row batches."""

    arraysize = 1000

    def __init__(self, connection):
        self.connection = connection
        self.description = None
        self.rowcount = -1
        self._batches = iter(())
        self._pending: list = []

    def execute(self, operation, parameters=None):
        self.close()
        sql, params = bind(operation, parameters)
        try:
            self.description, self._batches = self.connection.run(sql, params)
        except Error:
            raise
        except Exception as error:  # the transport's own exception classes
            raise _wrap(error) from error
        self._pending = []
        return self.rowcount

    def executemany(self, operation, seq_of_parameters):
        rows = list(seq_of_parameters)
        match = _INSERT_VALUES.match(operation)
        if not match or len(rows) < 2:
            for parameters in rows:
                self.execute(operation, parameters)
            return
        # One INSERT per chunk of rows (a MergeTree part per statement makes row-at-a-time slow).
        head, values = match.group(1), match.group(2)
        for start in range(0, len(rows), 500):
            chunk = rows[start:start + 500]
            tuples, params = [], {}
            for i, row in enumerate(chunk):
                tuples.append(_PARAM.sub(lambda m, i=i: f"%({m.group(1)}_{i})s", values))
                params.update({f"{name}_{i}": value for name, value in row.items()})
            self.execute(head + ", ".join(tuples), params)

    def _fill(self, size: int) -> None:
        try:
            while len(self._pending) < size:
                batch = next(self._batches, None)
                if batch is None:
                    return
                self._pending.extend(batch)
        except Error:
            raise
        except Exception as error:
            raise _wrap(error) from error

    def fetchmany(self, size=None):
        size = size or self.arraysize
        self._fill(size)
        out, self._pending = self._pending[:size], self._pending[size:]
        return out

    def fetchone(self):
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def fetchall(self):
        rows = []
        while batch := self.fetchmany(10_000):
            rows.extend(batch)
        return rows

    def close(self):
        close = getattr(self._batches, "close", None)
        if close is not None:
            close()
        self._batches, self._pending = iter(()), []

    def setinputsizes(self, *args):
        pass

    def setoutputsizes(self, *args):
        pass


def connect(details) -> BaseConnection:
    """The transport the details choose: chDB when they name an embedded directory, else HTTP."""
    try:
        if getattr(details, "chdb_path", None):
            from .embedded import EmbeddedConnection

            return EmbeddedConnection(details.chdb_path, details.dbname)
        from .http import HTTPConnection

        return HTTPConnection(details)
    except Error:
        raise
    except Exception as error:  # the client's own classes: SQLAlchemy reports only its DBAPI's errors
        raise OperationalError(str(error).strip() or type(error).__name__) from error
