"""POST/GET/PUT/DELETE /api/card, lists, copy, move, sharing lists and revisions."""
import pytest
from sqlalchemy import select

from core.testing import add_database, make_user

from .fixtures import card_body, mbql_query, native_query


def revisions(app, card_id):
    from core.appdb.models import Revision

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        return list(session.scalars(select(Revision).where(Revision.model == "Card", Revision.model_id == card_id)
                                    .order_by(Revision.id)))


def test_native_card_round_trip(app, user, warehouse):
    collection = user.user["personal_collection_id"]
    body = card_body("People", native_query(warehouse["db"], "SELECT last_name, id, age FROM people"),
                     collection_id=collection)
    created = user.post("/api/card/", json=body)
    assert created.status_code == 200, created.json
    card = created.json
    assert card["dataset_query"] == {**body["dataset_query"], "native": {**body["dataset_query"]["native"],
                                                                          "template-tags": {}}}
    assert [c["name"] for c in card["result_metadata"]] == ["last_name", "id", "age"]
    assert card["query_type"] == "native" and card["database_id"] == warehouse["db"] and card["table_id"] is None
    assert card["type"] == "question" and card["dataset"] is False
    assert card["creator"]["email"] == "user@example.com" and card["creator_id"] == user.user["id"]
    assert card["collection"]["id"] == collection and card["collection"]["is_personal"] is True
    assert card["can_write"] is True and card["archived"] is False
    assert card["last-edit-info"]["email"] == "user@example.com"
    fetched = user.get(f"/api/card/{card['id']}")
    assert fetched.status_code == 200
    assert fetched.json["view_count"] == 1
    assert user.get(f"/api/card/{card['id']}?ignore_view=true").json["view_count"] == 1
    assert [r.is_creation for r in revisions(app, card["id"])] == [True]


def test_mbql_card_derives_table_and_metadata(user, warehouse):
    query = mbql_query(warehouse["db"], **{"source-table": warehouse["orders"],
                                           "aggregation": [["count"]], "breakout": [["field-id", warehouse["orders.person_id"]]]})
    created = user.post("/api/card", json=card_body("Orders per person", query))
    assert created.status_code == 200, created.json
    card = created.json
    assert card["dataset_query"] == query  # legacy refs returned as posted
    assert card["table_id"] == warehouse["orders"] and card["query_type"] == "query"
    assert [c["name"] for c in card["result_metadata"]] == ["person_id", "count"]
    assert card["result_metadata"][0]["id"] == warehouse["orders.person_id"]


def test_posting_a_full_get_body_back_makes_a_new_card(user, warehouse):
    created = user.post("/api/card", json=card_body("Original", native_query(warehouse["db"], "SELECT 1 AS one"),
                                                    description="first")).json
    full = user.get(f"/api/card/{created['id']}").json
    copy = user.post("/api/card", json={**full, "name": "Clone"})
    assert copy.status_code == 200, copy.json
    assert copy.json["id"] != created["id"] and copy.json["name"] == "Clone"
    assert copy.json["dataset_query"] == full["dataset_query"] and copy.json["description"] == "first"
    put = user.put(f"/api/card/{created['id']}", json={**full, "name": "Renamed"})
    assert put.status_code == 200, put.json
    assert put.json["name"] == "Renamed" and put.json["id"] == created["id"]


