"""Date parameter values (Metabase's date widget strings) turned into half-open ranges [start, end).

Every date widget value ends as a `DateRange`: "2024-01-05" is that day, "2024-01" a month, "Q1-2024" a
quarter, "past30days" the thirty complete days before today, "2024-01-01~2024-01-31" both ends
inclusive by day. Bounds are computed here, in the report time zone, so that native and MBQL
queries on every engine compare a column against the same bound values.
"""
from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from .temporal import truncate

UNITS = ("minute", "hour", "day", "week", "month", "quarter", "year")
_UNIT = "(minute|hour|day|week|month|quarter|year)s?"
RELATIVE = re.compile(rf"^(past|next|last)(\d+){_UNIT}(~)?(?:-from-(\d+){_UNIT})?$")
THIS_LAST_NEXT = re.compile(rf"^(this|last|next){_UNIT}$")
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")
MONTH_YEAR = re.compile(r"^(\d{4})-(\d{2})$")
QUARTER_YEAR = re.compile(r"^Q([1-4])-(\d{4})$")
EXCLUDE = re.compile(r"^exclude-(hours|days|months|quarters)-(.+)$")


class DateValueError(ValueError):
    """A date parameter value this grammar does not know."""


@dataclass(frozen=True)
class DateRange:
    """[start, end): either bound may be None (open). Bounds are dt.date for whole days, else naive
    dt.datetime in the report time zone."""

    start: dt.date | dt.datetime | None
    end: dt.date | dt.datetime | None


@dataclass(frozen=True)
class Exclusion:
    """Rows whose hour/day-of-week/month/quarter is one of `values` are left out. Days of the week are
    numbered as the compiler's day-of-week is: 1 is the start-of-week day."""

    unit: str  # "hour-of-day" | "day-of-week" | "month-of-year" | "quarter-of-year"
    values: tuple[int, ...]


WEEKDAYS = {"Mon": 0, "Tue": 1, "Wed": 2, "Thu": 3, "Fri": 4, "Sat": 5, "Sun": 6}  # Python's weekday()
MONTHS = {name: i for i, name in enumerate(calendar.month_abbr) if name}


def now_in(timezone: str | None) -> dt.datetime:
    zone = ZoneInfo(timezone) if timezone else dt.timezone.utc
    return dt.datetime.now(zone).replace(tzinfo=None)


def _parse_point(text: str) -> tuple[dt.datetime, str]:
    """A day or a datetime, with the granularity it names."""
    text = text.strip()
    if DAY.match(text):
        return dt.datetime.fromisoformat(text), "day"
    if DATETIME.match(text):
        return dt.datetime.fromisoformat(text.replace(" ", "T")), "minute"
    raise DateValueError(f"Don't know how to parse date string {text!r}")


def _as_bound(moment: dt.datetime, unit: str) -> dt.date | dt.datetime:
    # Whole-day bounds stay dates: an engine storing dates as text compares them lexicographically.
    if unit in ("day", "week", "month", "quarter", "year") and moment.time() == dt.time():
        return moment.date()
    return moment


    raise DateValueError(f"unknown unit {unit}")


def shift(moment: dt.datetime, unit: str, amount: int) -> dt.datetime:
    if unit == "minute":
        return moment + dt.timedelta(minutes=amount)
    if unit == "hour":
        return moment + dt.timedelta(hours=amount)
    if unit == "day":
        return moment + dt.timedelta(days=amount)
    if unit == "week":
        return moment + dt.timedelta(weeks=amount)
    months = {"month": 1, "quarter": 3, "year": 12}[unit] * amount
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def _range(start: dt.datetime | None, end: dt.datetime | None, unit: str) -> DateRange:
    return DateRange(None if start is None else _as_bound(start, unit), None if end is None else _as_bound(end, unit))


