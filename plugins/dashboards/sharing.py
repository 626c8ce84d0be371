"""A dashboard's public link and the administrators' lists of shared and embeddable dashboards, as the
cards plugin has them for cards (guards in core.policy.sharing). The routes that serve a shared
dashboard belong to the public-sharing area, not here."""
from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import User, utcnow
from core.http.errors import Archived, Forbidden, NotFound
from core.policy import sharing

from .models import Dashboard
from .service import get_dashboard


def _require_superuser(user: User) -> None:
    if not user.is_superuser:
        raise Forbidden()


def public_dashboards(session: Session, user: User) -> list[dict]:
    _require_superuser(user)
    rows = session.scalars(select(Dashboard).where(Dashboard.public_uuid.is_not(None), Dashboard.archived.is_(False))
                           .order_by(Dashboard.id))
    return [{"id": d.id, "name": d.name, "public_uuid": d.public_uuid} for d in rows]


def embeddable_dashboards(session: Session, user: User) -> list[dict]:
    _require_superuser(user)
    rows = session.scalars(select(Dashboard).where(Dashboard.enable_embedding.is_(True),
                                                   Dashboard.archived.is_(False)).order_by(Dashboard.id))
    return [{"id": d.id, "name": d.name} for d in rows]


def create_public_link(session: Session, user: User, dashboard_id: int) -> dict:
    """The dashboard's public UUID, made on the first call (Metabase returns the existing one after)."""
    _require_superuser(user)
    sharing.check_public_sharing(session)
    dashboard = get_dashboard(session, dashboard_id)
    if dashboard.archived:
        raise Archived()
    if dashboard.public_uuid is None:
        dashboard.public_uuid = str(uuid.uuid4())
        dashboard.made_public_by_id = user.id
        dashboard.initially_published_at = dashboard.initially_published_at or utcnow()
        session.commit()
    return {"uuid": dashboard.public_uuid}


def delete_public_link(session: Session, user: User, dashboard_id: int) -> None:
    _require_superuser(user)
    sharing.check_public_sharing(session)
    dashboard = get_dashboard(session, dashboard_id)
    if dashboard.public_uuid is None:
        raise NotFound()
    dashboard.public_uuid = None
    dashboard.made_public_by_id = None
    session.commit()
