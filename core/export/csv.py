"""CSV download: a header of column titles, then rows in ~64 KiB chunks.

Columns whose values are already what the file shows (strings and numbers, unformatted) are written
untouched; only the others pass through their formatter. Which is which is read from the first
batch, as a column's values share one type.

The csv module is the reference writer. A batch is first written by one `%` format over all its
cells (str() of each: what the csv module writes for a cell that needs no quoting, None aside; its
repr() of a float is the same text), and that text is checked by counting (no quote or CR, one
separator between cells, one newline per row): a batch that passes is byte for byte the csv
module's output, one that fails is written by the csv module instead. Both paths give the same file; the check only
decides which does the work. (Why the database does not build the lines: docs/ARCHITECTURE.md,
"Exports, CSV speed".)
"""
from __future__ import annotations

import csv
import itertools
from typing import Any, Callable, Iterable, Iterator

from . import batched
from .formatting import MIDNIGHT, formatter, is_temporal, plain, text_datetime, titles

CHUNK = 64 * 1024
PASS_THROUGH = (str, int, float)
# After this many batches in a row fail the check (formatted numbers, text full of commas), the
# rest of the file goes straight to the csv module rather than being formatted twice.
GIVE_UP_AFTER = 3
# Tests turn the batch formatter off to get the csv module's own output for comparison.
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


class _FloatText:
    """A column of floats written from a memo of their repr() (prices and rates repeat, and repr is
    most of what a float cell costs). Only an optimisation of writing the values as they are: a
    batch holding anything but floats and None is returned untouched, and once the memo is full a
    column whose values still mostly miss stops using it. Zero (0.0 equals -0.0) and NaN are never
    memoised. (Ints are cheap to write: a memo of them costs more than it saves.)"""

    SIZE = 65536
    TYPES = frozenset({float, type(None)})

    def __init__(self):
        self.memo: dict[float, str] = {}
        self.on = True

    def column(self, values: list) -> list:
        if not self.on or not set(map(type, values)) <= self.TYPES:
            return values
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


def converters(columns: list[dict], batch: list, viz, format_rows: bool) -> list[Callable | None]:
    """Per column: None to write values as they are, else the function that writes them."""
    out: list[Callable | None] = []
    for i, column in enumerate(columns):
        fmt = formatter(column, viz, format_rows)
        if format_rows:
            out.append(fmt)
            continue
        sample = next((row[i] for row in batch if row[i] is not None), None)
        if is_temporal(column) and (sample is None or type(sample) is str):
            # A first batch of NULLs says nothing: later text datetimes are still written as ISO.
            out.append(_TextDatetimes())
        elif type(sample) is float:
            out.append(_FloatText())
        elif sample is None or type(sample) in PASS_THROUGH:
            out.append(None)
        else:
            out.append((lambda f: lambda v: _plain_bool(v) if type(v) is bool else f(v))(fmt))
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
    width = len(columns)
    template = row_template(separator, width) if BATCH_FORMAT else None
    misses = 0
    convert: list | None = None
    converted: list[tuple[int, Callable]] = []
    for batch in batched(rows):
        if convert is None:
            convert = converters(columns, batch, viz, format_rows)
            converted = [(i, f) for i, f in enumerate(convert) if f is not None]
        n = len(batch)
        # The batch's cells row after row; a column is a slice of them, read and replaced in C.
        cells = list(_flatten(batch))
        if len(cells) != n * width:
            raise ValueError(f"rows of {len(cells) // max(n, 1)} cells for {width} columns")
        for i, f in converted:
            column = cells[i::width]
            cells[i::width] = f.column(column) if hasattr(f, "column") else \
                [None if v is None else f(v) for v in column]
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
