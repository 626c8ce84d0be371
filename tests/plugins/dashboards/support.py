"""Dashboards made with the ORM (real rows, as the dashboard API would write them) for the tests of the
dashboards' place elsewhere: collections, search, bookmarks, cards."""
from __future__ import annotations

from core.appdb.models import Card
from core.content import revisions
from plugins.dashboards.models import Dashboard, DashboardCard, DashboardCardSeries


def store(app):
    return app.extensions["tessera"].db


def add_dashboard(app, name, collection_id=None, *, creator_id=1, description=None, collection_position=None,
                  archived=False, archived_directly=False, cards=(), series=(), edited_by=None) -> int:
    """A dashboard with one dashcard per id in `cards` (a card may repeat) and, on its first dashcard,
    the series cards `series`; `edited_by` records a revision by that user id."""
    with app.app_context(), store(app).session() as session:
        dashboard = Dashboard(name=name, description=description, collection_id=collection_id,
                              creator_id=creator_id, collection_position=collection_position,
                              archived=archived, archived_directly=archived_directly, parameters=[])
        session.add(dashboard)
        session.flush()
        dashcards = []
        for row, card_id in enumerate(cards):
            dashcard = DashboardCard(dashboard_id=dashboard.id, card_id=card_id, row=row * 4, col=0,
                                     parameter_mappings=[], visualization_settings={})
            session.add(dashcard)
            dashcards.append(dashcard)
        session.flush()
        for position, card_id in enumerate(series):
            session.add(DashboardCardSeries(dashboardcard_id=dashcards[0].id, card_id=card_id, position=position))
        if edited_by is not None:
            revisions.record(session, "Dashboard", dashboard.id, edited_by, {"name": name}, is_creation=True)
        return dashboard.id


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
