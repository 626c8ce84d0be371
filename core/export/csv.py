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
from .formatting import formatter, is_temporal, titles

CHUNK = 64 * 1024
PASS_THROUGH = (str, int, float)


def _plain_bool(value: Any) -> Any:
    return ("true" if value else "false") if type(value) is bool else value


def converters(columns: list[dict], batch: list, viz, format_rows: bool) -> list[Callable | None]:
    """Per column: None to write values as they are, else the function that writes them."""
    out: list[Callable | None] = []
    for i, column in enumerate(columns):
        fmt = formatter(column, viz, format_rows)
        if format_rows:
            out.append(fmt)
            continue
        sample = next((row[i] for row in batch if row[i] is not None), None)
        if sample is None or (type(sample) in PASS_THROUGH and not (type(sample) is str and is_temporal(column))):
            out.append(None)
        else:
            out.append((lambda f: lambda v: _plain_bool(v) if type(v) is bool else f(v))(fmt))
    return out


def write(columns: list[dict], rows: Iterable, options: dict | None = None) -> Iterator[bytes]:
    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=options.get("separator") or ",", lineterminator="\n")
    if options.get("csv_include_bom"):
        buffer.write("\ufeff")
    writer.writerow(titles(columns, viz, format_rows))
    convert: list | None = None
    converted: list[tuple[int, Callable]] = []
    for batch in batched(rows):
        if convert is None:
            convert = converters(columns, batch, viz, format_rows)
            converted = [(i, f) for i, f in enumerate(convert) if f is not None]
        if converted:
            batch = [list(row) for row in batch]
            for row in batch:
                for i, f in converted:
                    value = row[i]
                    if value is not None:
                        row[i] = f(value)
        writer.writerows(batch)
        if buffer.tell() >= CHUNK:
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode("utf-8")
