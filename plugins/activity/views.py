"""/api/activity endpoints: parse, call one service function, return what it gives."""
from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import service

activity_api = Api("activity", __name__, url_prefix="/activity")


@activity_api.get("/recent_views")
def recent_views():
    """The cards, models, metrics and dashboards the caller ran or opened lately, newest first."""
    return {"recent_views": service.recent_views(db.session(), auth.require_user())}


@activity_api.get("/popular_items")
def popular_items():
    """The most viewed cards, models, metrics and dashboards the caller may read."""
    return {"popular_items": service.popular_items(db.session(), auth.require_user())}
