"""Pulses and dashboard subscriptions: list, read, create, update, unsubscribe.

Who may do what (Metabase's pulse policies, as API-SPEC's Pulses table says): administrators write every
pulse, other users the pulses they created. A pulse is readable by those who may write it, by its
recipients, and (a legacy pulse, without dashboard) by readers of its collection; a reader without
read access to the collection gets it without its cards and recipients. Every change is one transaction.
"""
from __future__ import annotations

from sqlalchemy import delete, exists, or_, select
from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.assembly import events
from core.content import kinds
from core.content.collections import check_target
from core.http.errors import Forbidden, Invalid, NotFound
from core.policy import permissions as perms

from . import channels as ch
from . import webhook_send
from .models import Pulse, PulseCard, PulseChannel, PulseChannelRecipient
from .serialize import pulses_json

UPDATABLE = ("name", "skip_if_empty", "collection_id", "collection_position", "archived", "parameters")


# ---- permissions -----------------------------------------------------------------------------------


def can_write(user: User, pulse: Pulse) -> bool:
    return perms.is_admin(user) or pulse.creator_id == user.id


def recipient_pulse_ids(session: Session, user: User) -> set[int]:
    return set(session.scalars(
        select(PulseChannel.pulse_id).join(PulseChannelRecipient,
                                           PulseChannelRecipient.pulse_channel_id == PulseChannel.id)
        .where(PulseChannelRecipient.user_id == user.id)))


def _full_read(session: Session, user: User, pulse: Pulse) -> bool:
    return perms.is_admin(user) or perms.can_read_item(session, user, pulse.collection_id)


def can_read(session: Session, user: User, pulse: Pulse, recipient_of: set[int]) -> bool:
    if can_write(user, pulse) or pulse.id in recipient_of:
        return True
    return pulse.dashboard_id is None and perms.can_read_item(session, user, pulse.collection_id)


def _stripped(pulse_json: dict) -> dict:
    """What a creator or recipient without collection access sees: no cards, no recipients."""
    out = {k: v for k, v in pulse_json.items() if k != "cards"}
    out["channels"] = [{k: v for k, v in c.items() if k != "recipients"} for c in pulse_json["channels"]]
    return out


def without_orphans(session: Session, pulses: list[Pulse]) -> list[Pulse]:
    """The pulses whose dashboard (if any) still exists. A deleted dashboard cannot cascade into this
    plugin's table (no foreign key across plugins), so its subscriptions are left out here instead."""
    ids = {p.dashboard_id for p in pulses if p.dashboard_id is not None}
    found = kinds.lookup(session, "dashboard", ids) if ids else {}
    return [p for p in pulses if p.dashboard_id is None or p.dashboard_id in found]


def _download_perms(session: Session, user: User, card_id: int) -> str:
    card = session.get(Card, card_id)
    if card is None or card.database_id is None:
        return "none"
    return perms.download_level(session, user, card.database_id, card.table_id)


def _with_access(session: Session, user: User, pulses: list[Pulse], strip: bool, listing: bool = False) -> list[dict]:
    out = []
    for pulse, data in zip(pulses, pulses_json(session, pulses)):
        if strip and not _full_read(session, user, pulse):
            data = _stripped(data)
        elif listing:  # as Metabase's list: what the caller may download of each card
            for card in data["cards"]:
                card["download_perms"] = _download_perms(session, user, card["id"])
        data["can_write"] = can_write(user, pulse)
        out.append(data)
    return out


# ---- reading -----------------------------------------------------------------------------------------


def get_pulse(session: Session, pulse_id: int) -> Pulse:
    pulse = session.get(Pulse, pulse_id)
    if pulse is None or not without_orphans(session, [pulse]):
        raise NotFound()
    return pulse


