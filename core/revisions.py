"""Revision history of content (cards now, dashboards later): one row per saved state.

Writers call `record` in the same transaction as the change, so a change and its revision land
together. `last_edit_info` is what API responses show as `last-edit-info`.
"""
from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from .models import Revision, User, utcnow


def record(session: Session, model: str, model_id: int, user_id: int | None, obj: dict, *,
           is_creation: bool = False, is_reversion: bool = False, message: str | None = None) -> Revision:
    """Add a revision holding `obj` (the serialized entity after the change); the caller commits."""
    session.execute(update(Revision).where(Revision.model == model, Revision.model_id == model_id,
                                           Revision.most_recent.is_(True)).values(most_recent=False))
    revision = Revision(model=model, model_id=model_id, user_id=user_id, object=obj, timestamp=utcnow(),
                        is_creation=is_creation, is_reversion=is_reversion, message=message, most_recent=True)
    session.add(revision)
    session.flush()
    return revision


def latest(session: Session, model: str, model_id: int) -> Revision | None:
    return session.scalar(select(Revision).where(Revision.model == model, Revision.model_id == model_id)
                          .order_by(Revision.id.desc()).limit(1))


def last_edit_info(session: Session, model: str, model_id: int) -> dict | None:
    """Who made the latest revision and when: {id, email, first_name, last_name, timestamp}."""
    revision = latest(session, model, model_id)
    if revision is None or revision.user_id is None:
        return None
    user = session.get(User, revision.user_id)
    if user is None:
        return None
    return {"id": user.id, "email": user.email, "first_name": user.first_name, "last_name": user.last_name,
            "timestamp": revision.timestamp}
