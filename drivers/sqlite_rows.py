"""The SQLite driver's row reader: drivers._sqlite_rows (C) when it was built and shares the sqlite3
module's SQLite library, else nothing (the driver then reads through SQLAlchemy like any other).

The C reader runs the statement on the sqlite3 module connection's own handle, so the driver's
lockdown, functions and timeout apply as they do to a cursor; it gives rows as the same tuples a
cursor gives, and can also write them as CSV text without a Python value per cell
(core.driver.records.CsvLayout), which is what makes a large CSV download cheap, or as the JSON array
of a query response (core.driver.records.QueryResult.json), which is what makes a card query cheap.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import sqlite3
from typing import Callable, Iterator

from sqlalchemy import text
from sqlalchemy.engine import Connection

from core.driver import ColumnMeta, CsvLayout, QueryError, QueryResult

log = logging.getLogger(__name__)

KIND_CODES = {kind: code for code, kind in enumerate(CsvLayout.KINDS)}
# What the C reader binds itself; anything else goes through the sqlite3 module's adapters first.
BINDABLE = (type(None), int, float, str, bytes, bool)


def _load():
    """The C module, or None when it is missing or cannot share the sqlite3 module's handles."""
    try:
        from drivers import _sqlite_rows
    except ImportError:
        log.info("drivers._sqlite_rows is not built: SQLite rows are read through the sqlite3 module")
        return None
    if _sqlite_rows.sqlite_version != sqlite3.sqlite_version:
        log.warning("drivers._sqlite_rows links SQLite %s, the sqlite3 module %s: not used",
                    _sqlite_rows.sqlite_version, sqlite3.sqlite_version)
        return None
    # The handle must be one this library can use: a value set through the sqlite3 module is read back.
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("PRAGMA user_version = 20261122")
        if _sqlite_rows.Statement(probe, "PRAGMA user_version", ()).fetch(2) != [(20261122,)]:
            log.warning("drivers._sqlite_rows cannot read the sqlite3 module's connections: not used")
            return None
    finally:
        probe.close()
    return _sqlite_rows


native = _load()


# text() compiled per statement text and paramstyle (a process sees few distinct statements; the compile
# cost as much as running a small query).
_COMPILED: dict[tuple[str, str], tuple[str, tuple]] = {}
_COMPILED_MAX = 512


def positional(conn: Connection, sql: str, params: dict | None) -> tuple[str, list]:
    """`sql` in text() form (`:name` binds, `\\:` for a literal colon) as the DBAPI gets it: `?`
    marks and their values in order, compiled by SQLAlchemy exactly as a cursor would get them."""
    key = (sql, conn.dialect.paramstyle)
    found = _COMPILED.get(key)
    if found is None:
        compiled = text(sql).compile(dialect=conn.dialect)
        found = (compiled.string, tuple(compiled.positiontup or ()))
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED[key] = found
    string, names = found
    params = params or {}
    values = []
    for name in names:
        if name not in params:
            raise sqlite3.ProgrammingError(f"A value is required for bind parameter '{name}'")
        value = params[name]
        values.append(value if isinstance(value, BINDABLE) else sqlite3.adapt(value))
    return string, values


@contextlib.contextmanager
def open_result(conn: Connection, sql: str, params: dict | None, max_rows: int | None, batch: int,
                translate: Callable[[BaseException], QueryError]) -> Iterator[QueryResult]:
    """The statement's QueryResult, read by the C reader (see the module docstring). Like a cursor's
    execute, this runs the statement to its first row, so that a failing query fails here."""
    try:
        statement = native.Statement(conn.connection.dbapi_connection, *positional(conn, sql, params))
    except sqlite3.Error as error:
        raise translate(error) from error
    try:
        columns = [ColumnMeta(name, "", "type/*") for name in statement.columns]
        rows = itertools.chain.from_iterable(_batches(statement, batch, translate))
        if max_rows is not None:
            rows = itertools.islice(rows, max_rows)
        yield QueryResult(columns, rows, _csv_writer(statement, translate), statement.iso_text,
                          _json_writer(statement, translate))
    finally:
        statement.close()


def _batches(statement, size: int, translate) -> Iterator[list]:
    try:
        while batch := statement.fetch(size):
            yield batch
    except sqlite3.Error as error:
        raise translate(error) from error


def _json_writer(statement, translate):
    def json(max_rows: int | None, int_bound: int, cell) -> tuple[bytes, int, bool, tuple]:
        try:
            return statement.json(max_rows, int_bound, cell)
        except sqlite3.Error as error:
            raise translate(error) from error

    return json


def _csv_writer(statement, translate):
    laid_out: list[CsvLayout] = []

    def csv(layout: CsvLayout, max_bytes: int, max_rows: int | None) -> tuple[bytes, int, bool]:
        if not laid_out:
            statement.layout(layout.separator, layout.quote_cr, tuple(KIND_CODES[k] for k in layout.kinds),
                             tuple(layout.calls))
            laid_out.append(layout)
        try:
            return statement.csv(max_bytes, max_rows)
        except sqlite3.Error as error:
            raise translate(error) from error

    csv.accepts = lambda layout: layout.columns is None  # the C writer writes every column, in order
    return csv
