"""Dashboard filter values: GET /api/dashboard/:id/params/:key/values, .../search/:query and
.../remapping. Values of every mapped field, linked filters (same table, across a foreign key both
ways) on SQLite and PostgreSQL, remapped labels (FK remapping and stored names), static lists,
native-only filters, and what a plain user may see."""
from __future__ import annotations

import pytest

from core.testing import postgres_data_source, wait_for_sync

from .support import block_data, card_body, field_ref, make_dashboard, mapping, mbql_query, native_query

PARAMS = [{"id": "name", "type": "string/="}, {"id": "age", "type": "number/="},
          {"id": "total", "type": "number/>="}, {"id": "pid", "type": "id"}]


def _dashboard(app, admin, ids: dict, **extra) -> int:
    """Two cards (people, orders) with four filters: name, age (people), total, pid (orders)."""
    people = admin.post("/api/card", json=card_body("People", mbql_query(
        ids["db"], **{"source-table": ids["people"]}))).json["id"]
    orders = admin.post("/api/card", json=card_body("Orders", mbql_query(
        ids["db"], **{"source-table": ids["orders"]}))).json["id"]
    dash = make_dashboard(app, admin.user["id"], PARAMS, [
        {"card_id": people, "parameter_mappings": [mapping("name", people, field_ref(ids["people.first_name"])),
                                                   mapping("age", people, field_ref(ids["people.age"]))]},
        {"card_id": orders, "parameter_mappings": [mapping("total", orders, field_ref(ids["orders.total"])),
                                                   mapping("pid", orders, field_ref(ids["orders.person_id"]))]},
    ], **extra)
    return dash["id"]


def _values(client, dashboard_id, key, query=""):
    response = client.get(f"/api/dashboard/{dashboard_id}/params/{key}/values{query}")
    assert response.status_code == 200, response.json
    return response.json


def check_chained(app, admin, ids: dict) -> None:
    dashboard_id = _dashboard(app, admin, ids)
    assert _values(admin, dashboard_id, "name") == {"values": [["Ada"], ["Alan"], ["Grace"]], "has_more_values": False}
    # Same table.
    assert _values(admin, dashboard_id, "name", "?age=41")["values"] == [["Alan"]]
    assert _values(admin, dashboard_id, "name", "?age=41&age=85")["values"] == [["Alan"], ["Grace"]]
    # From people to orders (the foreign key points at people): people with an order of 50 or more.
    assert _values(admin, dashboard_id, "name", "?total=50")["values"] == [["Grace"]]
    # From orders to people (orders.person_id -> people.id).
    assert _values(admin, dashboard_id, "pid", "?name=Ada")["values"] == [[1]]
    assert _values(admin, dashboard_id, "total", "?name=Ada&name=Alan")["values"] == [[7.25], [10.5], [20.0]]
    # An empty constraint and the filter's own key constrain nothing.
    assert len(_values(admin, dashboard_id, "name", "?age=&name=Ada")["values"]) == 3
    found = admin.get(f"/api/dashboard/{dashboard_id}/params/name/search/AL").json
    assert found == {"values": [["Alan"]], "has_more_values": False}
    assert admin.get(f"/api/dashboard/{dashboard_id}/params/name/search/a?age=36").json["values"] == [["Ada"]]


def test_values_and_linked_filters_sqlite(app, admin, warehouse):
    check_chained(app, admin, warehouse)


