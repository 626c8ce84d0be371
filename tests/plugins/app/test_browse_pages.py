"""Browsing data (databases, schemas, tables), setup's "Add your data" step and password reset by e-mail,
through HTTP as a browser sends it: each page shows what the API shows the same user, and the writes
land through the API (asserted through the API)."""
from __future__ import annotations

import base64
import email
import json
import re
from html import unescape

from sqlalchemy import text

from core.testing import USER_PASSWORD, make_user, postgres_data_source, sqlite_file, wait_for_sync
from tests.plugins.app.test_pages import HTMX, browser, sign_in

# --------------------------------------------------------------------------------------------------
# Browse data
# --------------------------------------------------------------------------------------------------


def body(response) -> str:
    return response.get_data(as_text=True)


def set_table_facts(app, table_id: int, **values) -> None:
    """What a sync writes and no API sets (estimated_row_count), written as the sync would."""
    from core.appdb.models import Table

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        row = session.get(Table, table_id)
        for key, value in values.items():
            setattr(row, key, value)
        session.commit()


def block_all_users(admin, db_id: int) -> None:
    graph = admin.get("/api/permissions/graph").json
    assert admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(db_id): {"view-data": "blocked", "create-queries": "no"}}}}).status_code == 200


def question_of(href: str) -> dict:
    assert href.startswith("/question#")
    return json.loads(base64.b64decode(unescape(href.split("#", 1)[1])))


def test_browse_lists_the_databases_the_api_lists(app, admin, warehouse):
    other = sqlite_file(app, "other.db", "CREATE TABLE t (id INTEGER PRIMARY KEY);")
    other_id = admin.post("/api/database", json={"name": "Other <data>", "engine": "sqlite",
                                                 "details": {"db": other}}).json["id"]
    wait_for_sync(app)
    client = sign_in(app)
    page = body(client.get("/browse/databases"))
    listed = admin.get("/api/database").json["data"]
    assert sorted(re.findall(r'<a href="/browse/databases/(\d+)-', page)) == sorted(str(d["id"]) for d in listed)
    assert f'href="/browse/databases/{warehouse["db"]}-warehouse"' in page
    assert "Other &lt;data&gt;" in page and "Other <data>" not in page  # names are escaped
    assert client.get("/browse").status_code == 200

    # A plain user whose group may not see any data: the same pages list what the API lists them.
    for db_id in (warehouse["db"], other_id):
        block_all_users(admin, db_id)
    make_user(app)
    plain = sign_in(app, "user@example.com", USER_PASSWORD)
    api = plain.get("/api/database").json["data"]
    page = body(plain.get("/browse/databases"))
    assert sorted(re.findall(r'<a href="/browse/databases/(\d+)-', page)) == sorted(str(d["id"]) for d in api)
    for db_id in (warehouse["db"], other_id):
        schemas = plain.get(f"/api/database/{db_id}/schemas")
        shown = plain.get(f"/browse/databases/{db_id}")
        if schemas.status_code != 200:
            assert shown.status_code == schemas.status_code
        tables = plain.get(f"/api/database/{db_id}/schema/").json if schemas.status_code == 200 else []
        for name in ("Orders", "People"):
            if not any(t["display_name"] == name for t in tables):
                assert name not in body(shown)
    assert plain.get("/browse/databases/999999").status_code == 404
    assert plain.get("/browse/databases/abc").status_code == 404
    assert browser(app).get("/browse/databases").headers["Location"] == "/auth/login?redirect=/browse/databases"


def test_a_one_schema_database_shows_its_tables_with_row_counts_and_links(app, admin, warehouse):
    set_table_facts(app, warehouse["orders"], estimated_row_count=12345, description="Every order placed")
    client = sign_in(app)
    page = body(client.get(f"/browse/databases/{warehouse['db']}-warehouse"))
    assert "<h1>Warehouse</h1>" in page  # SQLite has one schema (""): straight to its tables
    assert "12,345 rows" in page and "Every order placed" in page
    assert page.index("Orders") < page.index("People")
    links = re.findall(r'href="(/question#[^"]+)"', page)
    assert {question_of(link)["dataset_query"]["query"]["source-table"] for link in links} == {
        warehouse["orders"], warehouse["people"]}
    assert question_of(links[0]) == {"dataset_query": {"database": warehouse["db"], "type": "query",
                                                       "query": {"source-table": warehouse["orders"]}},
                                     "display": "table", "visualization_settings": {}}
    assert f'href="/auto/dashboard/table/{warehouse["orders"]}"' in page
    # People's row count is not known: nothing is made up for it.
    people = page[page.index(">People<"):]
    assert 'class="rows"' not in people[:people.index("</li>")]
    assert "12,345 rows" in body(client.get(f"/browse/databases/{warehouse['db']}/schema/"))


