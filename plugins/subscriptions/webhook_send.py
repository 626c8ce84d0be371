"""A pulse's webhook channel sent: its cards run as the pulse's creator (send.items_of, as for
e-mail) and posted as JSON to the channel's destination (webhook.post, through the outbound guard).

A legacy pulse posts one Metabase alert payload per card ({"type": "alert", ..., "data": {"type":
"question", "question_id", "question_name", "question_url", "visualization" (a PNG data URI for
charts, else null), "raw_data": {"cols": [names], "rows": [...]}}, "sent_at"}); a dashboard
subscription posts one {"type": "dashboard_subscription", ..., "data": {"type": "dashboard", ...,
"cards": [question data...]}}. A refused or failed post raises, so the job records the failure.
"""
from __future__ import annotations

import base64
import datetime as dt

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from core.appdb.models import Card

from . import render, webhook
from .models import Channel
from .send import Delivery, Outcome, alert_fired, items_of

MAX_ROWS = 2000  # the JSON stays a notification, not an export


def is_active(session: Session, channel_id: int | None) -> bool:
    return channel_id is not None and session.scalar(select(exists().where(
        Channel.id == channel_id, Channel.active.is_(True), Channel.type == webhook.HTTP_TYPE))) is True


def any_active(session: Session) -> bool:
    return session.scalar(select(exists().where(Channel.active.is_(True), Channel.type == webhook.HTTP_TYPE))) is True


def _site(registry, session: Session) -> str:
    return ((registry.get(session, "site-url") if "site-url" in registry.definitions else None) or "").rstrip("/")


def question_data(session: Session, delivery: Delivery, card: Card, parameters, site: str,
                  settings: dict | None = None) -> tuple[dict, render.CardOutput]:
    result = render.run_card(session, delivery.creator, card, parameters)
    output = render.render(card, result, cid="webhook", settings=settings)  # with a cid the PNG comes back as bytes
    cols, rows = render._cols_rows(result)
    png = next((part for part in output.inline if part.content_type == "image/png"), None)
    visual = f"data:image/png;base64,{base64.b64encode(png.data).decode()}" if png is not None else None
    data = {"type": "question", "question_id": card.id, "question_name": card.name,
            "question_url": f"{site}/question/{card.id}", "visualization": visual,
            "raw_data": {"cols": [c.get("name") for c in cols], "rows": rows[:MAX_ROWS]}}
    if result.get("status") == "failed":
        data["error"] = result.get("error")
    return data, output


def send(session: Session, registry, delivery: Delivery, channel_id: int | None, pulse_id: int | None) -> Outcome:
    channel = session.get(Channel, channel_id) if channel_id is not None else None
    if channel is None or not channel.active:
        return Outcome(False, 0, "the webhook destination is gone or inactive")
    if delivery.creator is None or not delivery.creator.is_active:
        return Outcome(False, 0, "the creator is deactivated")
    found = items_of(session, delivery)
    if found is None:
        return Outcome(False, 0, "the dashboard is gone, archived or hidden from the creator")
    heading, items = found
    site = _site(registry, session)
    questions, outputs = [], []
    for item in items:
        card = session.get(Card, item.card_id) if item.card_id is not None else None
        if card is None or card.archived:
            continue
        data, output = question_data(session, delivery, card, item.parameters, site, item.settings(card))
        questions.append(data)
        outputs.append(output)
    if delivery.skip_if_empty and all(o.row_count == 0 for o in outputs):
        return Outcome(False, 0, "every card is empty")
    if delivery.condition is not None and alert_fired(session, delivery, outputs) is None:
        return Outcome(False, 0, "the alert's condition does not hold")
    creator = {"creator_id": delivery.creator.id, "creator_name": delivery.creator.common_name}
    sent_at = dt.datetime.now(dt.timezone.utc).isoformat()
    if delivery.dashboard_id is None:
        payloads = [{"type": "alert", "alert_id": pulse_id, "alert_creator_id": creator["creator_id"],
                     "alert_creator_name": creator["creator_name"], "data": q, "sent_at": sent_at} for q in questions]
    else:
        payloads = [{"type": "dashboard_subscription", "dashboard_subscription_id": pulse_id, **creator,
                     "data": {"type": "dashboard", "dashboard_id": delivery.dashboard_id, "dashboard_name": heading,
                              "dashboard_url": f"{site}/dashboard/{delivery.dashboard_id}", "cards": questions},
                     "sent_at": sent_at}]
    for payload in payloads:
        webhook.post(registry, session, channel.details or {}, payload)
    return Outcome(True, len(payloads))
