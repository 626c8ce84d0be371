"""/api/setting (administrators)."""
from typing import Any

from pydantic import RootModel

from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.types import NonBlankStr

from . import service

setting_api = Api("setting", __name__, url_prefix="/setting", auth="superuser")


class Key(Params):
    key: NonBlankStr


class Value(Params):
    value: Any = None


class Values(RootModel[dict[str, Any]]):
    pass


@setting_api.get("/")
def list_settings():
    """Every setting with its value, default and environment override."""
    return service.list_settings(db.session(), auth.tessera().settings)


@setting_api.put("/", body=Values, status=204)
def update_settings(body: Values):
    """Change several settings at once, in one transaction."""
    service.update_many(db.session(), auth.tessera().settings, body.root)


@setting_api.get("/<key>", path=Key)
def get_setting(path: Key):
    """One setting's value, bare."""
    return auth.tessera().settings.get(db.session(), path.key)


@setting_api.put("/<key>", path=Key, body=Value, status=204)
def put_setting(path: Key, body: Value):
    """Change one setting; null restores the default."""
    service.update_many(db.session(), auth.tessera().settings, {path.key: body.value})
