"""card__N virtual tables, the Saved Questions database (-1337) and card autocomplete."""
import orjson

from .fixtures import card_body, native_query


def test_card_virtual_table(admin, user, warehouse):
    collection = user.user["personal_collection_id"]
    model = user.post("/api/card", json=card_body("People model", native_query(
        warehouse["db"], "SELECT last_name, age FROM people"), type="model", collection_id=collection)).json
    meta = user.get(f"/api/table/card__{model['id']}/query_metadata")
    assert meta.status_code == 200, meta.json
    body = meta.json
    assert body["id"] == f"card__{model['id']}" and body["db_id"] == warehouse["db"] and body["type"] == "model"
    assert body["display_name"] == "People model" and body["schema"].endswith("Personal Collection")
    assert [f["name"] for f in body["fields"]] == ["last_name", "age"]
    assert body["fields"][1]["id"] == ["field", "age", {"base-type": "type/Integer"}]
    assert body["fields"][0]["table_id"] == f"card__{model['id']}"
    assert body["db"]["id"] == warehouse["db"] and "nested-queries" in body["db"]["features"]
    assert user.get(f"/api/table/card__{model['id']}/fks").json == []
    # the ordinary table route still answers for numeric ids
    assert user.get("/api/table/card__999/query_metadata").status_code == 404
    assert user.get("/api/table/card__x/query_metadata").status_code == 400
    other = admin.post("/api/card", json=card_body("Private", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                   collection_id=admin.user["personal_collection_id"])).json
    assert user.get(f"/api/table/card__{other['id']}/query_metadata").status_code == 403


def test_saved_questions_database(user, warehouse):
    question = user.post("/api/card", json=card_body("Q one", native_query(warehouse["db"], "SELECT 1 AS x"))).json
    model = user.post("/api/card", json=card_body("M one", native_query(warehouse["db"], "SELECT 2 AS y"),
                                                  type="model", collection_id=user.user["personal_collection_id"])).json
    assert user.get("/api/database/-1337/schemas").json == ["Everything else"]
    tables = user.get("/api/database/-1337/schema/Everything else").json
    assert [t["id"] for t in tables] == [f"card__{question['id']}"]
    datasets = user.get("/api/database/-1337/datasets").json
    assert len(datasets) == 1 and datasets[0].endswith("Personal Collection")
    assert [t["id"] for t in user.get(f"/api/database/-1337/datasets/{datasets[0]}").json] == [f"card__{model['id']}"]
    assert user.get("/api/database/-1337/schema/Nope").status_code == 404
    meta = user.get("/api/database/-1337/metadata").json
    assert meta["id"] == -1337 and meta["is_saved_questions"] is True
    assert {t["id"] for t in meta["tables"]} == {f"card__{question['id']}", f"card__{model['id']}"}


def test_card_autocomplete(user, warehouse):
    a = user.post("/api/card", json=card_body("Revenue by month", native_query(warehouse["db"], "SELECT 1 AS x"))).json
    user.post("/api/card", json=card_body("Churn", native_query(warehouse["db"], "SELECT 1 AS x")))
    found = user.get(f"/api/database/{warehouse['db']}/card_autocomplete_suggestions?query=revenue").json
    assert [c["id"] for c in found] == [a["id"]] and found[0]["name"] == "Revenue by month"
    by_id = user.get(f"/api/database/{warehouse['db']}/card_autocomplete_suggestions?query={a['id']}-rev").json
    assert a["id"] in [c["id"] for c in by_id]
    assert user.get(f"/api/database/{warehouse['db']}/card_autocomplete_suggestions").status_code == 400
    assert user.get("/api/database/999/card_autocomplete_suggestions?query=x").status_code == 404


def test_values_of_a_field_named_by_reference(app, admin, user, warehouse):
    """A saved question's column has a field reference for id; its values route answers the empty
    values, whatever the reference's name and options (slashes and commas included), to any signed-in user."""
    from urllib.parse import quote

    card = user.post("/api/card", json=card_body("Ages", native_query(
        warehouse["db"], "SELECT last_name, age FROM people"))).json
    column = user.get(f"/api/table/card__{card['id']}/query_metadata").json["fields"][1]
    ref = ",".join([column["id"][0], column["id"][1], orjson.dumps(column["id"][2]).decode()])
    assert ref == 'field,age,{"base-type":"type/Integer"}'
    for text in (ref, 'field,CATEGORY,{"base-type":"type/Text","join-alias":"A, b/c"}', "field,a/b,x"):
        for client in (user, admin):
            response = client.get(f"/api/field/{quote(text, safe='')}/values")
            assert response.status_code == 200, (text, response.status_code, response.get_data(as_text=True))
            assert response.json == {"values": []}
    assert app.test_client().get(f"/api/field/{quote(ref, safe='')}/values").status_code == 401
    # numeric ids still reach the fields plugin
    assert user.get("/api/field/999999/values").status_code == 404
    assert user.get("/api/field/fieldx/values").status_code == 400
