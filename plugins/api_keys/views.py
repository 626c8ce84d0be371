"""/api/api-key (superusers only)."""
from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.types import NameStr, PositiveInt

from . import service

api_key_api = Api("api_key", __name__, url_prefix="/api-key", auth="superuser")


class Id(Params):
    id: PositiveInt


class NewKey(Params):
    group_id: PositiveInt
    name: NameStr


class KeyUpdate(Params):
    group_id: PositiveInt | None = None
    name: NameStr | None = None


@api_key_api.get("/")
def list_keys():
    """Every API key, masked."""
    return service.list_keys(db.session())


@api_key_api.get("/count")
def count_keys():
    """How many API keys exist."""
    return service.count_keys(db.session())


@api_key_api.post("/", body=NewKey)
def create_key(body: NewKey):
    """Create a key and its user; the response holds the key itself (unmasked_key), shown only now."""
    return service.create_key(db.session(), auth.require_user(), body.name, body.group_id)


@api_key_api.put("/<id>", path=Id, body=KeyUpdate)
def update_key(path: Id, body: KeyUpdate):
    """Rename a key or move it to another group."""
    return service.update_key(db.session(), auth.require_user(), path.id, body.name, body.group_id)


@api_key_api.put("/<id>/regenerate", path=Id)
def regenerate_key(path: Id):
    """Replace a key's value; the old value stops working at once."""
    return service.regenerate_key(db.session(), auth.require_user(), path.id)


@api_key_api.delete("/<id>", path=Id, status=204)
def delete_key(path: Id):
    """Delete a key; its user is deactivated."""
    service.delete_key(db.session(), auth.require_user(), path.id)
