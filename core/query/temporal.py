"""Temporal arithmetic on Python values for the compiler: truncation, shifting, parsing, unit names.

Relative filters (time-interval, relative-datetime, during, a date compared with a bucketed field)
become plain ranges whose bounds are computed here, from one clock, and sent as literals. Every
engine then compares the raw column against the same two constants, which keeps the four engines in
agreement and lets an index serve the filter. Weeks start on `week_start`, a Python weekday (0 = Monday
.. 6 = Sunday) that the compiler takes from the start-of-week setting; Sunday, Metabase's default, when
a caller gives none.
"""
from __future__ import annotations

import datetime as dt
import re

from core.http.errors import Invalid

TRUNCATION_UNITS = ("millisecond", "second", "minute", "hour", "day", "week", "month", "quarter", "year")
EXTRACTION_UNITS = ("minute-of-hour", "hour-of-day", "day-of-week", "day-of-month", "day-of-year",
                    "week-of-year", "month-of-year", "quarter-of-year")
INTERVAL_UNITS = ("millisecond", "second", "minute", "hour", "day", "week", "month", "quarter", "year")

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")


def parse(value: str) -> dt.date | dt.datetime | None:
    """An ISO date or datetime string as Python value (naive UTC), or None when it is not one."""
    if not isinstance(value, str):
        return None
    if _DATE.match(value):
        return dt.date.fromisoformat(value)
    if _DATETIME.match(value):
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return parsed
    return None


def as_datetime(value: dt.date | dt.datetime) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    return dt.datetime(value.year, value.month, value.day)


def truncate(value: dt.datetime, unit: str, week_start: int = 6) -> dt.datetime:
    """Start of the unit containing value; week_start is a Python weekday (6 = Sunday, Metabase's default)."""
    value = as_datetime(value)
    if unit == "millisecond":
        return value.replace(microsecond=value.microsecond // 1000 * 1000)
    if unit == "second":
        return value.replace(microsecond=0)
    if unit == "minute":
        return value.replace(second=0, microsecond=0)
    if unit == "hour":
        return value.replace(minute=0, second=0, microsecond=0)
    day = value.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        return day
    if unit == "week":
        return day - dt.timedelta(days=(day.weekday() - week_start) % 7)
    if unit == "month":
        return day.replace(day=1)
    if unit == "quarter":
        return day.replace(day=1, month=3 * ((day.month - 1) // 3) + 1)
    if unit == "year":
        return day.replace(day=1, month=1)
    raise ValueError(unit)


def add(value: dt.datetime, amount: int, unit: str) -> dt.datetime:
    """value shifted by amount units; Invalid (400) when the result leaves years 1..9999, as a
    client-chosen amount such as 10**30 days would."""
    value = as_datetime(value)
    try:
        if unit in ("millisecond", "second", "minute", "hour", "day", "week"):
            return value + dt.timedelta(**{unit + "s": amount})
        months = amount * {"month": 1, "quarter": 3, "year": 12}[unit]
        total = value.year * 12 + value.month - 1 + months
        year, month = divmod(total, 12)
        month += 1
        last = (dt.date(year + (month == 12), month % 12 + 1, 1) - dt.timedelta(days=1)).day
        return value.replace(year=year, month=month, day=min(value.day, last))
    except (OverflowError, ValueError):
        raise Invalid(f"Invalid MBQL: {amount} {unit}s from {value:%Y-%m-%d} is outside the years 1 to 9999.") from None


def bucket(value: dt.datetime, unit: str, week_start: int = 6) -> tuple[dt.datetime, dt.datetime]:
    """The half-open range [start, end) of the `unit` bucket holding `value`."""
    start = truncate(value, unit, week_start)
    return start, add(start, 1, unit)


def humanize(unit: str) -> str:
    """Metabase's display form of a unit: "day-of-week" -> "Day of week"."""
    words = unit.replace("-", " ")
    return words[:1].upper() + words[1:]
