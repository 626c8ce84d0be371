"""The web app's pages (plugins/app) through HTTP as a browser sends it: cookies, htmx's JSON writes,
redirects to setup and sign-in, and pages that show what the API shows the same user."""
from __future__ import annotations

import re

from core.assembly.app import create_app
from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, USER_PASSWORD, make_user

HTMX = {"HX-Request": "true"}


def browser(app):
    """A test client that keeps cookies, as a browser does."""
    return app.test_client()


def sign_in(app, email=ADMIN_EMAIL, password=ADMIN_PASSWORD):
    client = browser(app)
    response = client.post("/auth/login", json={"username": email, "password": password, "redirect": "/"},
                           headers=HTMX)
    assert response.status_code == 200 and response.headers["HX-Redirect"] == "/", response.data
    return client


def text(response) -> str:
    return response.get_data(as_text=True)


def test_a_fresh_server_sends_everyone_to_setup_then_home(app):
    client = browser(app)
    landing = client.get("/")
    assert landing.status_code == 200 and 'name="token"' in text(landing)
    token = client.get("/api/session/properties").json["setup-token"]
    assert f'"setup-token":"{token}"' in text(landing)  # what setup scripts read from "/"
    assert client.get("/auth/login").headers["Location"] == "/setup"
    page = client.get("/setup")
    assert page.status_code == 200 and 'name="token"' in text(page)
    token = re.search(r'name="token" value="([^"]+)"', text(page)).group(1)
    bad = client.post("/setup", json={"token": token, "email": "not-an-email", "password": "x", "site_name": "Acme"},
                      headers=HTMX)
    assert bad.status_code == 400 and 'role="alert"' in text(bad)
    done = client.post("/setup", json={"token": token, "first_name": "Ada", "email": "ada@example.com",
                                       "password": "An-Excellent-Passw0rd", "site_name": "Acme"}, headers=HTMX)
    assert done.status_code == 200 and done.headers["HX-Redirect"] == "/setup/database"  # the optional data step
    home = client.get("/")  # the setup's session cookie signed Ada in
    assert home.status_code == 200 and "Welcome, Ada" in text(home) and "Acme" in text(home)
    assert client.get("/setup").headers["Location"] == "/"


def test_sign_in_shows_the_apis_message_and_returns_where_the_person_was_going(app, admin):
    client = browser(app)
    assert client.get("/collection/root").headers["Location"] == "/auth/login?redirect=/collection/root"
    wrong = client.post("/auth/login", json={"username": ADMIN_EMAIL, "password": "wrong"}, headers=HTMX)
    assert wrong.status_code == 401 and "password" in text(wrong).lower() and 'role="alert"' in text(wrong)
    right = client.post("/auth/login", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD,
                                             "redirect": "/collection/root"}, headers=HTMX)
    assert right.headers["HX-Redirect"] == "/collection/root"
    assert client.get("/collection/root").status_code == 200
    # Somewhere else is never a place to return to.
    for elsewhere in ("https://evil.example", "//evil.example", "/\\evil.example"):
        again = client.post("/auth/login", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD,
                                                 "redirect": elsewhere}, headers=HTMX)
        assert again.headers["HX-Redirect"] == "/"


def test_sign_out_ends_the_session(app, admin):
    client = sign_in(app)
    out = client.post("/auth/logout", json={}, headers=HTMX)
    assert out.headers["HX-Redirect"] == "/auth/login"
    assert client.get("/").headers["Location"].startswith("/auth/login")


def test_writes_with_the_cookie_must_be_json_as_for_the_api(app, admin):
    client = sign_in(app)
    forged = client.post("/account/profile", data={"first_name": "Mallory"})  # what a form on another site sends
    assert forged.status_code == 403
    assert admin.get("/api/user/current").json["first_name"] != "Mallory"
    saved = client.post("/account/profile", json={"first_name": "Adele", "locale": "de"}, headers=HTMX)
    assert saved.status_code == 200 and "Saved" in text(saved)
    me = admin.get("/api/user/current").json
    assert (me["first_name"], me["locale"]) == ("Adele", "de")


def test_a_password_change_checks_the_old_one(app, admin):
    # As in the API, a person who is not an administrator confirms their current password.
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    refused = client.post("/account/password", json={"old_password": "wrong", "password": "N3w-Passw0rd-Good"},
                          headers=HTMX)
    assert refused.status_code == 400 and 'role="alert"' in text(refused)
    weak = client.post("/account/password", json={"old_password": USER_PASSWORD, "password": "password"},
                       headers=HTMX)
    assert weak.status_code == 400 and 'role="alert"' in text(weak)
    changed = client.post("/account/password", json={"old_password": USER_PASSWORD,
                                                     "password": "N3w-Passw0rd-Good"}, headers=HTMX)
    assert changed.status_code == 200, text(changed)
    assert client.get("/account/profile").status_code == 200  # still signed in on this browser
    sign_in(app, "user@example.com", "N3w-Passw0rd-Good")


def test_collections_search_and_trash(app, admin):
    folder = admin.post("/api/collection", json={"name": "Finance reports", "color": "#509EE3"}).json
    client = sign_in(app)
    home = text(client.get("/"))
    assert "Finance reports" in home and f'href="/collection/{folder["id"]}-finance-reports"' in home
    page = text(client.get(f"/collection/{folder['id']}-finance-reports"))
    assert "<h1>Finance reports</h1>" in page
    found = client.get("/search?q=finance")
    assert found.status_code == 200 and "Finance reports" in text(found) and "1 result" in text(found)
    assert admin.put(f"/api/collection/{folder['id']}", json={"archived": True}).status_code == 200
    trash = text(client.get("/collection/trash"))
    assert "Finance reports" in trash
    restored = client.post("/collection/trash/restore", json={"model": "collection", "id": folder["id"]},
                           headers=HTMX)
    assert restored.status_code == 200 and "is back" in text(restored)
    assert admin.get(f"/api/collection/{folder['id']}").json["archived"] is False
    bad = client.post("/collection/trash/restore", json={"model": "user", "id": 1}, headers=HTMX)
    assert bad.status_code == 400


def test_a_page_shows_only_what_the_api_shows_that_user(app, admin):
    mine = admin.get("/api/user/current").json["personal_collection_id"]
    admin.post("/api/collection", json={"name": "Admin private notes", "parent_id": mine})
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    page = client.get(f"/collection/{mine}")
    assert page.status_code == 403 and "Admin private notes" not in text(page)
    assert "Admin private notes" not in text(client.get("/search?q=private"))
    assert client.get("/collection/999999").status_code == 404
    assert client.get("/collection/12abc").status_code == 404


def test_assets_are_served_versioned_and_nothing_else(app):
    client = browser(app)
    js = client.get("/app/assets/htmx.min.js")
    assert js.status_code == 200 and js.headers["X-Content-Type-Options"] == "nosniff"
    assert client.get("/app/assets/LICENSES.txt").status_code == 404
    assert client.get("/app/assets/..%2Fviews.py").status_code == 404


def test_pages_are_never_framed_nor_cached(app, admin):
    client = sign_in(app)
    response = client.get("/")
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["Cache-Control"] == "no-store"


def test_disabled_the_app_leaves_the_api_landing_page(app_config):
    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.app"})
    client = app.test_client()
    assert "_metabaseBootstrap" in client.get("/").get_data(as_text=True)
    for path in ("/setup", "/auth/login", "/collection/root", "/search", "/app/assets/htmx.min.js"):
        assert client.get(path).status_code == 404, path
