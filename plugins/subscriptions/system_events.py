"""System events (hook register_system_events, core.assembly.records.SystemEvent) and their delivery.

This plugin registers three and e-mails the notices of every registered one: a user's first sign-in
("event/user-joined", to the other administrators), a failed database sync ("event/sync-failed", to
the administrators) and an archived question with live alerts ("event/alert-card-archived": its alerts
are archived, their jobs removed, and each alert's creator told). Delivery happens in `deliver`, this
plugin's track_event implementation: after the change is committed, in a session of its own, one
message per address; a mail server that is missing or failing is logged and the change stands.
"""
from __future__ import annotations

import html
import logging

from flask import current_app
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.assembly.records import Event, Notice, SystemEvent
from core.outbound import mail

from .models import Pulse, PulseCard

log = logging.getLogger("tessera.subscriptions")


def _admin_ids(session: Session, except_id: int | None = None) -> tuple[int, ...]:
    ids = session.scalars(select(User.id).where(User.is_superuser.is_(True), User.is_active.is_(True))
                          .order_by(User.id))
    return tuple(i for i in ids if i != except_id)


def user_joined(session: Session, event: Event) -> list[Notice]:
    user = session.get(User, event.user_id) if event.user_id is not None else None
    if user is None:
        return []
    return [Notice(_admin_ids(session, user.id), f"{user.common_name} signed in for the first time",
                   f"{user.common_name} ({user.email}) signed in to Tessera for the first time.")]


def sync_failed(session: Session, event: Event) -> list[Notice]:
    name = event.details.get("database_name") or f"database {event.details.get('database_id')}"
    return [Notice(_admin_ids(session), f"Sync of {name} failed",
                   f"The sync of {name} failed: {event.details.get('error') or 'unknown error'}")]


def alert_card_archived(session: Session, event: Event) -> list[Notice]:
    """An archived question's live alerts are archived (their jobs go), and each creator is told."""
    from .scheduling import reschedule  # the scheduler's side of the pulse tables

    card = event.object
    if not isinstance(card, Card) or not card.archived:
        return []
    alerts = list(session.scalars(select(Pulse).where(
        Pulse.alert_condition.is_not(None), Pulse.archived.is_(False),
        Pulse.id.in_(select(PulseCard.pulse_id).where(PulseCard.card_id == card.id)))))
    notices = []
    for alert in alerts:
        alert.archived = True
        session.flush()
        reschedule(session, alert)
        notices.append(Notice((alert.creator_id,), f"Your alert on {card.name} was turned off",
                              f"The question {card.name} was archived, so your alert on it was turned off."))
    return notices


SYSTEM_EVENTS = [SystemEvent("event/user-joined", "user-joined", user_joined),
                 SystemEvent("event/sync-failed", "database-sync-failed", sync_failed),
                 SystemEvent("event/alert-card-archived", "card-update", alert_card_archived)]


def _send(registry, session: Session, notice: Notice) -> None:
    emails = session.scalars(select(User.email).where(User.id.in_(notice.user_ids), User.is_active.is_(True)))
    body = f'<p style="font-family:Lato,Helvetica,Arial,sans-serif;">{html.escape(notice.text)}</p>'
    for email in emails:
        mail.send(registry, session, to=[email], subject=notice.subject, text=notice.text, html=body)


def deliver(event: Event) -> None:
    """Every registered system event following this topic: its notices computed and e-mailed."""
    state = current_app.extensions["tessera"]
    wanted = [e for e in state.system_events.values() if e.topic == event.topic]
    if not wanted:
        return
    with state.db.session() as session:
        notices = [n for e in wanted for n in e.notices(session, event)]
        session.commit()  # the event's own changes stand whether or not a message can be sent
        if not notices or not mail.is_configured(state.settings, session):
            return
        for notice in notices:
            try:
                _send(state.settings, session, notice)
            except mail.MailError as exc:
                log.warning("system event %s: the e-mail could not be sent: %s", event.topic, exc)
