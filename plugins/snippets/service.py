"""Snippet logic: listing, creating and changing snippets, and how a snippet is shown."""
from __future__ import annotations

import secrets
import string

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.appdb.models import NativeQuerySnippet, User
from core.assembly.events import emit
from core.content.collections import SNIPPETS, check_target
from core.http.errors import Invalid, NotFound, check_403
from core.identity.users import creator_json
from core.policy import permissions

ALPHABET = string.ascii_letters + string.digits + "_-"
DUPLICATE = "A snippet with that name already exists. Please pick a different name."


def _entity_id() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(21))


def check_name(name: str) -> str:
    # The name goes inside {{snippet: ...}}, which ends at the first "}" and trims spaces.
    if "}" in name or name != name.strip():
        raise Invalid({"name": "snippet names cannot include '}' or start or end with spaces"})
    return name


def snippet_json(session: Session, snippet: NativeQuerySnippet) -> dict:
    return {
        "id": snippet.id,
        "name": snippet.name,
        "description": snippet.description,
        "content": snippet.content,
        "creator_id": snippet.creator_id,
        "creator": creator_json(session.get(User, snippet.creator_id)),
        "archived": snippet.archived,
        "collection_id": snippet.collection_id,
        "entity_id": snippet.entity_id,
        "template_tags": snippet.template_tags or {},
        "created_at": snippet.created_at,
        "updated_at": snippet.updated_at,
    }


def _may_use_snippets(session: Session, user: User) -> bool:
    return permissions.has_any_native_permission(session, user) and not permissions.is_sandboxed(session, user)


def _check_target(session: Session, user: User, collection_id: int | None) -> None:
    """May `user` put a snippet into this folder? 404/400/403 as for any collection item."""
    check_403(_may_use_snippets(session, user))
    check_target(session, user, collection_id, SNIPPETS)


def list_snippets(session: Session, user: User, archived: bool) -> list[dict]:
    """The snippets `user` may read: none without native rights, else those in readable folders."""
    if not _may_use_snippets(session, user):
        return []
    rows = session.scalars(select(NativeQuerySnippet).where(NativeQuerySnippet.archived == archived)
                           .order_by(NativeQuerySnippet.name)).all()
    if permissions.permission_hooks_active():
        rows = [s for s in rows if permissions.can_read_snippet(session, user, s.collection_id)]
    else:
        readable = permissions.readable_collection_ids(session, user, SNIPPETS)
        if readable is not None:
            root = permissions.can_read_collection(session, user, None, SNIPPETS)
            rows = [s for s in rows if (root if s.collection_id is None else s.collection_id in readable)]
    return [snippet_json(session, s) for s in rows]


def _readable(session: Session, user: User, snippet_id: int) -> NativeQuerySnippet:
    snippet = session.get(NativeQuerySnippet, snippet_id)
    if snippet is None:
        raise NotFound()
    check_403(permissions.can_read_snippet(session, user, snippet.collection_id))
    return snippet


def get(session: Session, user: User, snippet_id: int) -> dict:
    return snippet_json(session, _readable(session, user, snippet_id))


def _taken(session: Session, name: str, other_than: int | None = None) -> bool:
    query = select(NativeQuerySnippet.id).where(NativeQuerySnippet.name == name)
    if other_than is not None:
        query = query.where(NativeQuerySnippet.id != other_than)
    return session.scalar(query) is not None


def create(session: Session, user: User, name: str, content: str, description: str | None,
           collection_id: int | None) -> dict:
    check_name(name)
    _check_target(session, user, collection_id)
    if _taken(session, name):
        raise Invalid(DUPLICATE)
    snippet = NativeQuerySnippet(name=name, content=content, description=description, collection_id=collection_id,
                                 creator_id=user.id, entity_id=_entity_id())
    session.add(snippet)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise Invalid(DUPLICATE) from None
    emit("snippet-create", user.id, snippet)
    return snippet_json(session, snippet)


def update(session: Session, user: User, snippet_id: int, changes: dict) -> dict:
    snippet = _readable(session, user, snippet_id)
    check_403(permissions.can_write_snippet(session, user, snippet.collection_id))
    if "name" in changes and changes["name"] != snippet.name:
        check_name(changes["name"])
        if _taken(session, changes["name"], snippet.id):
            raise Invalid(DUPLICATE)
    if "collection_id" in changes and changes["collection_id"] != snippet.collection_id:
        _check_target(session, user, changes["collection_id"])
    for key in ("name", "content", "description", "archived", "collection_id"):
        if key in changes:
            setattr(snippet, key, changes[key])
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise Invalid(DUPLICATE) from None
    emit("snippet-update", user.id, snippet)
    return snippet_json(session, snippet)
