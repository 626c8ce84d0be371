"""CSV download: a header of column titles, then rows in ~64 KiB chunks.

Values that are already what the file shows (strings and numbers, unformatted) are written
untouched; only the others pass through their column's formatter. How a column is written is read
from its first batch (a column's values mostly share one type), and a value of another type later
still goes through the formatter.

The csv module is the reference writer. A batch is first written by one `%` format over all its
cells (str() of each: what the csv module writes for a cell that needs no quoting, None aside; its
repr() of a float is the same text), and that text is checked by counting (no quote or CR, one
separator between cells, one newline per row): a batch that passes is byte for byte the csv
module's output, one that fails is written by the csv module instead. Both paths give the same file; the check only
decides which does the work. (Why the database does not build the lines: docs/ARCHITECTURE.md,
"Exports, CSV speed".)

A driver that writes CSV text itself (core.driver.records.QueryResult.csv, SQLite's C reader) is given the
rules as a CsvLayout and writes the rows without a Python value per cell: the same file again.
"""
from __future__ import annotations

import csv
import itertools
from typing import Any, Callable, Iterable, Iterator

from core.driver.records import CsvLayout

from . import batched
from .formatting import MIDNIGHT, formatter, is_temporal, plain, text_datetime, titles

CHUNK = 64 * 1024
PASS_THROUGH = (str, int, float)
# After this many batches in a row fail the check (formatted numbers, text full of commas), the
# rest of the file goes straight to the csv module rather than being formatted twice.
GIVE_UP_AFTER = 3
# Tests turn the driver's own writing and the batch formatter off to get the csv module's output.
DRIVER_WRITES = True
BATCH_FORMAT = True

_flatten = itertools.chain.from_iterable


def _plain_bool(value: Any) -> Any:
    return ("true" if value else "false") if type(value) is bool else value


class _TextDatetimes:
    """formatting.text_datetime over a whole column at once (SQLite's text datetimes, a million a file)."""

    def __call__(self, value: Any) -> Any:
        return text_datetime(value) if type(value) is str else plain(value)

    def column(self, values: tuple) -> list:
        canonical = _canonical_datetimes(values)
        if canonical is not None:
            return canonical
        return [((v[:10] if v[11:] in MIDNIGHT else v[:10] + "T" + v[11:])
                 if type(v) is str and len(v) >= 19 and v[10] == " " else (None if v is None else self(v)))
                for v in values]


def _canonical_datetimes(values: tuple) -> list | None:
    """text_datetime of a column whose values are all "YYYY-MM-DD HH:MM:SS"-shaped (19 characters, one
    space, at index 10: how SQLite writes datetimes), done on the joined column by a few C calls;
    None when any value has another shape (the caller then converts value by value)."""
    n = len(values)
    try:
        joined = "\n".join(values)
    except TypeError:  # NULLs or numbers among them
        return None
    # Newlines exactly every 20 characters: every value is 19 characters long and has none.
    if (n == 0 or len(joined) != 20 * n - 1 or joined.count("\n") != n - 1 or joined[19::20] != "\n" * (n - 1)
            or joined[10::20] != " " * n or joined.count(" ") != n):
        return None
    joined += "\n"
    if " 00:00:00\n" in joined:  # only a value's end can match: its one space is at index 10
        joined = joined.replace(" 00:00:00\n", "\n")
    out = joined.replace(" ", "T").split("\n")
    out.pop()
    return out


class _AsTheyAre:
    """A column whose values are written as they are (str, int, float, None). A value of another type
    among them (bytes in an untyped SQLite column, say) goes through the column's writer, as it does
    when a driver writes the CSV (core.driver.records.CsvLayout's "plain")."""

    TYPES = frozenset({str, int, float, type(None)})

    def __init__(self, other: Callable):
        self.other = other

    def column(self, values: list) -> list:
        if set(map(type, values)) <= self.TYPES:
            return values
        types, other = self.TYPES, self.other
        return [v if type(v) in types else other(v) for v in values]