def relative_range(value: str, now: dt.datetime, week_start: int = 6) -> DateRange | None:
    """Relative values ("past30days", "thismonth", "next2weeks~", "past3months-from-1years"), or None."""
    if value == "today":
        value = "thisday"
    elif value == "yesterday":
        value = "lastday"
    match = THIS_LAST_NEXT.match(value)
    if match:
        direction, unit = match.groups()
        current = truncate(now, unit, week_start)
        offset = {"this": 0, "last": -1, "next": 1}[direction]
        start = shift(current, unit, offset)
        return _range(start, shift(start, unit, 1), unit)
    match = RELATIVE.match(value)
    if not match:
        return None
    direction, amount, unit, include_current, offset_amount, offset_unit = match.groups()
    amount = int(amount)
    current = truncate(now, unit, week_start)
    if direction in ("past", "last"):
        start = shift(current, unit, -amount)
        end = shift(current, unit, 1) if include_current else current
        sign = -1
    else:
        start = current if include_current else shift(current, unit, 1)
        end = shift(current, unit, amount + 1)
        sign = 1
    if offset_amount:
        start = shift(start, offset_unit, sign * int(offset_amount))
        end = shift(end, offset_unit, sign * int(offset_amount))
        unit = min(unit, offset_unit, key=UNITS.index)
    return _range(start, end, unit)


def month_year(value: str) -> DateRange:
    match = MONTH_YEAR.match(value)
    if not match:
        raise DateValueError(f"Don't know how to parse month-year value {value!r}")
    start = dt.datetime(int(match.group(1)), int(match.group(2)), 1)
    return _range(start, shift(start, "month", 1), "month")


def quarter_year(value: str) -> DateRange:
    match = QUARTER_YEAR.match(value)
    if not match:
        raise DateValueError(f"Don't know how to parse quarter-year value {value!r}")
    start = dt.datetime(int(match.group(2)), (int(match.group(1)) - 1) * 3 + 1, 1)
    return _range(start, shift(start, "quarter", 1), "quarter")


def single(value: str) -> DateRange:
    moment, unit = _parse_point(value)
    return _range(moment, shift(moment, unit, 1), unit)


def date_range(value: str) -> DateRange:
    """"a~b" both ends inclusive at their own granularity; "~b" up to b; "a~" from a."""
    if "~" not in value:
        raise DateValueError(f"Don't know how to parse date range {value!r}")
    left, right = value.split("~", 1)
    start = end = None
    start_unit = end_unit = "day"
    if left.strip():
        start, start_unit = _parse_point(left)
    if right.strip():
        end_point, end_unit = _parse_point(right)
        end = shift(end_point, end_unit, 1)
    return DateRange(None if start is None else _as_bound(start, start_unit),
                     None if end is None else _as_bound(end, end_unit))


def exclusion(value: str, week_start: int = 6) -> Exclusion | None:
    match = EXCLUDE.match(value)
    if not match:
        return None
    unit, raw = match.groups()
    parts = [p for p in raw.split("-") if p]
    try:
        if unit == "hours":
            values = tuple(int(p) for p in parts)
            if any(v < 0 or v > 23 for v in values):
                raise ValueError
            return Exclusion("hour-of-day", values)
        if unit == "days":
            return Exclusion("day-of-week", tuple((WEEKDAYS[p] - week_start) % 7 + 1 for p in parts))
        if unit == "months":
            return Exclusion("month-of-year", tuple(MONTHS[p] for p in parts))
        values = tuple(int(p) for p in parts)
        if any(v < 1 or v > 4 for v in values):
            raise ValueError
        return Exclusion("quarter-of-year", values)
    except (KeyError, ValueError):
        raise DateValueError(f"Don't know how to parse exclusion {value!r}") from None


def parse(widget: str, value: str, now: dt.datetime, week_start: int = 6) -> DateRange | Exclusion:
    """The range (or exclusion) a date widget's value stands for."""
    if not isinstance(value, str):
        raise DateValueError(f"Date parameter value must be a string, received: {value!r}")
    value = value.strip()
    if widget == "date/month-year":
        return month_year(value)
    if widget == "date/quarter-year":
        return quarter_year(value)
    if widget == "date/range":
        return date_range(value)
    if widget == "date/single":
        return single(value)
    relative = relative_range(value, now, week_start)
    if relative is not None:
        return relative
    if widget == "date/relative":
        raise DateValueError(f"Don't know how to parse relative date {value!r}")
    # date/all-options, or a plain "date" parameter: any of the forms.
    excluded = exclusion(value, week_start)
    if excluded is not None:
        return excluded
    if "~" in value:
        return date_range(value)
    if MONTH_YEAR.match(value):
        return month_year(value)
    if QUARTER_YEAR.match(value):
        return quarter_year(value)
    return single(value)
