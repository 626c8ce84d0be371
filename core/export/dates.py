"""Formatted temporal cells (`format_rows=true`), as Metabase's backend formatter writes them.

A column's temporal unit decides the pattern first (a year bucket is "2024", a month "January, 2024",
a week "January 7, 2024 - January 13, 2024"); otherwise its type does (a date "January 5, 2024", a
datetime "January 5, 2024, 1:45 PM", a time "1:45 PM"). The column's visualization settings
(date_style, date_abbreviate, date_separator, time_enabled, time_style) change the patterns as in the
app. Patterns use the app's moment-style tokens and are rendered here, so no locale is involved.
"""
from __future__ import annotations

import calendar
import datetime as dt
import re
from typing import Callable

TOKENS = re.compile(r"\[[^\]]*\]|YYYY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|hh|h|mm|ss|SSS|A|a")
MONTH_NAMES = calendar.month_name[1:]
DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _clock(value) -> tuple[int, int, int, int]:
    if isinstance(value, (dt.datetime, dt.time)):
        return value.hour, value.minute, value.second, value.microsecond
    return 0, 0, 0, 0


def render(pattern: str, value: dt.date | dt.datetime | dt.time) -> str:
    """`value` written with a moment-style pattern (`[...]` is literal text)."""
    hour, minute, second, micro = _clock(value)
    dated = isinstance(value, dt.date)

    def token(match: re.Match) -> str:
        t = match.group(0)
        if t[0] == "[":
            return t[1:-1]
        if t in ("A", "a"):
            return "AM" if hour < 12 else "PM"
        clock = {"HH": f"{hour:02d}", "H": str(hour), "hh": f"{hour % 12 or 12:02d}", "h": str(hour % 12 or 12),
                 "mm": f"{minute:02d}", "ss": f"{second:02d}", "SSS": f"{micro // 1000:03d}"}
        if t in clock:
            return clock[t]
        if not dated:
            return t
        return {"YYYY": str(value.year), "MMMM": MONTH_NAMES[value.month - 1], "MMM": MONTH_NAMES[value.month - 1][:3],
                "MM": f"{value.month:02d}", "M": str(value.month), "DD": f"{value.day:02d}", "D": str(value.day),
                "dddd": DAY_NAMES[value.weekday()], "ddd": DAY_NAMES[value.weekday()][:3]}[t]

    return TOKENS.sub(token, pattern)


def _date_style(style: str, settings: dict) -> str:
    if settings.get("date_separator"):
        style = style.replace("/", settings["date_separator"])
    if settings.get("date_abbreviate"):
        style = style.replace("MMMM", "MMM").replace("dddd", "ddd")
    return style


def _time_style(settings: dict) -> str | None:
    """The time part of a datetime or time; None when the settings switch the time off."""
    precision = settings.get("time_enabled", "minutes")
    base = {"minutes": "mm", "seconds": "mm:ss", "milliseconds": "mm:ss.SSS"}.get(precision)
    if base is None:
        return None
    style = settings.get("time_style") or "h:mm A"
    if style == "HH:mm":
        return f"HH:{base}"
    if style in ("h:mm A", "h:mm a"):
        return f"h:{base} A"
    return "h" + base if style == "k:mm" else style


def _with_time(date_part: str, time_part: str | None) -> str:
    return date_part if time_part is None else f"{date_part}, {time_part}"


def _unit_pattern(unit: str, settings: dict) -> Callable[[dt.date], str] | None:
    date_style = settings.get("date_style")
    if unit == "year":
        return lambda v: str(v.year)
    if unit == "quarter":
        return lambda v: f"Q{(v.month - 1) // 3 + 1} - {v.year}"
    if unit == "month":
        return lambda v: render(_date_style(date_style or "MMMM, YYYY", settings), v)
    if unit == "week":
        style = _date_style(date_style or "MMMM D, YYYY", settings)
        return lambda v: f"{render(style, v)} - {render(style, v + dt.timedelta(days=6))}"
    if unit == "day":
        return lambda v: render(_date_style(date_style or "dddd, MMMM D, YYYY", settings), v)
    if unit == "hour":
        style = _date_style(f"{date_style or 'MMMM D, YYYY'}, {settings.get('time_style') or 'h A'}", settings)
        return lambda v: render(style, v)
    if unit == "minute":
        style = _date_style(f"{date_style or 'MMMM, YYYY'}, {settings.get('time_style') or 'h:mm A'}", settings)
        return lambda v: render(style, v)
    return None


def temporal_formatter(column: dict, settings: dict) -> Callable[[dt.date | dt.datetime | dt.time], str]:
    """The function writing one temporal column's date, datetime and time values."""
    by_unit = _unit_pattern(column.get("unit") or "default", settings)
    date_style = _date_style(settings.get("date_style") or "MMMM D, YYYY", settings)
    datetime_style = _with_time(date_style, _time_style(settings))
    time_style = _time_style(settings)

    def fmt(value) -> str:
        if isinstance(value, dt.time):
            return "" if time_style is None else render(time_style, value)
        if by_unit is not None:
            return by_unit(value)
        if isinstance(value, dt.datetime):
            return render(datetime_style, value)
        return render(date_style, value)

    return fmt
