"""MBQL through /api/dataset: results, parameters applied as filters, limits, native form, pivot,
parameter values."""
from __future__ import annotations

import datetime as dt

from .conftest import CATEGORIES, order_rows


def mbql(orders, inner, **extra):
    return {"database": orders.database_id, "type": "query", "query": {"source-table": orders.table_id, **inner},
            **extra}


def expected_counts(predicate=lambda r: True, count=2500):
    counts = {}
    for row in order_rows(count):
        if predicate(row):
            counts[row[1]] = counts.get(row[1], 0) + 1
    return counts


def test_aggregate_by_category(admin, orders):
    f = orders.fields
    response = admin.post("/api/dataset", json=mbql(orders, {"aggregation": [["count"], ["sum", ["field", f["price"], None]]],
                                                            "breakout": [["field", f["category"], None]]}))
    assert response.status_code == 202, response.json
    body = response.json
    rows = {r[0]: r[1] for r in body["data"]["rows"]}
    assert rows == expected_counts()
    cols = body["data"]["cols"]
    assert [c["source"] for c in cols] == ["breakout", "aggregation", "aggregation"]
    assert cols[0]["id"] == f["category"] and cols[0]["table_id"] == orders.table_id
    assert cols[1]["name"] == "count" and cols[1]["field_ref"] == ["aggregation", 0]
    assert "rows_truncated" not in body["data"]


def test_unaggregated_default_limit_and_explicit_limit(admin, orders):
    body = admin.post("/api/dataset", json=mbql(orders, {})).json
    assert body["row_count"] == 2000 and body["data"]["rows_truncated"] == 2000
    assert "LIMIT 2000" in body["data"]["native_form"]["query"]
    body = admin.post("/api/dataset", json=mbql(orders, {"limit": 5})).json
    assert body["row_count"] == 5 and "rows_truncated" not in body["data"]


def test_parameters_filter_mbql(admin, orders):
    f = orders.fields
    query = mbql(orders, {"aggregation": [["count"]], "breakout": [["field", f["category"], None]]}, parameters=[
        {"type": "string/=", "target": ["dimension", ["field", f["category"], None]], "value": ["Widget", "Gizmo"]},
        {"type": "date/month-year", "target": ["dimension", ["field", f["created_at"], None]], "value": "2024-02"},
    ])
    body = admin.post("/api/dataset", json=query).json
    assert body["status"] == "completed", body

    def in_feb(row):
        return row[1] in ("Widget", "Gizmo") and row[3].startswith("2024-02")

    assert {r[0]: r[1] for r in body["data"]["rows"]} == expected_counts(in_feb)


def test_number_between_and_contains_parameters(admin, orders):
    f = orders.fields
    query = mbql(orders, {"aggregation": [["count"]]}, parameters=[
        {"type": "number/between", "target": ["dimension", ["field", f["price"], None]], "value": [10, 20]},
        {"type": "string/contains", "target": ["dimension", ["field", f["category"], None]], "value": ["dg"],
         "options": {"case-sensitive": False}},
    ])
    body = admin.post("/api/dataset", json=query).json
    expected = sum(1 for r in order_rows(2500) if 10 <= r[2] <= 20 and "dg" in r[1].lower())
    assert body["data"]["rows"] == [[expected]]


def test_native_endpoint(admin, orders):
    f = orders.fields
    query = mbql(orders, {"aggregation": [["count"]], "breakout": [["field", f["category"], None]]})
    response = admin.post("/api/dataset/native", json=query)
    assert response.status_code == 200
    assert "GROUP BY" in response.json["query"] and "\n" in response.json["query"]
    flat = admin.post("/api/dataset/native", json={**query, "pretty": False}).json["query"]
    assert "\n" not in flat
    assert admin.post("/api/dataset/native", json={"database": 0}).status_code == 400


def test_pivot(admin, orders):
    f = orders.fields
    query = mbql(orders, {"aggregation": [["count"]],
                          "breakout": [["field", f["category"], None],
                                       ["field", f["created_at"], {"temporal-unit": "year"}]]})
    response = admin.post("/api/dataset/pivot", json={**query, "pivot_rows": [0], "pivot_cols": [1]})
    assert response.status_code == 202, response.json
    body = response.json
    names = [c["name"] for c in body["data"]["cols"]]
    assert names[2] == "pivot-grouping" and len(names) == 4
    by_group = {}
    for row in body["data"]["rows"]:
        by_group.setdefault(row[2], []).append(row)
    assert sum(r[3] for r in by_group[0]) == 2500
    assert by_group[3] == [[None, None, 3, 2500]]
    assert {r[0]: r[3] for r in by_group[2]} == expected_counts()


