"""Saving from the SQL editor in Chromium (tests/plugins/sharing/browser.py): SQL written with a date field
filter and a category (text) variable in an optional clause, run with values and without, shown as a bar
chart with a setting changed (the question pages' picker and panel), saved through the question pages'
save panel into a collection, found on that collection's page and opened with the same parameters.
axe-core finds no serious or critical violation; no console error.

Skipped, naming the package, when Debian's `chromium` is not installed."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app.test_native_editor_browser import ctrl_enter, set_value, type_sql
from tests.plugins.app.test_question_pages import SALES, click, first_column, ok, settle, shop  # noqa: F401
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package")

TYPED = ("SELECT region, COUNT(*) AS sold FROM sales WHERE {{day}} [[AND region = {{region}}]] "
         "GROUP BY region ORDER BY region")
FIRST, LAST = "2024-01-03", "2024-01-06"
DAYS = {f"2024-01-{d:02d}" for d in range(3, 7)}


def test_write_visualize_and_save_sql_then_find_it_in_its_collection(app, admin, shop):  # noqa: F811
    token = ok(admin.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))["id"]
    reports = ok(admin.post("/api/collection", json={"name": "Reports"}))["id"]
    with Server(app) as server, Browser(chromium_path(), width=1400) as browser:
        browser.send("Network.enable")
        browser.send("Network.setCookie", name="metabase.SESSION", value=token, url=server.url, httpOnly=True)
        browser.watch_errors()

        browser.send("Page.navigate", url=f"{server.url}/question/native?native-db={shop['db']}")
        settle(browser, "document.querySelector('.code-wrap.highlighting')")
        type_sql(browser, TYPED)
        settle(browser, "document.querySelectorAll('#native-tags fieldset.tag').length === 2")
        # {{day}}: a field filter on sold_on with the date widget; {{region}} a text (category) variable.
        set_value(browser, "select[name='tag-type.day']", "dimension")
        settle(browser, "document.querySelector(\"select[name='tag-field.day']\")")
        set_value(browser, "select[name='tag-field.day']", str(shop["fields"]["sold_on"]))
        settle(browser, f"document.querySelector(\"select[name='tag-field.day']\").value === '{shop['fields']['sold_on']}'")
        set_value(browser, "select[name='tag-widget.day']", "date/all-options")
        settle(browser, "document.getElementById('filter-day-mode')")
        set_value(browser, "#filter-day-mode", "between")
        set_value(browser, "#filter-day-start", FIRST)
        set_value(browser, "#filter-day-end", LAST)
        assert browser.evaluate("document.querySelector('input[name=day]').value") == f"{FIRST}~{LAST}"
        set_value(browser, "#filter-region", "North")

        asked = browser.evaluate("[...new Set([...document.querySelectorAll('#native-widgets [name]')]"
                                 ".map(e => e.name))].sort()")
        assert asked == ["day", "region"]
        # With values: the days' North sales only.
        browser.evaluate("document.getElementById('native-sql').focus() || true")
        ctrl_enter(browser)
        settle(browser, "document.querySelector('#native-result table.result')")
        north = sum(1 for _, r, _, d in SALES if r == "North" and d in DAYS)
        assert first_column(browser, 0) == ["North"] and first_column(browser, 1) == [str(north)]
        # Without the region the optional clause is left out: every region of those days.
        set_value(browser, "#filter-region", "")
        ctrl_enter(browser)
        regions = sorted({r for _, r, _, d in SALES if d in DAYS})
        assert len(regions) > 1
        settle(browser, f"document.querySelectorAll('#native-result table.result tbody tr').length === {len(regions)}")
        assert first_column(browser, 0) == regions

        # The question pages' display picker: a bar chart, drawn by the server.
        click(browser, "#native-result .viz-picker a[data-display='bar']")
        settle(browser, "document.querySelector('#native-result figure.chart svg')")
        assert browser.evaluate("document.querySelector(\"input[name='native-display']\").value") == "bar"
        # A setting from the panel: the values on the bars; the chart is drawn again with it.
        click(browser, "#viz-settings > summary")
        click(browser, "#viz-values")
        settle(browser, "document.querySelector(\"input[name='native-viz']\")")
        kept = parse_qs(urlsplit(browser.evaluate("location.href")).query)
        assert kept["native-display"] == ["bar"] and kept["native-viz"]
        assert browser.evaluate("document.getElementById('viz-values').checked")
        assert serious_violations(browser) == []

        # Table, then the chart again: the switch is a run away and keeps the display.
        click(browser, "[data-native-view='table']")
        settle(browser, "document.querySelector('#native-result table.result')")
        click(browser, "[data-native-view='chart']")
        settle(browser, "document.querySelector('#native-result figure.chart svg')")

        # Save: the question pages' panel; no name is said by the browser's own check, nothing posted.
        click(browser, "#native-save")
        settle(browser, "document.getElementById('save-name')")
        assert browser.evaluate("document.activeElement.id") == "save-name"
        assert serious_violations(browser) == []
        # Dark theme and a phone's width: nothing wider than the screen, still no violation.
        click(browser, "[data-theme-toggle]")
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=900, deviceScaleFactor=1, mobile=True)
        try:
            assert browser.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")
            assert serious_violations(browser) == []
        finally:
            browser.send("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=1,
                         mobile=False)
            click(browser, "[data-theme-toggle]")
        set_value(browser, "#save-name", "Sales of the day")
        set_value(browser, "#save-collection", str(reports))
        click(browser, "#save-panel button[type=submit]")
        settle(browser, "/^\\/question\\/\\d+/.test(location.pathname) && document.querySelector('.question-result')")
        card_id = int(re.match(r"/question/(\d+)", browser.evaluate("location.pathname")).group(1))
        card = ok(admin.get(f"/api/card/{card_id}"))
        assert card["collection_id"] == reports and card["display"] == "bar"
        assert card["visualization_settings"].get("graph.show_values") is True
        assert set(card["dataset_query"]["native"]["template-tags"]) == {"day", "region"}

        # The collection's page lists it; opened from there, it asks for the same parameters.
        browser.send("Page.navigate", url=f"{server.url}/collection/{reports}")
        settle(browser, f"document.querySelector(\"a[href^='/question/{card_id}']\")")
        assert "Sales of the day" in browser.text()
        click(browser, f"a[href^='/question/{card_id}']")
        settle(browser, "document.getElementById('filter-region') && document.getElementById('filter-day-mode')"
                        " && document.querySelector('.question-result')")
        assert browser.evaluate("document.querySelector('h1').textContent") == "Sales of the day"
        assert browser.evaluate("[...new Set([...document.querySelectorAll('#filters .param-widgets [name]')]"
                                ".map(e => e.name))].sort()") == asked
        assert browser.evaluate("document.querySelector(\"label[for='filter-region']\").textContent.trim()") \
            == "Region"
        assert serious_violations(browser) == []
        assert browser.errors() == []
