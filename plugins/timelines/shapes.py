"""How timelines and events are shown, and which events a timeline's `events` holds (archived
state and the start/end range)."""
from __future__ import annotations

import datetime as dt
from collections import defaultdict

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Timeline, TimelineEvent, User
from core.content.collections import Access, collection_json
from core.content.timelines import shown_icon
from core.identity.users import creator_json


def _creators(session: Session, rows) -> dict[int, dict | None]:
    ids = {r.creator_id for r in rows}
    users = session.scalars(select(User).where(User.id.in_(ids))).all() if ids else []
    return {u.id: creator_json(u) for u in users}


def event_json(event: TimelineEvent, creators: dict[int, dict | None]) -> dict:
    return {
        "id": event.id,
        "timeline_id": event.timeline_id,
        "name": event.name,
        "description": event.description,
        "timestamp": event.timestamp,
        "time_matters": event.time_matters,
        "timezone": event.timezone,
        "icon": shown_icon(event.icon),
        "archived": event.archived,
        "creator_id": event.creator_id,
        "creator": creators.get(event.creator_id),
        "created_at": event.created_at,
        "updated_at": event.updated_at,
    }


def one_event_json(session: Session, event: TimelineEvent) -> dict:
    return event_json(event, _creators(session, [event]))


def timelines_json(session: Session, access: Access, timelines: list[Timeline]) -> list[dict]:
    """Timelines with `creator` and `collection` (the root object for the root) hydrated."""
    creators = _creators(session, timelines)
    collections: dict[int | None, dict | None] = {}
    out = []
    for t in timelines:
        if t.collection_id not in collections:
            collections[t.collection_id] = collection_json(session, access, t.collection_id)
        out.append({
            "id": t.id,
            "name": t.name,
            "description": t.description,
            "icon": shown_icon(t.icon),
            "collection_id": t.collection_id,
            "archived": t.archived,
            "default": t.default,
            "creator_id": t.creator_id,
            "creator": creators.get(t.creator_id),
            "collection": collections[t.collection_id],
            "entity_id": t.entity_id,
            "created_at": t.created_at,
            "updated_at": t.updated_at,
        })
    return out


def in_range(event: TimelineEvent, start: dt.datetime | None, end: dt.datetime | None) -> bool:
    """Metabase's range rule: an event whose time matters is compared by its full timestamp, the
    others by date only (UTC dates, as the app DB compares them)."""
    if event.time_matters:
        return (start is None or start <= event.timestamp) and (end is None or event.timestamp <= end)
    day = event.timestamp.date()
    return (start is None or start.date() <= day) and (end is None or day <= end.date())


def with_events(session: Session, timelines: list[dict], *, all_events: bool = False,
                start: dt.datetime | None = None, end: dt.datetime | None = None) -> list[dict]:
    """Add `events` to each timeline: unarchived ones unless all_events, within start/end."""
    if not timelines:
        return timelines
    query = select(TimelineEvent).where(TimelineEvent.timeline_id.in_([t["id"] for t in timelines]))
    if not all_events:
        query = query.where(TimelineEvent.archived.is_(False))
    events = [e for e in session.scalars(query.order_by(TimelineEvent.timestamp, TimelineEvent.id))
              if in_range(e, start, end)]
    creators = _creators(session, events)
    by_timeline: dict[int, list[dict]] = defaultdict(list)
    for event in events:
        by_timeline[event.timeline_id].append(event_json(event, creators))
    for timeline in timelines:
        timeline["events"] = by_timeline.get(timeline["id"], [])
    return timelines
