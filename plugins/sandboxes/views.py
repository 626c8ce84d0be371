"""/api/mt/gtap (sandboxes) and /api/mt/user (user attributes), superusers only: parse, call one
service function, return what it gives."""
from core.appdb import db
from core.http.api import Api, Params
from core.http.types import Map, PositiveInt

from . import service

gtap_api = Api("gtap", __name__, url_prefix="/mt/gtap", auth="superuser")
attributes_api = Api("mt_user", __name__, url_prefix="/mt/user", auth="superuser")


class Id(Params):
    id: PositiveInt


class ListQuery(Params):
    group_id: PositiveInt | None = None
    table_id: PositiveInt | None = None


class NewSandbox(Params):
    group_id: PositiveInt
    table_id: PositiveInt
    card_id: PositiveInt | None = None
    attribute_remappings: Map | None = None


class SandboxUpdate(Params):
    card_id: PositiveInt | None = None
    attribute_remappings: Map | None = None


class Attributes(Params):
    login_attributes: Map | None = None


def _change(body: NewSandbox):
    return service.change_from(body.model_dump())


@gtap_api.get("/", query=ListQuery)
def list_sandboxes(query: ListQuery):
    """Every sandbox, or the one of a group and table when both ids are given."""
    return service.list_sandboxes(db.session(), query.group_id, query.table_id)


@gtap_api.get("/<id>", path=Id)
def get_sandbox(path: Id):
    """One sandbox."""
    return service.get_sandbox(db.session(), path.id)


@gtap_api.post("/", body=NewSandbox)
def create(body: NewSandbox):
    """Sandbox a table for a group: filtered by user attributes, or replaced by a saved question."""
    return service.create(db.session(), _change(body))


@gtap_api.post("/validate", body=NewSandbox, status=204)
def validate(body: NewSandbox):
    """400 with the reason when the sandbox could not be applied; nothing is stored."""
    service.validate(db.session(), _change(body))


@gtap_api.put("/<id>", path=Id, body=SandboxUpdate)
def update(path: Id, body: SandboxUpdate):
    """Change a sandbox's question and attribute remappings."""
    return service.update(db.session(), path.id, body.model_dump(exclude_unset=True))


@gtap_api.delete("/<id>", path=Id, status=204)
def delete(path: Id):
    """Remove a sandbox."""
    service.remove(db.session(), path.id)


@attributes_api.get("/attributes")
def attribute_names():
    """The attribute names users have, for the sandbox editor."""
    return service.attribute_names(db.session())


@attributes_api.put("/<id>/attributes", path=Id, body=Attributes, status=204)
def set_attributes(path: Id, body: Attributes):
    """Replace a user's login attributes."""
    service.set_attributes(db.session(), path.id, body.login_attributes)
