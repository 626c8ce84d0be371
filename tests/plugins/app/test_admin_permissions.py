"""The data permissions grid (plugins/app/admin_permissions.py) through HTTP: what it draws is
GET /api/permissions/graph-v2, a save changes only the cells that changed through PUT /api/permissions/graph
with the page's revision, a stale save is the API's 409 with its message, and the change applies: a member
of a group whose query permission is taken away is refused by the API."""
from __future__ import annotations

import re

import orjson
from markupsafe import escape

from core.testing import make_user

HTMX = {"HX-Request": "true"}


def text(response) -> str:
    return response.get_data(as_text=True)


def cell(level, group, db, perm_type, schema=None, table=None) -> str:
    return orjson.dumps([level, group, db, perm_type, schema, table]).decode()


def revision_of(page: str) -> int:
    return int(re.search(r'name="revision" value="(\d+)"', page).group(1))


def query(client, db: int, table: int):
    return client.post("/api/dataset", json={"database": db, "type": "query", "query": {"source-table": table}})


def test_taking_a_groups_query_permission_away_refuses_its_member(app, admin, warehouse):
    db, people = warehouse["db"], warehouse["people"]
    group = admin.post("/api/permissions/group", json={"name": "Readers"}).json["id"]
    reader = make_user(app, email="reader@example.com", first_name="Rita")
    admin.post("/api/permissions/membership", json={"group_id": group, "user_id": reader.user["id"]})
    graph = admin.get("/api/permissions/graph-v2").json
    admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(db): {"view-data": "unrestricted", "create-queries": "no"}},
        str(group): {str(db): {"view-data": "unrestricted", "create-queries": "query-builder"}}}})
    assert query(reader, db, people).status_code < 300

    page = admin.get(f"/admin/permissions/data/group/{group}")
    assert page.status_code == 200
    body = text(page)
    assert "Warehouse" in body and "Create queries" in body and "Manage table metadata" in body
    name = cell("db", group, db, "create-queries")
    select = body[body.index(f'name="{escape(name)}"'):]
    assert re.match(r'[^>]*>\s*(<option[^>]*>[^<]*</option>)*?<option value="query-builder" selected>', select)
    revision = revision_of(body)
    saved = admin.post("/admin/permissions/data", headers=HTMX, json={
        "revision": str(revision), "back": f"/admin/permissions/data/group/{group}",
        name: "no", "was" + name: "query-builder",
        cell("db", group, db, "download"): "none", "was" + cell("db", group, db, "download"): "none"})
    assert saved.status_code == 200 and saved.headers["HX-Redirect"] == f"/admin/permissions/data/group/{group}"
    after = admin.get("/api/permissions/graph-v2").json
    assert after["revision"] == revision + 1
    assert after["groups"][str(group)][str(db)]["create-queries"] == "no"
    assert after["groups"][str(group)][str(db)]["view-data"] == "unrestricted"  # unchanged cells are not sent
    assert query(reader, db, people).status_code == 403

    stale = admin.post("/admin/permissions/data", headers=HTMX, json={
        "revision": str(revision), name: "query-builder", "was" + name: "no"})
    assert stale.status_code == 409 and "someone else edited the permissions" in text(stale)
    assert admin.get("/api/permissions/graph-v2").json["groups"][str(group)][str(db)]["create-queries"] == "no"


def test_the_grid_drills_to_tables_and_saves_one_table(app, admin, warehouse):
    db, people, orders = warehouse["db"], warehouse["people"], warehouse["orders"]
    group = admin.post("/api/permissions/group", json={"name": "Sales"}).json["id"]
    page = admin.get(f"/admin/permissions/data/group/{group}/database/{db}")
    assert page.status_code == 200
    body = text(page)
    assert "People" in body and "Orders" in body and "Manage database" not in body
    assert "Query builder and native" not in body  # native queries are for whole databases only
    name = cell("table", group, db, "create-queries", "", orders)
    saved = admin.post("/admin/permissions/data", headers=HTMX, json={
        "revision": revision_of(body), "back": f"/admin/permissions/data/group/{group}/database/{db}",
        name: "query-builder", "was" + name: "no"})
    assert saved.status_code == 200, text(saved)
    value = admin.get("/api/permissions/graph-v2").json["groups"][str(group)][str(db)]["create-queries"]
    assert value == {"": {str(orders): "query-builder", str(people): "no"}}
    overview = text(admin.get(f"/admin/permissions/data/group/{group}"))
    assert "Granular" in overview
    by_db = admin.get(f"/admin/permissions/data/database/{db}")
    assert by_db.status_code == 200 and "Sales" in text(by_db) and "All Users" in text(by_db)