def list_pulses(session: Session, user: User, archived: bool, dashboard_id: int | None,
                creator_or_recipient: bool) -> list[dict]:
    """GET /api/pulse/: by default the pulses the caller may write; with creator_or_recipient those
    created by or addressed to the caller (without cards and recipients where the collection is hidden)."""
    # alerts are pulses too, served by /api/alert (and /api/notification), not listed here (as Metabase)
    query = select(Pulse).where(Pulse.archived.is_(archived), Pulse.alert_condition.is_(None)).order_by(
        Pulse.name, Pulse.id)
    if dashboard_id is not None:
        query = query.where(Pulse.dashboard_id == dashboard_id)
    if creator_or_recipient:
        mine = select(PulseChannel.pulse_id).join(
            PulseChannelRecipient, PulseChannelRecipient.pulse_channel_id == PulseChannel.id).where(
            PulseChannelRecipient.user_id == user.id)
        query = query.where(or_(Pulse.creator_id == user.id, Pulse.id.in_(mine)))
    elif not perms.is_admin(user):
        query = query.where(Pulse.creator_id == user.id)
    pulses = without_orphans(session, list(session.scalars(query)))
    return _with_access(session, user, pulses, strip=creator_or_recipient, listing=True)


def read_pulse(session: Session, user: User, pulse_id: int) -> dict:
    pulse = get_pulse(session, pulse_id)
    if not can_read(session, user, pulse, recipient_pulse_ids(session, user)):
        raise Forbidden()
    return _with_access(session, user, [pulse], strip=True)[0]


# ---- checks ------------------------------------------------------------------------------------------


def readable_card(session: Session, user: User, card_id: int) -> Card:
    card = session.get(Card, card_id)
    if card is None:
        raise NotFound()
    if not perms.can_read_item(session, user, card.collection_id):
        raise Forbidden()
    return card


def check_dashboard(session: Session, user: User, dashboard_id: int):
    """The dashboard of a subscription (core.content.kinds: the dashboards plugin's lookup)."""
    ref = kinds.lookup(session, "dashboard", [dashboard_id]).get(dashboard_id)
    if ref is None:
        raise NotFound()
    if not perms.can_read_item(session, user, ref.collection_id):
        raise Forbidden()
    return ref


def checked_channels(session: Session, raw: list[dict]) -> list[dict]:
    out = []
    for channel in raw:
        normal = ch.normalise(channel)
        if normal["channel_type"] == "slack":
            raise Invalid({"channels": "Slack is not configured."})
        if normal["channel_type"] == "http" and not webhook_send.is_active(session, normal["channel_id"]):
            raise Invalid({"channels": f"Webhook {normal['channel_id']} does not exist or is not active."})
        normal["user_ids"] = ch.recipient_user_ids(session, normal.pop("user_recipients"))
        out.append(normal)
    return out


# ---- writing -----------------------------------------------------------------------------------------


def _set_cards(session: Session, pulse: Pulse, cards: list[dict]) -> None:
    session.execute(delete(PulseCard).where(PulseCard.pulse_id == pulse.id))
    for position, ref in enumerate(cards):
        session.add(PulseCard(pulse_id=pulse.id, card_id=ref["id"], position=position,
                              include_csv=bool(ref.get("include_csv")), include_xls=bool(ref.get("include_xls")),
                              format_rows=ref.get("format_rows") is not False,
                              pivot_results=bool(ref.get("pivot_results")),
                              dashboard_card_id=ref.get("dashboard_card_id")))


def _set_recipients(session: Session, channel: PulseChannel, user_ids: list[int]) -> None:
    session.execute(delete(PulseChannelRecipient).where(PulseChannelRecipient.pulse_channel_id == channel.id))
    for user_id in user_ids:
        session.add(PulseChannelRecipient(pulse_channel_id=channel.id, user_id=user_id))


def _write_channel(session: Session, channel: PulseChannel, normal: dict) -> None:
    for key in ("enabled", "schedule_type", "schedule_hour", "schedule_day", "schedule_frame", "details"):
        setattr(channel, key, normal[key])
    channel.cron_schedule = normal.get("cron_schedule")  # only /api/notification writes a raw cron
    session.flush()
    _set_recipients(session, channel, normal["user_ids"] if ch.CHANNEL_TYPES[channel.channel_type]
                    ["allows_recipients"] else [])


