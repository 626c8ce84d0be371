"""The admin pages for databases and the data model (/admin/databases, /admin/datamodel) through HTTP as a
browser sends it: each write lands through the API (asserted through the API), a plain user gets the API's
403 and sees no admin link, secrets never reach a page, and a bad connection is a form error, not a 500."""
from __future__ import annotations

import re

from sqlalchemy import select, text

from core.testing import USER_PASSWORD, make_user, postgres_data_source, sqlite_file, wait_for_sync
from tests.plugins.app.test_pages import HTMX, sign_in

SHOP = ("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);"
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), "
        "status TEXT, amount REAL);"
        "CREATE TABLE audit_log (id INTEGER PRIMARY KEY, note TEXT);"
        "INSERT INTO customers VALUES (1, 'Ann'), (2, 'Bob');"
        "INSERT INTO orders VALUES (1, 1, 'p', 10), (2, 2, 's', 20), (3, 1, 's', 5);")


def body(response) -> str:
    return response.get_data(as_text=True)


def add_shop(app, client, name="Shop", path=None) -> int:
    path = path or sqlite_file(app, f"{name.lower()}.db", SHOP)
    added = client.post("/admin/databases/create", json={"engine": "sqlite", "name": name, "details.db": path},
                        headers=HTMX)
    assert added.status_code == 200, body(added)
    db_id = int(re.fullmatch(r"/admin/databases/(\d+)", added.headers["HX-Redirect"]).group(1))
    wait_for_sync(app)
    return db_id


