"""The compiler's behaviour as a client sees it through /api/dataset: temporal breakouts and their
column metadata, MBQL 5 and legacy forms giving the same answer, and bad clauses as 400s that name
the clause."""
from __future__ import annotations

from collections import Counter

from .conftest import order_rows


def mbql(orders, inner, **extra):
    return {"database": orders.database_id, "type": "query", "query": {"source-table": orders.table_id, **inner},
            **extra}


def test_month_breakout_cols_and_rows(admin, orders):
    f = orders.fields
    body = admin.post("/api/dataset", json=mbql(orders, {
        "aggregation": [["count"]], "breakout": [["field", f["created_at"], {"temporal-unit": "month"}]]})).json
    assert body["status"] == "completed", body
    expected = Counter(r[3][:7] for r in order_rows(orders.count))
    assert [(row[0][:7], row[1]) for row in body["data"]["rows"]] == sorted(expected.items())
    created = body["data"]["cols"][0]
    assert created["unit"] == "month" and created["display_name"] == "Created At: Month"
    assert created["field_ref"] == ["field", f["created_at"], {"temporal-unit": "month"}]
    assert created["source"] == "breakout"


def test_mbql5_and_legacy_agree(admin, orders):
    f = orders.fields
    legacy = mbql(orders, {"aggregation": [["sum", ["field", f["price"], None]]],
                           "filter": ["starts-with", ["field", f["category"], None], "g", {"case-sensitive": False}],
                           "breakout": [["field", f["category"], None]]})
    current = {"lib/type": "mbql/query", "database": orders.database_id, "stages": [{
        "lib/type": "mbql.stage/mbql", "source-table": orders.table_id,
        "aggregation": [["sum", {"lib/uuid": "a"}, ["field", {"lib/uuid": "b"}, f["price"]]]],
        "filters": [["starts-with", {"lib/uuid": "c", "case-sensitive": False}, ["field", {"lib/uuid": "d"}, f["category"]], "g"]],
        "breakout": [["field", {"lib/uuid": "e"}, f["category"]]]}]}
    one, two = (admin.post("/api/dataset", json=q).json for q in (legacy, current))
    assert one["data"]["rows"] == two["data"]["rows"]
    assert [r[0] for r in one["data"]["rows"]] == ["Gadget", "Gizmo"]


def test_bad_clause_is_a_400_naming_it(admin, orders):
    f = orders.fields
    response = admin.post("/api/dataset", json=mbql(orders, {
        "breakout": [["field", f["created_at"], {"temporal-unit": "fortnight"}]], "aggregation": [["count"]]}))
    assert response.status_code == 400
    assert "fortnight" in str(response.json)
    response = admin.post("/api/dataset", json=mbql(orders, {"fields": [["field", 987654, None]]}))
    assert response.status_code == 400
    assert "field 987654 does not exist" in str(response.json)
