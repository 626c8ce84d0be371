"""Ids and typed keys inside nested bodies (dataset_query and MBQL, pulse channels, dashcards) are
checked by the route declarations: an id beyond BIGINT or a value of the wrong type is a 400 in
Metabase's error shape, never a 500 from the service or the app DB below it."""
from __future__ import annotations

import pytest

from tests.plugins.actions.support import enable_actions
from tests.plugins.cards.fixtures import card_body, mbql_query, native_query

TOO_BIG = 2**63


def assert_metabase_400(response, key: str):
    """A 400 whose body is Metabase's validation shape, naming `key` under errors."""
    assert response.status_code == 400, (response.status_code, response.get_data(as_text=True)[:300])
    assert isinstance(response.json, dict) and key in response.json["errors"], response.json
    assert key in response.json["specific-errors"], response.json


@pytest.fixture
def model(admin, warehouse) -> int:
    enable_actions(admin, warehouse["db"])
    response = admin.post("/api/card", json={**card_body("People model", mbql_query(warehouse["db"], **{
        "source-table": warehouse["people"]})), "type": "model"})
    assert response.status_code == 200, response.json
    return response.json["id"]


@pytest.mark.parametrize("database", [TOO_BIG, {"id": 1}, [1]])
def test_a_query_action_with_a_bad_database_is_400(admin, warehouse, model, database):
    query = native_query(warehouse["db"], "UPDATE people SET age = 1")
    response = admin.post("/api/action", json={"name": "Q", "type": "query", "model_id": model,
                                               "database_id": warehouse["db"],
                                               "dataset_query": {**query, "database": database}})
    assert_metabase_400(response, "dataset_query")
    assert "database" in response.json["errors"]["dataset_query"]
    assert admin.get("/api/action").json == []


@pytest.mark.parametrize("channel_type", [[], {}])
def test_a_pulse_channel_type_that_is_not_a_string_is_400(admin, warehouse, channel_type):
    card = admin.post("/api/card", json=card_body("People", mbql_query(warehouse["db"], **{
        "source-table": warehouse["people"]}))).json
    response = admin.post("/api/pulse", json={
        "name": "P", "cards": [{"id": card["id"], "include_csv": False, "include_xls": False}],
        "channels": [{"channel_type": channel_type, "enabled": True, "schedule_type": "daily", "schedule_hour": 7}]})
    assert_metabase_400(response, "channels")
    assert response.json["errors"]["channels"] == {"channel_type": "enum of email, slack, http"}
    assert admin.get("/api/pulse").json == []


def test_a_saved_dashcard_with_a_source_table_beyond_bigint_is_400(admin, warehouse):
    before = admin.get("/api/collection/root/items").json["total"]
    response = admin.post("/api/dashboard/save", json={"name": "D", "dashcards": [
        {"size_x": 4, "size_y": 4, "row": 0, "col": 0,
         "card": {"name": "C", "display": "table", "dataset_query": mbql_query(warehouse["db"], **{
             "source-table": TOO_BIG})}}]})
    assert_metabase_400(response, "dashcards")
    assert response.json["errors"]["dashcards"] == {"card": {"dataset_query": {"query": {
        "source-table": 'nullable value must be a table id or "card__<id>".'}}}}
    assert admin.get("/api/collection/root/items").json["total"] == before


def test_ids_inside_cards_and_definitions_are_bounded(admin, warehouse):
    db, people = warehouse["db"], warehouse["people"]
    tag = {"id": "s", "name": "snippet: s", "display-name": "s", "type": "snippet", "snippet-name": "s",
           "snippet-id": TOO_BIG}
    native = admin.post("/api/card", json=card_body("N", native_query(db, "SELECT 1 {{snippet: s}}",
                                                                        **{"snippet: s": tag})))
    assert_metabase_400(native, "dataset_query")
    assert native.json["errors"]["dataset_query"] == {"native": {"template-tags": {"snippet: s": {
        "snippet-id": "nullable value must be an integer greater than zero."}}}}
    stages = {"lib/type": "mbql/query", "database": db, "stages": [{"lib/type": "mbql.stage/mbql", "source-card": TOO_BIG}]}
    assert_metabase_400(admin.post("/api/card", json=card_body("S", stages)), "dataset_query")
    segment = admin.post("/api/segment", json={"name": "S", "table_id": people,
                                               "definition": {"source-table": TOO_BIG, "filter": ["=", 1, 1]}})
    assert_metabase_400(segment, "definition")
    related = admin.post("/api/card/related", json=mbql_query(db, **{"source-table": TOO_BIG}))
    assert_metabase_400(related, "query")


def test_ids_deep_in_clauses_are_refused_by_the_reader(admin, warehouse):
    # POST /api/dataset checks only the database, as Metabase's does; the reader refuses the rest as a failed query.
    db, people = warehouse["db"], warehouse["people"]
    for query in (mbql_query(db, **{"source-table": TOO_BIG}),
                  mbql_query(db, **{"source-table": people, "filter": ["=", ["field", TOO_BIG, None], 1]}),
                  {"lib/type": "mbql/query", "database": db, "stages": [{"lib/type": "mbql.stage/mbql",
                                                                         "source-table": TOO_BIG}]}):
        response = admin.post("/api/dataset", json=query)
        assert response.status_code == 400 and response.json["status"] == "failed", response.json
    card = admin.post("/api/card", json=card_body("F", mbql_query(db, **{
        "source-table": people, "filter": ["=", ["field", TOO_BIG, None], 1]})))
    assert card.status_code == 400 and "field id in filter" in card.json


def test_what_real_clients_send_is_still_accepted_as_sent(admin, warehouse):
    db, people = warehouse["db"], warehouse["people"]
    legacy = {"database": db, "type": "query", "query": {"source-table": people, "aggregation": [["count"]],
                                                        "breakout": [["field", warehouse["people.age"], None]]},
              "info": {"client": "kept"}}
    mbql5 = {"lib/type": "mbql/query", "database": db, "stages": [{"lib/type": "mbql.stage/mbql", "source-table": people,
                                                                  "lib/stage-uuid": "kept"}]}
    native = native_query(db, "SELECT * FROM people [[WHERE age > {{age}}]]", age={
        "id": "a", "name": "age", "display-name": "Age", "type": "number", "default": None})
    for query in (legacy, mbql5, native):
        response = admin.post("/api/card", json=card_body("Q", query))
        assert response.status_code == 200, response.json
        ran = admin.post(f"/api/card/{response.json['id']}/query")
        assert ran.status_code == 202 and ran.json["status"] == "completed", ran.json
    assert response.json["dataset_query"]["native"]["query"] == native["native"]["query"]
