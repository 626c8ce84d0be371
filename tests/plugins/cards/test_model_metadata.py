"""A model's edited column metadata (PUT /api/card/:id result_metadata) applied as Metabase applies it:
on the model's own run and on every query built on it (ad hoc or saved), matched by column name, the
types never taken; a saved question's edits are not applied; an edit is seen by the next run."""
from .fixtures import card_body, mbql_query, native_query


def _cols(response) -> dict:
    assert response.status_code == 202, response.json
    return {c["name"]: c for c in response.json["data"]["cols"]}


def _results_metadata(response) -> dict:
    return {c["name"]: c for c in response.json["data"]["results_metadata"]["columns"]}


def _edit(user, card: dict, **edits) -> dict:
    """PUT the card's result_metadata with `edits` ({column name: {key: value}}) applied."""
    columns = [{**c, **edits.get(c["name"], {})} for c in user.get(f"/api/card/{card['id']}").json["result_metadata"]]
    updated = user.put(f"/api/card/{card['id']}", json={"result_metadata": columns})
    assert updated.status_code == 200, updated.json
    return updated.json


EDITS = {"total": {"display_name": "Order value", "description": "What was paid", "semantic_type": "type/Currency",
                   "settings": {"currency": "EUR"}, "base_type": "type/Text"}}


def _check_edited(cols: dict) -> None:
    total = cols["total"]
    assert total["display_name"] == "Order value" and total["description"] == "What was paid"
    assert total["semantic_type"] == "type/Currency" and total["settings"] == {"currency": "EUR"}
    assert total["base_type"] == "type/Float"  # types stay the query's


def test_mbql_model_metadata_on_its_run_nested_queries_and_questions(user, warehouse):
    db = warehouse["db"]
    model = user.post("/api/card", json=card_body("Orders model", mbql_query(
        db, **{"source-table": warehouse["orders"]}), type="model")).json
    before = _cols(user.post(f"/api/card/{model['id']}/query"))
    assert before["total"]["display_name"] == "Total"
    nested = mbql_query(db, **{"source-table": f"card__{model['id']}"})
    assert _cols(user.post("/api/dataset", json=nested))["total"]["display_name"] == "Total"
    question = user.post("/api/card", json=card_body("On the model", nested)).json
    assert _cols(user.post(f"/api/card/{question['id']}/query"))["total"]["display_name"] == "Total"

    _edit(user, model, **EDITS)
    own = user.post(f"/api/card/{model['id']}/query")
    _check_edited(_cols(own))
    _check_edited(_results_metadata(own))
    # A column not edited keeps what was computed for it.
    assert _cols(own)["person_id"]["display_name"] == "Person Id"
    assert _cols(own)["person_id"]["semantic_type"] == "type/FK"
    _check_edited(_cols(user.post("/api/dataset", json=nested)))
    _check_edited(_cols(user.post(f"/api/card/{question['id']}/query")))
    # A question aggregating the model's column names its aggregation itself; a breakout on it shows the
    # model's name.
    summed = _cols(user.post("/api/dataset", json=mbql_query(db, **{
        "source-table": f"card__{model['id']}", "aggregation": [["sum", ["field", "total", {"base-type": "type/Float"}]]],
        "breakout": [["field", "total", {"base-type": "type/Float"}]]})))
    assert summed["total"]["display_name"] == "Order value"
    assert summed["sum"]["display_name"] == "Sum of Order value"

    # A second edit is seen by the next run of each (nothing kept across the card's change).
    _edit(user, model, total={"display_name": "Paid"})
    assert _cols(user.post(f"/api/card/{model['id']}/query"))["total"]["display_name"] == "Paid"
    assert _cols(user.post("/api/dataset", json=nested))["total"]["display_name"] == "Paid"
    assert _cols(user.post(f"/api/card/{question['id']}/query"))["total"]["display_name"] == "Paid"