def test_admin_adds_tests_edits_schedules_syncs_and_removes_a_database(app, admin):
    client = sign_in(app)
    listing = body(client.get("/admin/databases"))
    assert 'href="/admin/databases/create"' in listing and "No database is connected yet" in listing
    form = body(client.get("/admin/databases/create"))
    assert '<option value="sqlite">SQLite</option>' in form and 'hx-get="/setup/database/fields"' in form
    path = sqlite_file(app, "shop.db", SHOP)

    # A bad connection is the form's message with the API's status, never a 500.
    missing = client.post("/admin/databases/create", json={"engine": "sqlite", "name": "Shop",
                                                            "details.db": path + ".missing"}, headers=HTMX)
    assert missing.status_code == 400 and 'role="alert"' in body(missing)
    assert admin.get("/api/database").json["data"] == []
    unchosen = client.post("/admin/databases/create", json={"name": "Shop"}, headers=HTMX)
    assert unchosen.status_code == 400 and "Choose the kind" in body(unchosen)
    tested = client.post("/setup/database/validate", json={"engine": "sqlite", "details.db": path}, headers=HTMX)
    assert tested.status_code == 200 and "Connected" in body(tested)

    db_id = add_shop(app, client, path=path)
    database = admin.get(f"/api/database/{db_id}").json
    assert (database["name"], database["engine"], database["details"]["db"]) == ("Shop", "sqlite", path)
    assert f'href="/admin/databases/{db_id}"' in body(client.get("/admin/databases"))

    edit = body(client.get(f"/admin/databases/{db_id}"))
    assert f'value="{path}"' in edit and 'id="database-name"' in edit and 'value="Shop"' in edit
    renamed = client.post(f"/admin/databases/{db_id}", json={"engine": "sqlite", "name": "Corner shop",
                                                               "details.db": path}, headers=HTMX)
    assert renamed.status_code == 200, body(renamed)
    assert admin.get(f"/api/database/{db_id}").json["name"] == "Corner shop"
    broken = client.post(f"/admin/databases/{db_id}", json={"engine": "sqlite", "name": "Corner shop",
                                                             "details.db": path + ".gone"}, headers=HTMX)
    assert broken.status_code == 400 and 'role="alert"' in body(broken)
    assert admin.get(f"/api/database/{db_id}").json["details"]["db"] == path  # the refused change left nothing

    # Schedules as the API's maps, and the scan choice as Metabase's pair of flags.
    saved = client.post(f"/admin/databases/{db_id}/schedules", json={
        "metadata_sync.schedule_type": "daily", "metadata_sync.schedule_hour": "3",
        "metadata_sync.schedule_minute": "15",
        "cache_field_values.schedule_type": "weekly", "cache_field_values.schedule_hour": "4",
        "cache_field_values.schedule_minute": "0", "cache_field_values.schedule_day": "tue", "scan": "on-demand"},
        headers=HTMX)
    assert saved.status_code == 200, body(saved)
    stored = admin.get(f"/api/database/{db_id}").json
    assert stored["schedules"]["metadata_sync"] == {"schedule_type": "daily", "schedule_hour": 3, "schedule_minute": 15,
                                                    "schedule_day": None, "schedule_frame": None}
    assert stored["schedules"]["cache_field_values"]["schedule_day"] == "tue"
    assert (stored["is_full_sync"], stored["is_on_demand"]) == (False, True)
    again = body(client.get(f"/admin/databases/{db_id}"))
    assert re.search(r'<option value="tue" selected>', again) and re.search(r'value="on-demand" checked', again)
    bad_hour = client.post(f"/admin/databases/{db_id}/schedules", json={
        "metadata_sync.schedule_type": "daily", "metadata_sync.schedule_hour": "25"}, headers=HTMX)
    assert bad_hour.status_code == 400 and 'role="alert"' in body(bad_hour)

    # Sync, scan and discard now.
    status = admin.get(f"/api/database/{db_id}/metadata").json
    orders = next(t for t in status["tables"] if t["name"] == "orders")
    status_field = next(f for f in orders["fields"] if f["name"] == "status")
    for action in ("sync_schema", "rescan_values"):
        done = client.post(f"/admin/databases/{db_id}/{action}", json={}, headers=HTMX)
        assert done.status_code == 200 and 'role="status"' in body(done)
        wait_for_sync(app)
    assert admin.get(f"/api/field/{status_field['id']}/values").json["values"] == [["p"], ["s"]]
    assert client.post(f"/admin/databases/{db_id}/discard_values", json={}, headers=HTMX).status_code == 200
    assert admin.get(f"/api/field/{status_field['id']}/values").json["values"] == []

    # Removal: the confirmation lists what depends on the database (usage_info), and wants its name.
    query = {"database": db_id, "type": "query", "query": {"source-table": orders["id"]}}
    for name in ("First", "Second"):
        assert admin.post("/api/card", json={"name": name, "display": "table", "visualization_settings": {},
                                             "dataset_query": query}).status_code == 200
    confirm = body(client.get(f"/admin/databases/{db_id}/remove"))
    assert "2 questions" in confirm and "0 models" in confirm and "0 segments" in confirm
    wrong = client.post(f"/admin/databases/{db_id}/remove", json={"confirm": "Shop"}, headers=HTMX)
    assert wrong.status_code == 400 and admin.get(f"/api/database/{db_id}").status_code == 200
    removed = client.post(f"/admin/databases/{db_id}/remove", json={"confirm": "Corner shop"}, headers=HTMX)
    assert removed.headers["HX-Redirect"] == "/admin/databases"
    assert admin.get(f"/api/database/{db_id}").status_code == 404
    forged = client.post("/admin/databases/create", data={"engine": "sqlite", "name": "F", "details.db": path})
    assert forged.status_code == 403  # a form from another site: the API's cross-site rule


