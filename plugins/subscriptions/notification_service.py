"""/api/notification: list, read, create, update, send now, send unsaved, unsubscribe, over the pulse
tables (notifications.py maps the shapes). Access as alerts and pulses: administrators see and change
every notification, others change those they created and read those they created or receive; creating
needs the card (or dashboard) readable. Sending now runs the same send path as the schedule (the
condition is checked, send_once archives), in the request."""
from __future__ import annotations

from sqlalchemy import delete, exists, or_, select
from sqlalchemy.orm import Session

from core.appdb.models import User
from core.assembly import events
from core.http.errors import Forbidden, Invalid, NotFound
from core.outbound import mail
from core.policy import permissions as perms

from . import notifications as shapes
from . import send, webhook_send
from .models import Pulse, PulseCard, PulseChannel, PulseChannelRecipient
from .scheduling import after_sent, reschedule
from .service import _set_cards, _set_channels, check_dashboard, readable_card, recipient_pulse_ids, without_orphans

SHOWN = or_(Pulse.alert_condition.is_not(None), Pulse.dashboard_id.is_not(None))


def _received_by(user_id: int):
    return select(PulseChannel.pulse_id).join(
        PulseChannelRecipient, PulseChannelRecipient.pulse_channel_id == PulseChannel.id).where(
        PulseChannelRecipient.user_id == user_id)


def get_notification(session: Session, notification_id: int) -> Pulse:
    pulse = session.get(Pulse, notification_id)
    if pulse is None or shapes.payload_type(pulse) is None or not without_orphans(session, [pulse]):
        raise NotFound()
    return pulse


def _can_read(session: Session, user: User, pulse: Pulse) -> bool:
    return perms.is_admin(user) or pulse.creator_id == user.id or pulse.id in recipient_pulse_ids(session, user)


def _check_write(user: User, pulse: Pulse) -> None:
    if not (perms.is_admin(user) or pulse.creator_id == user.id):
        raise Forbidden()


def list_notifications(session: Session, user: User, filters: dict) -> list[dict]:
    query = select(Pulse).where(SHOWN).order_by(Pulse.id)
    if filters.get("creator_id") is not None:
        query = query.where(Pulse.creator_id == filters["creator_id"])
    if filters.get("recipient_id") is not None:
        query = query.where(Pulse.id.in_(_received_by(filters["recipient_id"])))
    if filters.get("creator_or_recipient_id") is not None:
        who = filters["creator_or_recipient_id"]
        query = query.where(or_(Pulse.creator_id == who, Pulse.id.in_(_received_by(who))))
    if filters.get("card_id") is not None:
        query = query.where(Pulse.alert_condition.is_not(None), Pulse.id.in_(
            select(PulseCard.pulse_id).where(PulseCard.card_id == filters["card_id"])))
    if not filters.get("include_inactive"):
        query = query.where(Pulse.archived.is_(False))
    if filters.get("payload_type") == shapes.CARD:
        query = query.where(Pulse.alert_condition.is_not(None))
    elif filters.get("payload_type") == shapes.DASHBOARD:
        query = query.where(Pulse.alert_condition.is_(None), Pulse.dashboard_id.is_not(None))
    if not perms.is_admin(user):
        query = query.where(or_(Pulse.creator_id == user.id, Pulse.id.in_(_received_by(user.id))))
    return shapes.notifications_json(session, without_orphans(session, list(session.scalars(query))))


def read_notification(session: Session, user: User, notification_id: int) -> dict:
    pulse = get_notification(session, notification_id)
    if not _can_read(session, user, pulse):
        raise Forbidden()
    return shapes.notifications_json(session, [pulse])[0]


def _card_payload(session: Session, user: User, payload: dict) -> tuple[dict, list[dict]]:
    card_id = payload.get("card_id")
    if not isinstance(card_id, int) or isinstance(card_id, bool) or card_id <= 0:
        raise Invalid({"payload": "a card notification needs payload.card_id, a positive integer."})
    if payload.get("send_condition") not in (None, *shapes.SEND_CONDITIONS):
        raise Invalid({"payload": "send_condition must be one of has_result, goal_above, goal_below."})
    if payload.get("send_once") is not None and not isinstance(payload["send_once"], bool):
        raise Invalid({"payload": "send_once must be a boolean."})
    readable_card(session, user, payload["card_id"])
    condition = payload.get("send_condition") or "has_result"
    columns = shapes.condition_columns(condition, bool(payload.get("send_once")))
    ref = {"id": payload["card_id"], "include_csv": condition == "has_result", "include_xls": False,
           "format_rows": True, "pivot_results": False, "dashboard_card_id": None}
    return columns, [ref]


def _dashboard_payload(session: Session, user: User, payload: dict) -> tuple[dict, list[dict]]:
    dashboard_id = payload.get("dashboard_id")
    if not isinstance(dashboard_id, int) or isinstance(dashboard_id, bool) or dashboard_id <= 0:
        raise Invalid({"payload": "a dashboard notification needs payload.dashboard_id, a positive integer."})
    dashcards = payload.get("dashboard_subscription_dashcards") or []
    if not isinstance(dashcards, list) or not all(isinstance(c, dict) and isinstance(c.get("card_id"), int)
                                                  and not isinstance(c.get("card_id"), bool) for c in dashcards):
        raise Invalid({"payload": "dashboard_subscription_dashcards must be maps with a card_id."})
    if not isinstance(payload.get("parameters") or [], list):
        raise Invalid({"payload": "parameters must be a list."})
    ref = check_dashboard(session, user, payload["dashboard_id"])
    refs = [{"id": c["card_id"], "include_csv": bool(c.get("include_csv")), "include_xls": bool(c.get("include_xls")),
             "format_rows": c.get("format_rows") is not False, "pivot_results": bool(c.get("pivot_results")),
             "dashboard_card_id": c.get("dashboard_card_id")}
            for c in dashcards]
    for card_ref in refs:
        readable_card(session, user, card_ref["id"])
    return {"dashboard_id": payload["dashboard_id"], "name": ref.name, "parameters": payload.get("parameters") or [],
            "skip_if_empty": bool(payload.get("skip_if_empty"))}, refs


