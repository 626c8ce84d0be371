"""The cells and rows of the xlsx sheet XML (core.export.xlsx): `_cell` writes one value, `batch_xml` a
batch of rows with the same cells, a column at a time.

`batch_xml` looks at each column of the batch: when every value has one kind that needs no per-value
rewriting (ints, finite floats, booleans, text with nothing to escape) the column's values go into the
row's `%` template as they are; dates, naive datetimes and SQLite's canonical datetime text become
serial numbers by a list comprehension over the column (date parts memoised); any other column is
written cell by cell by `_cell`. Then the whole batch is one `%` of the repeated row template. Every
path writes the text `_cell` writes for the same value (str() of a float is its repr()).
"""
from __future__ import annotations

import datetime as dt
import decimal
import itertools
import math
import re
from typing import Any

EPOCH = dt.datetime(1899, 12, 30)
EPOCH_DATE = dt.date(1899, 12, 30)
# Characters XML 1.0 forbids; a value holding one would make the file unreadable.
ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# What, beside ILLEGAL, a text cell's value must not hold to be written as it is.
ESCAPED = re.compile("[&<>\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

TEXT = '<c t="inlineStr"><is><t xml:space="preserve">%s</t></is></c>'
NUMBER = "<c><v>%s</v></c>"
BOOLEAN = '<c t="b"><v>%d</v></c>'
DATE = '<c s="1"><v>%s</v></c>'
DATETIME = '<c s="2"><v>%s</v></c>'
CELL = "%s"
MEMO = 100_000  # more than the 86,400 seconds of a day

_flatten = itertools.chain.from_iterable
def _text(value: str) -> str:
    if ILLEGAL.search(value):
        value = ILLEGAL.sub("", value)
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f'<c t="inlineStr"><is><t xml:space="preserve">{value}</t></is></c>'


def _cell(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return _text(value)
    if kind is int or kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            return _text(str(value))
        return f"<c><v>{value!r}</v></c>"
    if value is None:
        return "<c/>"
    if kind is bool:
        return f'<c t="b"><v>{int(value)}</v></c>'
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.replace(tzinfo=None)
        delta = value - EPOCH
        serial = delta.days + (delta.seconds + delta.microseconds / 1e6) / 86400
        return f'<c s="2"><v>{serial!r}</v></c>'
    if isinstance(value, dt.date):
        return f'<c s="1"><v>{(value - EPOCH_DATE).days}</v></c>'
    if isinstance(value, dt.time):
        serial = (value.hour * 3600 + value.minute * 60 + value.second + value.microsecond / 1e6) / 86400
        return f'<c s="3"><v>{serial!r}</v></c>'
    if isinstance(value, (int, float, decimal.Decimal)):
        return f"<c><v>{value}</v></c>"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _text(bytes(value).decode("utf-8", "replace"))
    return _text(str(value))


TEMPORAL_TYPES = frozenset({"type/Date", "type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
                            "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/Instant"})


def _parse_dates(row: tuple, indexes: list[int]) -> tuple:
    if not any(type(row[i]) is str for i in indexes):
        return row
    values = list(row)
    for i in indexes:
        value = values[i]
        if type(value) is str:
            try:
                parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
            values[i] = parsed.date() if len(value) == 10 else parsed
    return tuple(values)


class _Serials:
    """Excel serial numbers of a column's dates, datetimes and SQLite datetime text, as `_cell` computes them."""

    def __init__(self):
        self.days: dict[str, int | None] = {}
        self.seconds: dict[str, float | None] = {}
        self.date_days: dict[dt.date, int] = {}

    def _day(self, text: str) -> int | None:
        try:
            return (dt.date.fromisoformat(text) - EPOCH_DATE).days
        except ValueError:
            return None

    def _fraction(self, text: str) -> float | None:
        """The day's fraction `_cell` adds to the day number: (seconds + 0 / 1e6) / 86400."""
        try:
            t = dt.time.fromisoformat(text)
        except ValueError:
            return None
        return (t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6) / 86400

    def text(self, values: list) -> list | None:
        """Serials of "YYYY-MM-DD HH:MM:SS" texts (fromisoformat gives a datetime without microseconds);
        None when a value has another shape or is not a valid datetime."""
        try:
            joined = "\n".join(values)
        except TypeError:
            return None
        n = len(values)
        if (len(joined) == 11 * n - 1 and joined.count("\n") == n - 1 and joined[10::11] == "\n" * (n - 1)
                and joined[4::11] == "-" * n and joined[7::11] == "-" * n):
            return self.text_dates(values)
        if (len(joined) != 20 * n - 1 or joined[10::20] != " " * n or joined[19::20] != "\n" * (n - 1)
                or joined.count("\n") != n - 1 or joined[4::20] != "-" * n or joined[7::20] != "-" * n
                or joined[13::20] != ":" * n or joined[16::20] != ":" * n):
            return None
        days, seconds = self.days, self.seconds
        try:  # most batches find every part in the memos
            return [days[v[:10]] + seconds[v[11:]] for v in values]
        except (KeyError, TypeError):  # a new part, or an invalid one (None in its memo)
            pass
        # Memos of whole-day and time-of-day parts; emptied when full (a batch's new keys always fit).
        if len(days) > MEMO:
            days.clear()
        if len(seconds) > MEMO:
            seconds.clear()
        for v in values:
            day, clock = v[:10], v[11:]
            if day not in days:
                days[day] = self._day(day)
            if clock not in seconds:
                seconds[clock] = self._fraction(clock)
        try:
            return [days[v[:10]] + seconds[v[11:]] for v in values]
        except TypeError:
            return None

    def text_dates(self, values: list) -> list | None:
        """Day numbers (ints, where `text` gives floats) of "YYYY-MM-DD" texts: fromisoformat gives a
        date and `_cell` writes its day number. None when one is not a valid date."""
        days = self.days
        if len(days) > MEMO:
            days.clear()
        for v in values:
            if v not in days:
                days[v] = self._day(v)
        out = list(map(days.__getitem__, values))
        return None if None in out else out

    def dates(self, values: list) -> list:
        memo = self.date_days
        if len(memo) > MEMO:
            memo.clear()
        out = []
        for v in values:
            days = memo.get(v)
            if days is None:
                days = memo[v] = (v - EPOCH_DATE).days
            out.append(days)
        return out

    @staticmethod
    def datetimes(values: list) -> list:
        epoch = EPOCH
        out = []
        for v in values:
            delta = v - epoch
            out.append(delta.days + (delta.seconds + delta.microseconds / 1e6) / 86400)
        return out


def _column(values: list, temporal: bool, serials: _Serials) -> tuple[str, list]:
    """A column of a batch: its cell template and the values that go into it."""
    types = set(map(type, values))
    if len(types) == 1:
        kind = next(iter(types))
        if kind is int:
            return NUMBER, values
        if kind is float and all(map(math.isfinite, values)):
            return NUMBER, values
        if kind is bool:
            return BOOLEAN, values
        if kind is str:
            if temporal:
                written = serials.text(values)
                if written is not None:
                    # Day numbers (ints) of date texts, serials (floats) of datetime texts.
                    return (DATE if type(written[0]) is int else DATETIME), written
            elif not ESCAPED.search("".join(values)):
                return TEXT, values
        if kind is dt.date:
            return DATE, serials.dates(values)
        if kind is dt.datetime and all(v.tzinfo is None for v in values):
            return DATETIME, serials.datetimes(values)
    if temporal and str in types:
        values = [_parse_dates((v,), [0])[0] for v in values]
    return CELL, [_cell(v) for v in values]


class BatchWriter:
    """Rows of the sheet XML, a batch at a time (see the module docstring)."""

    def __init__(self, width: int, temporal: list[bool]):
        self.width = width
        self.temporal = temporal
        self.serials = [_Serials() for _ in range(width)]

    def __call__(self, batch: list) -> str:
        width = self.width
        cells = list(_flatten(batch))
        if len(cells) != width * len(batch):
            raise ValueError(f"rows of {len(cells) // max(len(batch), 1)} cells for {width} columns")
        pieces = []
        for i in range(width):
            column = cells[i::width]
            piece, written = _column(column, self.temporal[i], self.serials[i])
            pieces.append(piece)
            if written is not column:
                cells[i::width] = written
        return (("<row>" + "".join(pieces) + "</row>") * len(batch)) % tuple(cells)
