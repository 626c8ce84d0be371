"""Creating users and keeping superuser status, group membership and personal collections in step.

Used by setup, the create-admin command and the users plugin, so every user is made the same way.
"""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import ADMIN_GROUP_ID, ALL_USERS_GROUP_ID, Collection, PermissionsGroupMembership, User


def email_taken(session: Session, email: str, exclude_id: int | None = None) -> bool:
    query = select(func.count()).select_from(User).where(func.lower(User.email) == email.strip().lower())
    if exclude_id is not None:
        query = query.where(User.id != exclude_id)
    return session.scalar(query) > 0


def creator_json(user: User | None) -> dict | None:
    """The `creator` a saved object (card, snippet, timeline, event) is shown with."""
    if user is None:
        return None
    return {"id": user.id, "email": user.email, "first_name": user.first_name, "last_name": user.last_name,
            "common_name": user.common_name, "date_joined": user.date_joined, "last_login": user.last_login,
            "is_qbnewb": user.is_qbnewb, "is_superuser": user.is_superuser, "tenant_id": None}


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
    # Asked by every page and every /api/session/properties (whether setup is done): kept while the
    # user table is unchanged.
    return memo.get_or_compute(session, ("has users",), lambda: session.scalar(
        select(func.count()).select_from(User).where(User.type == "personal")) > 0)


# --------------------------------------------------------------------------------------------------
# Memberships: All Users always, Administrators equal to superuser status
# --------------------------------------------------------------------------------------------------


def _forget_groups(session: Session) -> None:
    from core.policy.permissions import clear_cache

    clear_cache(session)


def membership(session: Session, user_id: int, group_id: int) -> PermissionsGroupMembership | None:
    return session.scalar(select(PermissionsGroupMembership).where(
        PermissionsGroupMembership.user_id == user_id, PermissionsGroupMembership.group_id == group_id))


def add_membership(session: Session, user: User, group_id: int, is_group_manager: bool = False) -> PermissionsGroupMembership:
    """Put `user` in a group (or update the manager flag); joining Administrators makes a superuser."""
    _forget_groups(session)
    row = membership(session, user.id, group_id)
    if row is None:
        row = PermissionsGroupMembership(user_id=user.id, group_id=group_id, is_group_manager=is_group_manager)
        session.add(row)
    else:
        row.is_group_manager = is_group_manager
    if group_id == ADMIN_GROUP_ID:
        user.is_superuser = True
    session.flush()
    return row


def active_admin_count(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(User).where(
        User.is_superuser.is_(True), User.is_active.is_(True), User.type == "personal"))


def remove_membership(session: Session, row: PermissionsGroupMembership) -> None:
    """Take a user out of a group. Nobody leaves All Users, and the last administrator stays one."""
    from core.http.errors import Invalid

    _forget_groups(session)
    if row.group_id == ALL_USERS_GROUP_ID:
        raise Invalid("You cannot remove users from the 'All Users' group.")
    user = session.get(User, row.user_id)
    if row.group_id == ADMIN_GROUP_ID:
        if user.type == "personal" and user.is_active and active_admin_count(session) <= 1:
            raise Invalid("You cannot remove the last member of the 'Administrators' group.")
        user.is_superuser = False
    session.delete(row)
    session.flush()


def set_memberships(session: Session, user: User, wanted: dict[int, bool]) -> None:
    """Make `user`'s groups exactly `wanted` (group id -> is_group_manager), All Users kept."""
    wanted = {ALL_USERS_GROUP_ID: wanted.get(ALL_USERS_GROUP_ID, False), **wanted}
    for row in list(session.scalars(select(PermissionsGroupMembership).where(
            PermissionsGroupMembership.user_id == user.id))):
        if row.group_id not in wanted:
            remove_membership(session, row)
    for group_id, manager in wanted.items():
        add_membership(session, user, group_id, bool(manager))
    session.expire(user, ["memberships"])


# --------------------------------------------------------------------------------------------------
# Deactivation and reset tokens
# --------------------------------------------------------------------------------------------------


def deactivate(session: Session, user: User) -> None:
    """Disable the account and end its sessions; the record (and its content) is kept."""
    from core.http.auth import end_all_sessions

    user.is_active = False
    end_all_sessions(session, user.id)
    session.flush()


def issue_reset_token(session: Session, user: User) -> str:
    """A new single-use token "<user id>_<random>" for setting a password (invitations, resets).

    Only its SHA-256 is stored, with the time it was issued; the previous token stops working."""
    import hashlib
    import secrets

    from core.appdb.models import utcnow

    token = f"{user.id}_{secrets.token_urlsafe(32)}"
    user.reset_token = hashlib.sha256(token.encode()).hexdigest()
    user.reset_triggered = utcnow()
    session.flush()
    return token


def user_for_reset_token(session: Session, token: str, ttl_hours: int = 48) -> User | None:
    """The active user a reset token belongs to while it is valid (48 hours, as Metabase), else None."""
    import datetime as dt
    import hashlib
    import hmac

    from core.appdb.models import utcnow
    from core.http.types import BIGINT_MAX

    user_id, _, _rest = token.partition("_")
    # isdigit() alone lets "²" through, and an id past BIGINT overflows the driver: neither is a token.
    if not (user_id.isascii() and user_id.isdigit()) or int(user_id) > BIGINT_MAX:
        return None
    user = session.get(User, int(user_id))
    if user is None or not user.is_active or not user.reset_token or user.reset_triggered is None:
        return None
    if not hmac.compare_digest(user.reset_token, hashlib.sha256(token.encode()).hexdigest()):
        return None
    if utcnow() - user.reset_triggered > dt.timedelta(hours=ttl_hours):
        return None
    return user