def test_schemas_then_a_schemas_tables(app, admin):
    with postgres_data_source("tessera_browse") as source:
        from sqlalchemy import create_engine

        owner = create_engine(source.admin_url)
        role = source.details["user"]
        with owner.begin() as conn:
            conn.execute(text("CREATE TABLE public.visits (id INTEGER PRIMARY KEY)"))
            conn.execute(text("CREATE SCHEMA sales"))
            conn.execute(text("CREATE TABLE sales.invoices (id INTEGER PRIMARY KEY, total NUMERIC)"))
            conn.execute(text(f'GRANT USAGE ON SCHEMA sales TO "{role}"'))
            conn.execute(text(f'GRANT SELECT ON ALL TABLES IN SCHEMA sales TO "{role}"'))
        owner.dispose()
        created = admin.post("/api/database", json={"name": "Shop", "engine": "postgres", "details": source.details})
        assert created.status_code == 200, created.json
        db_id = created.json["id"]
        wait_for_sync(app)
        client = sign_in(app)
        page = body(client.get(f"/browse/databases/{db_id}-shop"))
        assert admin.get(f"/api/database/{db_id}/schemas").json == ["public", "sales"]
        assert f'href="/browse/databases/{db_id}-shop/schema/sales"' in page
        assert f'href="/browse/databases/{db_id}-shop/schema/public"' in page and "Invoices" not in page
        invoices = next(t for t in admin.get(f"/api/database/{db_id}/schema/sales").json)
        set_table_facts(app, invoices["id"], estimated_row_count=1)
        sales = client.get(f"/browse/databases/{db_id}-shop/schema/sales")
        assert sales.status_code == 200
        assert "<h1>sales</h1>" in body(sales) and "Invoices" in body(sales) and "1 row<" in body(sales)
        assert "Visits" not in body(sales)
        assert f'href="/browse/databases/{db_id}-shop"' in body(sales)  # the breadcrumb back
        assert client.get(f"/browse/databases/{db_id}/schema/nothing-here").status_code in (200, 404)
        assert "Invoices" not in body(client.get(f"/browse/databases/{db_id}/schema/nothing-here"))
        admin.delete(f"/api/database/{db_id}")


# --------------------------------------------------------------------------------------------------
# Setup's "Add your data"
# --------------------------------------------------------------------------------------------------


def test_setup_adds_a_first_sqlite_database(app):
    client = browser(app)
    token = re.search(r'name="token" value="([^"]+)"', body(client.get("/setup"))).group(1)
    done = client.post("/setup", json={"token": token, "first_name": "Ada", "email": "ada@example.com",
                                       "password": "An-Excellent-Passw0rd", "site_name": "Acme"}, headers=HTMX)
    assert done.headers["HX-Redirect"] == "/setup/database"
    step = body(client.get("/setup/database"))
    assert '<option value="sqlite">SQLite</option>' in step and '<option value="postgres">PostgreSQL</option>' in step
    assert re.search(r'<label for="engine">', step)

    fields = body(client.get("/setup/database/fields?engine=postgres"))
    for field in ("host", "port", "dbname", "user", "password", "ssl"):  # generated from the details model
        assert f'id="details-{field}"' in fields and re.search(f'<label (class="check" )?for="details-{field}"', fields)
    assert re.search(r'<input id="details-password" type="password"', fields)
    assert re.search(r'<input id="details-port" type="number"', fields)
    assert re.search(r'<input id="details-ssl" type="checkbox"', fields)
    sqlite_fields = body(client.get("/setup/database/fields?engine=sqlite"))
    assert 'name="details.db"' in sqlite_fields and "details-host" not in sqlite_fields

    path = sqlite_file(app, "first.db", "CREATE TABLE first_table (id INTEGER PRIMARY KEY, label TEXT);"
                                        "INSERT INTO first_table VALUES (1, 'one');")
    missing = client.post("/setup/database/validate", json={"engine": "sqlite", "details.db": path + ".nope"},
                          headers=HTMX)
    assert missing.status_code == 400 and 'role="alert"' in body(missing)
    works = client.post("/setup/database/validate", json={"engine": "sqlite", "details.db": path}, headers=HTMX)
    assert works.status_code == 200 and "Connected" in body(works)
    nameless = client.post("/setup/database", json={"engine": "sqlite", "details.db": path}, headers=HTMX)
    assert nameless.status_code == 400
    forged = client.post("/setup/database", data={"engine": "sqlite", "name": "Forged", "details.db": path})
    assert forged.status_code == 403  # a form on another site: the API's cross-site rule
    added = client.post("/setup/database", json={"engine": "sqlite", "name": "First data", "details.db": path},
                        headers=HTMX)
    assert added.status_code == 200, body(added)
    databases = client.get("/api/database").json["data"]
    assert [(d["name"], d["engine"]) for d in databases] == [("First data", "sqlite")]
    assert added.headers["HX-Redirect"] == f"/browse/databases/{databases[0]['id']}-first-data"
    assert client.get(f"/api/database/{databases[0]['id']}").json["details"]["db"] == path
    wait_for_sync(app)
    assert "First Table" in body(client.get(added.headers["HX-Redirect"]))


