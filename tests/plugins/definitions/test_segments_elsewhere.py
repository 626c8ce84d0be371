"""Segments and metric cards where other plugins show them: table and database metadata, usage_info,
GET /api/card?f=using_segment and search."""
from tests.plugins.definitions.support import big_orders, block, grant_data_model, sample
from tests.plugins.definitions.test_mbql_clauses import metric_card, segment


def card(admin, ids, name, query):
    response = admin.post("/api/card", json={"name": name, "display": "table", "visualization_settings": {},
                                             "dataset_query": {"database": ids["db"], "type": "query",
                                                               "query": {"source-table": ids["ORDERS"], **query}}})
    assert response.status_code == 200, response.json
    return response.json["id"]


def test_table_and_database_metadata(app, admin, user, sample_database_file):
    ids = sample(app, admin)
    big = segment(admin, ids, big_orders(ids), name="Big orders")
    archived = segment(admin, ids, big_orders(ids, 5), name="Archived one")
    admin.put(f"/api/segment/{archived}", json={"archived": True, "revision_message": "x"})
    revenue = metric_card(admin, ids, ["sum", ["field", ids["ORDERS.TOTAL"], None]], name="Revenue")
    metadata = user.get(f"/api/table/{ids['ORDERS']}/query_metadata").json
    assert [s["id"] for s in metadata["segments"]] == [big]
    assert metadata["segments"][0]["definition"] == big_orders(ids)
    assert [m["id"] for m in metadata["metrics"]] == [revenue] and metadata["metrics"][0]["type"] == "metric"
    people = user.get(f"/api/table/{ids['PEOPLE']}/query_metadata").json
    assert people["segments"] == [] and people["metrics"] == []
    tables = {t["name"]: t for t in user.get(f"/api/database/{ids['db']}/metadata").json["tables"]}
    assert [s["name"] for s in tables["ORDERS"]["segments"]] == ["Big orders"]
    assert [m["name"] for m in tables["ORDERS"]["metrics"]] == ["Revenue"] and tables["PEOPLE"]["segments"] == []
    assert admin.get(f"/api/database/{ids['db']}/usage_info").json["segment"] == 2


def test_cards_using_segment(app, admin, user, sample_database_file):
    ids = sample(app, admin)
    big = segment(admin, ids, big_orders(ids))
    other = segment(admin, ids, big_orders(ids, 10), name="Other")
    b = card(admin, ids, "b uses it", {"filter": ["and", ["segment", big], ["not-null", ["field", ids["ORDERS.ID"], None]]]})
    a = card(admin, ids, "A uses it too", {"aggregation": [["count-where", ["segment", big]]]})
    card(admin, ids, "uses the other", {"filter": ["segment", other]})
    card(admin, ids, "uses none", {})
    archived = card(admin, ids, "archived user", {"filter": ["segment", big]})
    admin.put(f"/api/card/{archived}", json={"archived": True})
    assert user.get(f"/api/card?f=using_segment&model_id={big}").status_code == 403  # segment not readable
    grant_data_model(app, ids["db"])
    listed = user.get(f"/api/card?f=using_segment&model_id={big}")
    assert listed.status_code == 200, listed.json
    assert [c["id"] for c in listed.json] == [a, b]
    missing = user.get("/api/card?f=using_segment")
    assert missing.status_code == 400 and "model_id" in missing.json["errors"]
    assert user.get("/api/card?f=using_segment&model_id=987654").status_code == 404


def test_search_finds_segments(app, admin, user, sample_database_file):
    ids = sample(app, admin)
    big = segment(admin, ids, big_orders(ids), name="Whale orders")
    found = user.get("/api/search?q=whale").json
    assert [(r["model"], r["id"]) for r in found["data"]] == [("segment", big)]
    hit = found["data"][0]
    assert hit["table_id"] == ids["ORDERS"] and hit["table_name"] == "ORDERS" and hit["database_id"] == ids["db"]
    assert "segment" in found["available_models"]
    assert user.get("/api/search?q=whale&models=card").json["data"] == []
    admin.put(f"/api/segment/{big}", json={"archived": True, "revision_message": "x"})
    assert user.get("/api/search?q=whale").json["data"] == []
    assert [r["id"] for r in user.get("/api/search?q=whale&archived=true").json["data"]] == [big]
    admin.put(f"/api/segment/{big}", json={"archived": False, "revision_message": "back"})
    block(app, ids["db"])
    assert user.get("/api/search?q=whale").json["data"] == []
    assert [r["id"] for r in admin.get("/api/search?q=whale").json["data"]] == [big]
