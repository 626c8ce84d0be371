"""DuckDB's rows as CSV text written by DuckDB itself (core.driver.records.QueryResult.csv).

DuckDB cannot COPY to a file here (the connection is locked with external access off), and making a
Python value of every cell and formatting it costs 6-8x DuckDB's own COPY. So the statement is run
again wrapped in a SELECT that builds each CSV line in SQL, with the rules core.export.csv states as a
CsvLayout: the line is made by DuckDB's vectorised functions on its own threads, and Python only joins
the lines. Each column's expression writes what core.export.formatting.plain and the csv module write
for the Python value the DuckDB client would return (ISO dates, `repr` of floats, Decimals as int or
float, "true"/"false", text quoted when it holds the separator, a quote or a line break); a column of
a type or kind the SQL cannot write that way ("call" columns of formatted downloads, blobs, intervals,
nested types, wide decimals, text read as datetimes) makes the whole download go through Python
(`accepts` says no), so the file is the same either way.

Running the statement again is only offered when its first execution was quick (a streaming scan
stops at its first rows; an aggregate has done all its work by then), so the rerun costs at most
RERUN_BELOW seconds; a slower statement's rows are written by Python.
"""
from __future__ import annotations

import re
from typing import Callable

from sqlalchemy import text

from core.driver import ColumnMeta, CsvLayout

RERUN_BELOW = 0.25
FETCH = 4096
INTEGERS = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                      "UBIGINT", "UHUGEINT"})
TEXTS = frozenset({"VARCHAR", "UUID", "JSON"})
DECIMAL = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)$")
# float(Decimal) is correctly rounded; DuckDB's DECIMAL -> DOUBLE is when the unscaled integer is exact
# in a double (at most 15 digits), so wider decimals are written by Python.
EXACT_DECIMAL_DIGITS = 15
ISO_MICROS = "%Y-%m-%dT%H:%M:%S.%f"
ISO_SECONDS = "%Y-%m-%dT%H:%M:%S"


def _double(v: str) -> str:
    # DuckDB writes a double as repr() does (shortest round trip, the same exponent switch), except -0.0.
    return f"CASE WHEN {v} = 0 AND signbit({v}) THEN '-0.0' ELSE CAST({v} AS VARCHAR) END"


def _timestamp(v: str) -> str:
    # datetime.isoformat(); a datetime at midnight as its date (formatting.plain). The Python client
    # gives the infinities as datetime.max and datetime.min.
    return (f"CASE WHEN {v} = 'infinity' THEN '9999-12-31T23:59:59.999999' WHEN {v} = '-infinity' THEN '0001-01-01' "
            f"WHEN epoch_us({v}) % 86400000000 = 0 THEN strftime({v}, '%Y-%m-%d') "
            f"WHEN epoch_us({v}) % 1000000 = 0 THEN strftime({v}, '{ISO_SECONDS}') "
            f"ELSE strftime({v}, '{ISO_MICROS}') END")


def _timestamptz(v: str) -> str:
    # The client gives an aware datetime in the session's time zone: its isoformat() always has the
    # time and the offset as +HH:MM (and :SS when the offset has seconds).
    local = f"CAST({v} AS TIMESTAMP)"
    offset = f"((epoch_us({local}) - epoch_us({v})) // 1000000)"
    size = f"abs({offset})"
    # The infinities come as the naive datetime.max and datetime.min.
    return (f"CASE WHEN {v} = 'infinity' THEN '9999-12-31T23:59:59.999999' WHEN {v} = '-infinity' THEN '0001-01-01' "
            f"ELSE (CASE WHEN epoch_us({v}) % 1000000 = 0 THEN strftime({local}, '{ISO_SECONDS}') "
            f"ELSE strftime({local}, '{ISO_MICROS}') END"
            f" || CASE WHEN {offset} < 0 THEN '-' ELSE '+' END"
            f" || lpad(CAST({size} // 3600 AS VARCHAR), 2, '0')"
            f" || ':' || lpad(CAST({size} % 3600 // 60 AS VARCHAR), 2, '0')"
            f" || CASE WHEN {size} % 60 = 0 THEN '' ELSE ':' || lpad(CAST({size} % 60 AS VARCHAR), 2, '0') END) END")


def _time(v: str) -> str:
    # time.isoformat(): HH:MM:SS, then .ffffff when there are microseconds.
    micros = f"(microsecond({v}) % 1000000)"
    return (f"CASE WHEN {micros} = 0 THEN strftime(DATE '2000-01-01' + {v}, '%H:%M:%S') "
            f"ELSE strftime(DATE '2000-01-01' + {v}, '%H:%M:%S.%f') END")


def value_sql(v: str, database_type: str) -> tuple[str, bool] | None:
    """The SQL writing column `v` as text, and whether that text may need quoting; None when this
    type is not written here."""
    kind = database_type.upper()
    if kind in INTEGERS:
        return f"CAST({v} AS VARCHAR)", False
    if kind == "DOUBLE":
        return _double(v), False
    if kind == "FLOAT":
        return _double(f"CAST({v} AS DOUBLE)"), False
    if kind == "BOOLEAN":
        return f"CASE WHEN {v} THEN 'true' WHEN NOT {v} THEN 'false' END", False
    if kind in TEXTS or kind.startswith("ENUM("):
        return f"CAST({v} AS VARCHAR)", kind not in ("UUID",)
    if kind == "DATE":
        return (f"CASE WHEN {v} = 'infinity' THEN '9999-12-31' WHEN {v} = '-infinity' THEN '0001-01-01' "
                f"ELSE strftime({v}, '%Y-%m-%d') END"), False
    if kind == "TIMESTAMP":
        return _timestamp(v), False
    if kind == "TIMESTAMP WITH TIME ZONE":
        return _timestamptz(v), False
    if kind == "TIME":
        return _time(v), False
    decimal = DECIMAL.match(kind)
    if decimal:
        digits, scale = int(decimal.group(1)), int(decimal.group(2))
        if scale == 0:
            return f"CAST({v} AS VARCHAR)", False
        if digits <= EXACT_DECIMAL_DIGITS:
            # Decimal -> int when integral, else float (formatting.plain).
            return (f"CASE WHEN {v} = trunc({v}) THEN CAST(CAST(trunc({v}) AS HUGEINT) AS VARCHAR) "
                    f"ELSE {_double(f'CAST({v} AS DOUBLE)')} END"), False
    return None


