"""Groups and memberships: listing, the member lists, adding and removing members.

All Users (1) and Administrators (2) are fixed: they cannot be renamed or deleted, nobody leaves All
Users, and Administrators membership is superuser status (core.identity.users keeps both in step).
"""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.appdb.models import (
    ADMIN_GROUP_ID,
    ALL_USERS_GROUP_ID,
    Database,
    DataPermission,
    PermissionsGroup,
    PermissionsGroupMembership,
    User,
)
from core.assembly import events
from core.http.errors import Forbidden, Invalid, NotFound, PaymentRequired, check_404
from core.identity import users
from core.policy import permissions

MAGIC_GROUPS = {ALL_USERS_GROUP_ID: "all-internal-users", ADMIN_GROUP_ID: "admin"}
NAME_TAKEN = "A group with that name already exists."


class GroupManagersOff(PaymentRequired):
    message = ("Group managers are available only when the advanced-permissions setting is on.")


def _visible_member(query):
    return query.where(User.is_active.is_(True), User.type == "personal")


def group_json(group: PermissionsGroup, member_count: int | None = None) -> dict:
    out = {"id": group.id, "name": group.name, "entity_id": group.entity_id,
           "magic_group_type": MAGIC_GROUPS.get(group.id)}
    if member_count is not None:
        out["member_count"] = member_count
    return out


# --------------------------------------------------------------------------------------------------
# Groups
# --------------------------------------------------------------------------------------------------


def list_groups(session: Session, user: User) -> list[dict]:
    """Superusers see every group; with advanced permissions on, a manager of more than one group
    (API-SPEC, Authentication 3) sees the groups they manage."""
    if user.is_superuser:
        visible = None
    else:
        managed = permissions.managed_group_ids(session, user)
        if len(managed) < 2:
            raise Forbidden()
        visible = managed
    counts = dict(session.execute(_visible_member(
        select(PermissionsGroupMembership.group_id, func.count())
        .join(User, User.id == PermissionsGroupMembership.user_id))
        .group_by(PermissionsGroupMembership.group_id)).all())
    query = select(PermissionsGroup).order_by(func.lower(PermissionsGroup.name), PermissionsGroup.id)
    if visible is not None:
        query = query.where(PermissionsGroup.id.in_(visible))
    return [group_json(g, counts.get(g.id, 0)) for g in session.scalars(query)]


def members(session: Session, group_id: int) -> list[dict]:
    rows = session.execute(_visible_member(
        select(User, PermissionsGroupMembership).join(PermissionsGroupMembership, PermissionsGroupMembership.user_id == User.id)
        .where(PermissionsGroupMembership.group_id == group_id))
        .order_by(func.lower(User.first_name), func.lower(User.last_name), User.id)).all()
    return [{
        "user_id": u.id, "id": u.id, "first_name": u.first_name, "last_name": u.last_name, "email": u.email,
        "common_name": u.common_name, "is_superuser": u.is_superuser, "group_id": group_id,
        "membership_id": m.id, "is_group_manager": m.is_group_manager,
    } for u, m in rows]


def _group(session: Session, group_id: int) -> PermissionsGroup:
    return check_404(session.get(PermissionsGroup, group_id))


def get_group(session: Session, user: User, group_id: int) -> dict:
    if not user.is_superuser and not permissions.is_group_manager(session, user, group_id):
        raise Forbidden()  # before the lookup, so that ids of groups reveal nothing to others
    group = _group(session, group_id)
    member_list = members(session, group_id)
    return {**group_json(group, len(member_list)), "members": member_list}


def _check_name_free(session: Session, name: str, exclude_id: int | None = None) -> str:
    """Group names are unique whatever their case. Compared in Python with casefold(): SQL's lower()
    folds only ASCII on SQLite (and "ß" is "SS" only under full case folding), so "Ärzte" and
    "ärzte" passed a lower() comparison. Groups are few, so reading their names is cheap."""
    name = name.strip()
    folded = name.casefold()
    query = select(PermissionsGroup.id, PermissionsGroup.name)
    if exclude_id is not None:
        query = query.where(PermissionsGroup.id != exclude_id)
    if any(other.casefold() == folded for _, other in session.execute(query)):
        raise Invalid({"name": NAME_TAKEN})
    return name


def create_group(session: Session, user: User, name: str) -> dict:
    """A new group sees every database's data (view-data unrestricted) and may do nothing else until
    granted, as Metabase's new groups."""
    group = PermissionsGroup(name=_check_name_free(session, name))
    session.add(group)
    session.flush()
    for db_id in session.scalars(select(Database.id)):
        session.add(DataPermission(group_id=group.id, db_id=db_id, perm_type="view-data", perm_value="unrestricted"))
    _commit_or_name_taken(session)
    events.emit("group-create", user.id, group)
    return group_json(group, 0)


