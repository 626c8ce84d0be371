"""JSON download: an array of objects keyed by column title, encoded by orjson a batch of rows at a time.

Unformatted downloads convert only what orjson would write otherwise than formatting.plain does, a
column of a batch at a time: SQLite's text datetimes (ISO with a "T", midnight as the date), naive
datetimes at midnight (their date), aware datetimes and times (isoformat keeps an offset's seconds,
orjson drops them or refuses), Decimals (int or float), bytes (text). Strings, numbers, booleans,
None, dates, naive times and UUIDs go to orjson as they are: it writes them as plain's values would
be written. Formatted downloads (`format_rows`) format every cell, as the csv writer does.
"""
from __future__ import annotations

import datetime as dt
import itertools
import uuid
from typing import Any, Callable, Iterable, Iterator

import orjson

from . import batched
from .csv import _canonical_datetimes, _TextDatetimes
from .formatting import formatter, is_temporal, plain, titles

CHUNK = 64 * 1024
# The types orjson writes as formatting.plain's value of them would be written.
AS_THEY_ARE = frozenset({str, int, float, bool, type(None), dt.date, uuid.UUID})
OPTIONS = orjson.OPT_NON_STR_KEYS

_flatten = itertools.chain.from_iterable


def _value(v: Any) -> Any:
    """What orjson is given for a value not in AS_THEY_ARE."""
    if type(v) is dt.datetime and v.tzinfo is None:
        return v.date() if not (v.hour or v.minute or v.second or v.microsecond) else v
    if type(v) is dt.time and v.tzinfo is None:
        return v
    return plain(v)


def _column(values: list, temporal: bool) -> list:
    """A column of a batch as orjson is to be given it (the same list when nothing changes)."""
    types = set(map(type, values))
    if types <= AS_THEY_ARE and not (temporal and str in types):
        return values
    if temporal and str in types:
        canonical = _canonical_datetimes(tuple(values)) if types == {str} else None
        if canonical is not None:
            return canonical
        text = _TextDatetimes()
        return [text(v) if type(v) is str else (v if type(v) in AS_THEY_ARE else _value(v)) for v in values]
    return [v if type(v) in AS_THEY_ARE else _value(v) for v in values]


def _converted(columns: list[dict], viz, format_rows: bool) -> Callable[[list], list]:
    """The function turning a batch of rows into its rows of values for orjson."""
    width = len(columns)
    if format_rows:
        formatters = [formatter(c, viz, True) for c in columns]
        return lambda batch: [[f(v) for f, v in zip(formatters, row)] for row in batch]
    temporal = [is_temporal(c) for c in columns]

    def convert(batch: list) -> Iterable:
        cells = list(_flatten(batch))
        if len(cells) != width * len(batch):
            raise ValueError(f"rows of {len(cells) // max(len(batch), 1)} cells for {width} columns")
        changed = False
        for i in range(width):
            column = cells[i::width]
            written = _column(column, temporal[i])
            if written is not column:
                cells[i::width] = written
                changed = True
        return zip(*[iter(cells)] * width) if changed else batch

    return convert


def write(columns: list[dict], rows: Iterable[tuple], options: dict | None = None) -> Iterator[bytes]:
    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    keys = titles(columns, viz, format_rows)
    convert = _converted(columns, viz, format_rows)
    parts: list[bytes] = [b"["]
    size = 1
    first = True
    for batch in batched(rows):
        if not batch:
            continue
        if not columns:
            encoded = b",".join([b"{}"] * len(batch))
        else:
            encoded = orjson.dumps([dict(zip(keys, row)) for row in convert(batch)], option=OPTIONS, default=str)[1:-1]
        if not first:
            parts.append(b",")
        first = False
        parts.append(encoded)
        size += len(encoded) + 1
        if size >= CHUNK:
            yield b"".join(parts)
            parts.clear()
            size = 0
    parts.append(b"]")
    yield b"".join(parts)
