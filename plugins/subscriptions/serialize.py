"""Pulses as Metabase's JSON: the pulse with its creator, cards and channels (recipients hydrated,
raw addresses served as `{"email": ...}` recipients, never as details.emails), in few queries."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.identity.users import creator_json

from .models import Pulse, PulseCard, PulseChannel, PulseChannelRecipient


def _by(rows, key):
    out: dict = {}
    for row in rows:
        out.setdefault(getattr(row, key), []).append(row)
    return out


def user_recipient_json(user: User) -> dict:
    return {"id": user.id, "email": user.email, "first_name": user.first_name, "last_name": user.last_name,
            "common_name": user.common_name}


def channel_json(channel: PulseChannel, users: list[User]) -> dict:
    details = {k: v for k, v in (channel.details or {}).items() if k not in ("emails", "group_ids")}
    recipients = [{"email": e} for e in (channel.details or {}).get("emails") or []]
    recipients += [user_recipient_json(u) for u in users if u.is_active]
    return {"id": channel.id, "pulse_id": channel.pulse_id, "channel_type": channel.channel_type,
            "channel_id": channel.channel_id, "enabled": channel.enabled, "schedule_type": channel.schedule_type,
            "schedule_hour": channel.schedule_hour, "schedule_day": channel.schedule_day,
            "schedule_frame": channel.schedule_frame, "details": details, "recipients": recipients,
            "entity_id": channel.entity_id, "created_at": channel.created_at, "updated_at": channel.updated_at}


def card_json(pulse: Pulse, ref: PulseCard, card: Card) -> dict:
    return {"id": card.id, "collection_id": card.collection_id, "description": card.description,
            "display": card.display, "name": card.name, "include_csv": ref.include_csv,
            "include_xls": ref.include_xls, "format_rows": ref.format_rows, "pivot_results": ref.pivot_results,
            "dashboard_card_id": ref.dashboard_card_id, "dashboard_id": pulse.dashboard_id,
            "parameter_mappings": None}


def pulses_json(session: Session, pulses: list[Pulse]) -> list[dict]:
    """Every pulse's JSON: one query per table whatever the number of pulses."""
    if not pulses:
        return []
    ids = [p.id for p in pulses]
    refs = _by(session.scalars(select(PulseCard).where(PulseCard.pulse_id.in_(ids))
                               .order_by(PulseCard.position, PulseCard.id)), "pulse_id")
    card_ids = {r.card_id for rs in refs.values() for r in rs}
    cards = {c.id: c for c in session.scalars(select(Card).where(Card.id.in_(card_ids)))} if card_ids else {}
    channels = _by(session.scalars(select(PulseChannel).where(PulseChannel.pulse_id.in_(ids))
                                   .order_by(PulseChannel.id)), "pulse_id")
    channel_ids = [c.id for cs in channels.values() for c in cs]
    recipient_rows = session.execute(
        select(PulseChannelRecipient.pulse_channel_id, User).join(User, User.id == PulseChannelRecipient.user_id)
        .where(PulseChannelRecipient.pulse_channel_id.in_(channel_ids)).order_by(User.id)).all() if channel_ids else []
    recipients: dict[int, list[User]] = {}
    for channel_id, user in recipient_rows:
        recipients.setdefault(channel_id, []).append(user)
    creator_ids = {p.creator_id for p in pulses}
    creators = {u.id: u for u in session.scalars(select(User).where(User.id.in_(creator_ids)))}
    out = []
    for pulse in pulses:
        out.append({
            "id": pulse.id, "name": pulse.name, "entity_id": pulse.entity_id, "creator_id": pulse.creator_id,
            "creator": creator_json(creators.get(pulse.creator_id)), "created_at": pulse.created_at,
            "updated_at": pulse.updated_at, "collection_id": pulse.collection_id,
            "collection_position": pulse.collection_position, "archived": pulse.archived,
            "skip_if_empty": pulse.skip_if_empty, "dashboard_id": pulse.dashboard_id,
            "parameters": pulse.parameters or [],
            "cards": [card_json(pulse, r, cards[r.card_id]) for r in refs.get(pulse.id, []) if r.card_id in cards],
            "channels": [channel_json(c, recipients.get(c.id, [])) for c in channels.get(pulse.id, [])],
        })
    return out
