"""/api/notification's shapes over the pulse tables (one store, three views): a pulse with an alert
condition is a `notification/card` (has_result = "rows", goal_above/goal_below = "goal" with
alert_above_goal, send_once = alert_first_only), a dashboard subscription a `notification/dashboard`;
a legacy multi-card pulse has no notification shape and is not listed.

A notification's id is its pulse's; each handler is a pulse channel (channel/email, channel/http with
its /api/channel destination), its recipients the channel's user rows, group ids and raw addresses
(details.group_ids, details.emails); its cron subscription is the channel's schedule (a raw Quartz cron
in pulse_channel.cron_schedule, with schedule_* holding its nearest reading for /api/pulse). One cron
per notification: every handler of a notification has the same schedule.
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import PermissionsGroup, User
from core.http.errors import Invalid, NotFound
from core.http.types import EMAIL_RE
from core.schedule.cron import CronError, trigger
from core.sync.schedules import cron_to_schedule

from . import webhook_send
from .channels import recipient_user_ids
from .models import Channel, Pulse, PulseChannel
from .scheduling import cron_of
from .serialize import pulses_json

CARD, DASHBOARD = "notification/card", "notification/dashboard"
PAYLOAD_TYPES = (CARD, DASHBOARD)
SEND_CONDITIONS = ("has_result", "goal_above", "goal_below")
EMAIL, HTTP = "channel/email", "channel/http"
USER, GROUP, RAW = "notification-recipient/user", "notification-recipient/group", "notification-recipient/raw-value"
CRON = "notification-subscription/cron"


def payload_type(pulse: Pulse) -> str | None:
    if pulse.alert_condition is not None:
        return CARD
    return DASHBOARD if pulse.dashboard_id is not None else None


def send_condition(pulse: Pulse) -> str:
    if pulse.alert_condition == "rows":
        return "has_result"
    return "goal_above" if pulse.alert_above_goal is not False else "goal_below"


def condition_columns(condition: str, send_once: bool) -> dict:
    return {"alert_condition": "rows" if condition == "has_result" else "goal",
            "alert_above_goal": None if condition == "has_result" else condition == "goal_above",
            "alert_first_only": send_once}


# ---- reading -----------------------------------------------------------------------------------------


def _recipients(session: Session, channel_json: dict, stored_details: dict, groups: dict[int, str]) -> list[dict]:
    out = [{"id": r["id"], "type": USER, "user_id": r["id"], "user": r, "details": None}
           for r in channel_json["recipients"] if r.get("id") is not None]
    out += [{"type": GROUP, "permissions_group_id": g, "permissions_group": {"id": g, "name": groups.get(g)},
             "details": None} for g in stored_details.get("group_ids") or []]
    out += [{"type": RAW, "details": {"value": e}} for e in stored_details.get("emails") or []]
    return out


def notification_json(session: Session, pulse: Pulse, data: dict, stored: dict[int, object],
                      groups: dict[int, str]) -> dict:
    """`data` is the pulse's JSON (serialize.pulses_json); `stored` its channels by id; `groups` names."""
    kind = payload_type(pulse)
    handlers, crons = [], {}
    for channel in data["channels"]:
        row = stored[channel["id"]]
        if channel["channel_type"] not in ("email", "http"):
            continue
        crons.setdefault(cron_of(row), channel["id"])
        http = channel["channel_type"] == "http"
        destination = session.get(Channel, channel["channel_id"]) if http and channel["channel_id"] else None
        handlers.append({
            "id": channel["id"], "notification_id": pulse.id, "channel_type": HTTP if http else EMAIL,
            "channel_id": channel["channel_id"] if http else None, "template_id": None, "template": None,
            "active": channel["enabled"],
            "channel": None if destination is None else {"id": destination.id, "name": destination.name,
                                                         "type": destination.type, "active": destination.active},
            "recipients": [] if http else _recipients(session, channel, row.details or {}, groups),
            "created_at": channel["created_at"], "updated_at": channel["updated_at"]})
    if kind == CARD:
        card = data["cards"][0] if data["cards"] else None
        payload = {"id": pulse.id, "card_id": card and card["id"], "card": card,
                   "send_condition": send_condition(pulse), "send_once": bool(pulse.alert_first_only),
                   "created_at": pulse.created_at, "updated_at": pulse.updated_at}
    else:
        payload = {"id": pulse.id, "dashboard_id": pulse.dashboard_id, "parameters": pulse.parameters or [],
                   "skip_if_empty": pulse.skip_if_empty,
                   "dashboard_subscription_dashcards": [
                       {"dashboard_card_id": c["dashboard_card_id"], "card_id": c["id"], "include_csv": c["include_csv"],
                        "include_xls": c["include_xls"], "format_rows": c["format_rows"],
                        "pivot_results": c["pivot_results"]} for c in data["cards"]]}
    return {"id": pulse.id, "active": not pulse.archived, "payload_type": kind, "payload_id": pulse.id,
            "payload": payload, "creator_id": pulse.creator_id, "creator": data["creator"],
            "created_at": pulse.created_at, "updated_at": pulse.updated_at, "handlers": handlers,
            "subscriptions": [{"id": channel_id, "notification_id": pulse.id, "type": CRON, "cron_schedule": cron,
                               "event_name": None, "ui_display_type": "cron/builder", "created_at": pulse.created_at}
                              for cron, channel_id in crons.items()]}


