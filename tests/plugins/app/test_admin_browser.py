"""The admin area in a real browser (headless Chromium over the DevTools protocol): an administrator invites
someone, puts them in a group, takes the group's query permission on a database away in the grid, and the
API refuses that person's query from then on. Every admin page passes axe-core in both themes with no
console error, and none runs wider than a 390 px screen.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import json
import re

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app.test_browse_browser import (
    WatchedBrowser,
    checked_in_both_themes,
    click,
    fill,
    load,
    path_is,
    settle,
)
from tests.plugins.sharing.browser import Server, chromium_path
from tests.plugins.sharing.test_pages_browser import wait_for

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                "(apt-get install chromium, or make test-setup)")


def query_status(app, email: str, password: str, db: int, table: int) -> int:
    client = app.test_client()
    assert client.post("/api/session", json={"username": email, "password": password}).status_code == 200
    return client.post("/api/dataset", json={"database": db, "type": "query",
                                             "query": {"source-table": table}}).status_code


def test_invite_group_and_take_query_permission_away_in_a_browser(app, admin, warehouse):
    db, people = warehouse["db"], warehouse["people"]
    group = admin.post("/api/permissions/group", json={"name": "Analysts"}).json["id"]
    graph = admin.get("/api/permissions/graph-v2").json
    assert admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(db): {"view-data": "unrestricted", "create-queries": "no"}},
        str(group): {str(db): {"view-data": "unrestricted", "create-queries": "query-builder"}}}}).status_code == 200
    # An OpenID Connect provider (plugins/sso), so its admin section lists one.
    assert admin.put("/api/setting/oidc-providers", json={"value": [{
        "name": "corp", "display_name": "Corp login", "issuer": "https://idp.example.com/realms/a-long-realm-name",
        "client_id": "tessera", "client_secret": "s3cret", "group_mappings": {"analysts": [group]}}]}).status_code == 204
    with Server(app) as server, WatchedBrowser(chromium_path(), width=1400) as browser:
        load(browser, server.url + "/auth/login?redirect=/admin/people")
        fill(browser, {"#username": ADMIN_EMAIL, "#password": ADMIN_PASSWORD})
        click(browser, "form button[type=submit]")
        path_is(browser, "^/admin/people$")
        settle(browser)
        assert browser.evaluate("!!document.querySelector('nav[aria-label=Main] a[href=\"/admin\"]')")
        checked_in_both_themes(browser)

        fill(browser, {"#invite-email": "not-an-address"})
        browser.evaluate("document.querySelector('#invite-email').type = 'text'")  # past the browser's own check
        click(browser, "form[hx-post='/admin/people'] button[type=submit]")
        wait_for(browser, "!!document.querySelector('#invite-result [role=alert]')")
        fill(browser, {"#invite-first": "Nia", "#invite-last": "Nord", "#invite-email": "nia@example.com"})
        click(browser, "form[hx-post='/admin/people'] button[type=submit]")
        wait_for(browser, "!!document.querySelector('#invite-result [data-secret]')")
        password = browser.evaluate("document.querySelector('#invite-result [data-secret]').textContent")
        checked_in_both_themes(browser)
        click(browser, "#invite-result a")
        person_path = path_is(browser, r"^/admin/people/\d+$")
        settle(browser)
        checked_in_both_themes(browser)
        browser.evaluate(f"document.querySelector('input[name=\"group-{group}\"]').click()")
        click(browser, "form[hx-post^='/admin/people/'] button[type=submit]")
        wait_for(browser, "(document.getElementById('person-result').textContent || '').includes('Saved')")
        nia = admin.get(person_path.replace("/admin/people", "/api/user")).json
        assert {m["id"] for m in nia["user_group_memberships"]} == {1, group}
        assert query_status(app, "nia@example.com", password, db, people) < 300

        load(browser, server.url + f"/admin/permissions/data/group/{group}")
        assert "Warehouse" in browser.text()
        checked_in_both_themes(browser)
        name = json.dumps(["db", group, db, "create-queries", None, None], separators=(",", ":"))
        browser.evaluate(f"(s => {{ s.value = 'no'; s.dispatchEvent(new Event('change', {{bubbles: true}})); }})"
                         f"(document.querySelector('select[name=' + {json.dumps(json.dumps(name))} + ']'))")
        browser.evaluate("window.beforeSave = true")
        click(browser, "form.perm-grid button[type=submit]")  # saved, the page comes back drawn from the graph
        wait_for(browser, "!window.beforeSave && document.readyState === 'complete' && !!window.htmx")
        assert browser.evaluate(f"document.querySelector('select[name=' + {json.dumps(json.dumps(name))} + ']').value"
                                ) == "no"
        entry = admin.get("/api/permissions/graph-v2").json["groups"][str(group)][str(db)]
        assert entry["create-queries"] == "no"
        assert query_status(app, "nia@example.com", password, db, people) == 403

        for path in ("/admin/people?status=deactivated", "/admin/people/groups", f"/admin/people/groups/{group}",
                     f"/admin/permissions/data/database/{db}", f"/admin/permissions/data/group/{group}/database/{db}",
                     "/admin/settings/general", "/admin/settings/localization", "/admin/settings/email",
                     "/admin/settings/public-sharing", "/admin/settings/embedding-in-other-applications",
                     "/admin/settings/caching", "/admin/settings/authentication/api-keys", "/admin/tools/tasks",
                     "/admin/tools/jobs", "/admin/settings/authentication/jwt", "/admin/settings/authentication/ldap",
                     "/admin/settings/authentication/oidc", "/admin/settings/authentication/oidc/provider?name=corp"):
            load(browser, server.url + path)
            assert re.search(r"\S", browser.text()), path
            checked_in_both_themes(browser)
        # Creating an API key shows it once, on the page, in the browser.
        load(browser, server.url + "/admin/settings/authentication/api-keys")
        fill(browser, {"#key-name": "Loader"})
        browser.evaluate(f"document.getElementById('key-group').value = '{group}'")
        click(browser, "form[hx-post='/admin/settings/authentication/api-keys'] button[type=submit]")
        wait_for(browser, "!!document.querySelector('#new-key-result [data-secret]')")
        checked_in_both_themes(browser)
        assert browser.errors == []