def test_the_data_model_editor_writes_through_the_api(app, admin):
    client = sign_in(app)
    db_id = add_shop(app, client)
    assert f'href="/admin/datamodel/database/{db_id}"' in body(client.get("/admin/datamodel"))
    metadata = admin.get(f"/api/database/{db_id}/metadata").json
    tables = {t["name"]: t for t in metadata["tables"]}
    fields = {(t["name"], f["name"]): f for t in metadata["tables"] for f in t["fields"]}
    base = f"/admin/datamodel/database/{db_id}"
    listing = body(client.get(base))
    assert all(f'href="{base}/table/{tables[name]["id"]}"' in listing for name in tables)

    # The table: hidden from people, renamed, described.
    audit = f"{base}/table/{tables['audit_log']['id']}"
    assert 'name="visibility_type"' in body(client.get(audit))
    hidden = client.post(audit, json={"display_name": "Audit", "description": "Who did what",
                                      "visibility_type": "hidden"}, headers=HTMX)
    assert hidden.status_code == 200, body(hidden)
    shown = admin.get(f"/api/table/{tables['audit_log']['id']}").json
    assert (shown["display_name"], shown["description"], shown["visibility_type"]) == (
        "Audit", "Who did what", "hidden")
    assert "audit_log" not in [t["name"] for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]]
    assert "Hidden: hidden from people" in body(client.get(base))  # still listed in the editor
    assert client.post(audit, json={"display_name": "Audit", "visibility_type": "nonsense"},
                       headers=HTMX).status_code == 400

    # A field's general settings, from the table's rows.
    orders = f"{base}/table/{tables['orders']['id']}"
    page = body(client.get(orders))
    amount = fields[("orders", "amount")]["id"]
    assert f'hx-post="{orders}/field/{amount}"' in page
    saved = client.post(f"{orders}/field/{amount}", json={"display_name": "Total", "description": "With tax",
                                                          "visibility_type": "details-only",
                                                          "semantic_type": "type/Price"}, headers=HTMX)
    assert saved.status_code == 200, body(saved)
    field = admin.get(f"/api/field/{amount}").json
    assert (field["display_name"], field["description"], field["visibility_type"], field["semantic_type"]) == (
        "Total", "With tax", "details-only", "type/Price")
    bad = client.post(f"{orders}/field/{amount}", json={"semantic_type": "type/Nope"}, headers=HTMX)
    assert bad.status_code == 400 and 'role="alert"' in body(bad)

    # The FK target, then the FK shown as the customer's name (an external dimension).
    customer_id, customers_pk = fields[("orders", "customer_id")]["id"], fields[("customers", "id")]["id"]
    customer_page = f"{orders}/field/{customer_id}"
    keyed = client.post(customer_page, json={"semantic_type": "type/FK", "fk_target_field_id": str(customers_pk),
                                             "then": "reload"}, headers=HTMX)
    assert keyed.headers["HX-Redirect"] == customer_page  # the field's page again, with its new choices
    assert admin.get(f"/api/field/{customer_id}").json["fk_target_field_id"] == customers_pk
    name = fields[("customers", "name")]["id"]
    page = body(client.get(customer_page))
    assert f'<option value="{name}"' in page and 'value="external"' in page
    remapped = client.post(f"{customer_page}/remap", json={"remap": "external", "name": "Customer",
                                                           "human_readable_field_id": str(name)}, headers=HTMX)
    assert remapped.status_code == 200, body(remapped)
    dimension = admin.get(f"/api/field/{customer_id}").json["dimensions"][0]
    assert (dimension["type"], dimension["human_readable_field_id"], dimension["name"]) == (
        "external", name, "Customer")
    rows = admin.post("/api/dataset", json={"database": db_id, "type": "query",
                                            "query": {"source-table": tables["orders"]["id"], "order-by": [
                                                ["asc", ["field", fields[("orders", "id")]["id"], None]]]}}).json
    assert [row[-1] for row in rows["data"]["rows"]] == ["Ann", "Bob", "Ann"]
    assert client.post(f"{customer_page}/remap", json={"remap": "none"}, headers=HTMX).status_code == 200
    assert admin.get(f"/api/field/{customer_id}").json["dimensions"] == []

    # Custom names for a listed field's values (an internal dimension with named values).
    status = fields[("orders", "status")]["id"]
    status_page = f"{orders}/field/{status}"
    page = body(client.get(status_page))
    assert 'name="value.0"' in page and 'value="internal"' in page
    named = client.post(f"{status_page}/remap", json={"remap": "internal", "name": "Status",
                                                      "value.0": "Pending", "value.1": "Shipped"}, headers=HTMX)
    assert named.status_code == 200, body(named)
    assert admin.get(f"/api/field/{status}/values").json["values"] == [["p", "Pending"], ["s", "Shipped"]]
    assert admin.get(f"/api/field/{status}").json["dimensions"][0]["type"] == "internal"
    unexplained = client.post(f"{status_page}/remap", json={"remap": "sideways"}, headers=HTMX)
    assert unexplained.status_code == 400

    # Values: discard then re-scan, for the field and for the table.
    assert client.post(f"{status_page}/discard_values", json={}, headers=HTMX).status_code == 200
    assert admin.get(f"/api/field/{status}/values").json["values"] == []
    assert client.post(f"{status_page}/rescan_values", json={}, headers=HTMX).status_code == 200
    wait_for_sync(app)
    assert [v[0] for v in admin.get(f"/api/field/{status}/values").json["values"]] == ["p", "s"]
    assert client.post(f"{orders}/discard_values", json={}, headers=HTMX).status_code == 200
    assert admin.get(f"/api/field/{status}/values").json["values"] == []
    assert client.post(f"{orders}/rescan_values", json={}, headers=HTMX).status_code == 200
    wait_for_sync(app)
    assert [v[0] for v in admin.get(f"/api/field/{status}/values").json["values"]] == ["p", "s"]

    # A table or field asked for under another database is not there.
    assert client.get(f"/admin/datamodel/database/{db_id + 1}/table/{tables['orders']['id']}").status_code == 404
    assert client.get(f"{base}/table/{tables['customers']['id']}/field/{status}").status_code == 404