def notifications_json(session: Session, pulses: list[Pulse]) -> list[dict]:
    shown = [p for p in pulses if payload_type(p) is not None]
    ids = [p.id for p in shown]
    stored = {c.id: c for c in session.scalars(select(PulseChannel).where(PulseChannel.pulse_id.in_(ids)))} if ids else {}
    groups = dict(session.execute(select(PermissionsGroup.id, PermissionsGroup.name)).all()) if shown else {}
    return [notification_json(session, p, d, stored, groups) for p, d in zip(shown, pulses_json(session, shown))]


# ---- writing: a notification body to the pulse's columns, card refs and channel normals -----------------


def _bad(key: str, message: str) -> Invalid:
    return Invalid({key: message})


def checked_cron(subscriptions: list[dict]) -> str:
    crons = [s.get("cron_schedule") for s in subscriptions if s.get("type") == CRON]
    if len(subscriptions) != 1 or len(crons) != 1:
        raise _bad("subscriptions", "a card or dashboard notification needs exactly one subscription of type "
                                    "notification-subscription/cron.")
    cron = crons[0]
    try:
        trigger(cron)
    except (CronError, ValueError) as exc:
        raise _bad("subscriptions", f"cron_schedule is not a valid Quartz cron: {exc}") from None
    return cron


def _recipient_parts(session: Session, recipients: list[dict]) -> tuple[list[dict], list[int], list[str]]:
    users, groups, emails = [], [], []
    for recipient in recipients:
        kind = recipient.get("type")
        if kind == USER:
            if recipient.get("user_id") is None:
                raise _bad("handlers", "a user recipient needs user_id.")
            users.append({"id": recipient["user_id"]})
        elif kind == GROUP:
            group_id = recipient.get("permissions_group_id")
            if group_id is None:
                raise _bad("handlers", "a group recipient needs permissions_group_id.")
            if session.get(PermissionsGroup, group_id) is None:
                raise NotFound(f"Group {group_id} does not exist.")
            groups.append(group_id)
        else:
            value = (recipient.get("details") or {}).get("value")
            if not isinstance(value, str) or not EMAIL_RE.match(value):
                raise _bad("handlers", "a raw-value recipient needs details.value, an e-mail address.")
            emails.append(value)
    return users, list(dict.fromkeys(groups)), list(dict.fromkeys(emails))


def channel_normals(session: Session, handlers: list[dict], cron: str) -> list[dict]:
    """The handlers as service._set_channels' normals, every one on the notification's cron."""
    reading = cron_to_schedule(cron) or {}
    schedule = {"schedule_type": reading.get("schedule_type") or "hourly",
                "schedule_hour": reading.get("schedule_hour"), "schedule_day": reading.get("schedule_day"),
                "schedule_frame": reading.get("schedule_frame"), "cron_schedule": cron}
    out, seen = [], set()
    for handler in handlers:
        enabled = handler.get("active") is not False
        if handler["channel_type"] == HTTP:
            if handler.get("recipients"):
                raise _bad("handlers", "a webhook handler has no recipients.")
            if not webhook_send.is_active(session, handler.get("channel_id")):
                raise _bad("handlers", f"Webhook {handler.get('channel_id')} does not exist or is not active.")
            normal = {"channel_type": "http", "channel_id": handler["channel_id"], "details": {}, "user_ids": []}
        else:
            users, groups, emails = _recipient_parts(session, handler.get("recipients") or [])
            normal = {"channel_type": "email", "channel_id": None, "user_ids": recipient_user_ids(session, users),
                      "details": {"emails": emails, **({"group_ids": groups} if groups else {})}}
        key = (normal["channel_type"], normal["channel_id"])
        if key in seen:
            raise _bad("handlers", "one handler per channel type (per destination for webhooks).")
        seen.add(key)
        out.append({**normal, **schedule, "enabled": enabled})
    return out


def user_emails(session: Session, ids: list[int]) -> list[str]:
    if not ids:
        return []
    return list(session.scalars(select(User.email).where(User.id.in_(ids), User.is_active.is_(True))))
