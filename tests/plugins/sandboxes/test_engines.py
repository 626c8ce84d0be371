"""The sandbox oracle on SQLite, DuckDB and PostgreSQL: the reduced Sample Database of the compiler tests
(tests/core/query/sample.py) on each engine, PEOPLE sandboxed by STATE and ORDERS by a native question
joining PEOPLE (dropping DISCOUNT), two users with the two most common states. Each path's answer equals
the reference SQL's on the engine itself."""
import contextlib
import io
import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from core.testing import make_user, postgres_data_source, wait_for_sync
from tests.core.query import sample

ORDERS_SQL = ('SELECT o."ID", o."USER_ID", o."PRODUCT_ID", o."TOTAL", o."QUANTITY", o."CREATED_AT" FROM "ORDERS" o '
              'JOIN "PEOPLE" p ON o."USER_ID" = p."ID" WHERE p."STATE" = {{state}}')


def ok(response):
    assert response.status_code in (200, 202), (response.status_code, response.get_data(as_text=True)[:600])
    return response.json


def references(engine: sa.Engine) -> dict:
    with engine.connect() as conn:
        states = [r[0] for r in conn.execute(sa.text(
            'SELECT "STATE" FROM "PEOPLE" GROUP BY "STATE" ORDER BY COUNT(*) DESC, "STATE" LIMIT 2'))]
        out = {}
        for state in states:
            people = conn.execute(sa.text('SELECT COUNT(*) FROM "PEOPLE" WHERE "STATE" = :s'), {"s": state}).scalar()
            orders, total = conn.execute(sa.text(
                'SELECT COUNT(*), SUM(o."TOTAL") FROM "ORDERS" o JOIN "PEOPLE" p ON o."USER_ID" = p."ID" '
                'WHERE p."STATE" = :s'), {"s": state}).one()
            out[state] = (people, orders, float(total or 0))
    return out


@pytest.mark.security_row(14)
@pytest.mark.parametrize("engine_name", ["sqlite", "duckdb", "postgres"])
def test_sandbox_oracle_on_each_engine(app, admin, app_config, engine_name):
    with contextlib.ExitStack() as stack:
        if engine_name == "postgres":
            server = stack.enter_context(postgres_data_source("tessera_sbx"))
            loader = sa.create_engine(server.admin_url)
            sample.load(loader, "public")
            details = server.details
        else:
            files = Path(app_config["TESSERA_DATA_DIR"]) / "files"
            files.mkdir(parents=True, exist_ok=True)
            path = files / f"sample.{engine_name}"
            loader = sa.create_engine(f"{engine_name}:///{path}")
            sample.load(loader)
            details = {"db": str(path)} if engine_name == "sqlite" else {"database_file": str(path)}
        expected = references(loader)
        loader.dispose()  # DuckDB: one configuration per file in a process
        db = ok(admin.post("/api/database", json={"name": "Sample", "engine": engine_name, "details": details}))["id"]
        wait_for_sync(app)
        meta = ok(admin.get(f"/api/database/{db}/metadata"))
        tables = {t["name"]: t["id"] for t in meta["tables"]}
        fields = {t["name"]: {f["name"]: f["id"] for f in t["fields"]} for t in meta["tables"]}
        schema = meta["tables"][0]["schema"] or ""
        group = ok(admin.post("/api/permissions/group", json={"name": "Sales"}))["id"]
        clients = {}
        for i, state in enumerate(expected):
            client = make_user(app, f"rep{i}@example.com")
            ok(admin.put(f"/api/user/{client.user['id']}", json={
                "login_attributes": {"state": state}, "user_group_memberships": [{"id": 1}, {"id": group}]}))
            clients[state] = client
        card = ok(admin.post("/api/card", json={
            "name": "Orders of my state", "display": "table", "visualization_settings": {},
            "dataset_query": {"database": db, "type": "native", "native": {"query": ORDERS_SQL, "template-tags": {
                "state": {"id": "s", "name": "state", "display-name": "State", "type": "text", "required": True,
                          "default": next(iter(expected))}}}}}))["id"]
        view = {schema: {str(t): ("sandboxed" if name in ("PEOPLE", "ORDERS") else "unrestricted")
                         for name, t in tables.items()}}
        graph = ok(admin.get("/api/permissions/graph"))
        ok(admin.put("/api/permissions/graph", json={
            "revision": graph["revision"],
            "groups": {"1": {str(db): {"view-data": "blocked", "create-queries": "no"}},
                       str(group): {str(db): {"view-data": view, "create-queries": "query-builder"}}},
            "sandboxes": [
                {"group_id": group, "table_id": tables["PEOPLE"],
                 "attribute_remappings": {"state": ["dimension", ["field", fields["PEOPLE"]["STATE"], None]]}},
                {"group_id": group, "table_id": tables["ORDERS"], "card_id": card,
                 "attribute_remappings": {"state": ["variable", ["template-tag", "state"]]}}]}))

        def run(client, inner):
            return ok(client.post("/api/dataset", json={"database": db, "type": "query", "query": inner}))

        for state, (people, orders, total) in expected.items():
            client = clients[state]
            assert run(client, {"source-table": tables["PEOPLE"], "aggregation": [["count"]]})["data"]["rows"] == [[people]]
            got = run(client, {"source-table": tables["ORDERS"],
                               "aggregation": [["count"], ["sum", ["field", fields["ORDERS"]["TOTAL"], None]]]})
            assert got["data"]["rows"][0][0] == orders
            assert got["data"]["rows"][0][1] == pytest.approx(total)
            by_state = run(client, {"source-table": tables["ORDERS"], "aggregation": [["count"]], "breakout": [
                ["field", fields["PEOPLE"]["STATE"], {"source-field": fields["ORDERS"]["USER_ID"]}]]})
            assert by_state["data"]["rows"] == [[state, orders]]
            raw = run(client, {"source-table": tables["ORDERS"], "limit": 1})
            assert "DISCOUNT" not in [c["name"] for c in raw["data"]["cols"]]
            assert ok(client.get(f"/api/field/{fields['PEOPLE']['STATE']}/values"))["values"] == [[state]]
            csv = client.post("/api/dataset/csv", data={"query": json.dumps({
                "database": db, "type": "query", "query": {"source-table": tables["PEOPLE"]}})})
            assert csv.status_code == 200
            assert len(io.StringIO(csv.get_data(as_text=True)).read().strip().splitlines()) == people + 1
            native = client.post("/api/dataset", json={"database": db, "type": "native",
                                                       "native": {"query": 'SELECT COUNT(*) FROM "PEOPLE"'}})
            assert native.status_code == 403