def test_values_and_linked_filters_postgresql(app, admin):
    with postgres_data_source() as source:
        from sqlalchemy import create_engine, text

        engine = create_engine(source.admin_url)
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE people (id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT, age INTEGER);"
                              "CREATE TABLE orders (id INTEGER PRIMARY KEY, person_id INTEGER REFERENCES people(id), total DOUBLE PRECISION);"
                              "INSERT INTO people VALUES (1, 'Ada', 'Lovelace', 36), (2, 'Alan', 'Turing', 41), (3, 'Grace', 'Hopper', 85);"
                              "INSERT INTO orders VALUES (1, 1, 10.5), (2, 1, 20.0), (3, 2, 7.25), (4, 3, 100.0);"))
        engine.dispose()
        created = admin.post("/api/database", json={"name": "PG", "engine": "postgres", "details": source.details})
        assert created.status_code == 200, created.json
        db_id = created.json["id"]
        wait_for_sync(app)
        ids = {"db": db_id}
        for table in admin.get(f"/api/database/{db_id}/metadata").json["tables"]:
            ids[table["name"]] = table["id"]
            for field in table["fields"]:
                ids[f"{table['name']}.{field['name']}"] = field["id"]
        fk = admin.get(f"/api/field/{ids['orders.person_id']}").json
        if fk["fk_target_field_id"] != ids["people.id"]:
            admin.put(f"/api/field/{ids['orders.person_id']}",
                      json={"semantic_type": "type/FK", "fk_target_field_id": ids["people.id"]})
        check_chained(app, admin, ids)
        assert admin.delete(f"/api/database/{db_id}").status_code == 204


def test_remapped_labels(app, admin, warehouse):
    dashboard_id = _dashboard(app, admin, warehouse)
    # FK remapping: a person id shows as the person's first name.
    made = admin.post(f"/api/field/{warehouse['orders.person_id']}/dimension",
                      json={"type": "external", "name": "Person", "human_readable_field_id": warehouse["people.first_name"]})
    assert made.status_code == 200, made.json
    assert _values(admin, dashboard_id, "pid")["values"] == [[1, "Ada"], [2, "Alan"], [3, "Grace"]]
    assert _values(admin, dashboard_id, "pid", "?total=100")["values"] == [[3, "Grace"]]
    assert admin.get(f"/api/dashboard/{dashboard_id}/params/pid/search/gra").json["values"] == [[3, "Grace"]]
    assert admin.get(f"/api/dashboard/{dashboard_id}/params/pid/remapping?value=2").json == [2, "Alan"]
    # Names stored with the field values (internal remapping).
    assert admin.put(f"/api/field/{warehouse['people.age']}", json={"has_field_values": "list"}).status_code == 200
    named = admin.post(f"/api/field/{warehouse['people.age']}/values",
                       json={"values": [[36, "thirty-six"], [41, "forty-one"], [85, "eighty-five"]]})
    assert named.status_code == 200, named.json
    assert _values(admin, dashboard_id, "age")["values"] == [[36, "thirty-six"], [41, "forty-one"], [85, "eighty-five"]]
    assert _values(admin, dashboard_id, "age", "?name=Grace")["values"] == [[85, "eighty-five"]]
    assert admin.get(f"/api/dashboard/{dashboard_id}/params/age/search/forty").json["values"] == [[41, "forty-one"]]
    assert admin.get(f"/api/dashboard/{dashboard_id}/params/age/remapping?value=41").json == [41, "forty-one"]
    assert admin.get(f"/api/dashboard/{dashboard_id}/params/name/remapping?value=Ada").json == ["Ada"]


