"""/api/user endpoints."""
from flask import request

from core.appdb import db
from core.assembly import events
from core.http import auth
from core.http.api import Api, Params, json_response
from core.http.types import (
    BoolStr,
    Email,
    Enum,
    IntGreaterThanOrEqualToZero,
    Map,
    NameStr,
    NonBlankStr,
    PositiveInt,
    Str,
)

from . import invites, service, shapes

user_api = Api("user", __name__, url_prefix="/user")


class Id(Params):
    id: PositiveInt


class ModalPath(Params):
    id: PositiveInt
    modal: NonBlankStr


class ListQuery(Params):
    status: Enum("active", "deactivated", "all", nullable=True) = None
    query: Str | None = None
    group_id: PositiveInt | None = None
    include_deactivated: BoolStr | None = None
    limit: IntGreaterThanOrEqualToZero | None = None
    offset: IntGreaterThanOrEqualToZero | None = None


class Membership(Params):
    id: PositiveInt
    is_group_manager: bool | None = None


class NewUser(Params):
    first_name: NameStr | None = None
    last_name: NameStr | None = None
    email: Email
    user_group_memberships: list[Membership] | None = None
    login_attributes: Map | None = None
    locale: Str | None = None


class UserUpdate(Params):
    email: Email | None = None
    first_name: NameStr | None = None
    last_name: NameStr | None = None
    is_group_manager: bool | None = None
    locale: Str | None = None
    user_group_memberships: list[Membership] | None = None
    is_superuser: bool | None = None
    login_attributes: Map | None = None


class PasswordChange(Params):
    password: Str
    old_password: Str | None = None


def _registry():
    return auth.tessera().settings


@user_api.get("/", query=ListQuery)
def list_users(query: ListQuery):
    """Users, paged: {data, total, limit, offset}."""
    return service.list_users(db.session(), auth.require_user(), status=query.status,
                              include_deactivated=query.include_deactivated, text=query.query,
                              group_id=query.group_id, limit=query.limit, offset=query.offset)


@user_api.get("/current")
def current():
    """The calling user, with groups and personal collection."""
    return shapes.current_user_json(db.session(), auth.require_user())


@user_api.get("/recipients")
def recipients():
    """Active users the caller may send to, by the user-visibility setting."""
    session = db.session()
    return service.recipients(session, auth.require_user(), _registry().get(session, "user-visibility"))


@user_api.get("/<id>", path=Id)
def get_user(path: Id):
    """One user (the user, a superuser or a group manager)."""
    return service.get_user(db.session(), auth.require_user(), path.id)


@user_api.post("/", body=NewUser, auth="superuser")
def create_user(body: NewUser):
    """Create a user (and e-mail an invitation when e-mail is configured)."""
    session = db.session()
    caller = auth.require_user()
    user = service.create_user(session, email=body.email, first_name=body.first_name, last_name=body.last_name,
                               memberships=[m.model_dump() for m in body.user_group_memberships or []],
                               login_attributes=body.login_attributes, locale=body.locale)
    session.commit()
    events.emit("user-invited", caller.id, user)
    invites.invite_if_configured(session, _registry(), caller, user, request.host_url)
    return shapes.detail_json(session, user)


@user_api.post("/<id>/send_invite", path=Id, auth="superuser")
def send_invite(path: Id):
    """E-mail the user a new invitation; 400 when e-mail is not configured or sending fails."""
    session = db.session()
    user = service.personal_user(session, path.id, active_only=True)
    invites.send_invite(session, _registry(), auth.require_user(), user, request.host_url)
    return {"success": True}


@user_api.put("/<id>", path=Id, body=UserUpdate)
def update_user(path: Id, body: UserUpdate):
    """Update a user's details, groups and superuser status."""
    changes = body.model_dump(exclude_unset=True)
    if body.user_group_memberships is not None:
        changes["user_group_memberships"] = [m.model_dump() for m in body.user_group_memberships]
    return service.update_user(db.session(), auth.require_user(), path.id, changes)


@user_api.put("/<id>/modal/<modal>", path=ModalPath)
def modal_seen(path: ModalPath):
    """Record that the user has seen an introduction (qbnewb or datasetnewb)."""
    return service.set_modal_seen(db.session(), auth.require_user(), path.id, path.modal)


@user_api.put("/<id>/password", path=Id, body=PasswordChange)
def change_password(path: Id, body: PasswordChange):
    """Change a password (the user, with old_password, or a superuser); ends the user's sessions."""
    state = auth.tessera()
    token = service.change_password(db.session(), auth.require_user(), path.id, body.password, body.old_password,
                                    state.hasher, auth.check_password_rules)
    if token is None:
        return {"success": True}
    return auth.set_session_cookies(json_response({"success": True, "session_id": token}), token)


@user_api.put("/<id>/reactivate", path=Id, auth="superuser")
def reactivate(path: Id):
    """Reactivate a deactivated user."""
    return service.reactivate(db.session(), auth.require_user(), path.id)


@user_api.delete("/<id>", path=Id, auth="superuser")
def deactivate(path: Id):
    """Deactivate a user: the record is kept, the user's sessions end."""
    return service.deactivate(db.session(), auth.require_user(), path.id)
