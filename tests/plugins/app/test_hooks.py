"""The web app's hooks (app_nav_links, app_page_slot, register_templates) with a plugin written here,
and core.http.internal, through which every page reads the API as its user."""
from __future__ import annotations

from flask import Flask

from core.assembly.app import create_app
from core.http.internal import call
from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, setup_admin
from tests.support import write_plugin

PLUGIN = '''
from pathlib import Path
from markupsafe import Markup, escape
from core import hookimpl
from core.assembly.records import NavLink

SEEN = []

@hookimpl
def app_nav_links(user):
    return [NavLink("Reports", "/reports")] if user.is_superuser else []

@hookimpl
def app_page_slot(page, obj, user):
    SEEN.append((page, (obj or {}).get("name"), user.email))
    if page == "collection":
        return Markup("<p class=slot>Owner notes for ") + escape(obj["name"]) + Markup("</p>")
    return None

@hookimpl
def register_templates():
    return [Path(__file__).parent / "overrides"]
'''


def plugin_app(app_config, tmp_path, monkeypatch) -> tuple[Flask, str]:
    name = write_plugin(tmp_path, monkeypatch, PLUGIN)
    overrides = tmp_path / "plugin_path" / "overrides" / "app"
    overrides.mkdir(parents=True)
    (overrides / "search.html").write_text('{% extends "app/base.html" %}{% block content %}'
                                           '<p class="ours">Our own search page for {{ q }}</p>{% endblock %}')
    return create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name}), name


def signed_in(app):
    client = app.test_client()
    response = client.post("/auth/login", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD},
                           headers={"HX-Request": "true"})
    assert response.status_code == 200, response.data
    return client


def test_hook_app_nav_links(app_config, tmp_path, monkeypatch):
    app, _ = plugin_app(app_config, tmp_path, monkeypatch)
    setup_admin(app)
    page = signed_in(app).get("/").get_data(as_text=True)
    assert '<a href="/reports">Reports</a>' in page
    assert page.index('href="/browse/databases"') < page.index('href="/reports"')  # after the app's own


def test_hook_app_page_slot(app_config, tmp_path, monkeypatch):
    import sys

    app, name = plugin_app(app_config, tmp_path, monkeypatch)
    admin = setup_admin(app)
    folder = admin.post("/api/collection", json={"name": "<Sales & co>"}).json
    client = signed_in(app)
    page = client.get(f"/collection/{folder['id']}").get_data(as_text=True)
    assert "<p class=slot>Owner notes for &lt;Sales &amp; co&gt;</p>" in page
    home = client.get("/").get_data(as_text=True)
    assert "class=slot" not in home  # None places nothing
    assert sys.modules[name].SEEN == [("collection", "<Sales & co>", ADMIN_EMAIL), ("home", None, ADMIN_EMAIL)]


def test_hook_register_templates(app_config, tmp_path, monkeypatch):
    app, _ = plugin_app(app_config, tmp_path, monkeypatch)
    setup_admin(app)
    client = signed_in(app)
    assert '<p class="ours">Our own search page for dogs</p>' in client.get("/search?q=dogs").get_data(as_text=True)
    assert "Collections" in client.get("/").get_data(as_text=True)  # templates not overridden stay the app's


def test_internal_call_answers_as_the_requests_user(app, admin, sample_database_file):
    with app.test_request_context("/", headers={"X-Metabase-Session": admin.headers["X-Metabase-Session"]}):
        me = call("GET", "/api/user/current")
        assert me.ok and me.body["email"] == ADMIN_EMAIL
        missing = call("GET", "/api/collection/999999")
        assert missing.status == 404 and not missing.ok
        bad = call("POST", "/api/collection", json={"name": ""})
        assert bad.status == 400 and bad.message
        found = call("GET", "/api/search", query={"q": "nothing-like-this", "models": ["card", "dashboard"]})
        assert found.ok and found.body["data"] == []
    # A write without a body still passes the API's cross-site rule (the page's own request did).
    token = admin.headers["X-Metabase-Session"]
    with app.test_request_context("/", headers={"Cookie": f"metabase.SESSION={token}"}):
        answer = call("POST", "/api/database/sample_database")
        assert answer.ok and answer.body["is_sample"] is True
    with app.test_request_context("/"):
        assert call("GET", "/api/user/current").status == 401
