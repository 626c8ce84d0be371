"""Segment logic: logic.py with the Segment model (shared with legacy metrics)."""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb.models import Segment, User
from core.content import related as core_related

from . import logic as definitions


def list_segments(session: Session, user: User) -> list[dict]:
    return definitions.list_all(session, user, Segment)


def get(session: Session, user: User, segment_id: int) -> dict:
    return definitions.get(session, user, Segment, segment_id)


def create(session: Session, user: User, name: str, description: str | None, table_id: int, definition: dict) -> dict:
    return definitions.create(session, user, Segment, name=name, description=description, table_id=table_id,
                              definition=definition)


def update(session: Session, user: User, segment_id: int, changes: dict, message: str) -> dict:
    return definitions.update(session, user, Segment, segment_id, changes, message)


def archive(session: Session, user: User, segment_id: int, message: str) -> None:
    definitions.update(session, user, Segment, segment_id, {"archived": True}, message)


def revisions(session: Session, user: User, segment_id: int) -> list[dict]:
    return definitions.history(session, user, Segment, segment_id)


def revert(session: Session, user: User, segment_id: int, revision_id: int) -> dict:
    return definitions.revert(session, user, Segment, segment_id, revision_id)


def related(session: Session, user: User, segment_id: int) -> dict:
    """Metabase's related entities of a segment (core.content.related)."""
    segment = definitions.fetch(session, user, Segment, segment_id)
    return core_related.for_segment(session, user, segment)