def test_bad_grid_input_and_other_people(app, admin, user, warehouse):
    nothing = admin.post("/admin/permissions/data", headers=HTMX, json={"revision": 1})
    assert nothing.status_code == 400 and "Nothing was changed" in text(nothing)
    no_revision = admin.post("/admin/permissions/data", headers=HTMX, json={})
    assert no_revision.status_code == 400
    junk = admin.post("/admin/permissions/data", headers=HTMX, json={"revision": 1, "[1,2": "x"})
    assert junk.status_code == 400
    group = admin.post("/api/permissions/group", json={"name": "Natives"}).json["id"]
    revision = admin.get("/api/permissions/graph-v2").json["revision"]
    name = cell("db", group, warehouse["db"], "view-data")
    blocked_native = admin.post("/admin/permissions/data", headers=HTMX, json={
        "revision": revision, name: "blocked", "was" + name: "unrestricted",
        cell("db", group, warehouse["db"], "create-queries"): "query-builder-and-native"})
    assert blocked_native.status_code == 400 and "native" in text(blocked_native)
    assert admin.get("/admin/permissions/data").headers["Location"].endswith("/admin/permissions/data/group/1")
    assert user.get("/admin/permissions/data").status_code == 403
    assert user.get("/admin/permissions/data/group/1").status_code == 403
    refused = user.post("/admin/permissions/data", headers=HTMX, json={"revision": revision, name: "blocked"})
    assert refused.status_code == 403
    assert admin.get("/admin/permissions/data/group/999").status_code == 404


def two_schema_database(app) -> dict:
    """A database whose tables sit in two schemas (rows of the app DB, as a sync of PostgreSQL leaves them)."""
    from core.appdb.models import Database, Table
    from core.driver.crypto import encrypt_details

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        database = Database(name="Lake", engine="sqlite", details=encrypt_details({"db": "/nonexistent.db"}),
                            initial_sync_status="complete")
        session.add(database)
        session.flush()
        ids = {"db": database.id}
        for schema, name in (("sales", "deals"), ("sales", "leads"), ("hr", "staff")):
            table = Table(db_id=database.id, schema=schema, name=name, display_name=name.title(),
                          initial_sync_status="complete")
            session.add(table)
            session.flush()
            ids[name] = table.id
        session.commit()
    return ids


def test_the_grid_drills_through_schemas_and_saves_one_schema(app, admin):
    lake = two_schema_database(app)
    db = lake["db"]
    group = admin.post("/api/permissions/group", json={"name": "HR"}).json["id"]
    schemas = admin.get(f"/admin/permissions/data/group/{group}/database/{db}")
    assert schemas.status_code == 200
    body = text(schemas)
    assert f'href="/admin/permissions/data/group/{group}/database/{db}/schema/sales"' in body and ">hr<" in body
    name = cell("schema", group, db, "data-model", "hr")
    saved = admin.post("/admin/permissions/data", headers=HTMX, json={
        "revision": revision_of(body), name: "all", "was" + name: "none"})
    assert saved.status_code == 200, text(saved)
    entry = admin.get("/api/permissions/graph-v2").json["groups"][str(group)][str(db)]
    assert entry["data-model"] == {"schemas": {"hr": "all", "sales": "none"}}

    tables = admin.get(f"/admin/permissions/data/group/{group}/database/{db}/schema/sales")
    body = text(tables)
    assert "Deals" in body and "Leads" in body and "Staff" not in body
    one = cell("table", group, db, "download", "sales", lake["leads"])
    saved = admin.post("/admin/permissions/data", headers=HTMX, json={
        "revision": revision_of(body), one: "limited", "was" + one: "none"})
    assert saved.status_code == 200, text(saved)
    entry = admin.get("/api/permissions/graph-v2").json["groups"][str(group)][str(db)]
    assert entry["download"]["schemas"]["sales"] == {str(lake["deals"]): "none", str(lake["leads"]): "limited"}
    # A schema whose tables differ shows as granular one level up.
    body = text(admin.get(f"/admin/permissions/data/group/{group}/database/{db}"))
    sales_download = cell("schema", group, db, "download", "sales")
    assert f'name="{escape(sales_download)}" data-was="granular"' in body
