"""POST /api/dashboard/:from-dashboard-id/copy."""
from __future__ import annotations

from core.appdb import db
from core.http import auth
from core.http.api import Params
from core.http.types import Bool, DescriptionStr, NameStr, PositiveInt

from . import copy as service
from .blueprint import dashboard_api


class FromDashboard(Params):
    from_dashboard_id: PositiveInt


class CopyBody(Params):
    name: NameStr | None = None
    description: DescriptionStr | None = None
    collection_id: PositiveInt | None = None
    collection_position: PositiveInt | None = None
    is_deep_copy: Bool | None = None


@dashboard_api.post("/<from_dashboard_id>/copy", path=FromDashboard, body=CopyBody)
def copy_dashboard(path: FromDashboard, body: CopyBody):
    """Copy a dashboard into a collection: its tabs, dashcards and filters, on the same cards or (is_deep_copy)
    on copies of the cards the caller can read; the others are listed in `uncopied`."""
    session = db.session()
    user = auth.require_user()
    return service.copy_json(session, user, path.from_dashboard_id, name=body.name, description=body.description,
                             collection_id=body.collection_id, collection_position=body.collection_position,
                             deep=bool(body.is_deep_copy))
