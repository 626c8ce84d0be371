"""Users plugin logic: listing users, showing a user to whom, creating, updating, deactivating and
reactivating users, passwords and the "seen this modal" flags.

Only personal users are users here; API-key users are hidden everywhere in /api/user.
"""
from __future__ import annotations

import re

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from core.appdb.models import (
    ADMIN_GROUP_ID,
    ALL_USERS_GROUP_ID,
    Collection,
    PermissionsGroup,
    PermissionsGroupMembership,
    User,
)
from core.assembly import events
from core.http.errors import ApiError, Forbidden, Invalid, NotFound
from core.identity import users
from core.policy import permissions

from .shapes import detail_json, manager_json, public_json

LOCALE_RE = re.compile(r"^[a-zA-Z]{2}([_-][a-zA-Z]{2})?$")
LOCALE_ERROR = ("nullable String must be a valid two-letter ISO language or language-country code e.g. "
                "'en' or 'en_US'.")
EMAIL_TAKEN = "Email address already in use."
EMAIL_TAKEN_UPDATE = "Email address already associated to another user."
class ActiveUser(ApiError):
    status = 400
    message = "Not able to reactivate an active user"

    def __init__(self):
        super().__init__(body={"message": self.message})


MODALS = {"qbnewb": "is_qbnewb", "datasetnewb": "is_datasetnewb"}


# --------------------------------------------------------------------------------------------------
# Listing
# --------------------------------------------------------------------------------------------------


BY_FIRST_NAME = (func.lower(User.first_name), func.lower(User.last_name), User.id)
BY_LAST_NAME = (func.lower(User.last_name), func.lower(User.first_name), User.id)  # recipients, as Metabase


def _page(session: Session, query, limit: int | None, offset: int | None, shape, order=BY_FIRST_NAME) -> dict:
    total = session.scalar(select(func.count()).select_from(query.subquery()))
    query = query.order_by(*order)
    if offset:
        query = query.offset(offset)
    if limit is not None:
        query = query.limit(limit)
    return {"data": [shape(u) for u in session.scalars(query)], "total": total, "limit": limit, "offset": offset}


def _in_groups(group_ids):
    return User.id.in_(select(PermissionsGroupMembership.user_id).where(PermissionsGroupMembership.group_id.in_(group_ids)))


def list_users(session: Session, caller: User, *, status: str | None, include_deactivated: bool | None,
               text: str | None, group_id: int | None, limit: int | None, offset: int | None) -> dict:
    """Administrators list everyone; group managers the members of the groups they manage; a
    sandboxed user only themselves. status wins over the deprecated include_deactivated."""
    base = select(User).where(User.type == "personal")
    if permissions.is_sandboxed(session, caller):
        return _page(session, base.where(User.id == caller.id), limit, offset, lambda u: detail_json(session, u))
    if (status is not None or include_deactivated) and not caller.is_superuser:
        raise Forbidden()
    if status is None:
        status = "all" if include_deactivated else "active"
    if caller.is_superuser:
        shape = lambda u: detail_json(session, u)  # noqa: E731
    else:
        managed = permissions.managed_group_ids(session, caller)
        if not managed:
            raise Forbidden()
        if group_id is not None and group_id not in managed:
            raise Forbidden()
        base = base.where(_in_groups(managed))
        shape = manager_json
    if status == "active":
        base = base.where(User.is_active.is_(True))
    elif status == "deactivated":
        base = base.where(User.is_active.is_(False))
    if text:
        needle = text.strip().lower()
        base = base.where(or_(*(func.lower(column).contains(needle, autoescape=True)
                                for column in (User.first_name, User.last_name, User.email))))
    if group_id is not None:
        base = base.where(_in_groups([group_id]))
    return _page(session, base, limit, offset, shape)


def recipients(session: Session, caller: User, visibility: str) -> dict:
    """Users the caller may send things to, by the user-visibility setting (all, group, none)."""
    base = select(User).where(User.type == "personal", User.is_active.is_(True))
    if caller.is_superuser:
        query = base
    elif permissions.is_sandboxed(session, caller) or visibility == "none":
        query = base.where(User.id == caller.id)
    elif visibility == "group":
        own_groups = select(PermissionsGroupMembership.group_id).where(
            PermissionsGroupMembership.user_id == caller.id, PermissionsGroupMembership.group_id != ALL_USERS_GROUP_ID)
        shared = select(PermissionsGroupMembership.user_id).where(PermissionsGroupMembership.group_id.in_(own_groups))
        query = base.where(or_(User.id.in_(shared), User.id == caller.id))
    else:
        query = base
    shape = (lambda u: detail_json(session, u)) if caller.is_superuser else public_json
    return _page(session, query, None, None, shape, BY_LAST_NAME)


