"""/api/channel endpoints (thin: parse, one service call, dump). Writes and tests are superuser-only."""
from __future__ import annotations

from typing import Any

from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.types import Bool, BoolStr, Map, NameStr, NonBlankDescriptionStr, PositiveInt

from . import channel_service as service

channel_api = Api("channels", __name__, url_prefix="/channel")


class ChannelId(Params):
    id: PositiveInt


class ListQuery(Params):
    include_inactive: BoolStr | None = None


class NewChannel(Params):
    name: NameStr
    description: NonBlankDescriptionStr | None = None
    type: Any
    active: Bool | None = None
    details: Map


class ChannelChanges(Params):
    name: NameStr | None = None
    description: NonBlankDescriptionStr | None = None
    type: Any = None
    active: Bool | None = None
    details: Map | None = None


class TestChannel(Params):
    type: Any
    details: Map


@channel_api.get("/", query=ListQuery)
def list_channels(query: ListQuery):
    """Active webhook destinations (all with include_inactive); details only for administrators."""
    return service.list_channels(db.session(), auth.require_user(), bool(query.include_inactive))


@channel_api.get("/<id>", path=ChannelId)
def get_channel(path: ChannelId):
    """One destination; details only for administrators."""
    return service.read_channel(db.session(), auth.require_user(), path.id)


@channel_api.post("/", body=NewChannel)
def create_channel(body: NewChannel):
    """Create a destination whose URL the outbound guard allows."""
    return service.create(db.session(), auth.require_superuser(), auth.tessera().settings, body.model_dump())


@channel_api.put("/<id>", path=ChannelId, body=ChannelChanges)
def update_channel(path: ChannelId, body: ChannelChanges):
    """Rename, describe, (de)activate or re-point a destination."""
    changes = {key: getattr(body, key) for key in body.model_fields_set}
    return service.update(db.session(), auth.require_superuser(), auth.tessera().settings, path.id, changes)


@channel_api.post("/test", body=TestChannel)
def test_channel(body: TestChannel):
    """Post a sample payload to the destination now; a 400 with the error when it fails."""
    return service.send_test(db.session(), auth.require_superuser(), auth.tessera().settings, body.model_dump())
