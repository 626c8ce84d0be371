"""GET /api/dashboard/:id/query_metadata: the databases, tables and fields of every card on the
dashboard (series, card sources and filter-mapped fields included), only what the caller may see."""
from .support import block_data, card_body, field_ref, make_dashboard, mapping, mbql_query, native_query


def _setup(app, admin, warehouse):
    w = warehouse
    people = admin.post("/api/card", json=card_body("People", mbql_query(w["db"], **{"source-table": w["people"]}),
                                                    type="model")).json["id"]
    on_model = admin.post("/api/card", json=card_body("On model", mbql_query(
        w["db"], **{"source-table": f"card__{people}"}))).json["id"]
    orders = admin.post("/api/card", json=card_body("Orders", mbql_query(
        w["db"], **{"source-table": w["orders"], "aggregation": [["count"]]}))).json["id"]
    tag = {"id": "t", "name": "who", "display-name": "Who", "type": "dimension", "widget-type": "string/=",
           "dimension": ["field", w["people.last_name"], None]}
    native = admin.post("/api/card", json=card_body("Native", native_query(
        w["db"], "SELECT 1 AS one FROM people WHERE {{who}}", who=tag))).json["id"]
    dash = make_dashboard(app, admin.user["id"], [{"id": "p", "type": "id"}], [
        {"card_id": on_model, "series": [orders]},
        {"card_id": native},
        {"card_id": None, "visualization_settings": {"virtual_card": {"display": "text"}}},
        {"card_id": orders, "parameter_mappings": [mapping("p", orders, field_ref(w["orders.person_id"]))]},
    ])
    return dash["id"], people


def test_everything_the_cards_need(app, admin, warehouse):
    w = warehouse
    dashboard_id, model = _setup(app, admin, warehouse)
    response = admin.get(f"/api/dashboard/{dashboard_id}/query_metadata")
    assert response.status_code == 200, response.json
    body = response.json
    assert [d["id"] for d in body["databases"]] == [w["db"]] and "details" not in body["databases"][0]
    tables = {t["id"]: t for t in body["tables"]}
    # people: where orders.person_id leads.
    assert set(tables) == {w["orders"], w["people"], f"card__{model}"}
    assert {f["name"] for f in tables[w["orders"]]["fields"]} == {"id", "person_id", "total"}
    assert [f["name"] for f in tables[f"card__{model}"]["fields"]] == ["id", "first_name", "last_name", "age"]
    assert sorted(f["id"] for f in body["fields"]) == sorted([w["orders.person_id"], w["people.last_name"]])
    assert body["cards"] == [] and body["dashboards"] == []
    assert admin.get("/api/dashboard/999999/query_metadata").status_code == 404


def test_only_what_the_caller_may_see(app, admin, user, warehouse):
    dashboard_id, _ = _setup(app, admin, warehouse)
    assert len(user.get(f"/api/dashboard/{dashboard_id}/query_metadata").json["tables"]) == 3
    block_data(admin, warehouse["db"])
    body = user.get(f"/api/dashboard/{dashboard_id}/query_metadata").json
    assert body == {"databases": [], "tables": [], "fields": [], "cards": [], "dashboards": []}
    collection = admin.post("/api/collection", json={"name": "Private"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(collection): "none"}}})
    hidden = make_dashboard(app, admin.user["id"], [], [], collection_id=collection)["id"]
    assert user.get(f"/api/dashboard/{hidden}/query_metadata").status_code == 403