def test_a_plain_user_is_refused_and_sees_no_admin_link(app, admin):
    client = sign_in(app)
    db_id = add_shop(app, client)
    metadata = admin.get(f"/api/database/{db_id}/metadata").json
    table = metadata["tables"][0]
    field = table["fields"][0]
    make_user(app)
    plain = sign_in(app, "user@example.com", USER_PASSWORD)
    table_path = f"/admin/datamodel/database/{db_id}/table/{table['id']}"
    for path in ("/admin/databases", "/admin/databases/create", f"/admin/databases/{db_id}",
                 f"/admin/databases/{db_id}/remove", "/admin/datamodel", f"/admin/datamodel/database/{db_id}",
                 table_path, f"{table_path}/field/{field['id']}"):
        assert plain.get(path).status_code == 403, path
    for path, payload in ((f"/admin/databases/{db_id}/remove", {"confirm": "Shop"}),
                          (f"/admin/databases/{db_id}/discard_values", {}),
                          (f"/admin/databases/{db_id}", {"engine": "sqlite", "name": "Mine"}),
                          (table_path, {"display_name": "Mine", "visibility_type": "hidden"}),
                          (f"{table_path}/field/{field['id']}/remap", {"remap": "none"})):
        assert plain.post(path, json=payload, headers=HTMX).status_code == 403, path
    assert admin.get(f"/api/database/{db_id}").json["name"] == "Shop"
    assert admin.get(f"/api/table/{table['id']}").json["visibility_type"] is None
    assert "/admin/" not in body(plain.get("/"))


