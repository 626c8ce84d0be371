"""Guards for public links and embedding, called by every plugin that shares something.

The settings are declared by plugins.sharing; when that plugin is disabled, sharing is off. Cards and
dashboards make and list their public links and embeddable objects through the functions at the end,
so the rules (administrators only, sharing enabled, archived objects refused) are written once.
"""
from __future__ import annotations

import uuid
from typing import Any, Callable

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import User, utcnow
from core.http.errors import Archived, Forbidden, Invalid, NotFound
from core.policy.permissions import is_admin


def _settings():
    from flask import current_app

    return current_app.extensions["tessera"].settings


def public_sharing_enabled(session: Session) -> bool:
    return bool(_settings().get_or(session, "enable-public-sharing", False))


def check_public_sharing(session: Session) -> None:
    if not public_sharing_enabled(session):
        raise Invalid("Public sharing is not enabled.")


def static_embedding_enabled(session: Session) -> bool:
    """Signed (static) embedding is on: `enable-embedding-static` alone, as in Metabase since 0.51. The
    deprecated `enable-embedding` gates nothing by itself (its environment variable sets the new toggles
    at startup: plugins.sharing.toggles), and the interactive, SDK and simple toggles gate features
    Tessera does not have (full-app framing, SDK CORS, JWT SSO)."""
    return bool(_settings().get_or(session, "enable-embedding-static", False))


def check_embedding(session: Session) -> None:
    if not static_embedding_enabled(session):
        raise Invalid("Embedding is not enabled.")


def embedding_secret(session: Session) -> str:
    secret = _settings().get_or(session, "embedding-secret-key")
    if not secret:
        raise Invalid("The embedding secret key has not been set.")
    return secret


# --------------------------------------------------------------------------------------------------
# Shared objects: anything with public_uuid, made_public_by_id, initially_published_at,
# enable_embedding and archived columns (cards, dashboards)
# --------------------------------------------------------------------------------------------------


def require_superuser(user: User) -> None:
    if not is_admin(user):
        raise Forbidden()


def public_items(session: Session, user: User, model) -> list[dict]:
    """[{id, name, public_uuid}] of the unarchived `model` rows with a public link (administrators)."""
    require_superuser(user)
    rows = session.scalars(select(model).where(model.public_uuid.is_not(None), model.archived.is_(False))
                           .order_by(model.id))
    return [{"id": r.id, "name": r.name, "public_uuid": r.public_uuid} for r in rows]


def embeddable_items(session: Session, user: User, model) -> list[dict]:
    """[{id, name}] of the unarchived `model` rows with embedding enabled (administrators, while static
    embedding is on: 400 otherwise, as Metabase)."""
    require_superuser(user)
    check_embedding(session)
    rows = session.scalars(select(model).where(model.enable_embedding.is_(True), model.archived.is_(False))
                           .order_by(model.id))
    return [{"id": r.id, "name": r.name} for r in rows]


def publish(session: Session, user: User, load: Callable[[], Any]) -> dict:
    """The public UUID of the item `load()` returns (looked up once the caller may share at all), made
    on the first call (Metabase returns the existing one after)."""
    require_superuser(user)
    check_public_sharing(session)
    item = load()
    if item.archived:
        raise Archived()
    if item.public_uuid is None:
        item.public_uuid = str(uuid.uuid4())
        item.made_public_by_id = user.id
        item.initially_published_at = item.initially_published_at or utcnow()
        session.commit()
    return {"uuid": item.public_uuid}


def unpublish(session: Session, user: User, load: Callable[[], Any]) -> None:
    """Remove the public link of the item `load()` returns; 404 when it has none."""
    require_superuser(user)
    check_public_sharing(session)
    item = load()
    if item.public_uuid is None:
        raise NotFound()
    item.public_uuid = None
    item.made_public_by_id = None
    session.commit()
