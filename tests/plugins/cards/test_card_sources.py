"""Cards as tables: MBQL `card__N` sources and joins, MBQL 5 `source-card`, native `{{#N-slug}}`
references, nested at any depth and cycle-safe."""
from sqlalchemy import update

from .fixtures import card_body, mbql_query, native_query


def run(client, query):
    response = client.post("/api/dataset", json=query)
    assert response.status_code == 202, response.json
    return response.json["data"]


def card_tag(card_id, slug="c"):
    name = f"#{card_id}-{slug}"
    return name, {name: {"id": name, "name": name, "display-name": name, "type": "card", "card-id": card_id}}


def test_mbql_question_on_mbql_and_native_models(user, warehouse):
    db = warehouse["db"]
    adults = user.post("/api/card", json=card_body("Adults", mbql_query(
        db, **{"source-table": warehouse["people"], "filter": [">", ["field", warehouse["people.age"], None], 40]}),
        type="model")).json
    data = run(user, mbql_query(db, **{"source-table": f"card__{adults['id']}", "order-by": [["asc", ["field", "id", {"base-type": "type/Integer"}]]]}))
    assert [c["name"] for c in data["cols"]] == ["id", "first_name", "last_name", "age"]
    assert [r[1] for r in data["rows"]] == ["Alan", "Grace"]
    counted = run(user, mbql_query(db, **{"source-table": f"card__{adults['id']}", "aggregation": [["count"]]}))
    assert counted["rows"] == [[2]]
    native_model = user.post("/api/card", json=card_body("Big orders", native_query(
        db, "SELECT person_id, total FROM orders WHERE total > 15;"), type="model")).json
    assert [c["name"] for c in native_model["result_metadata"]] == ["person_id", "total"]
    summed = run(user, mbql_query(db, **{"source-table": f"card__{native_model['id']}",
                                         "aggregation": [["sum", ["field", "total", {"base-type": "type/Float"}]]]}))
    assert summed["rows"] == [[120.0]]
    on_question = user.post("/api/card", json=card_body("Nested", mbql_query(
        db, **{"source-table": f"card__{native_model['id']}"}))).json
    nested = run(user, mbql_query(db, **{"source-table": f"card__{on_question['id']}", "aggregation": [["count"]]}))
    assert nested["rows"] == [[2]]
    mbql5 = run(user, {"lib/type": "mbql/query", "database": db,
                       "stages": [{"lib/type": "mbql.stage/mbql", "source-card": adults["id"],
                                   "aggregation": [["count", {}]]}]})
    assert mbql5["rows"] == [[2]]


def test_join_on_a_card(user, warehouse):
    db = warehouse["db"]
    orders = user.post("/api/card", json=card_body("Orders model", native_query(
        db, "SELECT person_id, total FROM orders"), type="model")).json
    query = mbql_query(db, **{
        "source-table": warehouse["people"],
        "joins": [{"source-table": f"card__{orders['id']}", "alias": "o", "fields": "none",
                   "condition": ["=", ["field", warehouse["people.id"], None],
                                 ["field", "person_id", {"base-type": "type/Integer", "join-alias": "o"}]]}],
        "aggregation": [["sum", ["field", "total", {"base-type": "type/Float", "join-alias": "o"}]]],
        "breakout": [["field", warehouse["people.first_name"], None]],
        "order-by": [["asc", ["field", warehouse["people.first_name"], None]]]})
    assert run(user, query)["rows"] == [["Ada", 30.5], ["Alan", 7.25], ["Grace", 100.0]]


def test_native_card_references(user, warehouse):
    db = warehouse["db"]
    mbql_card = user.post("/api/card", json=card_body("Ada's orders", mbql_query(
        db, **{"source-table": warehouse["orders"], "filter": ["=", ["field", warehouse["orders.person_id"], None], 1]}))).json
    name, tags = card_tag(mbql_card["id"], "adas-orders")
    data = run(user, native_query(db, f"SELECT count(*) AS n, sum(total) AS s FROM {{{{{name}}}}} AS t", **tags))
    assert data["rows"] == [[2, 30.5]]
    saved = user.post("/api/card", json=card_body("Wraps", native_query(db, f"SELECT * FROM {{{{{name}}}}} x", **tags))).json
    assert [c["name"] for c in saved["result_metadata"]] == ["id", "person_id", "total"]
    outer_name, outer_tags = card_tag(saved["id"], "wraps")
    twice = run(user, native_query(db, f"SELECT max(total) AS m FROM {{{{{outer_name}}}}} y", **outer_tags))
    assert twice["rows"] == [[20.0]]
    on_native = run(user, mbql_query(db, **{"source-table": f"card__{saved['id']}", "aggregation": [["count"]]}))
    assert on_native["rows"] == [[2]]


def test_cycles_fail_cleanly_at_run_time(app, user, warehouse):
    db = warehouse["db"]
    a = user.post("/api/card", json=card_body("A", mbql_query(db, **{"source-table": warehouse["people"]}))).json
    b = user.post("/api/card", json=card_body("B", mbql_query(db, **{"source-table": f"card__{a['id']}"}))).json
    # Written behind the API's back (the API refuses it), as an old or imported row could be.
    from core.appdb.models import Card

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        session.execute(update(Card).where(Card.id == a["id"]).values(
            dataset_query=mbql_query(db, **{"source-table": f"card__{b['id']}"})))
        session.commit()
    failed = user.post("/api/dataset", json=mbql_query(db, **{"source-table": f"card__{a['id']}"}))
    assert failed.status_code == 400 and "itself" in failed.json["error"]
    name, tags = card_tag(b["id"])
    failed_native = user.post("/api/dataset", json=native_query(db, f"SELECT * FROM {{{{{name}}}}} x", **tags))
    assert failed_native.status_code == 400 and failed_native.json["status"] == "failed"
    missing = user.post("/api/dataset", json=mbql_query(db, **{"source-table": "card__999"}))
    assert missing.status_code == 400 and "999" in missing.json["error"]


def test_queries_on_the_saved_questions_database(user, warehouse):
    model = user.post("/api/card", json=card_body("Ppl", native_query(warehouse["db"], "SELECT id FROM people"),
                                                  type="model")).json
    data = run(user, mbql_query(-1337, **{"source-table": f"card__{model['id']}", "aggregation": [["count"]]}))
    assert data["rows"] == [[3]]
    bad = user.post("/api/dataset", json=mbql_query(-1337, **{"source-table": warehouse["people"]}))
    assert bad.status_code == 400


def test_saving_a_question_on_the_saved_questions_database(user, warehouse):
    model = user.post("/api/card", json=card_body("Ppl", native_query(warehouse["db"], "SELECT id FROM people"),
                                                  type="model")).json
    card = user.post("/api/card", json=card_body("On -1337", mbql_query(-1337, **{"source-table": f"card__{model['id']}"})))
    assert card.status_code == 200, card.json
    assert card.json["database_id"] == warehouse["db"] and card.json["source_card_id"] == model["id"]
    assert card.json["dataset_query"]["database"] == -1337
    assert user.post(f"/api/card/{card.json['id']}/query").json["row_count"] == 3