def test_secrets_never_reach_a_page_and_an_unchanged_one_is_kept(app, admin):
    from core.appdb.models import Database
    from core.driver import crypto

    secret = "Sesame-8c1f-never-shown"
    client = sign_in(app)
    with postgres_data_source("tessera_admin") as source:
        from sqlalchemy import create_engine

        owner = create_engine(source.admin_url)
        with owner.begin() as conn:
            conn.execute(text("CREATE TABLE public.visits (id INTEGER PRIMARY KEY)"))
        owner.dispose()
        details = {f"details.{key}": str(value) for key, value in source.details.items()}
        added = client.post("/admin/databases/create", json={"engine": "postgres", "name": "Warehouse",
                                                              "details.password": secret, **details}, headers=HTMX)
        assert added.status_code == 200, body(added)
        db_id = int(added.headers["HX-Redirect"].rsplit("/", 1)[1])
        wait_for_sync(app)

        def stored_password():
            state = app.extensions["tessera"]
            with app.app_context(), state.db.session() as session:
                row = session.scalar(select(Database).where(Database.id == db_id))
                return crypto.decrypt_details(row.details).get("password")

        assert stored_password() == secret
        pages = [client.get(path) for path in ("/admin/databases", f"/admin/databases/{db_id}",
                                               f"/admin/databases/{db_id}/remove", "/admin/datamodel",
                                               f"/admin/datamodel/database/{db_id}")]
        assert all(page.status_code == 200 and secret not in body(page) for page in pages)
        edit = body(pages[1])
        assert re.search(r'<input id="details-password" type="password"[^>]* value="\*\*MetabasePass\*\*"', edit)

        # Saved with the mask untouched: the stored password stays.
        form = {**details, "engine": "postgres", "name": "Warehouse 2", "details.password": crypto.MASK}
        saved = client.post(f"/admin/databases/{db_id}", json=form, headers=HTMX)
        assert saved.status_code == 200 and secret not in body(saved), body(saved)
        assert stored_password() == secret and admin.get(f"/api/database/{db_id}").json["name"] == "Warehouse 2"
        # The test cannot see the stored secret: it says so, it does not send the mask as a password.
        masked_test = client.post(f"/admin/databases/{db_id}/validate", json=form, headers=HTMX)
        assert masked_test.status_code == 400 and "Type the password" in body(masked_test)
        typed = client.post(f"/admin/databases/{db_id}/validate", json={**form, "details.password": "other"},
                            headers=HTMX)
        assert typed.status_code == 200 and "Connected" in body(typed)
        bad_port = client.post(f"/admin/databases/{db_id}/validate", json={**form, "details.password": "x",
                                                                            "details.port": "1"}, headers=HTMX)
        assert bad_port.status_code == 400 and 'role="alert"' in body(bad_port)
        # Removed before its source is dropped, so no sync holds a connection to it.
        assert client.post(f"/admin/databases/{db_id}/remove", json={"confirm": "Warehouse 2"},
                           headers=HTMX).headers["HX-Redirect"] == "/admin/databases"


def test_junk_writes_are_refused_as_form_errors_never_500(app, admin):
    client = sign_in(app)
    db_id = add_shop(app, client)
    table = admin.get(f"/api/database/{db_id}/metadata").json["tables"][0]
    field = table["fields"][0]["id"]
    table_path = f"/admin/datamodel/database/{db_id}/table/{table['id']}"
    junk = ({"name": 5, "engine": ["sqlite"], "details.db": {"x": 1}}, {"confirm": [1], "scan": ["full"]},
            {"metadata_sync.schedule_type": "daily", "metadata_sync.schedule_minute": "soon"},
            {"cache_field_values.schedule_type": {"a": 1}, "scan": {"b": 2}},
            {"display_name": 7, "visibility_type": ["hidden"], "semantic_type": 3, "fk_target_field_id": "x"},
            {"remap": "external", "name": ["n"], "human_readable_field_id": "99999999999999999999999"},
            {"remap": "internal", "name": "", "value.0": 4}, {"remap": ["none"]},
            {"engine": "postgres", "name": "P", "details.host": "localhost", "details.port": "9" * 30,
             "details.dbname": "x", "details.user": "x"})
    routes = ("/admin/databases/create", f"/admin/databases/{db_id}", f"/admin/databases/{db_id}/schedules",
              f"/admin/databases/{db_id}/validate", f"/admin/databases/{db_id}/remove", table_path,
              f"{table_path}/field/{field}", f"{table_path}/field/{field}/remap")
    for route in routes:
        for payload in junk:
            answer = client.post(route, json=payload, headers=HTMX)
            assert answer.status_code < 500, (route, payload, body(answer))
    assert admin.get(f"/api/database/{db_id}").json["name"] == "Shop"
