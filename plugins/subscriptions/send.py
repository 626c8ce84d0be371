"""Sending a pulse: each card run as the pulse's creator, one HTML e-mail with the charts inline and
the CSV/XLSX files attached, over the SMTP settings (core.outbound.mail). Used by the schedule's job,
by POST /api/pulse/test (an unsaved pulse) and by nothing else.

A send that cannot happen raises (MailNotConfigured, MailError): the scheduler records the failure,
the test endpoint reports it. The scheduled job first retries a mail-server outage (retry.py). `skip_if_empty` skips a send whose cards all returned no rows.
"""
from __future__ import annotations

import html
import uuid
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, PermissionsGroupMembership, User
from core.assembly.records import DashboardContent
from core.export.dashcard_settings import merged
from core.http.auth import tessera
from core.outbound import mail
from core.policy import permissions as perms

from . import conditions, render
from .models import Pulse, PulseCard, PulseChannel, PulseChannelRecipient


@dataclass
class CardRef:
    card_id: int
    include_csv: bool = False
    include_xls: bool = False
    format_rows: bool = True
    dashboard_card_id: int | None = None


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
    condition: conditions.Condition | None = None  # an alert: sent only when it holds for its card


@dataclass
class Outcome:
    sent: bool
    recipients: int
    reason: str = ""


@dataclass
class Item:
    """One thing the message shows: a saved card (run with `parameters`, drawn with its settings and
    its dashcard's `overrides`) or a dashboard's text."""

    card_id: int | None
    parameters: list | None = None
    text: str | None = None
    ref: CardRef | None = None
    overrides: dict | None = None

    def settings(self, card: Card) -> dict:
        """The card's visualization settings with the dashcard's laid over them (Metabase's rule)."""
        return merged(card.visualization_settings, self.overrides)


def dashboard_content(session: Session, dashboard_id: int, parameters: list) -> DashboardContent | None:
    """The dashboard's parts with the subscription's filter values (the dashboards plugin answers)."""
    return tessera().pm.hook.dashboard_content(session=session, dashboard_id=dashboard_id, parameters=parameters)


def items_of(session: Session, delivery: Delivery) -> tuple[str, list[Item]] | None:
    """The heading and what to show: a dashboard's current cards and texts in reading order (the
    pulse's card refs only say which to attach as files), or a pulse's cards. None: nothing to send
    (the dashboard is gone or archived, or its creator may no longer read it)."""
    if delivery.dashboard_id is None:
        return delivery.name, [Item(ref.card_id, None, None, ref) for ref in delivery.cards]
    content = dashboard_content(session, delivery.dashboard_id, delivery.parameters)
    if content is None or not perms.can_read_item(session, delivery.creator, content.collection_id):
        return None
    by_dashcard = {ref.dashboard_card_id: ref for ref in delivery.cards if ref.dashboard_card_id is not None}
    by_card = {ref.card_id: ref for ref in delivery.cards}
    items = []
    for part in content.parts:
        if part.card_id is None:
            if part.text:
                items.append(Item(None, None, part.text))
            continue
        ref = by_dashcard.get(part.dashcard_id) or by_card.get(part.card_id)
        items.append(Item(part.card_id, list(part.parameters), None, ref, part.visualization_settings))
    return content.name, items


def group_emails(session: Session, group_ids: list[int]) -> list[str]:
    """The addresses of the active members of groups (a notification's group recipients)."""
    if not group_ids:
        return []
    return list(session.scalars(select(User.email).join(PermissionsGroupMembership,
                                                        PermissionsGroupMembership.user_id == User.id)
                                .where(PermissionsGroupMembership.group_id.in_(group_ids), User.is_active.is_(True))
                                .order_by(User.id)))


def channel_emails(session: Session, channel: PulseChannel) -> list[str]:
    """A channel's addresses: its active user recipients', its groups' members' (details.group_ids) and its
    raw ones, each once."""
    users = session.scalars(select(User.email).join(PulseChannelRecipient, PulseChannelRecipient.user_id == User.id)
                            .where(PulseChannelRecipient.pulse_channel_id == channel.id, User.is_active.is_(True)))
    details = channel.details or {}
    emails: list[str] = []
    for email in [*users, *group_emails(session, details.get("group_ids") or []), *(details.get("emails") or [])]:
        if email.lower() not in {e.lower() for e in emails}:
            emails.append(email)
    return emails


