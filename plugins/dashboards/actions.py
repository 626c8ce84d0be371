"""Dashcard buttons: POST/GET /api/dashboard/:id/dashcard/:dcid/execute run or prefill the action a
dashcard carries, and GET /api/dashboard/:id shows it as the dashcard's `action`. The actions plugin does
the work through the ActionRunner it gives the action_runner hook (this plugin never imports it); it
checks the action's own rights. Without it the routes answer 404 and dashcards show no action.

The dashboard must be readable and hold the dashcard, and the dashcard must carry an action (404
otherwise: no route to another dashboard's buttons). Values sent under a dashboard parameter id reach
the action through the dashcard's parameter_mappings (the runner maps them)."""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from core.appdb.models import User
from core.assembly.records import ActionRunner
from core.http.auth import tessera
from core.http.errors import NoEndpoint, NotFound

from .lookup import readable_dashboard
from .models import DashboardCard


def runner() -> ActionRunner | None:
    return tessera().pm.hook.action_runner()


def _dashcard(session: Session, user: User, dashboard_id: int, dashcard_id: int) -> tuple[ActionRunner, DashboardCard]:
    found = runner()
    if found is None:
        raise NoEndpoint()
    dashboard = readable_dashboard(session, user, dashboard_id)
    dashcard = session.get(DashboardCard, dashcard_id) if dashcard_id < 2**31 else None
    if dashcard is None or dashcard.dashboard_id != dashboard.id or dashcard.action_id is None:
        raise NotFound()
    return found, dashcard


def execute(session: Session, user: User, dashboard_id: int, dashcard_id: int, parameters: dict | None) -> Any:
    found, dashcard = _dashcard(session, user, dashboard_id, dashcard_id)
    return found.execute(session, user, dashcard.action_id, parameters or {}, dashcard.parameter_mappings or [])


def prefill(session: Session, user: User, dashboard_id: int, dashcard_id: int, parameters: Any) -> dict:
    found, dashcard = _dashcard(session, user, dashboard_id, dashcard_id)
    return found.prefill(session, user, dashcard.action_id, parameters)


def hydrate(session: Session, user: User, dashcards: list[dict]) -> None:
    """Fill each dashcard's `action` (None while the actions plugin is absent or the action is gone)."""
    ids = [d["action_id"] for d in dashcards if d.get("action_id") is not None]
    found = runner() if ids else None
    if found is None:
        return
    actions = found.describe(session, user, ids)
    for dashcard in dashcards:
        if dashcard.get("action_id") is not None:
            dashcard["action"] = actions.get(dashcard["action_id"])
