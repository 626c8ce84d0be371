"""/api/alert endpoints (thin: parse, one service call, dump): Metabase's alerts over the pulse tables."""
from __future__ import annotations

from core.appdb import db
from core.http import auth
from core.http.api import Api, Params, Shape, as_sent
from core.http.types import Bool, BoolStr, Enum, PositiveInt

from . import alert_service as service
from . import scheduling
from .conditions import CONDITIONS
from .schemas import Channels

alert_api = Api("alerts", __name__, url_prefix="/alert")


class AlertCard(Shape):
    """The alert's card as clients send it (a GET round trip adds keys, which are ignored)."""

    id: PositiveInt
    include_csv: Bool | None = None
    include_xls: Bool | None = None


class AlertId(Params):
    id: PositiveInt


class ListQuery(Params):
    archived: BoolStr | None = None
    user_id: PositiveInt | None = None


class ArchivedQuery(Params):
    archived: BoolStr | None = None


class NewAlert(Params):
    alert_condition: Enum(*CONDITIONS)
    card: as_sent(AlertCard)
    channels: Channels
    alert_first_only: Bool
    alert_above_goal: Bool | None = None


class AlertChanges(Params):
    alert_condition: Enum(*CONDITIONS, nullable=True) = None
    card: as_sent(AlertCard) | None = None
    channels: Channels | None = None
    alert_first_only: Bool | None = None
    alert_above_goal: Bool | None = None
    archived: Bool | None = None


@alert_api.get("/", query=ListQuery)
def list_alerts(query: ListQuery):
    """Alerts the caller created or receives (an administrator: all, or those of user_id)."""
    return service.list_alerts(db.session(), auth.require_user(), bool(query.archived), query.user_id)


@alert_api.get("/<id>", path=AlertId)
def get_alert(path: AlertId):
    """One alert, for its creator, its recipients and administrators."""
    return service.read_alert(db.session(), auth.require_user(), path.id)


@alert_api.get("/question/<id>", path=AlertId, query=ArchivedQuery)
def question_alerts(path: AlertId, query: ArchivedQuery):
    """The alerts on a question (an administrator's: all of them; others': their own)."""
    user = auth.require_user()
    return service.list_alerts(db.session(), user, bool(query.archived), None, card_id=path.id)


@alert_api.post("/", body=NewAlert)
def create_alert(body: NewAlert):
    """Create an alert on a question the caller may read; its channels' schedules become jobs."""
    return service.create(db.session(), auth.require_user(), body.model_dump(), on_change=scheduling.reschedule)


@alert_api.put("/<id>", path=AlertId, body=AlertChanges)
def update_alert(path: AlertId, body: AlertChanges):
    """Change an alert's condition, card, channels or archived state."""
    changes = {key: getattr(body, key) for key in body.model_fields_set}
    return service.update(db.session(), auth.require_user(), path.id, changes, on_change=scheduling.reschedule)


@alert_api.delete("/<id>/subscription", path=AlertId, status=204)
def unsubscribe(path: AlertId):
    """The caller stops receiving the alert."""
    service.unsubscribe(db.session(), auth.require_user(), path.id)
