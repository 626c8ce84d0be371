"""POST /api/dashboard/save and /save/collection/:id: a denormalized dashboard (cards without ids, as
automatic dashboards describe them) saved with its cards in a new collection, in one transaction."""
from sqlalchemy import func, select

from tests.plugins.cards.fixtures import mbql_query, native_query

from .layout_helpers import collection_for_all_users


def description(warehouse, name="People overview") -> dict:
    by_age = {"database": warehouse["db"], "type": "query", "query": {
        "source-table": warehouse["people"], "aggregation": [["count"]],
        "breakout": [["field", warehouse["people.age"], None]]}}
    return {
        "name": name, "description": "An x-ray", "transient_name": "ignored",
        "parameters": [{"id": "p", "type": "string/=", "name": "Name", "slug": "name"}],
        "tabs": [{"id": -1, "name": "Overview"}],
        "dashcards": [
            {"id": -1, "size_x": 6, "size_y": 4, "row": 0, "col": 0, "dashboard_tab_id": -1,
             "card": {"name": "People by age", "display": "bar", "dataset_query": by_age,
                      "visualization_settings": {"graph.dimensions": ["age"]}},
             "series": [{"name": "Orders", "display": "bar",
                         "dataset_query": mbql_query(warehouse["db"], **{"source-table": warehouse["orders"]})}],
             "parameter_mappings": [{"parameter_id": "p",
                                     "target": ["dimension", ["field", warehouse["people.first_name"], None]]}],
             "visualization_settings": {}},
            {"id": -2, "size_x": 18, "size_y": 1, "row": 4, "col": 0, "dashboard_tab_id": -1, "card": None,
             "visualization_settings": {"virtual_card": {"display": "text"}, "text": "# People"}},
        ],
    }


def collection_count(app):
    from core.appdb.models import Card, Collection

    with app.extensions["tessera"].db.engine.connect() as conn:
        count = lambda model: conn.scalar(select(func.count()).select_from(model))  # noqa: E731
        return count(Collection), count(Card)


def test_save_makes_a_collection_with_the_cards_and_the_dashboard(app, admin, warehouse):
    response = admin.post("/api/dashboard/save", json=description(warehouse))
    assert response.status_code == 200, response.json
    dash = response.json
    assert dash["name"] == "People overview" and dash["collection_position"] == 1
    assert dash["parameters"] == [{"id": "p", "type": "string/=", "name": "Name", "slug": "name"}]
    collection = dash["collection"]
    assert collection["name"] == "People overview"
    container = admin.get(f"/api/collection/{collection['id']}").json
    assert container["description"] == "Automatically generated cards."
    parent = admin.get(f"/api/collection/{container['location'].strip('/')}").json
    assert parent["name"] == "Automatically Generated Dashboards" and parent["location"] == "/"
    [tab] = dash["tabs"]
    chart, text = dash["dashcards"]
    assert chart["dashboard_tab_id"] == tab["id"] and text["dashboard_tab_id"] == tab["id"]
    assert chart["card"]["name"] == "People by age" and chart["card"]["collection_id"] == collection["id"]
    assert chart["card"]["table_id"] == warehouse["people"] and chart["card"]["display"] == "bar"
    assert [s["name"] for s in chart["series"]] == ["Orders"]
    assert chart["series"][0]["collection_id"] == collection["id"]
    assert chart["parameter_mappings"][0]["card_id"] == chart["card"]["id"]
    assert text["card"] is None and text["visualization_settings"]["text"] == "# People"
    ran = admin.post(f"/api/card/{chart['card']['id']}/query")
    assert ran.status_code == 202 and ran.json["row_count"] == 3
    assert [r["is_creation"] for r in admin.get(f"/api/dashboard/{dash['id']}/revisions").json] == [True]

    again = admin.post("/api/dashboard/save", json=description(warehouse))
    assert again.json["collection"]["name"] == "People overview 2"
    assert admin.get(f"/api/collection/{again.json['collection']['id']}").json["location"] == container["location"]


def test_save_into_a_collection_and_the_plain_users_default(app, admin, user, warehouse):
    target = collection_for_all_users(admin, "Target", "write")
    saved = user.post(f"/api/dashboard/save/collection/{target}", json=description(warehouse, "Mine"))
    assert saved.status_code == 200, saved.json
    assert admin.get(f"/api/collection/{saved.json['collection']['id']}").json["location"] == f"/{target}/"
    personal = user.post("/api/dashboard/save", json=description(warehouse, "Personal"))
    assert personal.status_code == 200, personal.json
    location = admin.get(f"/api/collection/{personal.json['collection']['id']}").json["location"]
    assert location == f"/{user.user['personal_collection_id']}/"
    read_only = collection_for_all_users(admin, "Read only", "read")
    assert user.post(f"/api/dashboard/save/collection/{read_only}", json=description(warehouse)).status_code == 403
    assert user.post("/api/dashboard/save/collection/99999", json=description(warehouse)).status_code == 404


def test_a_bad_card_saves_nothing(app, admin, warehouse):
    before = collection_count(app)
    body = description(warehouse)
    body["dashcards"][1]["card"] = {"name": "Broken", "dataset_query": native_query(99999, "SELECT 1")}
    response = admin.post("/api/dashboard/save", json=body)
    assert response.status_code == 400, response.json
    assert collection_count(app) == before
    assert admin.get("/api/dashboard").json == []
    assert admin.post("/api/dashboard/save", json={"dashcards": []}).status_code == 400