def test_models_metrics_and_the_dataset_flag(user, warehouse):
    model = user.post("/api/card", json=card_body("People model", native_query(warehouse["db"], "SELECT * FROM people"),
                                                  type="model")).json
    assert model["type"] == "model" and model["dataset"] is True and model["persisted"] is False
    legacy = user.post("/api/card", json=card_body("Legacy model", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                   dataset=True)).json
    assert legacy["type"] == "model"
    question = user.post("/api/card", json=card_body("Q", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                     display="scalar")).json
    turned = user.put(f"/api/card/{question['id']}", json={"type": "model"}).json
    assert turned["type"] == "model" and turned["display"] == "table"
    back = user.put(f"/api/card/{question['id']}", json={"dataset": False}).json
    assert back["type"] == "question"
    bad_metric = user.post("/api/card", json=card_body("M", native_query(warehouse["db"], "SELECT 1"), type="metric"))
    assert bad_metric.status_code == 400
    assert bad_metric.json == "Card of type metric is invalid, cannot be saved."
    metric = user.post("/api/card", json=card_body("Order count", mbql_query(
        warehouse["db"], **{"source-table": warehouse["orders"], "aggregation": [["count"]]}), type="metric"))
    assert metric.status_code == 200 and metric.json["type"] == "metric"


def test_validation_and_missing_things(user, warehouse):
    assert user.post("/api/card", json={"name": "x"}).status_code == 400
    missing = user.post("/api/card", json=card_body("x", native_query(999, "SELECT 1")))
    assert missing.status_code == 400 and "999" in str(missing.json)
    bad_ref = user.post("/api/card", json=card_body("x", mbql_query(warehouse["db"], **{"source-table": "card__999"})))
    assert bad_ref.status_code == 400
    assert user.get("/api/card/999").status_code == 404
    assert user.put("/api/card/999", json={"name": "y"}).status_code == 404
    assert user.post("/api/card", json=card_body("x", native_query(warehouse["db"], "SELECT 1"),
                                                 collection_id=999)).status_code == 404


def test_cycles_are_refused(user, warehouse):
    a = user.post("/api/card", json=card_body("A", mbql_query(warehouse["db"], **{"source-table": warehouse["people"]}))).json
    b = user.post("/api/card", json=card_body("B", mbql_query(warehouse["db"], **{"source-table": f"card__{a['id']}"}))).json
    assert b["source_card_id"] == a["id"]
    cycle = user.put(f"/api/card/{a['id']}", json={"dataset_query": mbql_query(warehouse["db"],
                                                                               **{"source-table": f"card__{b['id']}"})})
    assert cycle.status_code == 400
    native_cycle = user.put(f"/api/card/{a['id']}", json={"dataset_query": native_query(
        warehouse["db"], f"SELECT * FROM {{{{#{b['id']}-b}}}}",
        **{f"#{b['id']}-b": {"type": "card", "card-id": b["id"], "name": f"#{b['id']}-b", "id": "t1",
                             "display-name": "B"}})})
    assert native_cycle.status_code == 400


def test_archive_by_put_and_by_delete(app, user, warehouse):
    card = user.post("/api/card", json=card_body("Gone", native_query(warehouse["db"], "SELECT 1 AS x"))).json
    archived = user.put(f"/api/card/{card['id']}", json={"archived": True})
    assert archived.status_code == 200 and archived.json["archived"] is True and archived.json["archived_directly"]
    assert card["id"] not in [c["id"] for c in user.get("/api/card").json]
    assert card["id"] in [c["id"] for c in user.get("/api/card?f=archived").json]
    user.put(f"/api/card/{card['id']}", json={"archived": False})
    deleted = user.delete(f"/api/card/{card['id']}")
    assert deleted.status_code == 204 and deleted.data == b""
    assert user.get(f"/api/card/{card['id']}").json["archived"] is True
    assert len(revisions(app, card["id"])) == 4


