"""/api/alert: Metabase's alerts, which are pulses with an `alert_condition` ("rows" or "goal") on one
card. They live in the pulse tables, are scheduled and sent by the same jobs (scheduling.py, send.py)
and their condition is checked at send time (conditions.py).

Access as Metabase's alert API: the creator must read the card; administrators see and change every
alert, others those they created (listing: created or received); a non-administrator may not add
recipients nor change the channels beyond sending the alert to themselves; a recipient may unsubscribe.
An alert whose channels leave no recipient and no webhook is archived.
"""
from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from core.appdb.models import User
from core.assembly import events
from core.http.errors import Forbidden, NotFound
from core.policy import permissions as perms

from .models import Pulse, PulseCard, PulseChannel, PulseChannelRecipient
from .serialize import pulses_json
from .service import (
    _set_cards,
    _set_channels,
    checked_channels,
    leave_email_channel,
    readable_card,
    recipient_pulse_ids,
)

EDIT_MESSAGE = "Non-admin users without monitoring or subscription permissions are only allowed to update alerts that they created"
CHANNELS_MESSAGE = ("Non-admin users without monitoring or subscription permissions are not allowed to modify the "
                    "channels for an alert")
RECIPIENTS_MESSAGE = "Non-admin users without subscription permissions are not allowed to add recipients"


def alerts_json(session: Session, user: User, alerts: list[Pulse]) -> list[dict]:
    """Metabase's alert: the pulse's keys with its one `card` instead of `cards`, and can_write."""
    out = []
    for alert, data in zip(alerts, pulses_json(session, alerts)):
        cards = data.pop("cards")
        data.update(card=cards[0] if cards else None, alert_condition=alert.alert_condition,
                    alert_above_goal=alert.alert_above_goal, alert_first_only=bool(alert.alert_first_only),
                    can_write=perms.is_admin(user) or alert.creator_id == user.id)
        out.append(data)
    return out


def get_alert(session: Session, alert_id: int) -> Pulse:
    alert = session.get(Pulse, alert_id)
    if alert is None or alert.alert_condition is None:
        raise NotFound()
    return alert


def _involving(user_id: int):
    received = select(PulseChannel.pulse_id).join(
        PulseChannelRecipient, PulseChannelRecipient.pulse_channel_id == PulseChannel.id).where(
        PulseChannelRecipient.user_id == user_id)
    return or_(Pulse.creator_id == user_id, Pulse.id.in_(received))


def list_alerts(session: Session, user: User, archived: bool, user_id: int | None,
                card_id: int | None = None) -> list[dict]:
    """GET /api/alert/ and /api/alert/question/:id: administrators every alert (or those `user_id`
    created or receives), others those they created or receive."""
    query = select(Pulse).where(Pulse.alert_condition.is_not(None), Pulse.archived.is_(archived)).order_by(Pulse.id)
    who = user_id if perms.is_admin(user) else user.id
    if who is not None:
        query = query.where(_involving(who))
    if card_id is not None:
        query = query.where(Pulse.id.in_(select(PulseCard.pulse_id).where(PulseCard.card_id == card_id)))
    return alerts_json(session, user, list(session.scalars(query)))


def read_alert(session: Session, user: User, alert_id: int) -> dict:
    alert = get_alert(session, alert_id)
    if not (perms.is_admin(user) or alert.creator_id == user.id or alert.id in recipient_pulse_ids(session, user)):
        raise Forbidden()
    return alerts_json(session, user, [alert])[0]


def _card_ref(card: dict, condition: str) -> dict:
    # as Metabase: a "has results" alert attaches its rows as CSV
    return {"id": card["id"], "include_csv": bool(card.get("include_csv")) or condition == "rows",
            "include_xls": bool(card.get("include_xls")), "format_rows": card.get("format_rows") is not False,
            "pivot_results": False, "dashboard_card_id": None}


def _keeps_someone(normals: list[dict]) -> bool:
    return any(n["enabled"] and (n["channel_type"] == "http" or n["user_ids"] or n["details"].get("emails"))
               for n in normals)


def create(session: Session, user: User, body: dict, on_change) -> dict:
    readable_card(session, user, body["card"]["id"])
    normals = checked_channels(session, body["channels"])
    alert = Pulse(name=None, creator_id=user.id, skip_if_empty=True, alert_condition=body["alert_condition"],
                  alert_above_goal=body.get("alert_above_goal"), alert_first_only=body["alert_first_only"],
                  parameters=[])
    session.add(alert)
    session.flush()
    _set_cards(session, alert, [_card_ref(body["card"], body["alert_condition"])])
    _set_channels(session, alert, normals)
    session.flush()
    on_change(session, alert)
    session.commit()
    events.emit("alert-create", user.id, alert)
    return read_alert(session, user, alert.id)


def _email_user_ids(channels: list[dict]) -> set[int]:
    return {r["id"] for c in channels if c.get("channel_type") == "email"
            for r in (c.get("recipients") or []) if isinstance(r, dict) and r.get("id") is not None}


def update(session: Session, user: User, alert_id: int, changes: dict, on_change) -> dict:
    alert = get_alert(session, alert_id)
    current = alerts_json(session, user, [alert])[0]
    if current["card"] is not None:
        readable_card(session, user, current["card"]["id"])
    if changes.get("card") is not None:
        readable_card(session, user, changes["card"]["id"])
    admin = perms.is_admin(user)
    if not admin and alert.creator_id != user.id:
        raise Forbidden(EDIT_MESSAGE)
    channels = changes.get("channels")
    if not admin and channels is not None and not (
            len(channels) == 1 and [r.get("id") for r in channels[0].get("recipients") or []] == [user.id]):
        raise Forbidden(CHANNELS_MESSAGE)
    if not admin and channels is not None and _email_user_ids(channels) - _email_user_ids(current["channels"]):
        raise Forbidden(RECIPIENTS_MESSAGE)
    normals = checked_channels(session, channels) if channels else None
    for key in ("alert_condition", "alert_first_only", "alert_above_goal", "archived"):
        if key in changes and (changes[key] is not None or key == "alert_above_goal"):
            setattr(alert, key, changes[key])
    if changes.get("card") is not None:
        _set_cards(session, alert, [_card_ref(changes["card"], alert.alert_condition)])
    if normals is not None:
        _set_channels(session, alert, normals)
        if not _keeps_someone(normals):
            alert.archived = True
    session.flush()
    on_change(session, alert)
    session.commit()
    events.emit("alert-update", user.id, alert)
    return read_alert(session, user, alert.id)


def unsubscribe(session: Session, user: User, alert_id: int) -> None:
    """DELETE /api/alert/:id/subscription: the caller leaves the alert's e-mail channel (404 if not on it)."""
    leave_email_channel(session, user, get_alert(session, alert_id), "alert-unsubscribe")
