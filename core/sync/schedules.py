"""Sync schedules: Metabase's expanded schedule maps and the Quartz cron strings stored for them.

A map is {"schedule_type": hourly|daily|weekly|monthly, "schedule_minute", "schedule_hour",
"schedule_day": sun..sat, "schedule_frame": first|mid|last}; the cron has seven fields
(seconds minutes hours day-of-month month day-of-week year). Storing is all this issue does;
the scheduler that runs them comes later.
"""
from __future__ import annotations

from core.http.errors import Invalid

DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
TYPES = ("hourly", "daily", "weekly", "monthly")
FRAMES = ("first", "mid", "last")


def _int(value, low: int, high: int, key: str) -> int:
    if value is None:
        return low
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Invalid({key: f"value must be an integer between {low} and {high}."})
    return value


def schedule_to_cron(schedule: dict, key: str = "schedules") -> str:
    if not isinstance(schedule, dict):
        raise Invalid({key: "value must be a map."})
    kind = schedule.get("schedule_type")
    if kind not in TYPES:
        raise Invalid({key: "schedule_type must be one of hourly, daily, weekly, monthly."})
    minute = _int(schedule.get("schedule_minute"), 0, 59, key)
    hour = _int(schedule.get("schedule_hour"), 0, 23, key)
    day = schedule.get("schedule_day")
    if day is not None and day not in DAYS:
        raise Invalid({key: "schedule_day must be one of " + ", ".join(DAYS) + "."})
    if kind == "hourly":
        return f"0 {minute} * * * ? *"
    if kind == "daily":
        return f"0 {minute} {hour} * * ? *"
    if kind == "weekly":
        return f"0 {minute} {hour} ? * {DAYS.index(day or 'mon') + 1} *"
    frame = schedule.get("schedule_frame") or "first"
    if frame not in FRAMES:
        raise Invalid({key: "schedule_frame must be one of first, mid, last."})
    if frame == "mid":
        return f"0 {minute} {hour} 15 * ? *"
    if day is None:
        return f"0 {minute} {hour} {'1' if frame == 'first' else 'L'} * ? *"
    number = DAYS.index(day) + 1
    return f"0 {minute} {hour} ? * {number}#1 *" if frame == "first" else f"0 {minute} {hour} ? * {number}L *"


def cron_to_schedule(cron: str | None) -> dict | None:
    """The expanded map of a cron this module wrote (None for one it cannot read)."""
    if not cron:
        return None
    parts = cron.split()
    if len(parts) < 6:
        return None
    _, minute, hour, dom, _month, dow = parts[:6]
    result = {"schedule_type": None, "schedule_minute": int(minute) if minute.isdigit() else 0,
              "schedule_hour": int(hour) if hour.isdigit() else None, "schedule_day": None, "schedule_frame": None}
    if hour == "*":
        result["schedule_type"] = "hourly"
    elif dom == "*" and dow in ("?", "*"):
        result["schedule_type"] = "daily"
    elif dow.isdigit():
        result.update(schedule_type="weekly", schedule_day=DAYS[int(dow) - 1])
    else:
        result["schedule_type"] = "monthly"
        if dom == "15":
            result["schedule_frame"] = "mid"
        elif dom == "L" or dow.endswith("L"):
            result["schedule_frame"] = "last"
        else:
            result["schedule_frame"] = "first"
        day = dow.rstrip("L").split("#")[0]
        if day.isdigit():
            result["schedule_day"] = DAYS[int(day) - 1]
    return result
