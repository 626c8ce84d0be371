"""Managing collections in headless Chromium (tests/plugins/sharing/browser.py): a collection is created
from the dialog, a question moved into it with the item menu, pinned, bookmarked and found in the
navigation, then the collection is archived after the confirmation (which counts what it holds) and
restored from the trash; every step passes axe-core with no serious or critical violation and no console
error, in both themes and at a phone width.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import re

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app.test_collections_edit import card
from tests.plugins.app.test_dashboard_browser import go, settle, wait_for
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations

pytestmark = [pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                 "(apt-get install chromium, or make test-setup)"),
              pytest.mark.xdist_group("app-collections-browser")]


def checked(browser, where: str) -> None:
    assert serious_violations(browser) == [], where
    assert browser.errors() == [], where


def click(browser, selector: str) -> None:
    browser.evaluate(f"document.querySelector({selector!r}).click() || true")


def open_dialog(browser, selector: str) -> None:
    click(browser, selector)
    wait_for(browser, "document.getElementById('action-dialog').open")
    settle(browser)


def test_create_move_pin_bookmark_archive_and_restore(app, admin):
    question = card(admin, "Weekly revenue")
    with Browser(chromium_path(), width=1400) as browser, Server(app) as server:
        browser.watch_errors()
        go(browser, server.url + "/auth/login")
        browser.evaluate(f"document.getElementById('username').value = {ADMIN_EMAIL!r};"
                         f"document.getElementById('password').value = {ADMIN_PASSWORD!r};"
                         "document.querySelector(\"form[hx-post='/auth/login']\").requestSubmit() || true")
        wait_for(browser, "location.pathname === '/'")

        go(browser, server.url + "/collection/root")
        checked(browser, "root collection")
        open_dialog(browser, "a[href='/collection/new?parent=root']")
        assert browser.evaluate("document.activeElement.id") == "collection-name"
        checked(browser, "the new collection dialog")
        browser.evaluate("document.getElementById('collection-name').value = 'Finance';"
                         "document.querySelector('#action-dialog form').requestSubmit() || true")
        wait_for(browser, "location.pathname.endsWith('-finance')")
        finance = int(re.search(r"/collection/(\d+)", browser.evaluate("location.pathname")).group(1))
        settle(browser)

        go(browser, server.url + "/collection/root")
        click(browser, f"li:has(a[href^='/question/{question['id']}']) details.item-menu summary")
        open_dialog(browser, f"a[href='/collection/root/items/move?item=card-{question['id']}']")
        checked(browser, "the move dialog")
        browser.evaluate(f"document.getElementById('move-target').value = '{finance}';"
                         "document.querySelector('#action-dialog form').requestSubmit() || true")
        wait_for(browser, f"location.pathname === '/collection/{finance}'")
        settle(browser)
        assert admin.get(f"/api/card/{question['id']}").json["collection_id"] == finance

        click(browser, "details.item-menu summary")
        click(browser, "details.item-menu button[hx-post$='/items/pin']")
        wait_for(browser, "[...document.querySelectorAll('h2')].some(h => h.textContent === 'Pinned')")
        settle(browser)
        assert admin.get(f"/api/card/{question['id']}").json["collection_position"] == 1

        click(browser, "details.item-menu summary")
        click(browser, "details.item-menu button.bookmark")
        wait_for(browser, "document.querySelector('#nav-bookmarks').textContent.includes('Weekly revenue')")
        settle(browser)
        click(browser, "#nav-bookmarks summary")
        assert browser.evaluate("!!document.querySelector('#nav-bookmarks a[href^=\"/question/\"]').offsetParent")
        checked(browser, "the collection with a pinned, bookmarked question")

        open_dialog(browser, f"a[href='/collection/{finance}/archive']")
        assert "with the 1 item it holds" in browser.evaluate("document.getElementById('action-dialog').innerText")
        checked(browser, "the archive confirmation")
        click(browser, "#action-dialog [data-dialog-close]")  # cancelling changes nothing
        wait_for(browser, "!document.getElementById('action-dialog').open")
        assert admin.get(f"/api/collection/{finance}").json["archived"] is False
        open_dialog(browser, f"a[href='/collection/{finance}/archive']")
        click(browser, "#action-dialog button.primary")
        wait_for(browser, "location.pathname === '/collection/root'")
        settle(browser)
        assert admin.get(f"/api/collection/{finance}").json["archived"] is True

        go(browser, server.url + "/collection/trash")
        click(browser, f"button[hx-vals*='\"id\": {finance}']")
        wait_for(browser, "document.body.innerText.includes('is back in its collection')")
        assert admin.get(f"/api/collection/{finance}").json["archived"] is False
        checked(browser, "the trash")

        go(browser, f"{server.url}/collection/{finance}")
        browser.evaluate("document.querySelector('[data-theme-toggle]').click() || true")
        checked(browser, "the collection, dark")
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=1, mobile=True)
        go(browser, f"{server.url}/collection/{finance}")
        assert browser.evaluate("document.documentElement.scrollWidth <= 390")
        checked(browser, "the collection at 390 px")


def test_bulk_archive_the_permissions_grid_and_the_bookmarks_page(app, admin):
    first, second = card(admin, "North sales"), card(admin, "South sales")
    admin.post("/api/collection", json={"name": "Shared shelf"})
    admin.post("/api/permissions/group", json={"name": "Analysts"})
    with Browser(chromium_path(), width=1400) as browser, Server(app) as server:
        browser.watch_errors()
        go(browser, server.url + "/auth/login")
        browser.evaluate(f"document.getElementById('username').value = {ADMIN_EMAIL!r};"
                         f"document.getElementById('password').value = {ADMIN_PASSWORD!r};"
                         "document.querySelector(\"form[hx-post='/auth/login']\").requestSubmit() || true")
        wait_for(browser, "location.pathname === '/'")
        go(browser, server.url + "/collection/root")
        assert browser.evaluate("document.querySelector('#bulk [data-needs-selection]').disabled")
        for question in (first, second):
            browser.evaluate(f"document.querySelector('input[value=\"card-{question['id']}\"]').click() || true")
        assert browser.evaluate("document.querySelector('[data-selected-count]').textContent") == "2 selected"
        open_dialog(browser, "#bulk button[formaction$='/items/archive']")
        shown = browser.evaluate("document.getElementById('action-dialog').innerText")
        assert "These 2 items go to the trash" in shown and "North sales" in shown and "South sales" in shown
        checked(browser, "the bulk archive confirmation")
        click(browser, "#action-dialog button.primary")
        wait_for(browser, "!document.body.innerText.includes('North sales')")
        assert all(admin.get(f"/api/card/{q['id']}").json["archived"] for q in (first, second))

        go(browser, server.url + "/admin/permissions/collections")
        assert "Shared shelf" in browser.text()
        checked(browser, "the permissions grid")
        click(browser, "form.permissions-form button.primary")
        wait_for(browser, "location.search === '?saved=1'")
        settle(browser)
        checked(browser, "the permissions grid, saved")
        go(browser, server.url + "/bookmarks")
        checked(browser, "the bookmarks page")