def test_parameter_values_and_search(admin, orders):
    f = orders.fields
    body = {"parameter": {"id": "p", "type": "category"}, "field_ids": [f["category"]]}
    response = admin.post("/api/dataset/parameter/values", json=body)
    assert response.status_code == 200, response.json
    assert response.json == {"values": [[c] for c in sorted(CATEGORIES)], "has_more_values": False}
    found = admin.post("/api/dataset/parameter/search/GAD", json=body).json
    assert found["values"] == [["Gadget"]]
    assert admin.post("/api/dataset/parameter/values", json={"parameter": {}, "field_ids": [999]}).status_code == 404


def test_mbql_error_is_invalid_query(admin, orders):
    response = admin.post("/api/dataset", json=mbql(orders, {"aggregation": [["bogus"]]}))
    assert response.status_code == 400 and response.json["error_type"] == "invalid-query"


def test_dates_come_back_iso(admin, orders):
    f = orders.fields
    body = admin.post("/api/dataset", json=mbql(orders, {"fields": [["field", f["created_at"], None]],
                                                        "order-by": [["asc", ["field", f["id"], None]]],
                                                        "limit": 1})).json
    value = body["data"]["rows"][0][0]
    assert dt.datetime.fromisoformat(value.replace("Z", "")) == dt.datetime(2024, 1, 1, 7)


def test_mbql5_query(admin, orders):
    f = orders.fields
    query = {"lib/type": "mbql/query", "database": orders.database_id, "stages": [{
        "lib/type": "mbql.stage/mbql", "source-table": orders.table_id,
        "aggregation": [["count", {"lib/uuid": "7f3c1a52-0000-4000-8000-000000000001"}]],
        "breakout": [["field", {"lib/uuid": "7f3c1a52-0000-4000-8000-000000000002"}, f["category"]]]}]}
    body = admin.post("/api/dataset", json=query).json
    assert body["status"] == "completed", body
    assert {r[0]: r[1] for r in body["data"]["rows"]} == expected_counts()


def test_virtual_database_runs_on_the_source_card(app, admin, orders):
    from core.appdb.models import Card

    state = app.extensions["tessera"]
    with state.db.session() as session:
        card = Card(name="all orders", display="table", creator_id=admin.user["id"], database_id=orders.database_id,
                    query_type="query", dataset_query=mbql(orders, {}))
        session.add(card)
        session.flush()
        card_id = card.id
    body = admin.post("/api/dataset", json={"database": -1337, "type": "query",
                                            "query": {"source-table": f"card__{card_id}", "aggregation": [["count"]]}}).json
    assert body["status"] == "completed", body
    assert body["data"]["rows"] == [[2500]] and body["database_id"] == orders.database_id
    missing = admin.post("/api/dataset", json={"database": -1337, "type": "query",
                                               "query": {"source-table": "card__999", "aggregation": [["count"]]}})
    assert missing.status_code == 400 and missing.json["status"] == "failed"


def test_parameter_values_from_static_list_and_card(app, admin, orders):
    static = {"parameter": {"id": "p", "type": "category", "values_source_type": "static-list",
                            "values_source_config": {"values": ["Apple", "Banana", ["c", "Cherry"]]}}}
    assert admin.post("/api/dataset/parameter/values", json=static).json == {
        "values": [["Apple"], ["Banana"], ["c", "Cherry"]], "has_more_values": False}
    assert admin.post("/api/dataset/parameter/search/an", json=static).json["values"] == [["Banana"]]
    from core.appdb.models import Card

    with app.extensions["tessera"].db.session() as session:
        card = Card(name="cats", display="table", creator_id=admin.user["id"], database_id=orders.database_id,
                    query_type="query", dataset_query=mbql(orders, {"fields": [["field", orders.fields["category"], None]]}))
        session.add(card)
        session.flush()
        card_id = card.id
    from_card = {"parameter": {"id": "p", "type": "category", "values_source_type": "card",
                               "values_source_config": {"card_id": card_id,
                                                        "value_field": ["field", orders.fields["category"], None]}}}
    response = admin.post("/api/dataset/parameter/values", json=from_card)
    assert response.status_code == 200, response.json
    assert sorted(v[0] for v in response.json["values"]) == sorted(CATEGORIES)
    assert admin.post("/api/dataset/parameter/search/giz", json=from_card).json["values"] == [["Gizmo"]]


def test_temporal_unit_parameter(admin, orders):
    f = orders.fields
    ref = ["field", f["created_at"], {"temporal-unit": "month"}]
    query = mbql(orders, {"aggregation": [["count"]], "breakout": [ref]},
                 parameters=[{"type": "temporal-unit", "target": ["dimension", ref], "value": "year"}])
    body = admin.post("/api/dataset", json=query).json
    assert body["status"] == "completed", body
    years = {r[0][:4]: r[1] for r in body["data"]["rows"]}
    expected = {}
    for row in order_rows(2500):
        expected[row[3][:4]] = expected.get(row[3][:4], 0) + 1
    assert years == expected
    bad = admin.post("/api/dataset", json=mbql(orders, {"aggregation": [["count"]], "breakout": [ref]}, parameters=[
        {"type": "temporal-unit", "target": ["dimension", ref], "value": "fortnight"}]))
    assert bad.status_code == 400