def _char(c: str) -> str:
    return f"chr({ord(c)})"


def query_body(sql: str) -> str | None:
    """`sql` as it can go inside `FROM (...)`: one query (SELECT, WITH, UNION...) without its trailing
    semicolon; None for anything else (SHOW, PRAGMA, DESCRIBE, several statements, or a semicolon left
    inside, even in a literal: such downloads are written by Python)."""
    import sqlglot
    from sqlglot import exp

    body = sql.rstrip()
    while body.endswith(";"):
        body = body[:-1].rstrip()
    if ";" in body:
        return None
    try:
        statements = [s for s in sqlglot.parse(body, read="duckdb") if s is not None]
    except sqlglot.errors.SqlglotError:
        return None
    return body if len(statements) == 1 and isinstance(statements[0], exp.Query) else None


def line_sql(sql: str, columns: list[ColumnMeta], layout: CsvLayout) -> str | None:
    """`sql` wrapped in a SELECT of one column, each row's CSV line (with its newline); None when a
    column cannot be written by SQL as core.export.csv writes it, or `sql` is not a query to wrap."""
    picked = range(len(columns)) if layout.columns is None else layout.columns
    if not columns or len(layout.kinds) != len(picked) or not all(0 <= i < len(columns) for i in picked):
        return None
    specials = [layout.separator, '"', "\n"] + (["\r"] if layout.quote_cr else [])
    cells = []
    for i, kind in zip(picked, layout.kinds):
        column, v = columns[i], f"c{i}"
        written = value_sql(v, column.database_type or "")
        if written is None or kind == "call":
            return None
        if kind == "text-datetime" and written[1]:
            return None  # text in a temporal column is rewritten by Python (formatting.text_datetime)
        cell, quotable = written
        if quotable:
            test = " OR ".join(f"contains({v}, {_char(c)})" for c in specials)
            cell = f"CASE WHEN {test} THEN '\"' || replace({v}, '\"', '\"\"') || '\"' ELSE {v} END"
        cells.append(cell)
    if len(cells) == 1:
        # The csv module writes a row whose only cell is empty as "".
        line = f"CASE WHEN coalesce({cells[0]}, '') = '' THEN '\"\"' ELSE {cells[0]} END || chr(10)"
    else:
        line = f"concat({f', {_char(layout.separator)}, '.join(cells)}, chr(10))"
    # text() reads ":name" as a bind parameter; the strftime patterns' colons are literal.
    line = line.replace(":", "\\:")
    body = query_body(sql)
    if body is None:
        return None
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    return f"SELECT {line} AS line FROM (\n{body}\n) AS q({names})"


class CsvWriter:
    """QueryResult.csv for one DuckDB statement: on its first call the row result (unread) is closed
    and the statement runs again as CSV lines on the same connection (same guard, same timeout)."""

    def __init__(self, conn, sql: str, params: dict | None, columns: list[ColumnMeta], close_rows: Callable):
        self.conn, self.sql, self.params, self.columns, self.close_rows = conn, sql, params, columns, close_rows
        self.wrapped: str | None = None
        self.result = None
        self.cursor = None
        self.pending: list = []
        self.done = False

    def accepts(self, layout: CsvLayout) -> bool:
        self.wrapped = line_sql(self.sql, self.columns, layout)
        return self.wrapped is not None

    def _start(self, layout: CsvLayout) -> None:
        wrapped = self.wrapped if self.wrapped is not None else line_sql(self.sql, self.columns, layout)
        if wrapped is None:
            raise ValueError("this layout is not written by DuckDB (accepts() said so)")
        self.close_rows()
        self.result = self.conn.execute(text(wrapped), self.params or {})
        self.cursor = self.result.cursor

    def close(self) -> None:
        if self.result is not None:
            self.result.close()

    def __call__(self, layout: CsvLayout, max_bytes: int, max_rows: int | None) -> tuple[bytes, int, bool]:
        if self.cursor is None:
            self._start(layout)
        lines: list[str] = []
        size = 0
        while size < max_bytes and (max_rows is None or len(lines) < max_rows):
            if not self.pending:
                if self.done:
                    break
                self.pending = self.cursor.fetchmany(FETCH)
                if not self.pending:
                    self.done = True
                    break
            want = len(self.pending) if max_rows is None else min(len(self.pending), max_rows - len(lines))
            taken = [row[0] for row in self.pending[:want]]
            del self.pending[:want]
            lines.extend(taken)
            size += sum(map(len, taken))
        if not self.pending and not self.done:
            self.pending = self.cursor.fetchmany(FETCH)
            self.done = not self.pending
        return "".join(lines).encode("utf-8"), len(lines), bool(self.pending)