class _FloatText:
    """A column of floats written from a memo of their repr() (prices and rates repeat, and repr is
    most of what a float cell costs). Only an optimisation of writing the values as they are: a
    batch holding anything but floats and None is returned untouched, and once the memo is full a
    column whose values still mostly miss stops using it. Zero (0.0 equals -0.0) and NaN are never
    memoised. (Ints are cheap to write: a memo of them costs more than it saves.)"""

    SIZE = 65536
    TYPES = frozenset({float, type(None)})

    def __init__(self, as_they_are: _AsTheyAre):
        self.as_they_are = as_they_are
        self.memo: dict[float, str] = {}
        self.on = True

    def column(self, values: list) -> list:
        if not self.on or not set(map(type, values)) <= self.TYPES:
            return self.as_they_are.column(values)
        memo = self.memo
        try:
            return list(map(memo.__getitem__, values))
        except KeyError:
            pass
        out = []
        misses = 0
        for v in values:
            text = memo.get(v)
            if text is None and v is not None:
                text = repr(v)
                misses += 1
                if v and v == v and len(memo) < self.SIZE:
                    memo[v] = text
            out.append(text)
        if len(memo) >= self.SIZE and misses * 4 > len(values):
            self.on = False  # full, and still missing: the values hardly repeat
        return out


def _other(fmt: Callable) -> Callable:
    """A column's writer for values that are not already what the file shows."""
    return lambda v: _plain_bool(v) if type(v) is bool else fmt(v)


def _quotes_lone_cr() -> bool:
    """Whether this Python's csv module quotes a cell holding a carriage return but no newline."""
    pieces = _Pieces()
    csv.writer(pieces, lineterminator="\n").writerow(["\r"])
    return pieces[0].startswith('"')


def layout(columns: list[dict], options: dict) -> CsvLayout | None:
    """How a driver that writes CSV itself must write these columns to give this module's file
    (core.driver.records.CsvLayout); None when the separator is one it cannot be given."""
    separator = options.get("separator") or ","
    if len(separator) != 1 or not separator.isascii() or separator in '"\r\n' or not DRIVER_WRITES:
        return None
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    kinds, calls = [], []
    for column in columns:
        fmt = formatter(column, viz, format_rows)
        if format_rows:
            kinds.append("call")
            calls.append(fmt)
        else:
            kinds.append("text-datetime" if is_temporal(column) else "plain")
            calls.append(_other(fmt))
    return CsvLayout(separator, QUOTES_LONE_CR, tuple(kinds), tuple(calls))


def converters(columns: list[dict], batch: list, viz, format_rows: bool) -> list[Callable]:
    """Per column, what writes its values: a function of one value, or an object whose `column`
    writes a whole column of a batch (returning the same list when every value stays as it is)."""
    out: list[Callable] = []
    for i, column in enumerate(columns):
        fmt = formatter(column, viz, format_rows)
        if format_rows:
            out.append(fmt)
            continue
        sample = next((row[i] for row in batch if row[i] is not None), None)
        if is_temporal(column) and (sample is None or type(sample) in PASS_THROUGH):
            # Text datetimes (SQLite's) are written as ISO, whatever came first in the column: a first
            # batch of NULLs or numbers says nothing of later values.
            out.append(_TextDatetimes())
        elif type(sample) is float:
            out.append(_FloatText(_AsTheyAre(_other(fmt))))
        elif sample is None or type(sample) in PASS_THROUGH:
            out.append(_AsTheyAre(_other(fmt)))
        else:
            out.append(_other(fmt))
    return out


def row_template(separator: str, width: int) -> str | None:
    """The `%` format of one row, or None when batches cannot be checked by counting (a separator
    that is a quote, a line break or part of "None", or no columns)."""
    if width == 0 or len(separator) != 1 or separator in '"\r\n' or separator in "None":
        return None
    return separator.replace("%", "%%").join(["%s"] * width) + "\n"


