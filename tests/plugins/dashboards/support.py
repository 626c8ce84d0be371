"""Dashboards written straight into the app DB (real rows, as the dashboard API would store them), for
the tests of dashcard queries, filter values and metadata and of the dashboards' place elsewhere
(collections, search, bookmarks, cards); and the card helpers of tests/plugins/cards/fixtures.py."""
from __future__ import annotations

from core.appdb.models import Card
from core.content import revisions
from plugins.dashboards.models import Dashboard, DashboardCard, DashboardCardSeries
from tests.plugins.cards.fixtures import card_body, mbql_query, native_query  # noqa: F401


def store(app):
    return app.extensions["tessera"].db


def make_dashboard(app, creator_id: int, parameters: list | None = None, dashcards: list | None = None,
                   collection_id: int | None = None, name: str = "Dashboard", **columns) -> dict:
    """A dashboard with dashcards ({card_id, parameter_mappings?, series?: [card ids], dashboard_tab_id?,
    visualization_settings?}) and any other Dashboard `columns`.
    Returns {"id": dashboard id, "dashcards": [dashcard ids]}."""
    with app.app_context(), store(app).session() as session:
        dashboard = Dashboard(name=name, creator_id=creator_id, parameters=parameters or [],
                              collection_id=collection_id, **columns)
        session.add(dashboard)
        session.flush()
        ids = []
        for position, spec in enumerate(dashcards or []):
            dashcard = DashboardCard(dashboard_id=dashboard.id, card_id=spec.get("card_id"), row=position * 4,
                                     parameter_mappings=spec.get("parameter_mappings") or [],
                                     visualization_settings=spec.get("visualization_settings") or {},
                                     dashboard_tab_id=spec.get("dashboard_tab_id"))
            session.add(dashcard)
            session.flush()
            for i, series_id in enumerate(spec.get("series") or []):
                session.add(DashboardCardSeries(dashboardcard_id=dashcard.id, card_id=series_id, position=i))
            ids.append(dashcard.id)
        return {"id": dashboard.id, "dashcards": ids}


def add_dashboard(app, name, collection_id=None, *, creator_id=1, cards=(), series=(), edited_by=None,
                  **columns) -> int:
    """A dashboard with one dashcard per id in `cards` (a card may repeat) and, on its first dashcard,
    the series cards `series`; `edited_by` records a revision by that user id."""
    dashcards = [{"card_id": card_id, "series": series if i == 0 else ()} for i, card_id in enumerate(cards)]
    made = make_dashboard(app, creator_id, dashcards=dashcards, collection_id=collection_id, name=name, **columns)
    if edited_by is not None:
        with app.app_context(), store(app).session() as session:
            revisions.record(session, "Dashboard", made["id"], edited_by, {"name": name}, is_creation=True)
    return made["id"]


def add_card(app, name, collection_id=None, creator_id=1, collection_position=None) -> int:
    with app.app_context(), store(app).session() as session:
        card = Card(name=name, display="table", dataset_query={"type": "query", "database": 1}, type="question",
                    collection_id=collection_id, creator_id=creator_id, collection_position=collection_position)
        session.add(card)
        session.flush()
        return card.id


def dashboard_row(app, dashboard_id) -> dict:
    with app.app_context(), store(app).session() as session:
        d = session.get(Dashboard, dashboard_id)
        return {"archived": d.archived, "archived_directly": d.archived_directly}


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