def test_static_list_native_only_and_unknown(app, admin, warehouse):
    variable = {"id": "t", "name": "min_age", "display-name": "Min age", "type": "number"}
    card = admin.post("/api/card", json=card_body("Native", native_query(
        warehouse["db"], "SELECT * FROM people WHERE age >= {{min_age}}", min_age=variable))).json["id"]
    params = [{"id": "v", "type": "number/="},
              {"id": "s", "type": "category", "values_source_type": "static-list",
               "values_source_config": {"values": [["a", "Apple"], ["b", "Banana"], "c"]}}]
    dash = make_dashboard(app, admin.user["id"], params, [{"card_id": card, "parameter_mappings": [
        mapping("v", card, ["variable", ["template-tag", "min_age"]]),
        mapping("s", card, ["variable", ["template-tag", "min_age"]])]}])
    assert _values(admin, dash["id"], "v") == {"values": [], "has_more_values": False}
    assert _values(admin, dash["id"], "s")["values"] == [["a", "Apple"], ["b", "Banana"], ["c"]]
    assert admin.get(f"/api/dashboard/{dash['id']}/params/s/search/ban").json["values"] == [["b", "Banana"]]
    assert admin.get(f"/api/dashboard/{dash['id']}/params/s/remapping?value=a").json == ["a", "Apple"]
    assert admin.get(f"/api/dashboard/{dash['id']}/params/nope/values").status_code == 400
    # Values from another card's column.
    source = admin.post("/api/card", json=card_body("Names", native_query(
        warehouse["db"], "SELECT last_name FROM people"))).json["id"]
    from_card = [{"id": "c", "type": "category", "values_source_type": "card",
                  "values_source_config": {"card_id": source, "value_field": ["field", "last_name", None]}}]
    other = make_dashboard(app, admin.user["id"], from_card, [])
    assert _values(admin, other["id"], "c")["values"] == [["Hopper"], ["Lovelace"], ["Turing"]]
    assert admin.get(f"/api/dashboard/{other['id']}/params/c/search/ur").json["values"] == [["Turing"]]
    assert admin.get("/api/dashboard/999999/params/s/values").status_code == 404


def test_native_field_filter_values(app, admin, warehouse):
    tag = {"id": "t", "name": "who", "display-name": "Who", "type": "dimension", "widget-type": "string/=",
           "dimension": ["field", warehouse["people.last_name"], None]}
    card = admin.post("/api/card", json=card_body("Native", native_query(
        warehouse["db"], "SELECT * FROM people WHERE {{who}}", who=tag))).json["id"]
    dash = make_dashboard(app, admin.user["id"], [{"id": "w", "type": "string/="}], [
        {"card_id": card, "parameter_mappings": [mapping("w", card, ["dimension", ["template-tag", "who"]])]}])
    assert _values(admin, dash["id"], "w")["values"] == [["Hopper"], ["Lovelace"], ["Turing"]]


@pytest.mark.parametrize("blocked", [False, True])
def test_plain_user(app, admin, user, warehouse, blocked):
    dashboard_id = _dashboard(app, admin, warehouse)
    if blocked:
        block_data(admin, warehouse["db"])
        response = user.get(f"/api/dashboard/{dashboard_id}/params/name/values")
        assert response.status_code == 200 and response.json["values"] == []
        assert "Grace" not in user.get(f"/api/dashboard/{dashboard_id}/params/pid/values?name=Grace").get_data(as_text=True)
    else:
        assert _values(user, dashboard_id, "name", "?total=50")["values"] == [["Grace"]]
    collection = admin.post("/api/collection", json={"name": "Private"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(collection): "none"}}})
    hidden = _dashboard(app, admin, warehouse, collection_id=collection)
    refused = user.get(f"/api/dashboard/{hidden}/params/name/values")
    assert refused.status_code == 403 and "Grace" not in refused.get_data(as_text=True)


def test_filter_on_a_model_column(app, admin, warehouse):
    model = admin.post("/api/card", json=card_body("People model", mbql_query(
        warehouse["db"], **{"source-table": warehouse["people"]}), type="model")).json["id"]
    question = admin.post("/api/card", json=card_body("On the model", mbql_query(
        warehouse["db"], **{"source-table": f"card__{model}"}))).json["id"]
    target = ["dimension", ["field", "first_name", {"base-type": "type/Text"}]]
    dash = make_dashboard(app, admin.user["id"], [{"id": "n", "type": "string/="}],
                          [{"card_id": question, "parameter_mappings": [mapping("n", question, target)]}])
    assert _values(admin, dash["id"], "n")["values"] == [["Ada"], ["Alan"], ["Grace"]]
