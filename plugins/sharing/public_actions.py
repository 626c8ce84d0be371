"""/api/public/action/:uuid and its execute: an action shared by public link, served through the "action"
Shareable the actions plugin registers (its `public_json` and `execute`; the actions plugin limits
executions per action and answers 429 with Retry-After). Sharing enabled and the UUID of an unarchived
action are checked first (plugins.sharing.public.find), as for every public object."""
from core.appdb import db
from core.http import types as t
from core.http.api import Params

from . import public
from . import schemas as s
from .public_views import public_api


class ExecuteBody(Params):
    parameters: t.Map | None = None


@public_api.get("/action/<uuid>", path=s.UuidPath)
def action(path):
    """A public action: its id, name, type, parameters and form settings only (no query, no template)."""
    return public.public_json(db.session(), "action", path.uuid)


@public_api.post("/action/<uuid>/execute", path=s.UuidPath, body=ExecuteBody)
def action_execute(path, body):
    """Run a public action with {parameter id: value}; at most 10 a second per action (then 429)."""
    session = db.session()
    kind, found = public.find(session, "action", path.uuid, "execute")
    return kind.execute(session, found, body.parameters or {})
