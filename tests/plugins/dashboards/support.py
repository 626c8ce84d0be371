"""Dashboards written straight into the app DB (real rows, as the dashboard API would store them), for
the query, values and metadata tests; and the shared warehouse and card helpers."""
from __future__ import annotations

from tests.plugins.cards.fixtures import card_body, mbql_query, native_query, warehouse  # noqa: F401


def make_dashboard(app, creator_id: int, parameters: list | None = None, dashcards: list | None = None,
                   collection_id: int | None = None, name: str = "Dashboard") -> dict:
    """A dashboard with dashcards ({card_id, parameter_mappings?, series?: [card ids], dashboard_tab_id?}).
    Returns {"id": dashboard id, "dashcards": [dashcard ids]}."""
    from plugins.dashboards.models import Dashboard, DashboardCard, DashboardCardSeries

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        dashboard = Dashboard(name=name, creator_id=creator_id, parameters=parameters or [],
                              collection_id=collection_id)
        session.add(dashboard)
        session.flush()
        ids = []
        for position, spec in enumerate(dashcards or []):
            dashcard = DashboardCard(dashboard_id=dashboard.id, card_id=spec.get("card_id"), row=position,
                                     parameter_mappings=spec.get("parameter_mappings") or [],
                                     visualization_settings=spec.get("visualization_settings") or {},
                                     dashboard_tab_id=spec.get("dashboard_tab_id"))
            session.add(dashcard)
            session.flush()
            for i, series_id in enumerate(spec.get("series") or []):
                session.add(DashboardCardSeries(dashboardcard_id=dashcard.id, card_id=series_id, position=i))
            ids.append(dashcard.id)
        session.commit()
        return {"id": dashboard.id, "dashcards": ids}


def mapping(parameter_id: str, card_id: int, target: list) -> dict:
    return {"parameter_id": parameter_id, "card_id": card_id, "target": target}


def field_ref(field_id) -> list:
    return ["dimension", ["field", field_id, None]]


def block_data(admin, db_id: int) -> None:
    """All Users may no longer see the database's data."""
    graph = admin.get("/api/permissions/graph").json
    graph["groups"]["1"][str(db_id)] = {"view-data": "blocked", "create-queries": "no"}
    response = admin.put("/api/permissions/graph", json=graph)
    assert response.status_code == 200, response.json