def test_setup_data_step_is_for_administrators(app, admin):
    make_user(app)
    plain = sign_in(app, "user@example.com", USER_PASSWORD)
    page = plain.get("/setup/database")
    assert page.status_code == 403
    refused = plain.post("/setup/database", json={"engine": "sqlite", "name": "x", "details.db": "/tmp/x"},
                         headers=HTMX)
    assert refused.status_code == 403
    assert admin.get("/api/database").json["data"] == []
    assert browser(app).get("/setup/database").headers["Location"].startswith("/auth/login")


# --------------------------------------------------------------------------------------------------
# Password reset by e-mail
# --------------------------------------------------------------------------------------------------


def mailed_link(message) -> str:
    text_body = email.message_from_string(message["data"]).get_payload(decode=True).decode()
    return re.search(r"https://bi\.example\.com(/auth/reset_password/\S+)", text_body).group(1)


def test_forgot_and_reset_password_end_to_end(app, admin, smtp_server):
    make_user(app)
    visitor = browser(app)
    assert "/auth/forgot_password" not in body(visitor.get("/auth/login"))  # no e-mail: no link
    assert "cannot send e-mail" in body(visitor.get("/auth/forgot_password"))
    assert admin.put("/api/setting", json={"email-smtp-host": smtp_server.host, "email-smtp-port": smtp_server.port,
                                           "email-from-address": "bi@example.com",
                                           "site-url": "https://bi.example.com"}).status_code == 204
    assert 'href="/auth/forgot_password"' in body(visitor.get("/auth/login"))
    form = body(visitor.get("/auth/forgot_password"))
    assert '<label for="email">' in form and 'hx-post="/auth/forgot_password"' in form

    unknown = visitor.post("/auth/forgot_password", json={"email": "nobody@example.com"}, headers=HTMX)
    known = visitor.post("/auth/forgot_password", json={"email": "User@Example.com"}, headers=HTMX)
    assert unknown.status_code == known.status_code == 200 and body(unknown) == body(known)  # nothing told
    assert [m["to"] for m in smtp_server.messages] == [["user@example.com"]]

    link = mailed_link(smtp_server.messages[0])
    opened = visitor.get(link)
    assert opened.status_code == 200 and 'name="password_confirm"' in body(opened)
    assert '<meta name="referrer" content="no-referrer">' in body(opened)
    token = link.rsplit("/", 1)[1]
    mismatch = visitor.post("/auth/reset_password", json={"token": token, "password": "Fresh-Start-42",
                                                          "password_confirm": "Fresh-Start-43"}, headers=HTMX)
    assert mismatch.status_code == 400 and 'role="alert"' in body(mismatch)
    weak = visitor.post("/auth/reset_password", json={"token": token, "password": "password",
                                                      "password_confirm": "password"}, headers=HTMX)
    assert weak.status_code == 400 and "common" in body(weak)
    reset = visitor.post("/auth/reset_password", json={"token": token, "password": "Fresh-Start-42",
                                                       "password_confirm": "Fresh-Start-42"}, headers=HTMX)
    assert reset.status_code == 200 and reset.headers["HX-Redirect"] == "/"
    assert "Welcome, Ulla" in body(visitor.get("/"))  # the reset signed this browser in
    sign_in(app, "user@example.com", "Fresh-Start-42")
    refused = browser(app).post("/auth/login", json={"username": "user@example.com", "password": USER_PASSWORD},
                                headers=HTMX)
    assert refused.status_code == 401
    spent = browser(app).get(link)  # used once: the link now says so and offers a new one
    assert spent.status_code == 404 and 'name="password"' not in body(spent)
    assert 'href="/auth/forgot_password"' in body(spent)


# --------------------------------------------------------------------------------------------------
# Home: recent and popular items, first-run hints
# --------------------------------------------------------------------------------------------------


def test_home_shows_recent_and_popular_items_after_first_run_hints(app, admin, warehouse):
    from core.appdb.counters import flush
    from tests.plugins.cards.fixtures import card_body, mbql_query

    client = sign_in(app)
    first = body(client.get("/"))
    assert "Start here" in first and 'href="/browse/databases"' in first and "Recently viewed" not in first
    query = mbql_query(warehouse["db"], **{"source-table": warehouse["orders"]})
    shared = admin.post("/api/card", json=card_body("Weekly orders", query)).json["id"]
    private = admin.post("/api/card", json=card_body("Admin private orders", query, collection_id=admin.user[
        "personal_collection_id"])).json["id"]
    for card_id in (shared, private):
        assert admin.post(f"/api/card/{card_id}/query", json={}).status_code in (200, 202)
        assert admin.get(f"/api/card/{card_id}").status_code == 200
    flush(app)
    home = body(client.get("/"))
    assert "Start here" not in home and "Recently viewed" in home and "Popular" in home
    recent = home[home.index("Recently viewed"):home.index("Popular")]
    assert recent.index("Admin private orders") < recent.index("Weekly orders")  # newest first
    assert f'href="/question/{shared}-weekly-orders"' in recent

    make_user(app)
    plain = body(sign_in(app, "user@example.com", USER_PASSWORD).get("/"))
    assert "Weekly orders" in plain and "Admin private orders" not in plain
    assert "Recently viewed" not in plain  # their own history is empty; the team's popular items show