def test_native_model_metadata_on_its_run_and_nested(user, warehouse):
    db = warehouse["db"]
    model = user.post("/api/card", json=card_body("Native orders", native_query(
        db, "SELECT person_id, total FROM orders"), type="model")).json
    assert _cols(user.post(f"/api/card/{model['id']}/query"))["total"]["display_name"] == "total"
    _edit(user, model, **EDITS, person_id={"id": warehouse["orders.person_id"], "semantic_type": "type/FK",
                                           "fk_target_field_id": warehouse["people.id"]})
    own = _cols(user.post(f"/api/card/{model['id']}/query"))
    _check_edited(own)
    assert own["person_id"]["id"] == warehouse["orders.person_id"]
    assert own["person_id"]["fk_target_field_id"] == warehouse["people.id"]
    nested = _cols(user.post("/api/dataset", json=mbql_query(db, **{"source-table": f"card__{model['id']}"})))
    _check_edited(nested)
    assert nested["person_id"]["semantic_type"] == "type/FK"
    assert nested["person_id"]["fk_target_field_id"] == warehouse["people.id"]


def test_a_saved_questions_metadata_edits_are_not_applied(user, warehouse):
    db = warehouse["db"]
    question = user.post("/api/card", json=card_body("Orders", mbql_query(
        db, **{"source-table": warehouse["orders"]}))).json
    _edit(user, question, **EDITS)
    assert _cols(user.post(f"/api/card/{question['id']}/query"))["total"]["display_name"] == "Total"
    nested = mbql_query(db, **{"source-table": f"card__{question['id']}"})
    total = _cols(user.post("/api/dataset", json=nested))["total"]
    assert total["display_name"] == "Total" and total["semantic_type"] is None


def test_a_bucketed_column_keeps_its_unit_after_the_models_name(user, warehouse):
    db = warehouse["db"]
    model = user.post("/api/card", json=card_body("By month", mbql_query(db, **{
        "source-table": warehouse["orders"], "expressions": {"when": ["now"]},
        "breakout": [["expression", "when", {"temporal-unit": "month"}]], "aggregation": [["count"]]}),
        type="model")).json
    assert _cols(user.post(f"/api/card/{model['id']}/query"))["when"]["display_name"] == "when: Month"
    _edit(user, model, when={"display_name": "Moment"}, count={"display_name": "Orders"})
    own = _cols(user.post(f"/api/card/{model['id']}/query"))
    assert own["when"]["display_name"] == "Moment: Month" and own["count"]["display_name"] == "Orders"
    nested = _cols(user.post("/api/dataset", json=mbql_query(db, **{"source-table": f"card__{model['id']}"})))
    assert nested["when"]["display_name"] == "Moment: Month" and nested["count"]["display_name"] == "Orders"


def test_a_cached_result_is_not_served_after_a_metadata_edit(admin, warehouse):
    db = warehouse["db"]
    assert admin.put("/api/setting/enable-query-caching", json={"value": True}).status_code == 204
    model = admin.post("/api/card", json=card_body("Orders model", mbql_query(
        db, **{"source-table": warehouse["orders"]}), type="model", cache_ttl=1)).json
    question = admin.post("/api/card", json=card_body("On the model", mbql_query(
        db, **{"source-table": f"card__{model['id']}"}), cache_ttl=1)).json
    for card in (model, question):
        admin.post(f"/api/card/{card['id']}/query")
        again = admin.post(f"/api/card/{card['id']}/query")
        assert again.json["cached"] is not None and _cols(again)["total"]["display_name"] == "Total"
    _edit(admin, model, total={"display_name": "Paid"})
    for card in (model, question):
        edited = admin.post(f"/api/card/{card['id']}/query")
        assert edited.json["cached"] is None and _cols(edited)["total"]["display_name"] == "Paid"


def test_a_joined_model_shows_its_metadata(user, warehouse):
    db = warehouse["db"]
    model = user.post("/api/card", json=card_body("Orders model", mbql_query(
        db, **{"source-table": warehouse["orders"]}), type="model")).json
    _edit(user, model, total={"display_name": "Paid", "semantic_type": "type/Currency"})
    joined = _cols(user.post("/api/dataset", json=mbql_query(db, **{
        "source-table": warehouse["people"], "fields": [["field", warehouse["people.id"], None]],
        "joins": [{"alias": "O", "source-table": f"card__{model['id']}", "fields": "all",
                   "condition": ["=", ["field", warehouse["people.id"], None],
                                 ["field", "person_id", {"base-type": "type/Integer", "join-alias": "O"}]]}]})))
    total = next(c for c in joined.values() if c["display_name"].endswith("Paid"))
    assert total["display_name"] == "O → Paid" and total["semantic_type"] == "type/Currency"
