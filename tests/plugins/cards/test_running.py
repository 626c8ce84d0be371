"""Running saved cards: results, parameters (JSON or form), downloads with permissions, pivot."""
import csv
import io
import json

from core.appdb.counters import flush

from .fixtures import card_body, mbql_query, native_query


def test_run_native_card_with_parameters(user, warehouse):
    tag = {"id": "t1", "name": "min_age", "display-name": "Min age", "type": "number"}
    card = user.post("/api/card", json=card_body("Old people", native_query(
        warehouse["db"], "SELECT first_name FROM people WHERE age >= {{min_age}} ORDER BY id", min_age=tag),
        parameters=[{"id": "p1", "type": "number/=", "slug": "min_age",
                     "target": ["variable", ["template-tag", "min_age"]], "default": 50}])).json
    ran = user.post(f"/api/card/{card['id']}/query")
    assert ran.status_code == 202, ran.json
    assert ran.json["data"]["rows"] == [["Grace"]] and ran.json["context"] == "question"
    params = [{"id": "p1", "type": "number/=", "target": ["variable", ["template-tag", "min_age"]], "value": 40}]
    ran = user.post(f"/api/card/{card['id']}/query", json={"parameters": params})
    assert ran.json["data"]["rows"] == [["Alan"], ["Grace"]]


def test_run_mbql_card_and_failures(user, warehouse):
    card = user.post("/api/card", json=card_body("Totals", mbql_query(
        warehouse["db"], **{"source-table": warehouse["orders"], "aggregation": [["sum", ["field", warehouse["orders.total"], None]]]}))).json
    assert user.get(f"/api/card/{card['id']}").json["last_query_start"] is None
    ran = user.post(f"/api/card/{card['id']}/query")
    assert ran.status_code == 202 and ran.json["data"]["rows"] == [[137.75]]
    flush(user.app)  # the query log is written by a background thread
    hydrated = user.get(f"/api/card/{card['id']}").json
    assert hydrated["last_query_start"] is not None and hydrated["average_query_time"] >= 0
    broken = user.post("/api/card", json=card_body("Broken", native_query(warehouse["db"], "SELECT nope FROM nowhere"))).json
    assert broken["result_metadata"] is None
    failed = user.post(f"/api/card/{broken['id']}/query")
    assert failed.status_code == 400 and failed.json["status"] == "failed"
    assert user.post("/api/card/999/query").status_code == 404


def test_exports_json_csv_form_encoded(user, warehouse):
    tag = {"id": "t1", "name": "name", "display-name": "Name", "type": "text"}
    card = user.post("/api/card", json=card_body("By name", native_query(
        warehouse["db"], "SELECT id, last_name FROM people WHERE first_name = {{name}}", name=tag))).json
    params = json.dumps([{"type": "category", "target": ["variable", ["template-tag", "name"]], "value": "Alan"}])
    as_json = user.post(f"/api/card/{card['id']}/query/json", data={"parameters": params, "format_rows": "false"})
    assert as_json.status_code == 200, as_json.data
    assert json.loads(as_json.data) == [{"id": 2, "last_name": "Turing"}]
    as_csv = user.post(f"/api/card/{card['id']}/query/csv", data={"parameters": params})
    assert as_csv.status_code == 200 and as_csv.headers["Content-Type"].startswith("text/csv")
    assert list(csv.reader(io.StringIO(as_csv.data.decode("utf-8-sig")))) == [["id", "last_name"], ["2", "Turing"]]
    assert "attachment" in as_csv.headers["Content-Disposition"]
    as_json_body = user.post(f"/api/card/{card['id']}/query/json", json={"parameters": json.loads(params)})
    assert json.loads(as_json_body.data) == [{"id": 2, "last_name": "Turing"}]
    assert user.post(f"/api/card/{card['id']}/query/docx").status_code == 400


def test_download_and_run_permissions(app, admin, user, warehouse):
    card = user.post("/api/card", json=card_body("People", native_query(warehouse["db"], "SELECT id FROM people"))).json
    graph = admin.get("/api/permissions/graph").json
    all_users = "1"
    graph["groups"][all_users][str(warehouse["db"])]["download"] = {"schemas": "none"}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    assert user.post(f"/api/card/{card['id']}/query").status_code == 202
    assert user.post(f"/api/card/{card['id']}/query/csv").status_code == 403
    graph = admin.get("/api/permissions/graph").json
    graph["groups"][all_users][str(warehouse["db"])]["data"] = {"schemas": "block"}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    assert user.post(f"/api/card/{card['id']}/query").status_code == 403
    assert admin.post(f"/api/card/{card['id']}/query").status_code == 202


def test_pivot_card(user, warehouse):
    card = user.post("/api/card", json=card_body("Pivot", mbql_query(
        warehouse["db"], **{"source-table": warehouse["orders"], "aggregation": [["count"]],
                            "breakout": [["field", warehouse["orders.person_id"], None]]}), display="pivot")).json
    ran = user.post(f"/api/card/pivot/{card['id']}/query")
    assert ran.status_code == 202, ran.json
    rows = ran.json["data"]["rows"]
    assert [1, 0, 2] in rows and [None, 1, 4] in rows
    assert ran.json["context"] == "question"


def test_saved_native_card_runs_without_native_permission(app, admin, user, warehouse):
    card = admin.post("/api/card", json=card_body("Native by admin", native_query(
        warehouse["db"], "SELECT count(*) AS n FROM people"))).json
    graph = admin.get("/api/permissions/graph").json
    graph["groups"]["1"][str(warehouse["db"])]["data"] = {"schemas": "all", "native": "none"}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    adhoc = user.post("/api/dataset", json=native_query(warehouse["db"], "SELECT count(*) AS n FROM people"))
    assert adhoc.status_code == 403
    ran = user.post(f"/api/card/{card['id']}/query")
    assert ran.status_code == 202 and ran.json["data"]["rows"] == [[3]]
    assert user.post("/api/card", json=card_body("Mine", native_query(warehouse["db"], "SELECT 1"))).status_code == 403


