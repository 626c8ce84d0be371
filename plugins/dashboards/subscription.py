"""A dashboard as a subscription sends it (the dashboard_content hook): its dashcards in reading order,
each saved card with the parameters the subscription's filter values give it through the dashcard's
mappings (queries.resolve_parameters, as the dashcard query endpoint does), text cards with their text."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.assembly.records import DashboardContent, DashboardPart

from .models import Dashboard, DashboardCard, DashboardTab
from .queries import resolve_parameters

TEXT_DISPLAYS = ("text", "heading")


def _values(dashboard: Dashboard, given) -> list[dict]:
    """The subscription's parameters that the dashboard still declares and that carry a value."""
    declared = {p.get("id") for p in dashboard.parameters or [] if isinstance(p, dict)}
    out = []
    for param in given or []:
        if not isinstance(param, dict) or param.get("id") not in declared:
            continue
        value = param.get("value", param.get("default"))
        if value is not None:
            out.append({"id": param["id"], "value": value,
                        **({"type": param["type"]} if isinstance(param.get("type"), str) else {})})
    return out


def content(session: Session, dashboard_id: int, parameters) -> DashboardContent | None:
    dashboard = session.get(Dashboard, dashboard_id)
    if dashboard is None or dashboard.archived:
        return None
    tabs = {t.id: t.position for t in session.scalars(select(DashboardTab).where(DashboardTab.dashboard_id == dashboard_id))}
    dashcards = sorted(session.scalars(select(DashboardCard).where(DashboardCard.dashboard_id == dashboard_id)),
                       key=lambda d: (tabs.get(d.dashboard_tab_id, 0), d.row, d.col, d.id))
    given = _values(dashboard, parameters)
    parts = []
    for dashcard in dashcards:
        settings = dashcard.visualization_settings or {}
        if dashcard.card_id is None:
            virtual = settings.get("virtual_card") or {}
            text = settings.get("text") if virtual.get("display") in TEXT_DISPLAYS else None
            parts.append(DashboardPart(dashcard.id, None, (), text if isinstance(text, str) else None, settings))
            continue
        resolved = resolve_parameters(dashboard, dashcard, dashcard.card_id, given)
        parts.append(DashboardPart(dashcard.id, dashcard.card_id, tuple(resolved), None, settings))
    return DashboardContent(dashboard.id, dashboard.name, dashboard.collection_id, tuple(parts))
