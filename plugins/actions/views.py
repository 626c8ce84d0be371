"""/api/action: parse, call one service function, return what it gives."""
from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import execution, service
from . import schemas as s

action_api = Api("action", __name__, url_prefix="/action")


@action_api.get("/", query=s.ListQuery)
def list_actions(query):
    """The unarchived actions of the models the caller may read (of one model with model-id)."""
    return service.list_actions(db.session(), auth.require_user(), query.model_id)


@action_api.get("/public", auth="superuser")
def public_actions():
    """Actions with a public link (administrators; public sharing must be on)."""
    return service.public_actions(db.session(), auth.require_user())


@action_api.get("/<id>", path=s.ActionId)
def get_action(path):
    """One action, as its model's readers see it."""
    return service.get(db.session(), auth.require_user(), path.id)


@action_api.get("/<id>/execute", path=s.ActionId, query=s.PrefillQuery)
def prefill(path, query):
    """The current values of the row an implicit update or delete names by its primary key."""
    return execution.prefill_by_id(db.session(), auth.require_user(), path.id, query.parameters)


@action_api.post("/", body=s.ActionCreate)
def create_action(body):
    """Create a query, HTTP or implicit action on a model (write access to the model's collection)."""
    return service.create(db.session(), auth.require_user(), s.fields_sent(body))


@action_api.post("/<id>/execute", path=s.ActionId, body=s.Execute)
def execute(path, body):
    """Run the action with {parameter id: value}."""
    return execution.execute_by_id(db.session(), auth.require_user(), path.id, body.parameters)


@action_api.post("/<id>/public_link", path=s.ActionId, auth="superuser")
def publish(path):
    """The action's public UUID, made on the first call (administrators; public sharing on)."""
    return service.publish(db.session(), auth.require_user(), path.id)


@action_api.put("/<id>", path=s.ActionId, body=s.ActionUpdate)
def update_action(path, body):
    """Change an action (write access to its model's collection)."""
    return service.update(db.session(), auth.require_user(), path.id, s.fields_sent(body))


@action_api.delete("/<id>", path=s.ActionId, status=204)
def delete_action(path):
    """Delete an action."""
    service.delete(db.session(), auth.require_user(), path.id)


@action_api.delete("/<id>/public_link", path=s.ActionId, auth="superuser", status=204)
def unpublish(path):
    """Remove the action's public link."""
    service.unpublish(db.session(), auth.require_user(), path.id)
