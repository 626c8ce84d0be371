"""Sending a pulse: each card run as the pulse's creator, one HTML e-mail with the charts inline and
the CSV/XLSX files attached, over the SMTP settings (core.outbound.mail). Used by the schedule's job,
by POST /api/pulse/test (an unsaved pulse) and by nothing else.

A send that cannot happen raises (MailNotConfigured, MailError): the scheduler records the failure,
the test endpoint reports it. `skip_if_empty` skips a send whose cards all returned no rows.
"""
from __future__ import annotations

import html
import uuid
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.content import kinds
from core.outbound import mail

from . import render
from .models import Pulse, PulseCard, PulseChannel, PulseChannelRecipient


@dataclass
class CardRef:
    card_id: int
    include_csv: bool = False
    include_xls: bool = False
    format_rows: bool = True


@dataclass
class Delivery:
    """What one send needs, from a stored pulse channel or from an unsaved pulse (the test endpoint)."""

    name: str
    creator: User
    cards: list[CardRef]
    emails: list[str]
    skip_if_empty: bool = False
    dashboard_id: int | None = None
    parameters: list = field(default_factory=list)


@dataclass
class Outcome:
    sent: bool
    recipients: int
    reason: str = ""


def _dashboard_name(session: Session, dashboard_id: int | None) -> str | None:
    if dashboard_id is None:
        return None
    ref = kinds.lookup(session, "dashboard", [dashboard_id]).get(dashboard_id)
    return ref.name if ref is not None else None


def channel_emails(session: Session, channel: PulseChannel) -> list[str]:
    """A channel's addresses: its active user recipients' and its raw ones, each once."""
    users = session.scalars(select(User.email).join(PulseChannelRecipient, PulseChannelRecipient.user_id == User.id)
                            .where(PulseChannelRecipient.pulse_channel_id == channel.id, User.is_active.is_(True)))
    emails: list[str] = []
    for email in [*users, *((channel.details or {}).get("emails") or [])]:
        if email.lower() not in {e.lower() for e in emails}:
            emails.append(email)
    return emails


def delivery_for(session: Session, pulse: Pulse, channel: PulseChannel) -> Delivery:
    refs = session.scalars(select(PulseCard).where(PulseCard.pulse_id == pulse.id)
                           .order_by(PulseCard.position, PulseCard.id))
    return Delivery(name=pulse.name or "", creator=session.get(User, pulse.creator_id),
                    cards=[CardRef(r.card_id, r.include_csv, r.include_xls, r.format_rows) for r in refs],
                    emails=channel_emails(session, channel), skip_if_empty=pulse.skip_if_empty,
                    dashboard_id=pulse.dashboard_id, parameters=pulse.parameters or [])


def send(session: Session, registry, delivery: Delivery) -> Outcome:
    """Run the cards, then send one message to every address (each sees only its own address)."""
    if not delivery.emails:
        return Outcome(False, 0, "no recipients")
    if delivery.creator is None or not delivery.creator.is_active:
        return Outcome(False, 0, "the creator is deactivated")
    outputs, files = [], []
    for ref in delivery.cards:
        card = session.get(Card, ref.card_id)
        if card is None or card.archived:
            continue
        result = render.run_card(session, delivery.creator, card)
        output = render.render(card, result, cid=f"card-{card.id}-{uuid.uuid4().hex[:12]}@tessera")
        outputs.append(output)
        files += render.attachments(card, result, ref.include_csv, ref.include_xls, ref.format_rows)
    if delivery.skip_if_empty and all(o.row_count == 0 for o in outputs):
        return Outcome(False, 0, "every card is empty")
    dashboard = _dashboard_name(session, delivery.dashboard_id)
    subject = dashboard or f"Pulse: {delivery.name}"
    heading = html.escape(dashboard or delivery.name)
    body = (f'<div style="font-family:Lato,Helvetica,Arial,sans-serif;color:#4c5773;">'
            f'<h1 style="font-size:22px;">{heading}</h1>' + "".join(o.html for o in outputs) + "</div>")
    text = "\n".join([dashboard or delivery.name, ""] + [f"- {o.name}: {o.row_count} rows" for o in outputs])
    inline = [part for o in outputs for part in o.inline]
    for address in delivery.emails:
        mail.send(registry, session, to=[address], subject=subject, text=text, html=body, inline=inline,
                  attachments=files)
    return Outcome(True, len(delivery.emails))


def send_channel(session: Session, registry, channel_id: int) -> Outcome:
    """The scheduled send of one stored channel; an archived pulse or a disabled channel sends nothing."""
    channel = session.get(PulseChannel, channel_id)
    if channel is None or not channel.enabled or channel.channel_type != "email":
        return Outcome(False, 0, "channel absent, disabled or not e-mail")
    pulse = session.get(Pulse, channel.pulse_id)
    if pulse is None or pulse.archived:
        return Outcome(False, 0, "pulse archived")
    return send(session, registry, delivery_for(session, pulse, channel))