def test_date_breakout_without_unit_groups_by_day(admin, orders):
    """Metabase's auto-bucket-datetimes: the breakout gets `day`, and data.cols says so."""
    f = orders.fields
    query = mbql(orders, {"aggregation": [["count"]], "breakout": [["field", f["created_at"], None]]})
    body = admin.post("/api/dataset", json=query).json
    assert body["status"] == "completed", body
    expected: dict = {}
    for row in order_rows(2500):
        expected[row[3][:10]] = expected.get(row[3][:10], 0) + 1
    assert {r[0][:10]: r[1] for r in body["data"]["rows"]} == expected
    assert [r[0][:10] for r in body["data"]["rows"]] == sorted(expected)
    col = body["data"]["cols"][0]
    assert col["unit"] == "day"
    assert col["field_ref"] == ["field", f["created_at"], {"temporal-unit": "day"}]
    assert col["display_name"] == "Created At: Day"
    native = admin.post("/api/dataset/native", json=query).json["query"]
    assert "'start of day'" in native.split("GROUP BY")[1]
    # `default` is the way to ask for the raw instant
    raw = mbql(orders, {"aggregation": [["count"]], "breakout": [["field", f["created_at"], {"temporal-unit": "default"}]]})
    body = admin.post("/api/dataset", json=raw).json
    assert body["row_count"] == 2500
    assert body["data"]["cols"][0]["unit"] == "default"
    assert body["data"]["cols"][0]["field_ref"] == ["field", f["created_at"], {"temporal-unit": "default"}]


def test_start_of_week_setting_shapes_weeks(admin, orders):
    """The start-of-week setting, read per query: week buckets start on its day, day-of-week counts
    it as 1, and an excluded weekday (MBQL parameter and native field filter) is the same day
    whatever the setting numbers it."""
    f = orders.fields
    created = [dt.datetime.fromisoformat(row[3]) for row in order_rows(2500)]

    def run(query):
        body = admin.post("/api/dataset", json=query).json
        assert body["status"] == "completed", body
        return body["data"]["rows"]

    def week_of(d, first):
        day = dt.datetime(d.year, d.month, d.day)
        while day.weekday() != first:
            day -= dt.timedelta(days=1)
        return day.isoformat()

    def counts(values):
        out: dict = {}
        for v in values:
            out[v] = out.get(v, 0) + 1
        return out

    weeks = mbql(orders, {"aggregation": [["count"]], "breakout": [["field", f["created_at"], {"temporal-unit": "week"}]]})
    days = mbql(orders, {"aggregation": [["count"]],
                         "breakout": [["field", f["created_at"], {"temporal-unit": "day-of-week"}]]})
    no_mondays = mbql(orders, {"aggregation": [["count"]]}, parameters=[
        {"type": "date/all-options", "target": ["dimension", ["field", f["created_at"], None]], "value": "exclude-days-Mon"}])
    tags = {"d": {"id": "d", "name": "d", "display-name": "D", "type": "dimension", "widget-type": "date/all-options",
                  "dimension": ["field", f["created_at"], None]}}
    native_no_mondays = {"database": orders.database_id, "type": "native",
                         "native": {"query": "SELECT count(*) FROM orders WHERE {{d}}", "template-tags": tags},
                         "parameters": [{"type": "date/all-options", "target": ["dimension", ["template-tag", "d"]],
                                         "value": "exclude-days-Mon"}]}
    not_monday = sum(1 for d in created if d.weekday() != 0)
    for setting, first in (("monday", 0), ("wednesday", 2), ("sunday", 6)):
        assert admin.put("/api/setting/start-of-week", json={"value": setting}).status_code == 204
        assert {r[0][:19]: r[1] for r in run(weeks)} == counts(week_of(d, first) for d in created), setting
        assert {r[0]: r[1] for r in run(days)} == counts((d.weekday() - first) % 7 + 1 for d in created), setting
        assert run(no_mondays) == [[not_monday]], setting
        assert run(native_no_mondays) == [[not_monday]], setting


def test_relative_filters_count_from_the_report_time_zone(admin, orders):
    """"Today" is the report time zone's today, as for parameters: 26 hours apart, these two zones never
    share a date."""
    from zoneinfo import ZoneInfo

    query = mbql(orders, {"aggregation": [["count"]],
                          "filter": ["time-interval", ["field", orders.fields["created_at"], None], "current", "day"]})
    for zone in ("Etc/GMT-14", "Etc/GMT+12"):
        assert admin.put("/api/setting/report-timezone", json={"value": zone}).status_code == 204
        before = dt.datetime.now(ZoneInfo(zone)).date()
        sql = admin.post("/api/dataset/native", json={**query, "pretty": False}).json["query"]
        after = dt.datetime.now(ZoneInfo(zone)).date()
        assert before.isoformat() in sql or after.isoformat() in sql, (zone, sql)