def test_saved_native_card_referencing_a_card_runs_without_native_permission(admin, user, warehouse):
    inner = admin.post("/api/card", json=card_body("Inner", native_query(warehouse["db"], "SELECT id FROM people"))).json
    name = f"#{inner['id']}-inner"
    outer = admin.post("/api/card", json=card_body("Outer", native_query(
        warehouse["db"], f"SELECT count(*) AS n FROM {{{{{name}}}}} x",
        **{name: {"id": "t", "name": name, "display-name": "Inner", "type": "card", "card-id": inner["id"]}}))).json
    graph = admin.get("/api/permissions/graph").json
    graph["groups"]["1"][str(warehouse["db"])]["data"] = {"schemas": "all", "native": "none"}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    ran = user.post(f"/api/card/{outer['id']}/query")
    assert ran.status_code == 202 and ran.json["data"]["rows"] == [[3]]


def test_temporal_text_is_the_same_with_and_without_the_c_reader(app, user, warehouse, monkeypatch):
    # SQLite's datetime text becomes ISO-8601 in the C reader (iso_text) or in encode_rows: same body.
    import sqlite3

    from core.appdb.models import Field, Table
    from drivers import sqlite_rows

    path = app.config["TESSERA_DATA_DIR"] + "/files/warehouse.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, at TIMESTAMP)")
    con.executemany("INSERT INTO events VALUES (?, ?)", list(enumerate(
        ["2024-01-05 13:45:00", "2024-01-05 13:45:00.123", None, "2024-01-05", "é024-01-05 13:45:00",
         "2024-01-05T13:45:00", 1704462300, "aaaaaaaaaa bbbbbbbbb"])))
    con.commit()
    con.close()
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        table = Table(db_id=warehouse["db"], name="events", display_name="Events", initial_sync_status="complete")
        session.add(table)
        session.flush()
        for position, (name, base) in enumerate([("id", "type/Integer"), ("at", "type/DateTime")]):
            session.add(Field(table_id=table.id, name=name, display_name=name, database_type="TEXT", base_type=base,
                              effective_type=base, position=position, database_position=position))
        session.commit()
        table_id = table.id
    card = user.post("/api/card", json=card_body("Events", mbql_query(
        warehouse["db"], **{"source-table": table_id, "order-by": [["asc", ["field", "id", {"base-type": "type/Integer"}]]]}))).json
    with_reader = user.post(f"/api/card/{card['id']}/query").json["data"]["rows"]
    assert with_reader[0][1] == "2024-01-05T13:45:00" and with_reader[3][1] == "2024-01-05"
    monkeypatch.setattr(sqlite_rows, "native", None)
    assert user.post(f"/api/card/{card['id']}/query").json["data"]["rows"] == with_reader


def test_rows_the_c_reader_writes_as_json_are_the_body_python_writes(app, user, warehouse, monkeypatch):
    # The C reader writes a card's rows as JSON itself (QueryResult.json); the response must be the one
    # the sqlite3 module's rows give: integers past 2**53 as text, reals as orjson writes them, escapes,
    # blobs, nulls, inferred column types, the row count and the row limit.
    from drivers import sqlite_rows

    values = ("SELECT 9007199254740993 AS big, -9007199254740991 AS safe, 1.5e-05 AS tiny, 1e16 AS huge, "
              "'q\"uote\\\\ tab\t nl\n é \u2028' AS text, x'00ff' AS blob, NULL AS missing, n FROM s")
    sql = f"WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 2100) {values}"
    card = user.post("/api/card", json=card_body("Values", native_query(warehouse["db"], sql))).json
    with_reader = user.post(f"/api/card/{card['id']}/query")
    monkeypatch.setattr(sqlite_rows, "native", None)
    without = user.post(f"/api/card/{card['id']}/query")
    assert with_reader.status_code == without.status_code == 202
    body, expected = with_reader.json, without.json
    assert body["data"] == expected["data"] and body["row_count"] == expected["row_count"] == 2000
    assert body["data"]["rows"][0][:7] == ["9007199254740993", -9007199254740991, 1.5e-05, 1e16,
                                            "q\"uote\\\\ tab\t nl\n é \u2028", "\x00\ufffd", None]
    assert body["data"]["rows_truncated"] == 2000
    assert [c["base_type"] for c in body["data"]["cols"]] == [c["base_type"] for c in expected["data"]["cols"]]


def test_a_run_kept_for_one_user_is_still_refused_to_another(app, admin, user, warehouse):
    """A card's run inputs are kept per card, not per user: after the admin's runs, a user who cannot read
    the card's collection, or see its data, is still refused."""
    collection = admin.post("/api/collection", json={"name": "Private"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(collection): "none"}}})
    query = mbql_query(warehouse["db"], **{"source-table": warehouse["people"]})
    hidden = admin.post("/api/card", json=card_body("Hidden", query, collection_id=collection)).json["id"]
    shown = admin.post("/api/card", json=card_body("Shown", query)).json["id"]
    for client, status in ((admin, 202), (user, 403), (admin, 202), (user, 403)):
        assert client.post(f"/api/card/{hidden}/query").status_code == status
    assert user.post(f"/api/card/{shown}/query").status_code == 202
    graph = admin.get("/api/permissions/graph").json
    graph["groups"]["1"][str(warehouse["db"])]["data"] = {"schemas": "block"}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    assert admin.post(f"/api/card/{shown}/query").status_code == 202
    assert user.post(f"/api/card/{shown}/query").status_code == 403
