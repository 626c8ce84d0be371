"""Channel rules: which channel types exist, which schedules are valid, how a channel is stored
(Metabase's pulse_channel normalisation) and which channels are configured (GET /api/pulse/form_input).

Raw e-mail addresses are kept in details["emails"] and never served there: they come back as
`{"email": ...}` recipients. User recipients are rows of pulse_channel_recipient.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import User
from core.http.errors import Forbidden, Invalid, NotFound
from core.http.types import BIGINT_MAX, EMAIL_RE

SCHEDULES = ["hourly", "daily", "weekly", "monthly"]
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
FRAMES = ("first", "mid", "last")

CHANNEL_TYPES: dict[str, dict] = {
    "email": {"type": "email", "name": "Email", "allows_recipients": True, "recipients": ["user", "email"],
              "schedules": SCHEDULES},
    "slack": {"type": "slack", "name": "Slack", "allows_recipients": False, "schedules": SCHEDULES,
              "fields": [{"name": "channel", "type": "select", "displayName": "Post to", "options": [],
                          "required": True}]},
    "http": {"type": "http", "name": "Webhook", "allows_recipients": False, "schedules": SCHEDULES},
}


def form_input(email_configured: bool, http_configured: bool) -> dict:
    """Slack is never configured (no Slack integration); webhooks are once an active /api/channel
    destination exists."""
    configured = {"email": email_configured, "slack": False, "http": http_configured}
    return {"channels": {key: {**spec, "configured": configured[key]} for key, spec in CHANNEL_TYPES.items()}}


def _hour(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 23


def valid_schedule(kind: Any, hour: Any, day: Any, frame: Any) -> bool:
    """Metabase's valid-schedule?: hourly needs nothing; daily an hour; weekly an hour and a day;
    monthly a frame and an hour, and the mid frame no day."""
    if kind == "hourly":
        return True
    if kind == "daily":
        return _hour(hour)
    if kind == "weekly":
        return _hour(hour) and day in DAYS
    if kind == "monthly":
        return frame in FRAMES and _hour(hour) and (frame in ("first", "last") or day is None) and (
            day is None or day in DAYS)
    return False


def _bad(message: str) -> Invalid:
    return Invalid({"channels": message})


def normalise(channel: dict) -> dict:
    """A client's channel map checked and reduced to what is stored: hour only when not hourly, day only
    for weekly and monthly, frame only for monthly; recipients split into user ids and raw addresses."""
    kind = channel.get("channel_type")
    if kind not in CHANNEL_TYPES:
        raise _bad("channel_type must be one of email, slack, http.")
    enabled = channel.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _bad("enabled must be a boolean.")
    schedule = channel.get("schedule_type")
    if schedule not in SCHEDULES:
        raise _bad("schedule_type must be one of hourly, daily, weekly, monthly.")
    hour, day, frame = channel.get("schedule_hour"), channel.get("schedule_day"), channel.get("schedule_frame")
    if not valid_schedule(schedule, hour, day, frame):
        raise _bad(f"Invalid {schedule} schedule: daily needs schedule_hour 0-23, weekly also schedule_day "
                   "mon-sun, monthly schedule_hour and schedule_frame first, mid or last (mid with no day).")
    details = channel.get("details") or {}
    if not isinstance(details, dict):
        raise _bad("details must be a map.")
    recipients = channel.get("recipients") or []
    if not isinstance(recipients, list) or not all(isinstance(r, dict) for r in recipients):
        raise _bad("recipients must be a list of maps.")
    user_recipients, emails = [], []
    if CHANNEL_TYPES[kind]["allows_recipients"]:
        for recipient in recipients:
            if recipient.get("id") is not None:
                rid = recipient["id"]
                if not isinstance(rid, int) or isinstance(rid, bool) or not 0 < rid <= BIGINT_MAX:
                    raise _bad("a recipient id must be an integer greater than zero.")
                user_recipients.append(recipient)
            elif recipient.get("email") is not None:
                if not isinstance(recipient["email"], str) or not EMAIL_RE.match(recipient["email"]):
                    raise _bad("a recipient email must be a valid email address.")
                if recipient["email"] not in emails:
                    emails.append(recipient["email"])
        details = {**details, "emails": emails}
    channel_id = channel.get("channel_id")
    if kind == "http":
        if not isinstance(channel_id, int) or isinstance(channel_id, bool) or not 0 < channel_id <= BIGINT_MAX:
            raise _bad("an http channel needs channel_id, the id of a webhook destination (/api/channel).")
    else:
        channel_id = None
    return {"channel_type": kind, "channel_id": channel_id, "enabled": enabled, "schedule_type": schedule,
            "schedule_hour": hour if schedule != "hourly" else None,
            "schedule_day": day if schedule in ("weekly", "monthly") else None,
            "schedule_frame": frame if schedule == "monthly" else None,
            "details": details, "user_recipients": user_recipients}


def recipient_user_ids(session: Session, user_recipients: list[dict]) -> list[int]:
    """The ids of user recipients: an unknown id is a 404, an id sent with another user's address a 403
    (so that nobody sends a test to an arbitrary address under a real user's id)."""
    ids = sorted({r["id"] for r in user_recipients})
    if not ids:
        return []
    emails = dict(session.execute(select(User.id, User.email).where(User.id.in_(ids))).all())
    for recipient in user_recipients:
        correct = emails.get(recipient["id"])
        if correct is None:
            raise NotFound(f"User {recipient['id']} does not exist.")
        given = recipient.get("email")
        if given is not None and str(given).lower() != correct.lower():
            raise Forbidden(f"Wrong email address for User {recipient['id']}.")
    return ids
