"""The dashboard layout on both app-DB backends (SQLite and PostgreSQL): JSON columns compared for the
round trip, the refused PUT rolled back, revert, delete with its rows."""
from pathlib import Path

from core.testing import setup_admin
from tests.plugins.cards.fixtures import make_warehouse, register_warehouse

from .layout_helpers import dashcard, mapping, mbql_card, without_view


def test_layout_on_each_app_db(any_app):
    admin = setup_admin(any_app)
    warehouse = register_warehouse(any_app, make_warehouse(Path(any_app.config["TESSERA_DATA_DIR"])))
    cards = [mbql_card(admin, warehouse, f"C{i}") for i in range(2)]
    dash = admin.post("/api/dashboard", json={"name": "Both", "parameters": [{"id": "p", "type": "category"}]}).json
    built = admin.put(f"/api/dashboard/{dash['id']}", json={
        "tabs": [{"id": -1, "name": "A"}, {"id": -2, "name": "B"}],
        "dashcards": [dashcard(-1, cards[0]["id"], -1, series=[{"id": cards[1]["id"]}],
                               parameter_mappings=[mapping("p", cards[0]["id"], warehouse["people.age"])]),
                      dashcard(-2, None, -2, visualization_settings={"virtual_card": {"display": "text"}})]})
    assert built.status_code == 200, built.json
    before = admin.get(f"/api/dashboard/{dash['id']}").json
    revisions = len(admin.get(f"/api/dashboard/{dash['id']}/revisions").json)
    assert admin.put(f"/api/dashboard/{dash['id']}", json=before).status_code == 200
    assert len(admin.get(f"/api/dashboard/{dash['id']}/revisions").json) == revisions
    refused = admin.put(f"/api/dashboard/{dash['id']}", json={
        "name": "No", "tabs": [{"id": -5, "name": "C"}],
        "dashcards": [dashcard(-1, cards[0]["id"], -5), dashcard(-2, cards[1]["id"], -5), dashcard(-3, 999999, -5)]})
    assert refused.status_code == 404
    assert without_view(admin.get(f"/api/dashboard/{dash['id']}").json) == without_view(before)
    first = admin.get(f"/api/dashboard/{dash['id']}/revisions").json[-1]["id"]
    assert admin.post(f"/api/dashboard/{dash['id']}/revert", json={"revision_id": first}).status_code == 200
    reverted = admin.get(f"/api/dashboard/{dash['id']}").json
    assert reverted["tabs"] == [] and reverted["dashcards"] == []
    assert admin.delete(f"/api/dashboard/{dash['id']}").status_code == 204
    assert admin.get(f"/api/dashboard/{dash['id']}").status_code == 404