# --------------------------------------------------------------------------------------------------
# One user
# --------------------------------------------------------------------------------------------------


def personal_user(session: Session, user_id: int, active_only: bool = False) -> User:
    user = session.get(User, user_id)
    if user is None or user.type != "personal" or (active_only and not user.is_active):
        raise NotFound()
    return user


def get_user(session: Session, caller: User, user_id: int) -> dict:
    target = personal_user(session, user_id)
    if caller.id == target.id or caller.is_superuser or permissions.is_group_manager(session, caller):
        return detail_json(session, target)
    raise Forbidden()


def check_locale(locale: str | None) -> str | None:
    if locale is None:
        return None
    if not isinstance(locale, str) or not LOCALE_RE.match(locale):
        raise Invalid({"locale": LOCALE_ERROR})
    language, _, country = locale.replace("-", "_").partition("_")
    return language.lower() + ("_" + country.upper() if country else "")


def check_login_attributes(attributes: dict | None) -> dict | None:
    if attributes is None:
        return None
    if any(not isinstance(key, str) or not key.strip() for key in attributes):
        raise Invalid({"login_attributes": "nullable map from <keyword, string> to anything"})
    return attributes


def _wanted_groups(session: Session, memberships: list[dict]) -> dict[int, bool]:
    wanted: dict[int, bool] = {}
    for item in memberships:
        wanted[item["id"]] = bool(item.get("is_group_manager"))
    known = set(session.scalars(select(PermissionsGroup.id).where(PermissionsGroup.id.in_(list(wanted)))))
    unknown = sorted(set(wanted) - known)
    if unknown:
        raise Invalid({"user_group_memberships": f"There is no group with id {unknown[0]}."})
    if any(wanted.values()) and not permissions.advanced_permissions_enabled(session):
        wanted = {group_id: False for group_id in wanted}
    return wanted


def create_user(session: Session, *, email: str, first_name: str | None, last_name: str | None,
                memberships: list[dict] | None, login_attributes: dict | None, locale: str | None = None) -> User:
    if users.email_taken(session, email):
        raise Invalid({"email": EMAIL_TAKEN})
    wanted = _wanted_groups(session, memberships or [])
    user = users.create_user(session, email=email, first_name=first_name, last_name=last_name,
                             login_attributes=check_login_attributes(login_attributes), locale=check_locale(locale))
    if wanted:
        users.set_memberships(session, user, wanted)
    session.flush()
    session.refresh(user)
    return user


def update_user(session: Session, caller: User, user_id: int, changes: dict) -> dict:
    """The user or a superuser update details; superusers change groups and superuser status; a
    group manager only adds and removes members of the groups they manage."""
    target = personal_user(session, user_id, active_only=True)
    is_self = caller.id == target.id
    manager = not caller.is_superuser and permissions.is_group_manager(session, caller)
    if not (is_self or caller.is_superuser or manager):
        raise Forbidden()
    if is_self or caller.is_superuser:
        _update_details(session, caller, target, changes)
    memberships = changes.get("user_group_memberships")
    if caller.is_superuser:
        if memberships is not None:
            wanted = _wanted_groups(session, memberships)
            if "is_superuser" in changes and changes["is_superuser"] is not None \
                    and changes["is_superuser"] != (ADMIN_GROUP_ID in wanted):
                raise Invalid({"is_superuser": "is_superuser must agree with membership in the Administrators group."})
            users.set_memberships(session, target, wanted)
        elif changes.get("is_superuser") is not None:
            _set_superuser(session, target, changes["is_superuser"])
    else:
        # is_superuser from a non-superuser is ignored, as Metabase ignores it.
        if memberships is not None:
            _manager_membership_change(session, caller, target, memberships)
    session.commit()
    events.emit("user-update", caller.id, target)
    session.refresh(target)
    return detail_json(session, target)


