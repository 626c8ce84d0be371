"""Creating users and keeping superuser status, group membership and personal collections in step.

Used by setup, the create-admin command and the users plugin, so every user is made the same way.
"""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .models import (
    ADMIN_GROUP_ID,
    ALL_USERS_GROUP_ID,
    Collection,
    PermissionsGroupMembership,
    User,
)


def email_taken(session: Session, email: str, exclude_id: int | None = None) -> bool:
    query = select(func.count()).select_from(User).where(func.lower(User.email) == email.strip().lower())
    if exclude_id is not None:
        query = query.where(User.id != exclude_id)
    return session.scalar(query) > 0


def personal_collection_name(user: User) -> str:
    return f"{user.common_name}'s Personal Collection"


def create_user(session: Session, *, email: str, first_name: str | None = None, last_name: str | None = None,
                password_hash: str | None = None, is_superuser: bool = False, type: str = "personal",
                group_ids: tuple[int, ...] = (), **attributes) -> User:
    """Add a user with All Users membership (and Administrators when superuser). The caller commits."""
    user = User(email=email.strip().lower(), first_name=first_name, last_name=last_name,
                password_hash=password_hash, is_superuser=is_superuser, type=type, **attributes)
    session.add(user)
    session.flush()
    groups = {ALL_USERS_GROUP_ID, *group_ids}
    if is_superuser:
        groups.add(ADMIN_GROUP_ID)
    for group_id in sorted(groups):
        session.add(PermissionsGroupMembership(user_id=user.id, group_id=group_id))
    if type == "personal":
        session.add(Collection(name=personal_collection_name(user), personal_owner_id=user.id, location="/"))
    session.flush()
    session.refresh(user)
    return user


def set_superuser(session: Session, user: User, is_superuser: bool) -> None:
    """Superuser status is Administrators membership; change both together."""
    membership = session.scalar(select(PermissionsGroupMembership).where(
        PermissionsGroupMembership.user_id == user.id, PermissionsGroupMembership.group_id == ADMIN_GROUP_ID))
    if is_superuser and membership is None:
        session.add(PermissionsGroupMembership(user_id=user.id, group_id=ADMIN_GROUP_ID))
    elif not is_superuser and membership is not None:
        session.delete(membership)
    user.is_superuser = is_superuser


def personal_collection_id(session: Session, user_id: int) -> int | None:
    return session.scalar(select(Collection.id).where(Collection.personal_owner_id == user_id))


def has_users(session: Session) -> bool:
    return session.scalar(select(func.count()).select_from(User).where(User.type == "personal")) > 0
