"""The admin pages for databases and the data model in headless Chromium (tests/plugins/sharing/browser.py):
an administrator adds a new SQLite file through the generated form, syncs it, hides a table, points a
column at another table's key and shows that table's name column instead of the key, and sees both
effects where people look at data. Every admin page passes axe-core with no serious or critical violation
in both themes, fits a 390 px screen, and reports no console error.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import base64
import json

import orjson
import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, sqlite_file, wait_for_sync
from tests.plugins.app.test_admin_data import SHOP
from tests.plugins.app.test_app_browser import LOADED, fill, load, submit
from tests.plugins.app.test_dashboard_browser import wait_for
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                "(apt-get install chromium, or make test-setup)")


@pytest.fixture(scope="module")
def browser():
    with Browser(chromium_path(), width=1400) as opened:
        opened.watch_errors()
        yield opened


def width(browser, pixels: int) -> None:
    browser.send("Emulation.setDeviceMetricsOverride", width=pixels, height=900, deviceScaleFactor=1, mobile=False)


def checked(browser, where: str) -> None:
    """axe-core in the light and the dark theme, no sideways scrolling at 390 px, no error reported."""
    for theme in ("light", "dark"):
        browser.evaluate(f"document.documentElement.dataset.theme = '{theme}'")
        assert serious_violations(browser) == [], (where, theme)
    width(browser, 390)
    assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), where
    width(browser, 1400)
    browser.evaluate("document.documentElement.dataset.theme = 'light'")
    assert browser.errors() == [], where


def click(browser, selector: str) -> None:
    browser.evaluate(f"document.querySelector({selector!r}).click() || true")


def select(browser, selector: str, value: str, change: bool = False) -> None:
    event = "s.dispatchEvent(new Event('change', {bubbles: true}));" if change else ""
    browser.evaluate(f"(s => {{ s.value = {value!r}; {event} return true; }})(document.querySelector({selector!r}))")


def shows(browser, selector: str, text: str) -> None:
    wait_for(browser, f"!!document.querySelector({selector!r}) && "
                      f"document.querySelector({selector!r}).innerText.includes({text!r})")


def test_an_admin_adds_syncs_hides_and_remaps_in_a_browser(app, admin, browser):
    path = sqlite_file(app, "corner.db", SHOP)
    with Server(app) as server:
        load(browser, server.url + "/auth/login")
        fill(browser, {"#username": ADMIN_EMAIL, "#password": ADMIN_PASSWORD})
        submit(browser, "form[hx-post='/auth/login']")
        wait_for(browser, "location.pathname === '/'")
        load(browser, server.url + "/admin/databases")
        checked(browser, "the database list")

        # Add the database through the form generated from the SQLite driver's details.
        click(browser, "a[href='/admin/databases/create']")
        wait_for(browser, f"location.pathname === '/admin/databases/create' && {LOADED}")
        checked(browser, "the add form")
        select(browser, "#engine", "sqlite", change=True)
        wait_for(browser, "!!document.getElementById('details-db')")
        fill(browser, {"#database-name": "Corner shop", "#details-db": path + ".missing"})
        click(browser, "button[hx-post='/setup/database/validate']")
        wait_for(browser, "!!document.querySelector('#database-result [role=alert]')")
        # The refusal is the form's message with the API's 400, which the browser logs as a failed load.
        assert [e for e in browser.errors() if "status of 400" not in e] == []
        fill(browser, {"#details-db": path})
        submit(browser, "form[hx-post='/admin/databases/create']")
        db_path = wait_for(browser, r"/^\/admin\/databases\/\d+$/.test(location.pathname) && location.pathname")
        db_id = int(db_path.rsplit("/", 1)[1])
        wait_for(browser, LOADED)
        checked(browser, "the edit form")

        # Sync now, then the schedules.
        click(browser, f"button[hx-post='/admin/databases/{db_id}/sync_schema']")
        shows(browser, "#action-result", "Syncing the schema started")
        wait_for_sync(app)
        select(browser, "#metadata_sync-type", "daily")
        fill(browser, {"#metadata_sync-hour": "2"})
        submit(browser, f"form[hx-post='/admin/databases/{db_id}/schedules']")
        shows(browser, "#schedules-result", "Schedules saved")
        assert admin.get(f"/api/database/{db_id}").json["schedules"]["metadata_sync"]["schedule_hour"] == 2
        click(browser, "details.confirm summary")
        checked(browser, "the edit form with the discard confirmation open")
        tables = {t["name"]: t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]}
        assert set(tables) == {"customers", "orders", "audit_log"}

        # Hide the audit log from people.
        click(browser, f"a[href='/admin/datamodel/database/{db_id}']")
        wait_for(browser, f"location.pathname === '/admin/datamodel/database/{db_id}' && {LOADED}")
        checked(browser, "the database's tables")
        audit = f"/admin/datamodel/database/{db_id}/table/{tables['audit_log']['id']}"
        click(browser, f"a[href='{audit}']")
        wait_for(browser, f"location.pathname === '{audit}' && {LOADED}")
        checked(browser, "a table's metadata")
        select(browser, "#table-visibility", "hidden")
        submit(browser, f"form[hx-post='{audit}']")
        shows(browser, "#table-result", "People no longer see this table")
        assert admin.get(f"/api/table/{tables['audit_log']['id']}").json["visibility_type"] == "hidden"

        # Orders' customer: a foreign key to Customers' ID, shown as the customer's name.
        fields = {f["name"]: f for f in admin.get(f"/api/table/{tables['orders']['id']}/query_metadata").json["fields"]}
        customer_pk = next(f["id"] for f in admin.get(f"/api/table/{tables['customers']['id']}/query_metadata")
                           .json["fields"] if f["name"] == "id")
        field = f"/admin/datamodel/database/{db_id}/table/{tables['orders']['id']}/field/{fields['customer_id']['id']}"
        load(browser, server.url + f"/admin/datamodel/database/{db_id}/table/{tables['orders']['id']}")
        checked(browser, "the orders' fields")
        click(browser, f"a[href='{field}']")
        wait_for(browser, f"location.pathname === '{field}' && {LOADED}")
        checked(browser, "a field's page")
        select(browser, "#semantic", "type/FK")
        select(browser, "#fk-target", str(customer_pk))
        browser.evaluate("window.beforeSave = true")
        submit(browser, f"form[hx-post='{field}']")
        # The page comes again with what the saved key allows: the columns of the target's table.
        wait_for(browser, f"!window.beforeSave && !!document.getElementById('display-column') && {LOADED}")
        browser.evaluate("document.querySelector('input[name=remap][value=external]').click() || true")
        name_id = browser.evaluate("[...document.querySelectorAll('#display-column option')]"
                                   ".find(o => o.textContent.trim() === 'Name').value")
        select(browser, "#display-column", name_id)
        fill(browser, {"#remap-name": "Customer"})
        submit(browser, f"form[hx-post='{field}/remap']")
        shows(browser, "#remap-result", "the chosen column is shown")
        checked(browser, "a field remapped")
        dimension = admin.get(f"/api/field/{fields['customer_id']['id']}").json["dimensions"][0]
        assert (dimension["type"], dimension["human_readable_field_id"]) == ("external", int(name_id))

        # The effects where people look: the hidden table is not browsed, orders show the customer's name.
        load(browser, server.url + f"/browse/databases/{db_id}-corner-shop")
        assert "Orders" in browser.text() and "Audit Log" not in browser.text()
        question = {"dataset_query": {"database": db_id, "type": "query",
                                      "query": {"source-table": tables["orders"]["id"]}},
                    "display": "table", "visualization_settings": {}}
        encoded = base64.urlsafe_b64encode(orjson.dumps(question)).decode().rstrip("=")
        load(browser, server.url + "/question/adhoc?q=" + encoded)
        wait_for(browser, "!!document.querySelector('table.result')")
        headers = browser.evaluate("[...document.querySelectorAll('table.result th')]"
                                   ".map(t => t.innerText.split(String.fromCharCode(10))[0].trim())")
        cells = browser.evaluate("[...document.querySelectorAll('table.result tbody tr')].map("
                                 "r => [...r.cells].map(c => c.innerText.trim()))")
        assert "Customer" in headers, headers
        shown = headers.index("Customer")
        assert sorted(row[shown] for row in cells) == ["Ann", "Ann", "Bob"], json.dumps(cells)
        assert browser.errors() == []

        # The editor's own list, then the removal: its confirmation says what goes, and wants the name.
        load(browser, server.url + "/admin/datamodel")
        assert "Corner shop" in browser.text()
        checked(browser, "the data model's databases")
        assert admin.post("/api/card", json={"name": "Orders list", "display": "table", "visualization_settings": {},
                                             "dataset_query": question["dataset_query"]}).status_code == 200
        load(browser, server.url + f"/admin/databases/{db_id}")
        click(browser, f"a[href='/admin/databases/{db_id}/remove']")
        wait_for(browser, f"location.pathname === '/admin/databases/{db_id}/remove' && {LOADED}")
        assert "1 question" in browser.text()
        checked(browser, "the removal's confirmation")
        fill(browser, {"#confirm": "Corner shop"})
        submit(browser, f"form[hx-post='/admin/databases/{db_id}/remove']")
        wait_for(browser, f"location.pathname === '/admin/databases' && {LOADED}")
        assert "Corner shop" not in browser.text()
        assert admin.get(f"/api/database/{db_id}").status_code == 404
        assert browser.errors() == []
