"""What introspection and execution return (tables, fields, foreign keys, result columns, a streamed
result, the CSV layout core asks a driver to write) and the errors a driver raises.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator


@dataclass(frozen=True)
class TableMeta:
    name: str
    schema: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class FieldMeta:
    name: str
    database_type: str
    base_type: str
    position: int
    pk: bool = False
    required: bool = False
    auto_increment: bool = False
    description: str | None = None


@dataclass(frozen=True)
class FKMeta:
    column: str
    target_table: str
    target_column: str
    target_schema: str | None = None


@dataclass(frozen=True)
class ColumnMeta:
    """A result column: its name, the engine's type name and the Metabase base type."""

    name: str
    database_type: str
    base_type: str


@dataclass(frozen=True)
class CsvLayout:
    """How core.export.csv has a driver write cells when the driver writes CSV text itself
    (QueryResult.csv), so that the file is the one core.export.csv writes from the values.

    `separator` is one ASCII character (not a quote or line break). A text cell is quoted, with its
    double quotes doubled, when it holds the separator, a double quote, a newline, or (when
    `quote_cr`) a carriage return; a row whose only cell is empty is written `""`; rows end in
    "\n". Per column, `kinds` says how a value is written and `calls` gives the callable for the
    values the driver does not write itself; what it returns is written as the csv module writes a
    cell (None empty, a float its repr(), anything else its str()):
    - "plain": NULL empty, an integer as str(), a float as repr(), text as it is; other values
      (bytes, say) through the call.
    - "text-datetime": as plain, but text shaped "YYYY-MM-DD HH:MM:SS..." as
      core.export.formatting.text_datetime writes it; text of another shape through the call.
    - "call": NULL empty, every other value through the call.
    In "plain" and "text-datetime" columns the call writes the unformatted value
    (core.export.formatting.plain: ISO dates, a Decimal as int or float, booleans "true"/"false"), so a
    driver may write such values itself the same way rather than calling it (DuckDB's SQL does).
    """

    KINDS: ClassVar[tuple[str, ...]] = ("plain", "text-datetime", "call")

    separator: str
    quote_cr: bool
    kinds: tuple[str, ...]
    calls: tuple[Any, ...]
    # The result's columns to write, in this order (a download of remapped columns drops some and
    # moves others); None: all of them as they come. `kinds` and `calls` follow the written columns.
    columns: tuple[int, ...] | None = None


@dataclass
class QueryResult:
    """What `execute` yields: columns known up front, rows streamed from the cursor.

    A driver that can write its rows as CSV text without a Python value per cell also gives
    `csv(layout, max_bytes, max_rows) -> (text, rows, more)`: the next rows, until the text reaches
    max_bytes or max_rows rows (None: no limit) are written, and whether rows remain. A consumer
    reads `rows` or `csv`, never both. A `csv` that cannot write every layout has an
    `accepts(layout) -> bool` attribute, asked before the first call (the rows are read otherwise).

    A driver whose reader can give temporal text in ISO-8601 form itself gives `iso_text(indexes)`:
    from the next row read on, a text cell of those columns of 19+ characters with a space at index
    10 (SQLite's "2024-01-05 13:45:00") comes with "T" there, as core.query.results.encode_rows
    would write it; any other value as before.

    A driver that can write its rows as the JSON array core.query.results.encode_rows writes from the
    same rows gives `json(max_rows, int_bound, cell) -> (text, rows, more, firsts)`: every row up to
    max_rows (None: all) as one array, whether rows remain, and per column the first non-null value
    among the first 100 rows (for type inference). An integer beyond +-int_bound (0: no bound) and
    any value it does not write itself go to `cell(value) -> bytes`. Read instead of `rows`, never both.
    """

    columns: list[ColumnMeta]
    rows: Iterator[tuple]
    csv: Callable[[CsvLayout, int, int | None], tuple[bytes, int, bool]] | None = None
    iso_text: Callable[[list[int]], None] | None = None
    json: Callable[[int | None, int, Callable[[object], bytes]], tuple[bytes, int, bool, tuple]] | None = None


class QueryError(Exception):
    """The engine refused or failed the statement; `message` is the engine's own text."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class QueryTimeout(QueryError):
    """The statement ran past the database's query timeout and the engine stopped it."""


class LockdownError(RuntimeError):
    """A new connection could not be locked down (or its role is too powerful): it is not used."""
