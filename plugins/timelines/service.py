"""Timeline and event logic: listing, reading, creating, changing, archiving and deleting, with
Metabase's permission rule (a timeline is read and written as its collection; an event as its
timeline)."""
from __future__ import annotations

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from core.appdb.models import Card, Collection, Timeline, TimelineEvent, User
from core.content.collections import Access, check_target
from core.content.timelines import DEFAULT_ICON
from core.http.errors import NotFound, check_403, check_404
from core.http.types import parse_temporal
from core.policy import permissions

from .shapes import one_event_json, timelines_json, with_events


def _when(text: str | None):
    return parse_temporal(text) if text is not None else None


def _timeline(session: Session, timeline_id: int) -> Timeline:
    return check_404(session.get(Timeline, timeline_id))


def _readable(session: Session, user: User, timeline: Timeline) -> Timeline:
    check_403(permissions.can_read_item(session, user, timeline.collection_id))
    return timeline


def _writable(session: Session, user: User, timeline: Timeline) -> Timeline:
    check_403(permissions.can_write_item(session, user, timeline.collection_id))
    return timeline


def _ordered(query):
    return query.order_by(func.lower(Timeline.name), Timeline.id)


def _one(session: Session, user: User, timeline: Timeline) -> dict:
    return timelines_json(session, Access(session, user), [timeline])[0]


# --------------------------------------------------------------------------------------------------
# Timelines
# --------------------------------------------------------------------------------------------------


def list_timelines(session: Session, user: User, include_events: bool, archived: bool) -> list[dict]:
    """Every timeline in a collection the user can read, archived ones instead with archived=true."""
    access = Access(session, user)
    rows = session.scalars(_ordered(select(Timeline).where(Timeline.archived.is_(archived)))).all()
    visible = [t for t in rows if access.can_read(t.collection_id)]
    out = timelines_json(session, access, visible)
    return with_events(session, out, all_events=archived) if include_events else out


def get_timeline(session: Session, user: User, timeline_id: int, include_events: bool, archived: bool,
                 start: str | None, end: str | None) -> dict:
    timeline = _readable(session, user, _timeline(session, timeline_id))
    out = _one(session, user, timeline)
    if include_events:
        with_events(session, [out], all_events=archived, start=_when(start), end=_when(end))
    return out


def create_timeline(session: Session, user: User, fields: dict) -> dict:
    check_target(session, user, fields.get("collection_id"))
    timeline = Timeline(name=fields["name"], description=fields.get("description"),
                        icon=fields.get("icon") or DEFAULT_ICON, collection_id=fields.get("collection_id"),
                        archived=bool(fields.get("archived")), default=bool(fields.get("default")),
                        creator_id=user.id)
    session.add(timeline)
    session.commit()
    return _one(session, user, timeline)


def update_timeline(session: Session, user: User, timeline_id: int, changes: dict) -> dict:
    """Change a timeline; archiving or unarchiving it does the same to all its events, in one
    transaction. Moving it needs write permission on the new collection too."""
    timeline = _writable(session, user, _timeline(session, timeline_id))
    if "collection_id" in changes and changes["collection_id"] != timeline.collection_id:
        check_target(session, user, changes["collection_id"])
    archived = changes.get("archived")
    if archived is not None and archived != timeline.archived:
        session.execute(update(TimelineEvent).where(TimelineEvent.timeline_id == timeline.id)
                        .values(archived=archived), execution_options={"synchronize_session": False})
    for key, value in changes.items():
        setattr(timeline, key, value)
    session.commit()
    return _one(session, user, timeline)


def delete_timeline(session: Session, user: User, timeline_id: int) -> None:
    timeline = _writable(session, user, _timeline(session, timeline_id))
    session.execute(TimelineEvent.__table__.delete().where(TimelineEvent.timeline_id == timeline.id))
    session.delete(timeline)
    session.commit()


def timelines_for_collection(session: Session, user: User, collection_id: int | None, *, include_events: bool,
                             archived: bool = False, start: str | None = None, end: str | None = None) -> list[dict]:
    """The timelines of one collection (None: the root); `events` are the unarchived ones in range."""
    access = Access(session, user)
    rows = session.scalars(_ordered(select(Timeline).where(
        Timeline.collection_id.is_(None) if collection_id is None else Timeline.collection_id == collection_id,
        Timeline.archived.is_(archived)))).all()
    out = timelines_json(session, access, list(rows))
    return with_events(session, out, start=_when(start), end=_when(end)) if include_events else out


def collection_timelines(session: Session, user: User, collection_id: int | None, include_events: bool,
                         archived: bool) -> list[dict]:
    if collection_id is not None:
        check_404(session.get(Collection, collection_id))
    check_403(permissions.can_read_collection(session, user, collection_id))
    return timelines_for_collection(session, user, collection_id, include_events=include_events, archived=archived)


def card_timelines(session: Session, user: User, card_id: int, include_events: bool, start: str | None,
                   end: str | None) -> list[dict]:
    """The timelines of the card's collection: reading the card is reading that collection."""
    card = check_404(session.get(Card, card_id))
    check_403(permissions.can_read_item(session, user, card.collection_id))
    return timelines_for_collection(session, user, card.collection_id, include_events=include_events,
                                    start=start, end=end)


# --------------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------------


def _event_timeline(session: Session, timeline_id: int) -> Timeline:
    # Metabase names the timeline in this 404 rather than a bare "Not found.".
    timeline = session.get(Timeline, timeline_id)
    if timeline is None:
        raise NotFound(f"Timeline with id {timeline_id} not found")
    return timeline


def _event(session: Session, event_id: int) -> TimelineEvent:
    return check_404(session.get(TimelineEvent, event_id))


def create_event(session: Session, user: User, fields: dict) -> dict:
    timeline = _writable(session, user, _event_timeline(session, fields["timeline_id"]))
    event = TimelineEvent(timeline_id=timeline.id, name=fields["name"], description=fields.get("description"),
                          timestamp=parse_temporal(fields["timestamp"]),
                          time_matters=bool(fields.get("time_matters")), timezone=fields["timezone"],
                          icon=fields.get("icon") or timeline.icon, archived=bool(fields.get("archived")),
                          creator_id=user.id)
    session.add(event)
    session.commit()
    return one_event_json(session, event)


def get_event(session: Session, user: User, event_id: int) -> dict:
    event = _event(session, event_id)
    _readable(session, user, _timeline(session, event.timeline_id))
    return one_event_json(session, event)


def update_event(session: Session, user: User, event_id: int, changes: dict) -> dict:
    event = _event(session, event_id)
    _writable(session, user, _timeline(session, event.timeline_id))
    if "timeline_id" in changes and changes["timeline_id"] != event.timeline_id:
        _writable(session, user, _event_timeline(session, changes["timeline_id"]))
    if "timestamp" in changes:
        changes = {**changes, "timestamp": parse_temporal(changes["timestamp"])}
    for key, value in changes.items():
        setattr(event, key, value)
    session.commit()
    return one_event_json(session, event)


def delete_event(session: Session, user: User, event_id: int) -> None:
    event = _event(session, event_id)
    _writable(session, user, _timeline(session, event.timeline_id))
    session.delete(event)
    session.commit()
