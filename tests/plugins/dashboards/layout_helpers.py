"""Helpers of the dashboard CRUD tests: cards on the cards tests' warehouse, dashboards, permissions."""
from __future__ import annotations

from tests.plugins.cards.fixtures import card_body, mbql_query, native_query

# Keys a GET changes by itself (it counts the view).
VIEW_KEYS = ("view_count", "last_viewed_at")


def mbql_card(client, warehouse, name="People", collection_id=None, table="people", **inner) -> dict:
    """An MBQL card on a warehouse table; `inner` adds clauses to its query (aggregation, breakout...)."""
    query = mbql_query(warehouse["db"], **{"source-table": warehouse[table], **inner})
    response = client.post("/api/card", json=card_body(name, query, collection_id=collection_id))
    assert response.status_code == 200, response.json
    return response.json


def native_card(client, warehouse, name="Native", collection_id=None) -> dict:
    tags = {"name": {"id": "t1", "name": "name", "display-name": "Name", "type": "dimension",
                     "dimension": ["field", warehouse["people.first_name"], None], "widget-type": "string/="}}
    sql = "SELECT * FROM people WHERE {{name}}"
    response = client.post("/api/card", json=card_body(name, native_query(warehouse["db"], sql, **tags),
                                                       collection_id=collection_id))
    assert response.status_code == 200, response.json
    return response.json


def dashboard(client, name="Dash", **extra) -> dict:
    response = client.post("/api/dashboard", json={"name": name, **extra})
    assert response.status_code == 200, response.json
    return response.json


def dashcard(id_, card_id=None, tab=None, **extra) -> dict:
    out = {"id": id_, "card_id": card_id, "size_x": 4, "size_y": 3, "row": 0, "col": 0, **extra}
    if tab is not None:
        out["dashboard_tab_id"] = tab
    return out


def mapping(parameter_id, card_id, field_id) -> dict:
    return {"parameter_id": parameter_id, "card_id": card_id, "target": ["dimension", ["field", field_id, None]]}


def without_view(body: dict) -> dict:
    return {k: v for k, v in body.items() if k not in VIEW_KEYS}


def collection_for_all_users(admin, name: str, level: str) -> int:
    """A collection on which All Users (group 1) have `level` ("none", "read", "write")."""
    collection_id = admin.post("/api/collection", json={"name": name}).json["id"]
    graph = admin.get("/api/collection/graph").json
    response = admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                                        "groups": {"1": {str(collection_id): level}}})
    assert response.status_code == 200, response.json
    return collection_id


def block_queries(admin, db_id: int) -> None:
    """All Users may see the database's data through saved questions but not query it themselves."""
    graph = admin.get("/api/permissions/graph").json
    response = admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(db_id): {"view-data": "unrestricted", "create-queries": "no"}}}})
    assert response.status_code == 200, response.json