def test_list_filters(app, admin, user, warehouse):
    mine = user.post("/api/card", json=card_body("b mine", mbql_query(warehouse["db"], **{"source-table": warehouse["people"]}))).json
    theirs = admin.post("/api/card", json=card_body("A admin", native_query(warehouse["db"], "SELECT 1 AS x"))).json
    user_model = user.post("/api/card", json=card_body("c on model", mbql_query(
        warehouse["db"], **{"source-table": f"card__{mine['id']}"}))).json
    names = [c["name"] for c in user.get("/api/card?f=all").json]
    assert names == ["A admin", "b mine", "c on model"]
    assert {c["id"] for c in user.get("/api/card?f=mine").json} == {mine["id"], user_model["id"]}
    assert [c["id"] for c in user.get(f"/api/card?f=table&model_id={warehouse['people']}").json] == [mine["id"]]
    assert len(user.get(f"/api/card?f=database&model_id={warehouse['db']}").json) == 3
    assert [c["id"] for c in user.get(f"/api/card?f=using_model&model_id={mine['id']}").json] == [user_model["id"]]
    err = user.get("/api/card?f=database")
    assert err.status_code == 400
    assert err.json["errors"] == {"model_id": "model_id is a required parameter when filter mode is 'database'"}
    assert user.get("/api/card?f=bookmarked").json == []
    assert user.get("/api/card?f=nonsense").status_code == 400
    listed = user.get("/api/card").json[0]
    assert listed["creator"]["id"] == admin.user["id"] and listed["collection"]["id"] == "root"
    assert theirs["id"] == listed["id"]


@pytest.mark.security_row(15)
def test_collection_permissions_guard_reading_and_writing(app, admin, user, warehouse):
    private = admin.post("/api/card", json=card_body("Admin's", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                     collection_id=admin.user["personal_collection_id"])).json
    assert user.get(f"/api/card/{private['id']}").status_code == 403
    assert user.put(f"/api/card/{private['id']}", json={"name": "mine now"}).status_code == 403
    assert user.post(f"/api/card/{private['id']}/copy").status_code == 403
    assert private["id"] not in [c["id"] for c in user.get("/api/card").json]
    assert user.post("/api/card", json=card_body("x", native_query(warehouse["db"], "SELECT 1"),
                                                 collection_id=admin.user["personal_collection_id"])).status_code == 403
    other = make_user(app, email="other@example.com")
    theirs = other.post("/api/card", json=card_body("Other's", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                    collection_id=other.user["personal_collection_id"])).json
    assert admin.get(f"/api/card/{theirs['id']}").status_code == 200


@pytest.mark.security_row(15)
def test_a_put_rechecks_the_query_against_the_callers_data_permissions(app, admin, user, warehouse):
    """Saving checks the query's database; so does every later PUT that changes the query."""
    secret_db, _ = add_database(app, "Secret", tables=((None, "salaries"),))
    revision = admin.get("/api/permissions/graph-v2").json["revision"]
    blocked = admin.put("/api/permissions/graph", json={"revision": revision, "groups": {
        "1": {str(secret_db): {"view-data": "blocked", "create-queries": "no"}}}})
    assert blocked.status_code == 200, blocked.json
    mine = user.post("/api/card", json=card_body("Mine", native_query(warehouse["db"], "SELECT 1 AS x")))
    assert mine.status_code == 200, mine.json
    assert user.post("/api/card", json=card_body("Direct", native_query(secret_db, "SELECT 1"))).status_code == 403
    moved = user.put(f"/api/card/{mine.json['id']}", json={"dataset_query": native_query(secret_db, "SELECT 1")})
    assert moved.status_code == 403
    assert user.get(f"/api/card/{mine.json['id']}").json["dataset_query"]["database"] == warehouse["db"]
    assert user.put(f"/api/card/{mine.json['id']}", json={"name": "Renamed"}).status_code == 200


