"""API keys: creating, listing, renaming, moving, regenerating and deleting keys, and finding the
user a presented key belongs to.

A key is "mb_" + base64 of 32 random bytes (47 characters). Its first 7 characters (the prefix) are
stored, unique, to find the row; the rest is only ever compared as a SHA-256, in constant time.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import (
    ADMIN_GROUP_ID,
    ALL_USERS_GROUP_ID,
    ApiKey,
    PermissionsGroup,
    PermissionsGroupMembership,
    User,
)
from core.assembly import events
from core.http.errors import Invalid, check_404
from core.identity import users

PREFIX_LENGTH = 7
KEY_LENGTH = 47
NAME_TAKEN = "An API key with this name already exists."


def generate_key() -> str:
    return "mb_" + base64.b64encode(secrets.token_bytes(32)).decode()


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def mask(prefix: str) -> str:
    return prefix + "*" * (KEY_LENGTH - len(prefix))


def _new_key(session: Session) -> tuple[str, str]:
    """A key whose prefix no other key has (a clash is 1 in 64^4 per key; try again then)."""
    while True:
        key = generate_key()
        prefix = key[:PREFIX_LENGTH]
        if session.scalar(select(ApiKey.id).where(ApiKey.key_prefix == prefix)) is None:
            return key, prefix


def _key_group(session: Session, key: ApiKey) -> PermissionsGroup:
    group_id = session.scalar(select(func.max(PermissionsGroupMembership.group_id)).where(
        PermissionsGroupMembership.user_id == key.user_id))
    return session.get(PermissionsGroup, group_id or ALL_USERS_GROUP_ID)


def key_json(session: Session, key: ApiKey) -> dict:
    group = _key_group(session, key)
    updated_by = key.updated_by
    return {
        "id": key.id,
        "name": key.name,
        "user_id": key.user_id,
        "group_id": group.id,
        "group": {"id": group.id, "name": group.name},
        "masked_key": mask(key.key_prefix),
        "created_at": key.created_at,
        "updated_at": key.updated_at,
        "updated_by": {"id": updated_by.id, "common_name": updated_by.common_name} if updated_by else None,
    }


def _group(session: Session, group_id: int) -> PermissionsGroup:
    group = session.get(PermissionsGroup, group_id)
    if group is None:
        raise Invalid({"group_id": "There is no group with this id."})
    return group


def _check_name_free(session: Session, name: str, exclude_id: int | None = None) -> str:
    name = name.strip()
    query = select(ApiKey.id).where(func.lower(ApiKey.name) == name.lower())
    if exclude_id is not None:
        query = query.where(ApiKey.id != exclude_id)
    if session.scalar(query) is not None:
        raise Invalid({"name": NAME_TAKEN})
    return name


def _emit(topic: str, editor: User, row: ApiKey) -> None:
    """Audit detail is the name and the prefix only, never the key, as Metabase logs it."""
    events.emit(topic, editor.id, None, api_key_id=row.id, name=row.name, key_prefix=row.key_prefix)


def list_keys(session: Session) -> list[dict]:
    keys = session.scalars(select(ApiKey).order_by(func.lower(ApiKey.name), ApiKey.id))
    return [key_json(session, key) for key in keys]


def count_keys(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(ApiKey))


def create_key(session: Session, creator: User, name: str, group_id: int) -> dict:
    """The key, its hidden user in All Users and the key's group; the only time but regeneration
    that the key itself is returned."""
    name = _check_name_free(session, name)
    group = _group(session, group_id)
    key_user = users.create_user(session, email=f"api-key-user-{uuid.uuid4()}@api-key.invalid", first_name=name,
                                 last_name="", type="api-key", group_ids=(group.id,),
                                 is_superuser=group.id == ADMIN_GROUP_ID)
    key, prefix = _new_key(session)
    row = ApiKey(user_id=key_user.id, key_hash=hash_key(key), key_prefix=prefix, name=name,
                 creator_id=creator.id, updated_by_id=creator.id)
    session.add(row)
    session.commit()
    _emit("api-key-create", creator, row)
    return {**key_json(session, row), "unmasked_key": key}


def _key(session: Session, key_id: int) -> ApiKey:
    return check_404(session.get(ApiKey, key_id))


def update_key(session: Session, editor: User, key_id: int, name: str | None, group_id: int | None) -> dict:
    row = _key(session, key_id)
    if name is not None:
        row.name = _check_name_free(session, name, exclude_id=row.id)
        row.user.first_name = row.name
    if group_id is not None:
        _group(session, group_id)
        users.set_memberships(session, row.user, {group_id: False})
    row.updated_by_id = editor.id
    session.commit()
    session.refresh(row)
    _emit("api-key-update", editor, row)
    return key_json(session, row)


def regenerate_key(session: Session, editor: User, key_id: int) -> dict:
    row = _key(session, key_id)
    key, prefix = _new_key(session)
    row.key_hash, row.key_prefix, row.updated_by_id = hash_key(key), prefix, editor.id
    session.commit()
    _emit("api-key-regenerate", editor, row)
    return {"id": row.id, "unmasked_key": key, "masked_key": mask(prefix), "prefix": prefix}


def delete_key(session: Session, editor: User, key_id: int) -> None:
    """Delete the key and deactivate its user (kept, as the author of what the key did)."""
    row = _key(session, key_id)
    row.user.is_active = False
    detail = {"api_key_id": row.id, "name": row.name, "key_prefix": row.key_prefix}
    session.delete(row)
    session.commit()
    events.emit("api-key-delete", editor.id, None, **detail)


def user_for_key(session: Session, presented: str) -> User | None:
    if not presented.startswith("mb_") or not 12 <= len(presented) <= 254:
        return None
    row = session.scalar(select(ApiKey).where(ApiKey.key_prefix == presented[:PREFIX_LENGTH]))
    if row is None or not hmac.compare_digest(row.key_hash, hash_key(presented)):
        return None
    return row.user if row.user.is_active else None