def delivery_for(session: Session, pulse: Pulse, channel: PulseChannel) -> Delivery:
    refs = session.scalars(select(PulseCard).where(PulseCard.pulse_id == pulse.id)
                           .order_by(PulseCard.position, PulseCard.id))
    return Delivery(name=pulse.name or "", creator=session.get(User, pulse.creator_id),
                    cards=[CardRef(r.card_id, r.include_csv, r.include_xls, r.format_rows, r.dashboard_card_id)
                           for r in refs],
                    emails=channel_emails(session, channel), skip_if_empty=pulse.skip_if_empty,
                    dashboard_id=pulse.dashboard_id, parameters=pulse.parameters or [],
                    condition=condition_of(pulse))


def condition_of(pulse: Pulse) -> conditions.Condition | None:
    if pulse.alert_condition is None:
        return None
    return conditions.Condition(pulse.alert_condition, pulse.alert_above_goal is not False,
                                bool(pulse.alert_first_only))


def send(session: Session, registry, delivery: Delivery, deliver=mail.send) -> Outcome:
    """Run the cards, then send one message to every address (each sees only its own address) with
    `deliver` (mail.send's arguments; the scheduled job's retries transient failures, retry.Retrying)."""
    if not delivery.emails:
        return Outcome(False, 0, "no recipients")
    if delivery.creator is None or not delivery.creator.is_active:
        return Outcome(False, 0, "the creator is deactivated")
    found = items_of(session, delivery)
    if found is None:
        return Outcome(False, 0, "the dashboard is gone, archived or hidden from the creator")
    heading, items = found
    outputs, files, pieces = [], [], []
    for item in items:
        if item.card_id is None:
            pieces.append(f'<p style="font-size:14px;">{html.escape(item.text or "")}</p>')
            continue
        card = session.get(Card, item.card_id)
        if card is None or card.archived:
            continue
        result = render.run_card(session, delivery.creator, card, item.parameters)
        settings = item.settings(card)
        output = render.render(card, result, cid=f"card-{card.id}-{uuid.uuid4().hex[:12]}@tessera", settings=settings)
        outputs.append(output)
        pieces.append(output.html)
        if item.ref is not None:
            files += render.attachments(card, result, item.ref.include_csv, item.ref.include_xls, item.ref.format_rows,
                                        settings)
    if delivery.skip_if_empty and all(o.row_count == 0 for o in outputs):
        return Outcome(False, 0, "every card is empty")
    subject = heading if delivery.dashboard_id is not None else f"Pulse: {delivery.name}"
    if delivery.condition is not None:
        what = alert_fired(session, delivery, outputs)
        if what is None:
            return Outcome(False, 0, "the alert's condition does not hold")
        heading = subject = what
    body = (f'<div style="font-family:Lato,Helvetica,Arial,sans-serif;color:#4c5773;">'
            f'<h1 style="font-size:22px;">{html.escape(heading)}</h1>' + "".join(pieces) + "</div>")
    text = "\n".join([heading, ""] + [f"- {o.name}: {o.row_count} rows" for o in outputs])
    inline = [part for o in outputs for part in o.inline]
    for address in delivery.emails:
        deliver(registry, session, to=[address], subject=subject, text=text, html=body, inline=inline,
                attachments=files)
    return Outcome(True, len(delivery.emails))


def alert_fired(session: Session, delivery: Delivery, outputs: list[render.CardOutput]) -> str | None:
    """An alert's subject ("Alert: <card> has results") when its condition holds for its (first) card."""
    if not outputs or outputs[0].result is None:
        return None
    card = session.get(Card, outputs[0].card_id)
    what = conditions.fired(delivery.condition, card, outputs[0].result)
    return None if what is None else f"Alert: {card.name} {what}"


def send_channel(session: Session, registry, channel_id: int, deliver=mail.send) -> Outcome:
    """The scheduled send of one stored channel; an archived pulse or a disabled channel sends nothing.
    `deliver` sends each e-mail (see send)."""
    from . import webhook_send  # it builds on this module

    channel = session.get(PulseChannel, channel_id)
    if channel is None or not channel.enabled or channel.channel_type not in ("email", "http"):
        return Outcome(False, 0, "channel absent, disabled or neither e-mail nor webhook")
    pulse = session.get(Pulse, channel.pulse_id)
    if pulse is None or pulse.archived:
        return Outcome(False, 0, "pulse archived")
    delivery = delivery_for(session, pulse, channel)
    if channel.channel_type == "http":
        return webhook_send.send(session, registry, delivery, channel.channel_id, pulse.id)
    return send(session, registry, delivery, deliver)
