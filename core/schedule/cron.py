"""Quartz cron strings (what Metabase stores and core.sync.schedules writes) read as APScheduler triggers.

Quartz has seven fields, `seconds minutes hours day-of-month month day-of-week [year]`, with `?` for
"no condition", day-of-week 1 = Sunday, `L` (last day of the month), `nL` (last weekday n of the
month) and `n#k` (k-th weekday n). APScheduler's CronTrigger does the calendar arithmetic, time zones
and daylight-saving gaps; this module only translates the fields.
"""
from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.cron import CronTrigger

DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_ORDINALS = {"1": "1st", "2": "2nd", "3": "3rd", "4": "4th", "5": "5th"}


class CronError(ValueError):
    """A cron string this module cannot read (the message says which part)."""


def _weekday(token: str) -> str:
    token = token.strip().lower()
    if token.isdigit():
        number = int(token)
        if not 1 <= number <= 7:
            raise CronError(f"day-of-week {token} is not between 1 and 7")
        return DAY_NAMES[number - 1]
    if token[:3] in DAY_NAMES:
        return token[:3]
    raise CronError(f"day-of-week {token!r} is not a day")


def _day_of_week(field: str) -> str:
    parts = []
    for part in field.split(","):
        base, _, step = part.partition("/")
        if base == "*":
            parts.append(part)
            continue
        names = "-".join(_weekday(t) for t in base.split("-"))
        parts.append(names + ("/" + step if step else ""))
    return ",".join(parts)


def fields(cron: str) -> dict:
    """CronTrigger's keyword arguments for a Quartz cron string."""
    parts = str(cron or "").split()
    if len(parts) not in (6, 7):
        raise CronError("a cron needs 6 or 7 fields: seconds minutes hours day-of-month month day-of-week [year]")
    second, minute, hour, dom, month, dow = parts[:6]
    year = parts[6] if len(parts) == 7 else "*"
    result = {"second": second, "minute": minute, "hour": hour, "month": month, "year": year}
    if dom == "?" and dow == "?":
        raise CronError("day-of-month and day-of-week cannot both be '?'")
    if dom not in ("?", "*"):
        if "W" in dom.upper():
            raise CronError("nearest-weekday day-of-month ('W') is not supported")
        result["day"] = "last" if dom.upper() == "L" else dom
    if dow not in ("?", "*"):
        nth = re.fullmatch(r"(\w+)#([1-5])", dow)
        last = re.fullmatch(r"(\w+)L", dow)
        if nth:
            result["day"] = f"{_ORDINALS[nth.group(2)]} {_weekday(nth.group(1))}"
        elif last:
            result["day"] = f"last {_weekday(last.group(1))}"
        elif dow.upper() == "L":
            result["day_of_week"] = "sat"
        else:
            result["day_of_week"] = _day_of_week(dow)
    return result


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name) if name else ZoneInfo("UTC")
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise CronError(f"unknown time zone {name!r}") from exc


def trigger(cron: str, timezone: str | None = None) -> CronTrigger:
    try:
        return CronTrigger(timezone=zone(timezone), **fields(cron))
    except CronError:
        raise
    except ValueError as exc:  # APScheduler's own field errors
        raise CronError(str(exc)) from exc


def next_after(cron: str, timezone: str | None, after: int) -> int | None:
    """The first occurrence strictly after `after` (seconds since the epoch), in seconds; None if none."""
    start = dt.datetime.fromtimestamp(after + 1, dt.timezone.utc)
    fire = trigger(cron, timezone).get_next_fire_time(None, start)
    return int(fire.timestamp()) if fire else None