def _check_not_magic(group: PermissionsGroup) -> None:
    if group.id in MAGIC_GROUPS:
        raise Invalid(f"You cannot edit or delete the '{group.name}' permissions group!")


def rename_group(session: Session, user: User, group_id: int, name: str) -> dict:
    group = _group(session, group_id)
    _check_manages(session, user, group_id)
    _check_not_magic(group)
    group.name = _check_name_free(session, name, exclude_id=group.id)
    _commit_or_name_taken(session)
    events.emit("group-update", user.id, group)
    return group_json(group, len(members(session, group.id)))


def delete_group(session: Session, user: User, group_id: int) -> None:
    group = _group(session, group_id)
    _check_manages(session, user, group_id)
    _check_not_magic(group)
    name = group.name
    session.delete(group)
    session.commit()
    events.emit("group-delete", user.id, None, group_id=group_id, name=name)


def _commit_or_name_taken(session: Session) -> None:
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise Invalid({"name": NAME_TAKEN}) from None


# --------------------------------------------------------------------------------------------------
# Memberships
# --------------------------------------------------------------------------------------------------


def membership_json(row: PermissionsGroupMembership) -> dict:
    return {"membership_id": row.id, "group_id": row.group_id, "user_id": row.user_id,
            "is_group_manager": row.is_group_manager}


def membership_map(session: Session, user: User) -> dict[int, list[dict]]:
    """Every membership of active users, keyed by user id; a group manager sees their groups' only."""
    if user.is_superuser:
        visible = None
    else:
        visible = permissions.managed_group_ids(session, user)
        if not visible:
            raise Forbidden()
    query = _visible_member(select(PermissionsGroupMembership).join(User, User.id == PermissionsGroupMembership.user_id))
    if visible is not None:
        query = query.where(PermissionsGroupMembership.group_id.in_(visible))
    out: dict[int, list[dict]] = {}
    for row in session.scalars(query.order_by(PermissionsGroupMembership.user_id, PermissionsGroupMembership.group_id)):
        out.setdefault(row.user_id, []).append(membership_json(row))
    return out


def _check_manages(session: Session, user: User, group_id: int) -> None:
    if not user.is_superuser and not permissions.is_group_manager(session, user, group_id):
        raise Forbidden()


def _check_can_manage(session: Session, member: User) -> None:
    if member.is_superuser:
        raise Invalid("Administrators cannot be group managers: they manage every group already.")


def add_member(session: Session, user: User, group_id: int, user_id: int, is_group_manager: bool) -> list[dict]:
    _group(session, group_id)
    _check_manages(session, user, group_id)
    if is_group_manager and not permissions.advanced_permissions_enabled(session):
        raise GroupManagersOff()
    if group_id == ADMIN_GROUP_ID and not user.is_superuser:
        raise Forbidden()
    member = session.get(User, user_id)
    if member is None or member.type != "personal":
        raise NotFound()
    if is_group_manager:
        _check_can_manage(session, member)
    if not member.is_active:
        raise Invalid({"user_id": "The user is deactivated."})
    if users.membership(session, user_id, group_id) is not None:
        raise Invalid({"user_id": "The user is already a member of this group."})
    row = users.add_membership(session, member, group_id, is_group_manager)
    session.commit()
    events.emit("group-membership-create", user.id, row)
    return members(session, group_id)


def update_member(session: Session, user: User, membership_id: int, is_group_manager: bool) -> dict:
    """Make a member a manager of the group, or not (superusers and the group's managers)."""
    if not permissions.advanced_permissions_enabled(session):
        raise GroupManagersOff()
    row = check_404(session.get(PermissionsGroupMembership, membership_id))
    _check_manages(session, user, row.group_id)
    if is_group_manager:
        _check_can_manage(session, session.get(User, row.user_id))
    row.is_group_manager = is_group_manager
    session.commit()
    events.emit("group-membership-update", user.id, row)
    return membership_json(row)


def remove_member(session: Session, user: User, membership_id: int) -> None:
    row = check_404(session.get(PermissionsGroupMembership, membership_id))
    _check_manages(session, user, row.group_id)
    if row.group_id == ADMIN_GROUP_ID and not user.is_superuser:
        raise Forbidden()
    removed = {"group_id": row.group_id, "member_id": row.user_id}
    users.remove_membership(session, row)
    session.commit()
    events.emit("group-membership-delete", user.id, None, **removed)
