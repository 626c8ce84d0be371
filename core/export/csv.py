"""CSV download: a header of column titles, then rows written by the csv module in ~64 KiB chunks."""
from __future__ import annotations

import csv
import io
from typing import Any, Iterable, Iterator

from .formatting import formatter, titles

CHUNK = 64 * 1024
SIMPLE = (str, int, float, type(None))


def write(columns: list[dict], rows: Iterable[tuple], options: dict | None = None) -> Iterator[bytes]:
    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=options.get("separator") or ",", lineterminator="\n")
    if options.get("csv_include_bom"):
        buffer.write("\ufeff")
    writer.writerow(titles(columns, viz, format_rows))
    formatters = [formatter(c, viz, format_rows) for c in columns]

    def cells(row: tuple) -> list[Any]:
        # Strings and numbers pass straight to the C writer; only the rest needs converting.
        return [v if type(v) in SIMPLE else (("true" if v else "false") if type(v) is bool else f(v))
                for v, f in zip(row, formatters)]

    if format_rows:
        def cells(row: tuple) -> list[Any]:  # noqa: F811 - every value goes through its formatter
            return [f(v) for v, f in zip(row, formatters)]

    batch: list = []
    for row in rows:
        batch.append(cells(row))
        if len(batch) >= 512:
            writer.writerows(batch)
            batch.clear()
            if buffer.tell() >= CHUNK:
                yield buffer.getvalue().encode("utf-8")
                buffer.seek(0)
                buffer.truncate()
    if batch:
        writer.writerows(batch)
    yield buffer.getvalue().encode("utf-8")

