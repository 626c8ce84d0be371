"""CSV download: a header of column titles, then rows written by the csv module in ~64 KiB chunks.

Columns whose values are already what the file shows (strings and numbers, unformatted) go to the
C writer untouched; only the others pass through their formatter. Which is which is read from the
first batch, as a column's values share one type.
"""
from __future__ import annotations

import csv
import io
from typing import Any, Callable, Iterable, Iterator

from . import batched
from .formatting import MIDNIGHT, formatter, is_temporal, plain, text_datetime, titles

CHUNK = 64 * 1024
PASS_THROUGH = (str, int, float)


def _plain_bool(value: Any) -> Any:
    return ("true" if value else "false") if type(value) is bool else value


class _TextDatetimes:
    """formatting.text_datetime over a whole column at once (SQLite's text datetimes, a million a file)."""

    def __call__(self, value: Any) -> Any:
        return text_datetime(value) if type(value) is str else plain(value)

    def column(self, values: tuple) -> list:
        return [((v[:10] if v[11:] in MIDNIGHT else v[:10] + "T" + v[11:])
                 if type(v) is str and len(v) >= 19 and v[10] == " " else (None if v is None else self(v)))
                for v in values]


def converters(columns: list[dict], batch: list, viz, format_rows: bool) -> list[Callable | None]:
    """Per column: None to write values as they are, else the function that writes them."""
    out: list[Callable | None] = []
    for i, column in enumerate(columns):
        fmt = formatter(column, viz, format_rows)
        if format_rows:
            out.append(fmt)
            continue
        sample = next((row[i] for row in batch if row[i] is not None), None)
        if type(sample) is str and is_temporal(column):
            out.append(_TextDatetimes())
        elif sample is None or type(sample) in PASS_THROUGH:
            out.append(None)
        else:
            out.append((lambda f: lambda v: _plain_bool(v) if type(v) is bool else f(v))(fmt))
    return out


def _writer(options: dict) -> tuple[io.StringIO, Any]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=options.get("separator") or ",", lineterminator="\n")
    if options.get("csv_include_bom"):
        buffer.write("\ufeff")
    return buffer, writer


def write_pivot(table, options: dict | None = None) -> Iterator[bytes]:
    """A core.export.pivot.PivotTable: labels and cells written as the flat csv writes values."""
    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    cells = _pivot_cell(viz, format_rows)
    lines, _ = table.grid(cells, cells)
    buffer, writer = _writer(options)
    for start in range(0, len(lines), 2000):
        writer.writerows(lines[start:start + 2000])
        yield buffer.getvalue().encode("utf-8")
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue().encode("utf-8")


def _pivot_cell(viz, format_rows: bool):
    def make(column: dict) -> Callable:
        fmt = formatter(column, viz, format_rows)
        return lambda v: None if v is None else (_plain_bool(v) if type(v) is bool and not format_rows else fmt(v))

    return make


def write(columns: list[dict], rows: Iterable, options: dict | None = None) -> Iterator[bytes]:
    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    buffer, writer = _writer(options)
    writer.writerow(titles(columns, viz, format_rows))
    convert: list | None = None
    converted: list[tuple[int, Callable]] = []
    for batch in batched(rows):
        if convert is None:
            convert = converters(columns, batch, viz, format_rows)
            converted = [(i, f) for i, f in enumerate(convert) if f is not None]
        if converted:
            # Column by column: transposing is done in C, and each converted column is one comprehension.
            columns_of = list(zip(*batch))
            for i, f in converted:
                columns_of[i] = f.column(columns_of[i]) if hasattr(f, "column") else \
                    [None if v is None else f(v) for v in columns_of[i]]
            batch = zip(*columns_of)
        writer.writerows(batch)
        if buffer.tell() >= CHUNK:
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode("utf-8")
