"""JSON download: an array of objects keyed by column title, encoded by orjson a batch of rows at a time.

Unformatted downloads convert only what orjson would write otherwise than formatting.plain does, a
column of a batch at a time: SQLite's text datetimes (ISO with a "T", midnight as the date), naive
datetimes at midnight (their date), aware datetimes and times (isoformat keeps an offset's seconds,
orjson drops them or refuses), Decimals (int or float; an integer wider than 64 bits as its digits),
bytes (text). Strings, numbers, booleans, None, dates, naive times and UUIDs go to orjson as they are:
it writes them as plain's values would be written. Formatted downloads (`format_rows`) format every cell, as the csv writer does.
"""
from __future__ import annotations

import datetime as dt
import itertools
import operator
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
DATETIMES = frozenset({dt.datetime, type(None)})

_flatten = itertools.chain.from_iterable


def _value(v: Any) -> Any:
    """What orjson is given for a value not in AS_THEY_ARE."""
    if type(v) is dt.datetime and v.tzinfo is None:
        return v.date() if not (v.hour or v.minute or v.second or v.microsecond) else v
    if type(v) is dt.time and v.tzinfo is None:
        return v
    return exact(plain(v))


def exact(value: Any) -> Any:
    """An integer wider than orjson's 64 bits (an integral NUMERIC(30) Decimal) as its digits, written
    as they are; any other value unchanged."""
    if type(value) is int and not -2**63 <= value < 2**64:
        return orjson.Fragment(str(value))
    return value


def _naive_datetimes(values: list) -> list | None:
    """A column of naive datetimes (and None) as formatting.plain writes them, by orjson in two C calls:
    orjson writes a naive datetime as isoformat() does, so only midnight's "T00:00:00" (which no other
    naive datetime's text ends with) is cut to leave the date. None when some datetime is aware (its
    offset adds a "+" or a third "-")."""
    encoded = orjson.dumps(values)
    if b"+" in encoded or encoded.count(b"-") != 2 * (len(values) - values.count(None)):
        return None
    return orjson.loads(encoded.replace(b'T00:00:00"', b'"'))


def _column(values: list, temporal: bool) -> list:
    """A column of a batch as orjson is to be given it (the same list when nothing changes)."""
    types = set(map(type, values))
    if types <= AS_THEY_ARE and not (temporal and str in types):
        return values
    if types <= DATETIMES:
        written = _naive_datetimes(values)
        if written is not None:
            return written
    if temporal and str in types:
        canonical = _canonical_datetimes(tuple(values)) if types == {str} else None
        if canonical is not None:
            return canonical
        text = _TextDatetimes()
        return [text(v) if type(v) is str else (v if type(v) in AS_THEY_ARE else _value(v)) for v in values]
    return [v if type(v) in AS_THEY_ARE else _value(v) for v in values]


def _objects(columns: list[dict], keys: list[str], viz, format_rows: bool) -> Callable[[list], list]:
    """The function turning a batch of rows into the objects orjson writes."""
    if format_rows:
        formatters = [formatter(c, viz, True) for c in columns]
        return lambda batch: [dict(zip(keys, [f(v) for f, v in zip(formatters, row)])) for row in batch]
    temporal = [is_temporal(c) for c in columns]
    getters = [operator.itemgetter(i) for i in range(len(columns))]
    unique = len(set(keys)) == len(keys)

    def objects(batch: list) -> list:
        # map() builds the objects without a Python step per row.
        made = list(map(dict, map(zip, itertools.repeat(keys), batch)))
        # Which columns to look at: the temporal ones (text datetimes), or all when the batch holds a
        # value of a type orjson is not given as it is (one pass over every cell, in C).
        if set(map(type, _flatten(batch))) <= AS_THEY_ARE:
            todo = [i for i, t in enumerate(temporal) if t]
        else:
            todo = range(len(columns))
        for i in todo:
            column = list(map(getters[i], batch))
            written = _column(column, temporal[i])
            if written is column:
                continue
            if not unique:  # a repeated title keeps its last column's value, as dict(zip) does
                return [dict(zip(keys, row)) for row in _rewritten(batch, temporal)]
            list(map(dict.__setitem__, made, itertools.repeat(keys[i]), written))
        return made

    return objects


def _rewritten(batch: list, temporal: list[bool]) -> Iterable:
    columns = [_column(list(column), t) for column, t in zip(zip(*batch), temporal)]
    return zip(*columns)


def write(columns: list[dict], rows: Iterable[tuple], options: dict | None = None) -> Iterator[bytes]:
    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))
    keys = titles(columns, viz, format_rows)
    objects = _objects(columns, keys, viz, format_rows)
    parts: list[bytes] = [b"["]
    size = 1
    first = True
    for batch in batched(rows):
        if not batch:
            continue
        if not columns:
            encoded = b",".join([b"{}"] * len(batch))
        else:
            encoded = orjson.dumps(objects(batch), option=OPTIONS, default=str)[1:-1]
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
