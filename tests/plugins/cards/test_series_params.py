"""GET /api/card/:id/series and the parameter values endpoints."""
from .fixtures import card_body, mbql_query, native_query


def by_person(warehouse, display="line", aggregation=None):
    return card_body("x", mbql_query(warehouse["db"], **{
        "source-table": warehouse["orders"], "aggregation": [aggregation or ["count"]],
        "breakout": [["field", warehouse["orders.person_id"], None]]}), display=display)


def test_series_rules_and_cursor(user, warehouse):
    base = user.post("/api/card", json={**by_person(warehouse), "name": "Base"}).json
    same = user.post("/api/card", json={**by_person(warehouse, "bar"), "name": "Same kind"}).json
    user.post("/api/card", json={**by_person(warehouse, "table"), "name": "Table display"})
    no_metric = user.post("/api/card", json=card_body("Rows", mbql_query(
        warehouse["db"], **{"source-table": warehouse["people"]}), display="line")).json
    native = user.post("/api/card", json=card_body("Native", native_query(warehouse["db"], "SELECT 1 AS a"),
                                                   display="area")).json
    found = user.get(f"/api/card/{base['id']}/series")
    assert found.status_code == 200
    assert [c["id"] for c in found.json] == [native["id"], same["id"]]
    assert no_metric["id"] not in [c["id"] for c in found.json]
    assert [c["id"] for c in user.get(f"/api/card/{base['id']}/series?last_cursor={native['id']}").json] == [same["id"]]
    assert [c["id"] for c in user.get(f"/api/card/{base['id']}/series?query=nat").json] == [native["id"]]
    assert [c["id"] for c in user.get(f"/api/card/{base['id']}/series?exclude_ids={native['id']}").json] == [same["id"]]
    table_card = user.post("/api/card", json={**by_person(warehouse, "table"), "name": "T"}).json
    refused = user.get(f"/api/card/{table_card['id']}/series")
    assert refused.status_code == 400 and refused.json == "Card with type table is not compatible to have series"
    scalar = user.post("/api/card", json=card_body("S", native_query(warehouse["db"], "SELECT 1 AS a"), display="scalar")).json
    one_col = user.post("/api/card", json=card_body("S2", mbql_query(
        warehouse["db"], **{"source-table": warehouse["orders"], "aggregation": [["count"]]}), display="scalar")).json
    assert [c["id"] for c in user.get(f"/api/card/{scalar['id']}/series").json] == [one_col["id"]]


def test_parameter_values_from_field_static_list_and_card(user, warehouse):
    tag = {"id": "t1", "name": "who", "display-name": "Who", "type": "dimension",
           "dimension": ["field", warehouse["people.first_name"], None], "widget-type": "string/="}
    source = user.post("/api/card", json=card_body("Names", native_query(
        warehouse["db"], "SELECT last_name FROM people"))).json
    card = user.post("/api/card", json=card_body("Filtered", native_query(
        warehouse["db"], "SELECT * FROM people WHERE {{who}}", who=tag), parameters=[
        {"id": "p1", "type": "string/=", "slug": "who", "target": ["dimension", ["template-tag", "who"]]},
        {"id": "p2", "type": "category", "slug": "s", "values_source_type": "static-list",
         "values_source_config": {"values": ["a", "b", "ab"]}, "target": ["variable", ["template-tag", "x"]]},
        {"id": "p3", "type": "category", "slug": "c", "values_source_type": "card",
         "values_source_config": {"card_id": source["id"], "value_field": ["field", "last_name", {"base-type": "type/Text"}]},
         "target": ["variable", ["template-tag", "y"]]}])).json
    field = user.get(f"/api/card/{card['id']}/params/p1/values")
    assert field.status_code == 200, field.json
    assert field.json == {"values": [["Ada"], ["Alan"], ["Grace"]], "has_more_values": False}
    assert user.get(f"/api/card/{card['id']}/params/p1/search/al").json["values"] == [["Alan"]]
    assert user.get(f"/api/card/{card['id']}/params/p2/values").json["values"] == [["a"], ["b"], ["ab"]]
    assert user.get(f"/api/card/{card['id']}/params/p2/search/b").json["values"] == [["b"], ["ab"]]
    assert sorted(user.get(f"/api/card/{card['id']}/params/p3/values").json["values"]) == [["Hopper"], ["Lovelace"], ["Turing"]]
    assert user.get(f"/api/card/{card['id']}/params/p3/search/ur").json["values"] == [["Turing"]]
    assert user.get(f"/api/card/{card['id']}/params/nope/values").status_code == 404
