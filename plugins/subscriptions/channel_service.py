"""/api/channel: webhook destinations (Metabase's `channel` rows of type "channel/http").

Every user may list and read them (the subscription editor offers them), only administrators see
their details and write them. A destination the outbound guard refuses is a 400 when saved or
tested; secrets in auth-info never come back unmasked.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import User
from core.http.errors import Conflict, Invalid, NotFound
from core.outbound.errors import OutboundError
from core.policy import permissions as perms

from . import webhook
from .models import Channel

TYPE_MESSAGE = "Must be a namespaced channel. E.g: channel/http"


def channel_json(user: User, channel: Channel) -> dict:
    out = {"id": channel.id, "name": channel.name, "description": channel.description, "type": channel.type,
           "active": channel.active, "created_at": channel.created_at, "updated_at": channel.updated_at}
    if perms.is_admin(user):
        out["details"] = webhook.masked(channel.details or {})
    return out


def _check_type(kind: object) -> None:
    if kind != webhook.HTTP_TYPE:
        raise Invalid({"type": TYPE_MESSAGE})


def _check_name(session: Session, name: str, own_id: int | None = None) -> None:
    other = session.scalar(select(Channel.id).where(Channel.name == name))
    if other is not None and other != own_id:
        raise Conflict(body={"errors": {"name": "Channel with that name already exists"}},
                       message="Channel with that name already exists")


def get_channel(session: Session, channel_id: int) -> Channel:
    channel = session.get(Channel, channel_id)
    if channel is None:
        raise NotFound()
    return channel


def list_channels(session: Session, user: User, include_inactive: bool) -> list[dict]:
    query = select(Channel).order_by(Channel.id)
    if not include_inactive:
        query = query.where(Channel.active.is_(True))
    return [channel_json(user, c) for c in session.scalars(query)]


def read_channel(session: Session, user: User, channel_id: int) -> dict:
    return channel_json(user, get_channel(session, channel_id))


def create(session: Session, user: User, registry, body: dict) -> dict:
    _check_type(body["type"])
    details = webhook.check_details(body["details"])
    _check_name(session, body["name"])
    webhook.check_destination(registry, session, details)
    channel = Channel(name=body["name"], description=body.get("description"), type=body["type"], details=details,
                      active=body.get("active") is not False)
    session.add(channel)
    session.commit()
    return channel_json(user, channel)


def update(session: Session, user: User, registry, channel_id: int, changes: dict) -> dict:
    channel = get_channel(session, channel_id)
    if changes.get("type") is not None:
        _check_type(changes["type"])
    if changes.get("name") is not None:
        _check_name(session, changes["name"], channel.id)
        channel.name = changes["name"]
    if "description" in changes:
        channel.description = changes["description"]
    if changes.get("active") is not None:
        channel.active = changes["active"]
    if changes.get("details") is not None:
        raw = changes["details"]
        details = webhook.check_details(webhook.unmasked(raw, channel.details or {}) if isinstance(raw, dict) else raw)
        webhook.check_destination(registry, session, details)
        channel.details = details
    session.commit()
    return channel_json(user, channel)


def test_payload(user: User) -> dict:
    """What POST /api/channel/test posts: an alert as a subscription sends one, with sample data."""
    return {"type": "alert", "alert_id": None, "alert_creator_id": user.id, "alert_creator_name": user.common_name,
            "data": {"type": "question", "question_id": None, "question_name": "Test webhook",
                     "question_url": None, "visualization": None,
                     "raw_data": {"cols": ["name", "count"], "rows": [["Test", 1]]}},
            "sent_at": dt.datetime.now(dt.timezone.utc).isoformat()}


def send_test(session: Session, user: User, registry, body: dict) -> dict:
    _check_type(body["type"])
    details = webhook.check_details(body["details"])
    try:
        webhook.post(registry, session, details, test_payload(user))
    except OutboundError as exc:
        raise webhook.ChannelTestFailed(exc.message, body={"message": exc.message,
                                                           "data": {"url": details["url"]}}) from None
    return {"ok": True}