def _set_channels(session: Session, pulse: Pulse, normals: list[dict]) -> None:
    """Metabase's update of a pulse's channels: one per type (per destination for webhooks); one sent
    updates the existing channel (or adds one), one not sent is deleted; a pulse left with no channel
    is archived."""
    existing = {(c.channel_type, c.channel_id): c
                for c in session.scalars(select(PulseChannel).where(PulseChannel.pulse_id == pulse.id))}
    wanted = {(n["channel_type"], n["channel_id"]): n for n in normals}
    for kind, channel in existing.items():
        if kind not in wanted:
            _set_recipients(session, channel, [])
            session.delete(channel)
    for kind, normal in wanted.items():
        channel = existing.get(kind)
        if channel is None:
            channel = PulseChannel(pulse_id=pulse.id, channel_type=kind[0], channel_id=kind[1])
            session.add(channel)
        _write_channel(session, channel, normal)
    if not wanted:
        pulse.archived = True


def create(session: Session, user: User, body: dict, on_change=None) -> dict:
    for ref in body["cards"]:
        readable_card(session, user, ref["id"])
    if body.get("dashboard_id") is None:
        check_target(session, user, body.get("collection_id"))
    else:
        check_dashboard(session, user, body["dashboard_id"])
    normals = checked_channels(session, body["channels"])
    pulse = Pulse(name=body["name"], creator_id=user.id, skip_if_empty=bool(body.get("skip_if_empty")),
                  collection_id=body.get("collection_id"), collection_position=body.get("collection_position"),
                  dashboard_id=body.get("dashboard_id"), parameters=body.get("parameters") or [])
    session.add(pulse)
    session.flush()
    _set_cards(session, pulse, body["cards"])
    _set_channels(session, pulse, normals)
    session.flush()
    if on_change is not None:
        on_change(session, pulse)
    session.commit()
    events.emit("pulse-create", user.id, pulse)
    return read_pulse(session, user, pulse.id)


def update(session: Session, user: User, pulse_id: int, changes: dict, on_change=None) -> dict:
    pulse = get_pulse(session, pulse_id)
    if not can_write(user, pulse):
        raise Forbidden()
    for ref in changes.get("cards") or []:
        readable_card(session, user, ref["id"])
    if "collection_id" in changes and changes["collection_id"] != pulse.collection_id:
        if not perms.can_write_item(session, user, pulse.collection_id):
            raise Forbidden()
        check_target(session, user, changes["collection_id"])
    normals = checked_channels(session, changes["channels"]) if changes.get("channels") else None
    for key in UPDATABLE:
        if key in changes and (changes[key] is not None or key in ("collection_id", "collection_position")):
            setattr(pulse, key, changes[key])
    if changes.get("cards"):
        _set_cards(session, pulse, changes["cards"])
    if normals is not None:
        _set_channels(session, pulse, normals)
    session.flush()
    if on_change is not None:
        on_change(session, pulse)
    session.commit()
    events.emit("pulse-update", user.id, pulse)
    return read_pulse(session, user, pulse.id)


def unsubscribe(session: Session, user: User, pulse_id: int) -> None:
    """DELETE /api/pulse/:id/subscription: the caller leaves the pulse's e-mail channel."""
    leave_email_channel(session, user, get_pulse(session, pulse_id), "subscription-unsubscribe")


def leave_email_channel(session: Session, user: User, pulse: Pulse, event: str) -> None:
    """The caller leaves `pulse`'s e-mail channel (404 when not on it), committed and told as `event`:
    the unsubscribe of subscriptions and of alerts alike."""
    channel_id = session.scalar(select(PulseChannel.id).where(PulseChannel.pulse_id == pulse.id,
                                                              PulseChannel.channel_type == "email"))
    if channel_id is None or not session.scalar(select(exists().where(
            PulseChannelRecipient.pulse_channel_id == channel_id, PulseChannelRecipient.user_id == user.id))):
        raise NotFound()
    session.execute(delete(PulseChannelRecipient).where(PulseChannelRecipient.pulse_channel_id == channel_id,
                                                        PulseChannelRecipient.user_id == user.id))
    session.commit()
    events.emit(event, user.id, pulse)
