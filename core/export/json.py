"""JSON download: an array of objects keyed by column title, written row by row."""
from __future__ import annotations

from typing import Iterable, Iterator

import orjson

from . import batched
from .formatting import formatter, titles

CHUNK = 64 * 1024


def write(columns: list[dict], rows: Iterable[tuple], options: dict | None = None) -> Iterator[bytes]:
    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    keys = titles(columns, viz, format_rows)
    formatters = [formatter(c, viz, format_rows) for c in columns]
    parts: list[bytes] = [b"["]
    size = 1
    first = True
    for batch in batched(rows):
        for row in batch:
            item = orjson.dumps({k: f(v) for k, f, v in zip(keys, formatters, row)},
                                option=orjson.OPT_NON_STR_KEYS, default=str)
            if not first:
                parts.append(b",")
            first = False
            parts.append(item)
            size += len(item) + 1
        if size >= CHUNK:
            yield b"".join(parts)
            parts.clear()
            size = 0
    parts.append(b"]")
    yield b"".join(parts)
