"""POST /api/dataset with native queries: the envelope, template tags, failures, limits, timeouts."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from core.appdb.counters import flush
from core.appdb.models import Database


def native(orders, sql, tags=None, parameters=None, **extra):
    body = {"database": orders.database_id, "type": "native",
            "native": {"query": sql, "template-tags": tags or {}}, **extra}
    if parameters is not None:
        body["parameters"] = parameters
    return body


def test_native_envelope(admin, orders):
    response = admin.post("/api/dataset", json=native(orders, "SELECT id, category, price FROM orders ORDER BY id LIMIT 3"))
    assert response.status_code == 202, response.json
    body = response.json
    assert body["status"] == "completed"
    assert body["row_count"] == 3
    assert body["data"]["rows"] == [[1, "Gizmo", 1.25], [2, "Gadget", 2.5], [3, "Doohickey", 3.75]]
    cols = body["data"]["cols"]
    assert [c["name"] for c in cols] == ["id", "category", "price"]
    assert cols[0]["base_type"] == "type/Integer" and cols[1]["base_type"] == "type/Text"
    assert cols[2]["field_ref"] == ["field", "price", {"base-type": "type/Float"}]
    assert all(c["source"] == "native" and c["effective_type"] == c["base_type"] for c in cols)
    assert body["data"]["native_form"]["query"].startswith("SELECT id")
    assert body["data"]["results_metadata"]["columns"][0]["name"] == "id"
    assert body["data"]["results_timezone"] == "UTC"
    assert body["database_id"] == orders.database_id
    assert body["context"] == "ad-hoc"
    assert body["json_query"]["middleware"]["js-int-to-string?"] is True
    assert body["started_at"].endswith("Z") and isinstance(body["running_time"], int)
    assert "rows_truncated" not in body["data"]


def test_template_tags_and_hostile_values(admin, orders):
    tags = {"cat": {"id": "a", "name": "cat", "display-name": "Cat", "type": "text"},
            "f": {"id": "b", "name": "f", "display-name": "F", "type": "dimension", "widget-type": "number/between",
                  "dimension": ["field", orders.fields["price"], None]}}
    sql = "SELECT count(*) FROM orders WHERE category = {{cat}} [[AND {{f}}]]"
    params = [{"type": "category", "target": ["variable", ["template-tag", "cat"]], "value": "Widget"}]
    assert admin.post("/api/dataset", json=native(orders, sql, tags, params)).json["data"]["rows"] == [[625]]
    params.append({"type": "number/between", "target": ["dimension", ["template-tag", "f"]], "value": [0, 100]})
    body = admin.post("/api/dataset", json=native(orders, sql, tags, params)).json
    assert body["data"]["rows"] == [[20]]
    assert '"orders"."price" BETWEEN ? AND ?' in body["data"]["native_form"]["query"]
    assert body["data"]["native_form"]["params"] == ["Widget", 0, 100]
    hostile = [{"type": "category", "target": ["variable", ["template-tag", "cat"]],
                "value": "Widget' OR '1'='1"}]
    assert admin.post("/api/dataset", json=native(orders, sql, tags, hostile)).json["data"]["rows"] == [[0]]


def test_colons_and_percents_in_sql_are_text(admin, orders):
    sql = "SELECT ':not_a_bind' AS a, '50%' AS b, {{n}} AS n"
    tags = {"n": {"id": "n", "name": "n", "display-name": "N", "type": "number"}}
    params = [{"type": "number", "target": ["variable", ["template-tag", "n"]], "value": "7"}]
    body = admin.post("/api/dataset", json=native(orders, sql, tags, params)).json
    assert body["data"]["rows"] == [[":not_a_bind", "50%", 7]]


def test_missing_parameter_fails_with_400(admin, orders):
    tags = {"cat": {"id": "a", "name": "cat", "display-name": "Cat", "type": "text", "required": True}}
    response = admin.post("/api/dataset", json=native(orders, "SELECT * FROM orders WHERE category = {{cat}}", tags))
    assert response.status_code == 400
    body = response.json
    assert body["status"] == "failed"
    assert body["error_type"] == "missing-required-parameter"
    assert body["data"] == {"rows": [], "cols": []}
    assert body["row_count"] == 0 and body["database_id"] == orders.database_id


def test_sql_error_fails_with_driver_error(admin, orders):
    response = admin.post("/api/dataset", json=native(orders, "SELECT nope FROM orders"))
    assert response.status_code == 400
    assert response.json["status"] == "failed"
    assert response.json["error_type"] == "driver"
    assert "nope" in response.json["error"]


def test_writes_are_refused(admin, orders):
    response = admin.post("/api/dataset", json=native(orders, "DELETE FROM orders"))
    assert response.status_code == 400 and response.json["status"] == "failed"
    count = admin.post("/api/dataset", json=native(orders, "SELECT count(*) FROM orders")).json
    assert count["data"]["rows"] == [[2500]]


def test_unknown_database_and_bad_query(admin, orders):
    assert admin.post("/api/dataset", json={"database": 999, "type": "native",
                                            "native": {"query": "SELECT 1"}}).status_code == 400
    response = admin.post("/api/dataset", json={"database": orders.database_id, "type": "nonsense"})
    assert response.status_code == 400 and response.json["error_type"] == "invalid-query"


def test_requires_authentication(client, orders):
    assert client.post("/api/dataset", json=native(orders, "SELECT 1")).status_code == 401


def test_default_limit_and_constraints(admin, orders):
    body = admin.post("/api/dataset", json=native(orders, "SELECT id FROM orders")).json
    assert body["row_count"] == 2000
    assert body["data"]["rows_truncated"] == 2000
    body = admin.post("/api/dataset", json=native(orders, "SELECT id FROM orders",
                                                  constraints={"max-results": 10, "max-results-bare-rows": 5})).json
    assert body["row_count"] == 5 and body["data"]["rows_truncated"] == 5
    body = admin.post("/api/dataset", json=native(orders, "SELECT id FROM orders LIMIT 7")).json
    assert body["row_count"] == 7 and "rows_truncated" not in body["data"]


def test_unaggregated_limit_setting(admin, orders):
    assert admin.put("/api/setting/unaggregated-query-row-limit", json={"value": 100}).status_code == 204
    body = admin.post("/api/dataset", json=native(orders, "SELECT id FROM orders")).json
    assert body["row_count"] == 100


@pytest.mark.security_row(24)
def test_per_database_timeout_stops_the_statement(app, admin, orders):
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        database = session.get(Database, orders.database_id)
        database.settings = {"query-timeout-seconds": 0.3}
    slow = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000) "
            "SELECT count(*) FROM c")
    response = admin.post("/api/dataset", json=native(orders, slow))
    assert response.status_code == 400
    assert response.json["error_type"] == "timed-out"
    assert response.json["running_time"] < 1300  # the timeout plus 1 s (security.md row 24)
    # The pool's connection is usable afterwards, and the server still answers.
    assert admin.post("/api/dataset", json=native(orders, "SELECT 1")).json["data"]["rows"] == [[1]]
    assert admin.get("/api/health").json == {"status": "ok"}


def test_snippets_in_native_queries(admin, orders):
    created = admin.post("/api/native-query-snippet", json={"name": "widgets", "content": "category = 'Widget'"})
    assert created.status_code == 200, created.json
    nested = admin.post("/api/native-query-snippet",
                        json={"name": "cheap widgets", "content": "{{snippet: widgets}} AND price < {{p}}"})
    assert nested.status_code == 200
    tags = {"p": {"id": "p", "name": "p", "display-name": "P", "type": "number"},
            "snippet: cheap widgets": {"id": "s", "name": "snippet: cheap widgets", "display-name": "S",
                                       "type": "snippet", "snippet-name": "cheap widgets",
                                       "snippet-id": nested.json["id"]}}
    params = [{"type": "number", "target": ["variable", ["template-tag", "p"]], "value": 50}]
    body = admin.post("/api/dataset", json=native(orders, "SELECT count(*) FROM orders WHERE {{snippet: cheap widgets}}",
                                                  tags, params)).json
    assert body["data"]["rows"] == [[9]]
    missing = admin.post("/api/dataset", json=native(orders, "SELECT 1 WHERE {{snippet: nope}}")).json
    assert missing["status"] == "failed" and "nope" in missing["error"]


def test_pool_is_reported(admin, orders):
    admin.post("/api/dataset", json=native(orders, "SELECT 1"))
    pools = admin.get("/api/util/diagnostic_info/connection_pool_info").json["connection-pools"]
    assert f"db-{orders.database_id}" in pools


def test_query_execution_is_logged(app, admin, orders):
    from core.appdb.models import Query, QueryExecution

    query = native(orders, "SELECT id FROM orders LIMIT 3")
    admin.post("/api/dataset", json=query)
    admin.post("/api/dataset", json=native(orders, "SELECT broken"))
    flush(app)
    state = app.extensions["tessera"]
    with state.db.session() as session:
        runs = session.scalars(select(QueryExecution).order_by(QueryExecution.id)).all()
        assert [(r.result_rows, r.native, r.error is None, r.context) for r in runs] == [
            (3, True, True, "ad-hoc"), (0, True, False, "ad-hoc")]
        assert runs[0].executor_id == admin.user["id"]
        stats = session.get(Query, runs[0].hash)
        assert stats is not None and stats.average_execution_time >= 0
    duration = admin.post("/api/dataset/duration", json=query)
    assert duration.status_code == 200 and duration.json["average"] == stats.average_execution_time


def test_card_references(app, admin, orders):
    from core.appdb.models import Card

    state = app.extensions["tessera"]
    with state.db.session() as session:
        native_card = Card(name="small", display="table", creator_id=admin.user["id"], database_id=orders.database_id,
                           query_type="native", dataset_query=native(orders, "SELECT id FROM orders WHERE id <= 3;"))
        mbql_card = Card(name="widgets", display="table", creator_id=admin.user["id"], database_id=orders.database_id,
                         query_type="query", dataset_query={
                             "database": orders.database_id, "type": "query",
                             "query": {"source-table": orders.table_id, "fields": [["field", orders.fields["id"], None]],
                                       "filter": ["=", ["field", orders.fields["category"], None], "Widget"]}})
        session.add_all([native_card, mbql_card])
        session.flush()
        ids = native_card.id, mbql_card.id
    tag = f"#{ids[0]}-small"
    body = admin.post("/api/dataset", json=native(orders, f"SELECT count(*) FROM {{{{{tag}}}}} AS s",
                                                  {tag: {"id": "c", "name": tag, "display-name": "Small", "type": "card",
                                                         "card-id": ids[0]}})).json
    assert body["data"]["rows"] == [[3]], body
    tag = f"#{ids[1]}"
    body = admin.post("/api/dataset", json=native(orders, f"SELECT count(*) FROM {{{{{tag}}}}} AS w",
                                                  {tag: {"id": "w", "name": tag, "display-name": "W", "type": "card",
                                                         "card-id": ids[1]}})).json
    assert body["data"]["rows"] == [[625]], body
    missing = admin.post("/api/dataset", json=native(orders, "SELECT * FROM {{#9999}} AS x")).json
    assert missing["status"] == "failed" and "9999" in missing["error"]


def test_big_integers_are_strings_for_javascript(admin, orders):
    body = admin.post("/api/dataset", json=native(orders, "SELECT 9007199254740993 AS big, 42 AS small")).json
    assert body["data"]["rows"] == [["9007199254740993", 42]]
    plain = admin.post("/api/dataset", json=native(orders, "SELECT 9007199254740993 AS big",
                                                   middleware={"js-int-to-string?": False})).json
    assert plain["data"]["rows"] == [[9007199254740993]]


def test_malformed_queries_are_400_not_500(admin, orders):
    bad_bodies = [
        native(orders, "SELECT {{x}}", tags=["not", "a", "map"]),
        native(orders, "SELECT {{x}}", tags={"x": "not a map"}),
        native(orders, "SELECT {{x}}", {"x": {"name": "x", "type": "number"}}, parameters=["nope", 3]),
        native(orders, "SELECT {{x}}", {"x": {"name": "x", "type": "number"}},
               parameters=[{"type": "number", "target": ["variable", ["template-tag", "x"]], "value": {"a": 1}}]),
        native(orders, "SELECT 1 WHERE {{f}}", {"f": {"name": "f", "type": "dimension", "widget-type": "date/single",
                                                    "dimension": ["field", orders.fields["created_at"], None]}},
               parameters=[{"type": "date/single", "target": ["dimension", ["template-tag", "f"]], "value": 12}]),
        native(orders, "SELECT 1 WHERE {{f}}", {"f": {"name": "f", "type": "dimension", "widget-type": "category",
                                                    "dimension": "nonsense"}},
               parameters=[{"type": "category", "target": ["dimension", ["template-tag", "f"]], "value": "a"}]),
        native(orders, "SELECT 1 WHERE {{f}}", {"f": {"name": "f", "type": "dimension", "widget-type": "category",
                                                    "dimension": ["field", 99999, None]}},
               parameters=[{"type": "category", "target": ["dimension", ["template-tag", "f"]], "value": "a"}]),
        {"database": orders.database_id, "type": "query", "query": {"source-table": orders.table_id},
         "parameters": [{"type": "category", "target": ["dimension", ["field", 99999, None]], "value": "a"}]},
        {"database": orders.database_id, "type": "query", "query": {"source-table": orders.table_id},
         "parameters": [{"type": "number/between", "target": ["dimension", ["field", orders.fields["price"], None]],
                         "value": ["x", "y"]}]},
        native(orders, "SELECT 1 [[ AND {{x}}"),
    ]
    for body in bad_bodies:
        response = admin.post("/api/dataset", json=body)
        assert response.status_code == 400, (body, response.status_code, response.json)
        assert response.json["status"] == "failed", body
