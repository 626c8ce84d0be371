"""The MBQL `segment` filter and `metric` aggregation, run through /api/dataset on the Sample Database."""
import uuid

from tests.plugins.definitions.support import big_orders, count_orders, sample


def run(admin, ids, query, table="ORDERS"):
    return admin.post("/api/dataset", json={"database": ids["db"], "type": "query",
                                            "query": {"source-table": ids[table], **query}})


def segment(admin, ids, definition, name="S", table="ORDERS"):
    response = admin.post("/api/segment", json={"name": name, "table_id": ids[table], "definition": definition})
    assert response.status_code == 200, response.json
    return response.json["id"]


def metric_card(admin, ids, aggregation, filters=None, name="Big revenue", table="ORDERS", card_type="metric"):
    query = {"source-table": ids[table], "aggregation": [aggregation]}
    if filters is not None:
        query["filter"] = filters
    response = admin.post("/api/card", json={"name": name, "display": "scalar", "visualization_settings": {},
                                             "type": card_type, "dataset_query": {"database": ids["db"], "type": "query",
                                                                                  "query": query}})
    assert response.status_code == 200, response.json
    return response.json["id"]


def test_segment_filters(app, admin, sample_database_file):
    ids = sample(app, admin)
    total = ["field", ids["ORDERS.TOTAL"], None]
    big = segment(admin, ids, big_orders(ids))
    expected = count_orders(admin, ids, {"filter": [">", total, 100]})
    assert 0 < expected < count_orders(admin, ids, {})
    assert count_orders(admin, ids, {"filter": ["segment", big]}) == expected
    small = count_orders(admin, ids, {"filter": ["<", total, 120]})
    assert count_orders(admin, ids, {"filter": ["and", ["segment", big], ["<", total, 120]]}) == \
        count_orders(admin, ids, {"filter": ["and", [">", total, 100], ["<", total, 120]]}) < small
    # a segment made of a segment, and a segment inside an aggregation's condition
    nested = segment(admin, ids, {"filter": ["and", ["segment", big], ["<", total, 120]]}, name="Nested")
    assert count_orders(admin, ids, {"filter": ["segment", nested]}) == \
        count_orders(admin, ids, {"filter": ["and", [">", total, 100], ["<", total, 120]]})
    where = run(admin, ids, {"aggregation": [["count-where", ["segment", big]]]}).json
    assert where["data"]["rows"][0][0] == expected
    # MBQL 5 form
    mbql5 = admin.post("/api/dataset", json={"lib/type": "mbql/query", "database": ids["db"], "stages": [{
        "lib/type": "mbql.stage/mbql", "source-table": ids["ORDERS"],
        "aggregation": [["count", {"lib/uuid": str(uuid.uuid4())}]],
        "filters": [["segment", {"lib/uuid": str(uuid.uuid4())}, big]]}]})
    assert mbql5.status_code == 202, mbql5.json
    assert mbql5.json["data"]["rows"][0][0] == expected
    # archived segments still expand, as Metabase's
    admin.put(f"/api/segment/{big}", json={"archived": True, "revision_message": "old"})
    assert count_orders(admin, ids, {"filter": ["segment", big]}) == expected


def test_segment_errors(app, admin, sample_database_file):
    ids = sample(app, admin)
    big = segment(admin, ids, big_orders(ids))
    unknown = run(admin, ids, {"aggregation": [["count"]], "filter": ["segment", 987654]})
    assert unknown.status_code == 400 and unknown.json["error"] == "Segment 987654 does not exist, or is invalid."
    elsewhere = run(admin, ids, {"aggregation": [["count"]], "filter": ["segment", big]}, table="PEOPLE")
    assert elsewhere.status_code == 400 and "source table" in elsewhere.json["error"]
    malformed = run(admin, ids, {"aggregation": [["count"]], "filter": ["segment", "x"]})
    assert malformed.status_code == 400


def test_metric_aggregation(app, admin, sample_database_file):
    ids = sample(app, admin)
    total = ["field", ids["ORDERS.TOTAL"], None]
    revenue = metric_card(admin, ids, ["sum", total], [">", total, 100])
    plain = run(admin, ids, {"aggregation": [["sum", total]], "filter": [">", total, 100]}).json["data"]["rows"][0][0]
    body = run(admin, ids, {"aggregation": [["metric", revenue], ["count"]]})
    assert body.status_code == 202, body.json
    value, count = body.json["data"]["rows"][0]
    assert abs(value - plain) < 1e-6
    assert count == count_orders(admin, ids, {})  # the metric's filter restricts only the metric
    col = body.json["data"]["cols"][0]
    assert col["name"] == "sum" and col["display_name"] == "Big revenue" and col["source"] == "aggregation"
    named = run(admin, ids, {"aggregation": [["aggregation-options", ["metric", revenue], {"display-name": "R"}]]})
    assert named.json["data"]["cols"][0]["display_name"] == "R"
    # a counting metric with a filter, broken out by a column
    big_count = metric_card(admin, ids, ["count"], [">", total, 100], name="Big orders")
    category = ["field", ids["PRODUCTS.CATEGORY"], {"source-field": ids["ORDERS.PRODUCT_ID"]}]
    by = run(admin, ids, {"aggregation": [["metric", big_count]], "breakout": [category]}).json["data"]["rows"]
    direct = run(admin, ids, {"aggregation": [["count"]], "breakout": [category],
                              "filter": [">", total, 100]}).json["data"]["rows"]
    assert dict(map(tuple, by)) == dict(map(tuple, direct))
    # MBQL 5: ["metric", {opts}, id]
    mbql5 = admin.post("/api/dataset", json={"lib/type": "mbql/query", "database": ids["db"], "stages": [{
        "lib/type": "mbql.stage/mbql", "source-table": ids["ORDERS"],
        "aggregation": [["metric", {"lib/uuid": str(uuid.uuid4())}, big_count]]}]})
    assert mbql5.status_code == 202, mbql5.json
    assert mbql5.json["data"]["rows"][0][0] == count_orders(admin, ids, {"filter": [">", total, 100]})


def test_metric_errors(app, admin, sample_database_file):
    ids = sample(app, admin)
    question = metric_card(admin, ids, ["count"], card_type="question")
    people_metric = metric_card(admin, ids, ["count"], table="PEOPLE", name="People")
    for ident in (question, 987654):
        response = run(admin, ids, {"aggregation": [["metric", ident]]})
        assert response.status_code == 400 and response.json["error"] == f"Metric {ident} does not exist, or is invalid."
    other_table = run(admin, ids, {"aggregation": [["metric", people_metric]]})
    assert other_table.status_code == 400 and "Incompatible metric" in other_table.json["error"]
