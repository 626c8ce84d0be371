"""/api/dashboard/:id/dashcard/:dcid/execute: a dashcard's action button. Parse, call, return."""
from core.appdb import db
from core.http import auth

from . import actions
from . import query_schemas as s
from .blueprint import dashboard_api as api


@api.get("/<dashboard_id>/dashcard/<dashcard_id>/execute", path=s.ActionDashcardPath, query=s.ActionPrefill)
def dashcard_prefill(path, query):
    """The current values of the row an implicit update or delete button names (by primary key)."""
    return actions.prefill(db.session(), auth.require_user(), path.dashboard_id, path.dashcard_id, query.parameters)


@api.post("/<dashboard_id>/dashcard/<dashcard_id>/execute", path=s.ActionDashcardPath, body=s.ActionExecute)
def dashcard_execute(path, body):
    """Run the dashcard's action with {parameter id: value}."""
    return actions.execute(db.session(), auth.require_user(), path.dashboard_id, path.dashcard_id, body.parameters)
