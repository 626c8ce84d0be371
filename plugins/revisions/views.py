"""/api/revision endpoints (Metabase's revisions/api.clj)."""
from __future__ import annotations

from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.types import NonBlankStr, PositiveInt

from . import service

revision_api = Api("revision", __name__, url_prefix="/revision")


class EntityRef(Params):
    entity: NonBlankStr
    id: PositiveInt


class Revert(EntityRef):
    revision_id: PositiveInt


@revision_api.get("/", query=EntityRef)
def list_revisions(query: EntityRef):
    """The object's revisions, newest first, each with its diff from the one before and a description."""
    return service.revisions(db.session(), auth.require_user(), auth.tessera().revisables, query.entity, query.id)


@revision_api.get("/<entity>/<id>", path=EntityRef)
def entity_revisions(path: EntityRef):
    """The object's revisions, as GET /api/revision?entity=&id=."""
    return service.revisions(db.session(), auth.require_user(), auth.tessera().revisables, path.entity, path.id)


@revision_api.post("/revert", body=Revert)
def revert(body: Revert):
    """Put the object back in the state of one of its revisions; returns the new revision (is_reversion)."""
    return service.revert(db.session(), auth.require_user(), auth.tessera().revisables, body.entity, body.id,
                          body.revision_id)