def _set_superuser(session: Session, target: User, value: bool) -> None:
    if not value and target.is_superuser:
        row = users.membership(session, target.id, ADMIN_GROUP_ID)
        if row is not None:
            users.remove_membership(session, row)
            return
    users.set_superuser(session, target, value)


def _update_details(session: Session, caller: User, target: User, changes: dict) -> None:
    old_name = (target.first_name, target.last_name)
    if changes.get("email") is not None and changes["email"].strip().lower() != target.email:
        if target.sso_source and not caller.is_superuser:
            raise Forbidden()
        if users.email_taken(session, changes["email"], exclude_id=target.id):
            raise Invalid({"email": EMAIL_TAKEN_UPDATE})
        target.email = changes["email"].strip().lower()
    for key in ("first_name", "last_name"):
        if key in changes:
            setattr(target, key, changes[key])
    if "locale" in changes:
        target.locale = check_locale(changes["locale"])
    if "login_attributes" in changes and caller.is_superuser:
        # Only superusers set attributes (they drive row-level rules); others' values are ignored.
        target.login_attributes = check_login_attributes(changes["login_attributes"])
    if ("first_name" in changes or "last_name" in changes) and (old_name != (target.first_name, target.last_name)):
        collection = session.scalar(select(Collection).where(Collection.personal_owner_id == target.id))
        if collection is not None:
            collection.name = users.personal_collection_name(target)


def _manager_membership_change(session: Session, caller: User, target: User, memberships: list[dict]) -> None:
    """A change a group manager may make: memberships of managed groups only, never manager flags."""
    managed = permissions.managed_group_ids(session, caller)
    wanted = _wanted_groups(session, memberships)
    current = {m.group_id: m.is_group_manager for m in target.memberships}
    changed = {g for g in set(wanted) | set(current) if (g in wanted) != (g in current)}
    if changed - managed or ADMIN_GROUP_ID in changed:
        raise Forbidden()
    if any(wanted.get(g, False) != current.get(g, False) for g in set(wanted) & set(current)):
        raise Forbidden()
    for group_id in changed:
        if group_id in wanted:
            users.add_membership(session, target, group_id, False)
        else:
            users.remove_membership(session, users.membership(session, target.id, group_id))
    session.expire(target, ["memberships"])


def set_modal_seen(session: Session, caller: User, user_id: int, modal: str) -> dict:
    target = personal_user(session, user_id)
    if caller.id != target.id and not caller.is_superuser:
        raise Forbidden()
    column = MODALS.get(modal)
    if column is None:
        raise Invalid(f"Unrecognized modal: {modal}")
    setattr(target, column, False)
    session.commit()
    return {"success": True}


def change_password(session: Session, caller: User, user_id: int, password: str, old_password: str | None,
                    hasher, check_rules) -> str | None:
    """Set a new password and end every session of the user; returns a new session token when the
    user changed their own password (so they stay logged in), else None."""
    from core.http import auth

    target = personal_user(session, user_id, active_only=True)
    is_self = caller.id == target.id
    if not is_self and not caller.is_superuser:
        raise Forbidden()
    if not caller.is_superuser:
        if not old_password or not hasher.verify(target.password_hash, old_password):
            raise Invalid({"old_password": "Invalid password"})
    check_rules(password, "password")
    target.password_hash = hasher.hash(password)
    target.reset_token = None
    auth.end_all_sessions(session, target.id)
    token = auth.create_session(session, target) if is_self else None
    session.commit()
    events.emit("user-password-change", caller.id, target)
    return token


def deactivate(session: Session, caller: User, user_id: int) -> dict:
    target = personal_user(session, user_id)
    if target.is_superuser and target.is_active and users.active_admin_count(session) <= 1:
        raise Invalid("You cannot deactivate the last administrator.")
    users.deactivate(session, target)
    session.commit()
    events.emit("user-deactivated", caller.id, target)
    return {"success": True}


def reactivate(session: Session, caller: User, user_id: int) -> dict:
    target = personal_user(session, user_id)
    if target.is_active:
        raise ActiveUser()
    target.is_active = True
    # Administrators come back as ordinary users, as in Metabase: rights are granted again deliberately.
    admin_row = users.membership(session, target.id, ADMIN_GROUP_ID)
    if admin_row is not None:
        session.delete(admin_row)
    target.is_superuser = False
    session.commit()
    events.emit("user-reactivated", caller.id, target)
    session.refresh(target)
    return detail_json(session, target)