def format_batch(cells: tuple, n: int, template: str, separator: str, width: int) -> str | None:
    """`n` rows of `width` cells (`cells`, row after row) as the csv module writes them when that
    needs no quoting, else None."""
    text = (template * n) % cells
    if "None" in text:
        nones = cells.count(None)
        if nones:
            # A None cell prints as "None" and the csv module leaves it empty. When no text holds
            # "None" too (the separator and newline are not letters of it), the counts are equal.
            if text.count("None") == nones:
                text = text.replace("None", "")
            else:
                text = (template * n) % tuple(["" if v is None else v for v in cells])
    if '"' in text or "\r" in text or text.count("\n") != n:
        return None
    if text.count(separator) != (width - 1) * n:
        return None
    if width == 1 and (text.startswith("\n") or "\n\n" in text):
        return None  # the csv module writes a row of one empty cell as ""
    return text


class _Pieces(list):
    """The csv writer's file: it appends what it writes."""

    write = list.append


QUOTES_LONE_CR = _quotes_lone_cr()


def _writer(options: dict) -> tuple[_Pieces, Any]:
    pieces = _Pieces()
    writer = csv.writer(pieces, delimiter=options.get("separator") or ",", lineterminator="\n")
    if options.get("csv_include_bom"):
        pieces.append("\ufeff")
    return pieces, writer


def write_pivot(table, options: dict | None = None) -> Iterator[bytes]:
    """A core.export.pivot.PivotTable: labels and cells written as the flat csv writes values."""
    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    cells = _pivot_cell(viz, format_rows)
    lines, _ = table.grid(cells, cells)
    pieces, writer = _writer(options)
    for start in range(0, len(lines), 2000):
        writer.writerows(lines[start:start + 2000])
        yield "".join(pieces).encode("utf-8")
        pieces.clear()
    yield "".join(pieces).encode("utf-8")


def _pivot_cell(viz, format_rows: bool):
    def make(column: dict) -> Callable:
        fmt = formatter(column, viz, format_rows)
        return lambda v: None if v is None else (_plain_bool(v) if type(v) is bool and not format_rows else fmt(v))

    return make


def write(columns: list[dict], rows: Iterable, options: dict | None = None) -> Iterator[bytes]:
    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    separator = options.get("separator") or ","
    pieces, writer = _writer(options)
    writer.writerow(titles(columns, viz, format_rows))
    laid_out = layout(columns, options) if getattr(rows, "writes_csv", False) else None
    if laid_out is not None and rows.csv_accepts(laid_out):
        yield "".join(pieces).encode("utf-8")
        yield from rows.csv_chunks(laid_out, CHUNK)
        return
    width = len(columns)
    template = row_template(separator, width) if BATCH_FORMAT else None
    misses = 0
    converted: list[tuple[int, Callable]] | None = None
    for batch in batched(rows):
        if converted is None:
            converted = list(enumerate(converters(columns, batch, viz, format_rows)))
        n = len(batch)
        # The batch's cells row after row; a column is a slice of them, read and replaced in C.
        cells = list(_flatten(batch))
        if len(cells) != n * width:
            raise ValueError(f"rows of {len(cells) // max(n, 1)} cells for {width} columns")
        for i, f in converted:
            column = cells[i::width]
            written = f.column(column) if hasattr(f, "column") else [None if v is None else f(v) for v in column]
            if written is not column:
                cells[i::width] = written
        text = None
        if template is not None and misses < GIVE_UP_AFTER:
            text = format_batch(tuple(cells), n, template, separator, width)
            misses = 0 if text is not None else misses + 1
        if text is None:
            writer.writerows(zip(*[iter(cells)] * width) if width else batch)
        else:
            pieces.append(text)
        if sum(map(len, pieces)) >= CHUNK:
            yield "".join(pieces).encode("utf-8")
            pieces.clear()
    yield "".join(pieces).encode("utf-8")
