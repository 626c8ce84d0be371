"""Drill-through and saving in headless Chromium (issue 31 items 4-5): a bar of a saved question opens its
menu by keyboard and by a click, "View these rows" lands on the ad-hoc question of that bar's rows, and
the Save panel saves it as a new question into a collection, where the API then finds it. axe-core finds
no serious or critical violation on the way, and the browser reports no error."""
from __future__ import annotations

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app.test_question_pages import SALES, click, first_column, ok, settle, shop  # noqa: F401
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import press, serious_violations

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package")

NORTH_BAR = ".drill-mark[aria-label*='North']"


def test_click_a_bar_view_its_rows_and_save_them(app, admin, shop):  # noqa: F811
    shelf = ok(admin.post("/api/collection", json={"name": "Drilled"}))["id"]
    token = ok(admin.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))["id"]
    north = sorted(i for i, r, _, _ in SALES if r == "North")
    with Server(app) as server, Browser(chromium_path()) as browser:
        browser.send("Network.enable")
        browser.send("Network.setCookie", name="metabase.SESSION", value=token, url=server.url, httpOnly=True)
        browser.watch_errors()
        browser.send("Page.navigate", url=f"{server.url}/question/{shop['by_region']}-sales-by-region")
        settle(browser, f"document.querySelector({NORTH_BAR!r})")
        assert browser.evaluate("document.querySelectorAll('.chart .drill-mark').length") == 4
        assert serious_violations(browser) == []

        # By keyboard: the bar takes the focus, Enter opens the menu on its first offer, Escape closes it.
        browser.evaluate(f"document.querySelector({NORTH_BAR!r}).focus(), true")
        press(browser, "Enter")
        settle(browser, "document.activeElement && document.activeElement.closest('.drill-menu')")
        assert browser.evaluate("document.activeElement.textContent") == "View these rows"
        assert serious_violations(browser) == []
        press(browser, "Escape")
        settle(browser, "!document.querySelector('.drill-menu')")
        assert browser.evaluate("document.activeElement.matches('.drill-mark')")

        # By a click on the bar: "View these rows" is the ad-hoc question of North's rows.
        browser.evaluate(f"document.querySelector({NORTH_BAR!r}).dispatchEvent("
                         "new MouseEvent('click', {bubbles: true})), true")
        settle(browser, "document.querySelector('.drill-menu a')")
        click(browser, ".drill-menu a")
        settle(browser, "location.pathname === '/question' && document.querySelector('table.result')")
        assert sorted(int(v) for v in first_column(browser, 0)) == north
        assert set(first_column(browser, 1)) == {"North"}
        assert serious_violations(browser) == []

        # Saved as a new question, into the collection.
        click(browser, ".save-actions button.primary")
        settle(browser, "document.activeElement && document.activeElement.name === 'replace'")
        browser.evaluate("""(function () {
          var choice = document.querySelector('input[name=replace][value=new]');
          choice.checked = true; choice.dispatchEvent(new Event('change', {bubbles: true}));
          document.getElementById('save-name').value = 'North sales';
          document.getElementById('save-collection').value = '%s';
          return true; })()""" % shelf)
        assert browser.evaluate("document.querySelector('.save-new').disabled") is False
        assert serious_violations(browser) == []
        click(browser, ".save-dialog button[type=submit]")
        settle(browser, "location.pathname.startsWith('/question/') && document.querySelector('h1')"
                        " && document.querySelector('h1').textContent === 'North sales'")
        assert serious_violations(browser) == []

        click(browser, "[data-theme-toggle]")  # the rest in the dark theme
        settle(browser, "document.documentElement.dataset.theme === 'dark'")
        # At a phone's width, a table cell by keyboard: one cell in the tab order, the arrows move, Enter
        # opens the menu with "Filter by this value", which fits the screen.
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=900, deviceScaleFactor=1, mobile=True)
        settle(browser, "document.querySelector('td.drill-cell[tabindex=\"0\"]')")
        assert browser.evaluate("document.querySelectorAll('td.drill-cell[tabindex=\"0\"]').length") == 1
        browser.evaluate("document.querySelector('td.drill-cell[tabindex=\"0\"]').focus(), true")
        press(browser, "ArrowDown")
        assert browser.evaluate("document.activeElement.parentElement.sectionRowIndex") == 1
        press(browser, "Enter")
        settle(browser, "document.querySelector('.drill-menu .drill-group')")
        assert "Filter by this value" in browser.evaluate("document.querySelector('.drill-menu').textContent")
        assert browser.evaluate("document.querySelector('.drill-menu').getBoundingClientRect().right <= innerWidth")
        assert browser.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")
        assert serious_violations(browser) == []
        browser.evaluate("document.querySelector('.save-actions button').click(), true")  # the Save panel fits too
        settle(browser, "document.getElementById('save-name')")
        assert browser.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")
        assert serious_violations(browser) == []
        assert browser.errors() == []
    items = ok(admin.get(f"/api/collection/{shelf}/items"))["data"]
    assert [one["name"] for one in items] == ["North sales"]
    saved = ok(admin.get(f"/api/card/{items[0]['id']}"))
    assert saved["dataset_query"]["query"] == {"source-table": shop["table"],
                                               "filter": ["=", ["field", shop["fields"]["region"], None], "North"]}