def _payload(session: Session, user: User, kind: str, payload: dict) -> tuple[dict, list[dict]]:
    return (_card_payload if kind == shapes.CARD else _dashboard_payload)(session, user, payload or {})


def create(session: Session, user: User, body: dict) -> dict:
    columns, refs = _payload(session, user, body["payload_type"], body["payload"])
    normals = shapes.channel_normals(session, body["handlers"], shapes.checked_cron(body["subscriptions"]))
    pulse = Pulse(**{"creator_id": user.id, "parameters": [], "skip_if_empty": body["payload_type"] == shapes.CARD,
                     **columns})
    session.add(pulse)
    session.flush()
    _set_cards(session, pulse, refs)
    _set_channels(session, pulse, normals)
    pulse.archived = body.get("active") is False  # _set_channels archives a notification without handlers
    session.flush()
    reschedule(session, pulse)
    session.commit()
    events.emit("notification-create", user.id, pulse)
    return read_notification(session, user, pulse.id)


def update(session: Session, user: User, notification_id: int, body: dict) -> dict:
    pulse = get_notification(session, notification_id)
    _check_write(user, pulse)
    if body["payload_type"] != shapes.payload_type(pulse):
        raise Invalid("Update payload_type is not allowed.")
    columns, refs = _payload(session, user, body["payload_type"], body["payload"])
    normals = shapes.channel_normals(session, body["handlers"], shapes.checked_cron(body["subscriptions"]))
    for key, value in columns.items():
        setattr(pulse, key, value)
    _set_cards(session, pulse, refs)
    _set_channels(session, pulse, normals)
    pulse.archived = body.get("active") is False
    session.flush()
    reschedule(session, pulse)
    session.commit()
    events.emit("notification-update", user.id, pulse)
    return read_notification(session, user, pulse.id)


def _send(session: Session, registry, delivery: send.Delivery, channel_type: str, channel_id: int | None,
          pulse_id: int | None) -> send.Outcome:
    try:
        if channel_type == "http":
            return webhook_send.send(session, registry, delivery, channel_id, pulse_id)
        return send.send(session, registry, delivery)
    except mail.MailNotConfigured as exc:
        raise Invalid(str(exc)) from None
    except mail.MailError as exc:
        raise Invalid(f"The e-mail could not be sent: {exc}") from None


def send_now(session: Session, user: User, registry, notification_id: int, handler_ids: list[int] | None) -> None:
    """POST /api/notification/:id/send: its handlers (or those of handler_ids) sent now, as the schedule
    sends them (condition checked, send_once archives)."""
    pulse = get_notification(session, notification_id)
    if not _can_read(session, user, pulse):
        raise Forbidden()
    channels = list(session.scalars(select(PulseChannel).where(PulseChannel.pulse_id == pulse.id,
                                                               PulseChannel.channel_type.in_(("email", "http")))
                                    .order_by(PulseChannel.id)))
    sent = False
    for channel in channels:
        if handler_ids and channel.id not in handler_ids:
            continue
        delivery = send.delivery_for(session, pulse, channel)
        sent = _send(session, registry, delivery, channel.channel_type, channel.channel_id, pulse.id).sent or sent
    if sent:
        after_sent(session, pulse.id)
        session.commit()


def send_unsaved(session: Session, user: User, registry, body: dict) -> None:
    """POST /api/notification/send: the notification sent now as the caller, nothing stored."""
    columns, refs = _payload(session, user, body["payload_type"], body["payload"])
    subscriptions = body.get("subscriptions") or [{"type": shapes.CRON, "cron_schedule": "0 0 * * * ? *"}]
    normals = shapes.channel_normals(session, body["handlers"], shapes.checked_cron(subscriptions))
    condition = None
    if body["payload_type"] == shapes.CARD:
        condition = send.conditions.Condition(columns["alert_condition"], columns["alert_above_goal"] is not False)
    cards = [send.CardRef(r["id"], r["include_csv"], r["include_xls"], r["format_rows"], r["dashboard_card_id"])
             for r in refs]
    for normal in normals:
        if not normal["enabled"]:
            continue
        emails = list(dict.fromkeys(shapes.user_emails(session, normal["user_ids"])
                                    + send.group_emails(session, normal["details"].get("group_ids") or [])
                                    + normal["details"].get("emails", [])))
        delivery = send.Delivery(name=columns.get("name") or "", creator=user, cards=cards, emails=emails,
                                 skip_if_empty=bool(columns.get("skip_if_empty")),
                                 dashboard_id=columns.get("dashboard_id"), parameters=columns.get("parameters") or [],
                                 condition=condition)
        _send(session, registry, delivery, normal["channel_type"], normal["channel_id"], None)


def unsubscribe(session: Session, user: User, notification_id: int) -> None:
    """POST /api/notification/:id/unsubscribe: the caller stops being a user recipient (404 if not one)."""
    pulse = get_notification(session, notification_id)
    channel_ids = select(PulseChannel.id).where(PulseChannel.pulse_id == pulse.id)
    mine = (PulseChannelRecipient.pulse_channel_id.in_(channel_ids), PulseChannelRecipient.user_id == user.id)
    if not session.scalar(select(exists().where(*mine))):
        raise NotFound()
    session.execute(delete(PulseChannelRecipient).where(*mine))
    session.commit()
    events.emit("notification-unsubscribe", user.id, pulse)
