"""The sandboxed world of the sample database, built once per module: a group "Sales" sandboxed on
PEOPLE by the `state` attribute (STATE = attribute) and on ORDERS by a native question that joins
PEOPLE, filters it by the same attribute through a variable and drops DISCOUNT; users `tx` and `ca`
(state TX and CA) in Sales only; All Users blocked. `reference(sql)` answers from the sample file
itself, the oracle every path is compared with."""
import shutil
import sqlite3

import pytest

from core.testing import setup_admin, wait_for_sync
from core.testing.app import make_user
from tests.support import module_app

ORDERS_SQL = ("SELECT o.ID, o.USER_ID, o.PRODUCT_ID, o.SUBTOTAL, o.TAX, o.TOTAL, o.CREATED_AT, o.QUANTITY "
              "FROM ORDERS o JOIN PEOPLE p ON o.USER_ID = p.ID WHERE p.STATE = {{state}}")


class World:
    pass


def ok(response, status=(200, 202)):
    assert response.status_code in ((status,) if isinstance(status, int) else status), \
        (response.status_code, response.get_data(as_text=True)[:800])
    return response.json


@pytest.fixture(scope="module")
def world(tmp_path_factory, app_db_template, sample_database_template):
    from core.sync.sample_data import FILE_NAME, directory

    folder = tmp_path_factory.mktemp("sandboxes")
    app = module_app(folder, app_db_template)
    target = directory(str(folder))
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(sample_database_template, target / FILE_NAME)
    w = World()
    w.app, w.file = app, target / FILE_NAME
    w.admin = admin = setup_admin(app)
    w.db = db = ok(admin.post("/api/database/sample_database"))["id"]
    wait_for_sync(app)
    meta = ok(admin.get(f"/api/database/{db}/metadata"))
    w.tables = {t["name"]: t["id"] for t in meta["tables"]}
    w.fields = {t["name"]: {f["name"]: f["id"] for f in t["fields"]} for t in meta["tables"]}
    w.group = ok(admin.post("/api/permissions/group", json={"name": "Sales"}))["id"]
    w.tx = make_user(app, "tx@example.com", "Tex", "Ann")
    w.ca = make_user(app, "ca@example.com", "Cal", "Ifa")
    for client, state in ((w.tx, "TX"), (w.ca, "CA")):
        ok(admin.put(f"/api/user/{client.user['id']}", json={
            "login_attributes": {"state": state},
            "user_group_memberships": [{"id": 1}, {"id": w.group}]}))
    w.orders_card = ok(admin.post("/api/card", json={
        "name": "Orders of my state", "display": "table", "visualization_settings": {},
        "dataset_query": {"database": db, "type": "native", "native": {"query": ORDERS_SQL, "template-tags": {
            "state": {"id": "s", "name": "state", "display-name": "State", "type": "text", "required": True,
                      "default": "TX"}}}}}))["id"]
    tables = w.tables
    schema = meta["tables"][0]["schema"] or ""
    view = {schema: {str(tables[t]): ("sandboxed" if t in ("PEOPLE", "ORDERS") else "unrestricted")
                       for t in tables}}
    graph = ok(admin.get("/api/permissions/graph"))
    ok(admin.put("/api/permissions/graph", json={
        "revision": graph["revision"],
        "groups": {"1": {str(db): {"view-data": "blocked", "create-queries": "no"}},
                   str(w.group): {str(db): {"view-data": view, "create-queries": "query-builder",
                                            "download": {"schemas": "full"}}}},
        "sandboxes": [
            {"group_id": w.group, "table_id": tables["PEOPLE"], "card_id": None,
             "attribute_remappings": {"state": ["dimension", ["field", w.fields["PEOPLE"]["STATE"], None]]}},
            {"group_id": w.group, "table_id": tables["ORDERS"], "card_id": w.orders_card,
             "attribute_remappings": {"state": ["variable", ["template-tag", "state"]]}}]}))
    yield w


@pytest.fixture(scope="module")
def reference(world):
    def run(sql: str, *args):
        conn = sqlite3.connect(f"file:{world.file}?mode=ro", uri=True)
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()
    return run