def test_copy_and_move(app, admin, user, warehouse):
    card = user.post("/api/card", json=card_body("Report", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                 collection_position=1)).json
    copy = user.post(f"/api/card/{card['id']}/copy")
    assert copy.status_code == 200
    assert copy.json["name"] == "Copy of Report" and copy.json["id"] != card["id"]
    assert copy.json["collection_id"] is None and copy.json["creator_id"] == user.user["id"]
    target = user.user["personal_collection_id"]
    moved = user.post("/api/card/collections", json={"card_ids": [card["id"], copy.json["id"]], "collection_id": target})
    assert moved.status_code == 200 and moved.json == {"status": "ok"}
    assert user.get(f"/api/card/{card['id']}").json["collection_id"] == target
    assert user.get(f"/api/card/{card['id']}").json["collection_position"] == 1
    back = user.post("/api/card/collections", json={"card_ids": [card["id"]], "collection_id": None})
    assert back.status_code == 200 and user.get(f"/api/card/{card['id']}").json["collection_id"] is None
    forbidden = user.post("/api/card/collections", json={"card_ids": [card["id"]],
                                                          "collection_id": admin.user["personal_collection_id"]})
    assert forbidden.status_code == 403
    assert user.get(f"/api/card/{card['id']}").json["collection_id"] is None


def test_public_links_and_embeddable_lists(app, admin, user, warehouse):
    card = admin.post("/api/card", json=card_body("Shared", native_query(warehouse["db"], "SELECT 1 AS x"))).json
    assert admin.put("/api/setting/enable-public-sharing", json={"value": False}).status_code in (200, 204)
    assert admin.post(f"/api/card/{card['id']}/public_link").status_code == 400  # sharing off
    assert admin.put("/api/setting/enable-public-sharing", json={"value": True}).status_code in (200, 204)
    first = admin.post(f"/api/card/{card['id']}/public_link")
    assert first.status_code == 200 and len(first.json["uuid"]) == 36
    again = admin.post(f"/api/card/{card['id']}/public_link")
    assert again.json["uuid"] == first.json["uuid"]
    assert admin.get("/api/card/public").json == [{"id": card["id"], "name": "Shared", "public_uuid": first.json["uuid"]}]
    admin.put(f"/api/card/{card['id']}", json={"archived": True})
    assert admin.get("/api/card/public").json == []
    archived = admin.post(f"/api/card/{card['id']}/public_link")
    assert archived.status_code == 404 and archived.json["error_code"] == "archived"
    admin.put(f"/api/card/{card['id']}", json={"archived": False})
    assert admin.get(f"/api/card/{card['id']}").json["public_uuid"] == first.json["uuid"]
    assert user.post(f"/api/card/{card['id']}/public_link").status_code == 403
    assert user.get("/api/card/public").status_code == 403
    assert admin.delete(f"/api/card/{card['id']}/public_link").status_code == 204
    assert admin.get("/api/card/public").json == []
    assert admin.delete(f"/api/card/{card['id']}/public_link").status_code == 404
    assert admin.put(f"/api/card/{card['id']}", json={"enable_embedding": True}).status_code == 400  # embedding off
    assert admin.put("/api/setting/enable-embedding-static", json={"value": True}).status_code in (200, 204)
    assert user.put(f"/api/card/{card['id']}", json={"enable_embedding": True}).status_code == 403
    embedded = admin.put(f"/api/card/{card['id']}", json={"enable_embedding": True, "embedding_params": {"x": "enabled"}})
    assert embedded.status_code == 200 and embedded.json["enable_embedding"] is True
    assert admin.get("/api/card/embeddable").json == [{"id": card["id"], "name": "Shared"}]


def test_parameter_shapes_are_checked(user, warehouse):
    query = native_query(warehouse["db"], "SELECT 1 AS x")
    bad = user.post("/api/card", json=card_body("x", query, parameters=[{"name": "no id"}]))
    assert bad.status_code == 400 and "parameters" in bad.json["errors"]
    bad_mapping = user.post("/api/card", json=card_body("x", query, parameter_mappings=[{"target": []}]))
    assert bad_mapping.status_code == 400 and "parameter_mappings" in bad_mapping.json["errors"]
    good = user.post("/api/card", json=card_body("x", query, parameters=[{"id": "a", "type": "category"}],
                                                 parameter_mappings=[]))
    assert good.status_code == 200 and good.json["parameters"] == [{"id": "a", "type": "category"}]
