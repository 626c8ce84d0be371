"""A dashboard by id for a caller: absent is 404, a collection the caller cannot read (or write) is 403.
Every service of this plugin starts here, so the rule is written once."""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb import rows
from core.appdb.models import User
from core.http.errors import Forbidden, check_404
from core.policy import permissions

from .models import Dashboard

# Ids past the column's range cannot exist; PostgreSQL would reject the lookup itself.
MAX_ID = 2**31


def get_dashboard(session: Session, dashboard_id: int) -> Dashboard:
    return check_404(rows.get(session, Dashboard, dashboard_id) if dashboard_id < MAX_ID else None)


def readable_dashboard(session: Session, user: User, dashboard_id: int) -> Dashboard:
    dashboard = get_dashboard(session, dashboard_id)
    if not permissions.can_read_item(session, user, dashboard.collection_id):
        raise Forbidden()
    return dashboard


def writable_dashboard(session: Session, user: User, dashboard_id: int) -> Dashboard:
    dashboard = get_dashboard(session, dashboard_id)
    if not permissions.can_write_item(session, user, dashboard.collection_id):
        raise Forbidden()
    return dashboard
