"""/api/permissions: groups and memberships (graph endpoints are in graph_views)."""
from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.types import Bool, NameStr, PositiveInt

from . import service

permissions_api = Api("permissions", __name__, url_prefix="/permissions")


class Id(Params):
    id: PositiveInt


class GroupId(Params):
    group_id: PositiveInt


class GroupName(Params):
    name: NameStr


class NewMembership(Params):
    group_id: PositiveInt
    user_id: PositiveInt
    is_group_manager: Bool | None = None


class MembershipUpdate(Params):
    is_group_manager: Bool


@permissions_api.get("/group")
def list_groups():
    """Groups with member counts (superusers; managers of several groups see theirs)."""
    return service.list_groups(db.session(), auth.require_user())


@permissions_api.get("/group/<id>", path=Id)
def get_group(path: Id):
    """One group with its active members."""
    return service.get_group(db.session(), auth.require_user(), path.id)


@permissions_api.post("/group", body=GroupName, auth="superuser")
def create_group(body: GroupName):
    """Create a group."""
    return service.create_group(db.session(), auth.require_user(), body.name)


@permissions_api.put("/group/<group_id>", path=GroupId, body=GroupName)
def rename_group(path: GroupId, body: GroupName):
    """Rename a group (superusers and its managers; not All Users or Administrators)."""
    return service.rename_group(db.session(), auth.require_user(), path.group_id, body.name)


@permissions_api.delete("/group/<group_id>", path=GroupId, status=204)
def delete_group(path: GroupId):
    """Delete a group with its memberships and permissions (superusers and its managers; not All Users or
    Administrators)."""
    service.delete_group(db.session(), auth.require_user(), path.group_id)


@permissions_api.get("/membership")
def membership_map():
    """Memberships keyed by user id."""
    return service.membership_map(db.session(), auth.require_user())


@permissions_api.post("/membership", body=NewMembership)
def add_membership(body: NewMembership):
    """Add a user to a group; returns the group's member list."""
    return service.add_member(db.session(), auth.require_user(), body.group_id, body.user_id,
                              bool(body.is_group_manager))


@permissions_api.put("/membership/<id>", path=Id, body=MembershipUpdate)
def update_membership(path: Id, body: MembershipUpdate):
    """Make a member a group manager, or not."""
    return service.update_member(db.session(), auth.require_user(), path.id, body.is_group_manager)


@permissions_api.delete("/membership/<id>", path=Id, status=204)
def remove_membership(path: Id):
    """Remove a user from a group."""
    service.remove_member(db.session(), auth.require_user(), path.id)
