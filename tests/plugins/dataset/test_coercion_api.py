"""A coercion strategy set through PUT /api/field/:id changes what POST /api/dataset answers: the
UNIX-seconds column is bucketed, filtered and returned as a date-time (core.query.coercion)."""
from __future__ import annotations

import calendar
import datetime as dt

from core.testing import sqlite_file, wait_for_sync

MOMENTS = [dt.datetime(2024, 1, 31, 23, 59, 59), dt.datetime(2024, 2, 1, 0, 0, 1), dt.datetime(2024, 2, 15, 12, 0),
           dt.datetime(2024, 3, 1, 0, 0)]


def events_db(app, admin) -> tuple[int, int, dict]:
    rows = ", ".join(f"({i}, {calendar.timegm(m.timetuple())}, '{m.isoformat()}', x'00')"
                     for i, m in enumerate(MOMENTS, start=1))
    path = sqlite_file(app, "events.db", "CREATE TABLE events (id INTEGER PRIMARY KEY, at_seconds INTEGER, "
                                         f"at_text TEXT, payload BLOB); INSERT INTO events VALUES {rows};")
    database = admin.post("/api/database", json={"name": "Events", "engine": "sqlite", "details": {"db": path}}).json
    wait_for_sync(app)
    table = admin.get(f"/api/database/{database['id']}/metadata").json["tables"][0]
    return database["id"], table["id"], {f["name"]: f["id"] for f in table["fields"]}


def run(admin, database_id, table_id, inner):
    response = admin.post("/api/dataset", json={"database": database_id, "type": "query",
                                                "query": {"source-table": table_id, **inner}})
    return response.status_code, response.json


def test_unix_seconds_strategy_through_the_api(app, admin):
    database_id, table_id, fields = events_db(app, admin)
    seconds = fields["at_seconds"]
    month = ["field", seconds, {"temporal-unit": "month"}]
    query = {"aggregation": [["count"]], "breakout": [month], "filter": [">=", ["field", seconds, None], "2024-02-01"]}

    # Before: a plain integer, which a temporal unit does not bucket and a date does not compare with.
    status, before = run(admin, database_id, table_id, query)
    assert status == 202 and before["data"]["rows"] != [["2024-02-01T00:00:00Z", 2], ["2024-03-01T00:00:00Z", 1]]

    updated = admin.put(f"/api/field/{seconds}", json={"coercion_strategy": "Coercion/UNIXSeconds->DateTime"})
    assert updated.status_code == 200, updated.json
    assert (updated.json["base_type"], updated.json["effective_type"]) == ("type/Integer", "type/Instant")

    status, body = run(admin, database_id, table_id, query)
    assert status == 202, body
    # 2024-01-31 23:59:59 UTC stays in January: the instant is read in UTC.
    assert body["data"]["rows"] == [["2024-02-01T00:00:00", 2], ["2024-03-01T00:00:00", 1]]
    col = body["data"]["cols"][0]
    assert (col["base_type"], col["effective_type"], col["unit"]) == ("type/Integer", "type/Instant", "month")
    assert col["coercion_strategy"] == "Coercion/UNIXSeconds->DateTime"

    status, body = run(admin, database_id, table_id, {"fields": [["field", fields["id"], None], ["field", seconds, None]],
                                                      "order-by": [["asc", ["field", seconds, None]]]})
    assert status == 202, body
    assert body["data"]["rows"] == [[i, m.isoformat()] for i, m in enumerate(MOMENTS, start=1)]
    assert body["data"]["cols"][1]["unit"] == "default"

    # Removing the strategy gives the integers back.
    assert admin.put(f"/api/field/{seconds}", json={"coercion_strategy": None}).json["effective_type"] == "type/Integer"
    status, body = run(admin, database_id, table_id, {"fields": [["field", seconds, None]], "limit": 1,
                                                      "order-by": [["asc", ["field", seconds, None]]]})
    assert body["data"]["rows"] == [[calendar.timegm(MOMENTS[0].timetuple())]]


def test_strategies_the_column_or_engine_cannot_take(app, admin):
    database_id, table_id, fields = events_db(app, admin)
    # UNIX times are numbers: Metabase refuses the strategy on text, and the field keeps its types.
    refused = admin.put(f"/api/field/{fields['at_text']}", json={"coercion_strategy": "Coercion/UNIXSeconds->DateTime"})
    assert refused.status_code == 400 and refused.json == "Incompatible coercion strategy."
    field = admin.get(f"/api/field/{fields['at_text']}").json
    assert (field["coercion_strategy"], field["effective_type"]) == (None, "type/Text")
    # Date-times stored as bytes: accepted on the field (any type may hold bytes), refused by the query.
    accepted = admin.put(f"/api/field/{fields['payload']}", json={"coercion_strategy": "Coercion/ISO8601Bytes->Temporal"})
    assert accepted.status_code == 200, accepted.json
    status, body = run(admin, database_id, table_id, {"fields": [["field", fields["payload"], None]]})
    assert status == 400 and body["status"] == "failed"
    assert "Coercion/ISO8601Bytes->Temporal, which the sqlite driver does not support" in body["error"]


def test_a_native_field_filter_reads_the_coerced_column(app, admin):
    """Metabase's field filters compile the field as MBQL does: a UNIX-seconds column takes dates."""
    database_id, _table_id, fields = events_db(app, admin)
    seconds = fields["at_seconds"]
    assert admin.put(f"/api/field/{seconds}", json={"coercion_strategy": "Coercion/UNIXSeconds->DateTime"}).status_code == 200
    query = {"database": database_id, "type": "native", "native": {
        "query": "SELECT id FROM events WHERE {{when}} ORDER BY id",
        "template-tags": {"when": {"name": "when", "display-name": "When", "type": "dimension",
                                   "dimension": ["field", seconds, None], "widget-type": "date/all-options"}}}}
    for value, ids in (("2024-02-01~2024-02-29", [2, 3]), ("2024-01-31", [1]), ("2024-03", [4]), ("2024-02-15", [3])):
        body = admin.post("/api/dataset", json={**query, "parameters": [
            {"type": "date/all-options", "target": ["dimension", ["template-tag", "when"]], "value": value}]}).json
        assert body["status"] == "completed", body
        assert body["data"]["rows"] == [[i] for i in ids], value
