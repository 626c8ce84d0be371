"""A dashboard's public link and the administrators' lists of shared and embeddable dashboards: the
rules are core.policy.sharing's, as for cards. The routes that serve a shared dashboard belong to the
public-sharing area, not here."""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb.models import User
from core.policy import sharing

from .lookup import get_dashboard
from .models import Dashboard


def public_dashboards(session: Session, user: User) -> list[dict]:
    return sharing.public_items(session, user, Dashboard)


def embeddable_dashboards(session: Session, user: User) -> list[dict]:
    return sharing.embeddable_items(session, user, Dashboard)


def create_public_link(session: Session, user: User, dashboard_id: int) -> dict:
    return sharing.publish(session, user, lambda: get_dashboard(session, dashboard_id))


def delete_public_link(session: Session, user: User, dashboard_id: int) -> None:
    sharing.unpublish(session, user, lambda: get_dashboard(session, dashboard_id))
