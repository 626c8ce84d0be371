"""/api/notification endpoints (thin: parse, one service call, dump): Metabase's notification API over
the pulse tables."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from core.appdb import db
from core.http import auth
from core.http.api import Api, Params, Shape, as_sent
from core.http.types import Bool, BoolStr, Enum, Map, PositiveInt, Str

from . import notification_service as service
from . import notifications as shapes

notification_api = Api("notifications", __name__, url_prefix="/notification")


class Recipient(Shape):
    type: Enum(shapes.USER, shapes.GROUP, shapes.RAW)
    user_id: PositiveInt | None = None
    permissions_group_id: PositiveInt | None = None
    details: Map | None = None


class Handler(Shape):
    channel_type: Enum(shapes.EMAIL, shapes.HTTP)
    channel_id: PositiveInt | None = None
    active: Bool | None = None
    recipients: Annotated[list[as_sent(Recipient)], Field(max_length=500)] | None = None


class Subscription(Shape):
    type: Enum(shapes.CRON)
    cron_schedule: Str


class NotificationId(Params):
    id: PositiveInt


class ListQuery(Params):
    creator_id: PositiveInt | None = None
    recipient_id: PositiveInt | None = None
    creator_or_recipient_id: PositiveInt | None = None
    card_id: PositiveInt | None = None
    include_inactive: BoolStr | None = None
    payload_type: Enum(*shapes.PAYLOAD_TYPES) | None = None


class NotificationBody(Params):
    payload_type: Enum(*shapes.PAYLOAD_TYPES)
    payload: Map
    handlers: Annotated[list[as_sent(Handler)], Field(min_length=1, max_length=10)]
    subscriptions: Annotated[list[as_sent(Subscription)], Field(max_length=10)] | None = None
    active: Bool | None = None


class SendBody(Params):
    handler_ids: Annotated[list[PositiveInt], Field(max_length=20)] | None = None


@notification_api.get("/", query=ListQuery)
def list_notifications(query: ListQuery):
    """Card and dashboard notifications the caller may read, filtered."""
    return service.list_notifications(db.session(), auth.require_user(), query.model_dump())


@notification_api.get("/<id>", path=NotificationId)
def get_notification(path: NotificationId):
    """One notification, for its creator, its recipients and administrators."""
    return service.read_notification(db.session(), auth.require_user(), path.id)


@notification_api.post("/", body=NotificationBody)
def create_notification(body: NotificationBody):
    """Create a card or dashboard notification; its cron becomes the scheduled job of each handler."""
    return service.create(db.session(), auth.require_user(), body.model_dump())


@notification_api.put("/<id>", path=NotificationId, body=NotificationBody)
def update_notification(path: NotificationId, body: NotificationBody):
    """Replace a notification's payload settings, handlers, subscription and active state."""
    return service.update(db.session(), auth.require_user(), path.id, body.model_dump())


@notification_api.post("/<id>/send", path=NotificationId, body=SendBody, status=204)
def send_notification(path: NotificationId, body: SendBody):
    """Send it now (only the handlers of handler_ids, when given)."""
    service.send_now(db.session(), auth.require_user(), auth.tessera().settings, path.id, body.handler_ids)


@notification_api.post("/send", body=NotificationBody, status=204)
def send_unsaved(body: NotificationBody):
    """Send an unsaved notification now (a test), as the caller."""
    service.send_unsaved(db.session(), auth.require_user(), auth.tessera().settings, body.model_dump())


@notification_api.post("/<id>/unsubscribe", path=NotificationId, status=204)
def unsubscribe(path: NotificationId):
    """The caller stops receiving the notification."""
    service.unsubscribe(db.session(), auth.require_user(), path.id)
