"""The visualization settings in Chromium: an ad-hoc question switched to bars, stacked by a breakout,
given a goal line, each change redrawn in place with its state in the URL (a reload shows the same), at a
desktop's and a phone's width, with axe-core finding nothing serious and no console error."""
from __future__ import annotations

import json

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app import test_question_pages
from tests.plugins.app.test_question_pages import click, ok, settle
from tests.plugins.app.test_viz_settings import adhoc, bar_boxes, by_day_and_region
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations

shop = test_question_pages.shop  # the Shop database's fixture


def set_field(browser, selector: str, value) -> None:
    """Set a field as a person does (its value, then the change event the form listens to)."""
    field = json.dumps(selector)
    if isinstance(value, bool):
        browser.evaluate(f"(function () {{ var f = document.querySelector({field}); f.checked = {json.dumps(value)};"
                         " f.dispatchEvent(new Event('change', {bubbles: true})); return true; })()")
    else:
        browser.evaluate(f"(function () {{ var f = document.querySelector({field}); f.value = {json.dumps(value)};"
                         " f.dispatchEvent(new Event('change', {bubbles: true})); return true; })()")


def chart(browser) -> str:
    return browser.evaluate("document.querySelector('.chart svg') ? document.querySelector('.chart svg').outerHTML"
                            " : ''")


@pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package")
def test_in_a_browser_switch_to_bars_stack_them_and_set_a_goal(app, admin, shop):
    token = ok(admin.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))["id"]
    link = adhoc(shop, dataset_query=by_day_and_region(shop), display="line")
    with Server(app) as server, Browser(chromium_path()) as browser:
        browser.send("Network.enable")
        browser.send("Network.setCookie", name="metabase.SESSION", value=token, url=server.url, httpOnly=True)
        browser.watch_errors()

        browser.send("Page.navigate", url=f"{server.url}/question#{link}")
        settle(browser, "document.querySelector('.chart svg') && document.querySelector('.viz-picker')")
        offered = browser.evaluate("[...document.querySelectorAll('.viz-picker a')].map(a => a.dataset.display)")
        assert {"line", "bar", "area", "table"} <= set(offered) and "scalar" not in offered
        assert serious_violations(browser) == []

        # Bars, from the picker: drawn in place (the page was not loaded again).
        browser.evaluate("window.__kept = true")
        click(browser, ".viz-picker a[data-display=bar]")
        settle(browser, "document.querySelector('.viz-picker a[data-display=bar][aria-current=true]')")
        assert browser.evaluate("window.__kept") is True
        assert bar_boxes(chart(browser))

        # Stacked by the breakout (region), through the panel.
        click(browser, "#viz-settings > summary")
        assert browser.evaluate("document.getElementById('viz-breakout').value") == "region"
        grouped = bar_boxes(chart(browser))
        set_field(browser, "#viz-stack", "stacked")
        settle(browser, "document.getElementById('viz-stack').value === 'stacked' && "
                        "location.pathname === '/question/adhoc'")
        stacked = bar_boxes(chart(browser))
        assert len({x for x, _ in stacked}) < len(stacked) and len({x for x, _ in grouped}) == len(grouped)
        # The panel stayed open across the redraw.
        assert browser.evaluate("document.getElementById('viz-settings').open") is True

        # A goal line: its value, then the box.
        set_field(browser, "#viz-goal-value", "150")
        settle(browser, "document.getElementById('viz-goal-value').value === '150' && "
                        "location.search.length > 0")
        before = chart(browser)
        set_field(browser, "#viz-show-goal", True)
        settle(browser, f"document.querySelector('.chart svg').outerHTML !== {json.dumps(before)}")
        assert ">Goal</text>" in chart(browser)
        assert serious_violations(browser) == []

        # The URL holds it all: a reload draws the same chart.
        drawn = chart(browser)
        browser.send("Page.reload")
        settle(browser, "document.querySelector('.chart svg') && document.getElementById('viz-show-goal')")
        assert ">Goal</text>" in chart(browser) and browser.evaluate(
            "document.getElementById('viz-show-goal').checked") is True
        assert bar_boxes(chart(browser)) == bar_boxes(drawn)

        # A phone's width: nothing wider than the screen, still no serious violation.
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=900, deviceScaleFactor=1, mobile=True)
        click(browser, "#viz-settings > summary")
        assert browser.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")
        assert serious_violations(browser) == []
        # Dark theme: the panel and the chart follow it.
        click(browser, "[data-theme-toggle]")
        settle(browser, "document.documentElement.dataset.theme === 'dark'")
        assert serious_violations(browser) == []

        # The rows, with a colour range on the sums: each cell painted, its text still readable (axe's
        # contrast check runs over the painted cells).
        browser.send("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=1, mobile=False)
        click(browser, ".switch a:nth-child(2)")
        settle(browser, "document.querySelector('table.result')")
        if not browser.evaluate("document.getElementById('viz-settings').open"):
            click(browser, "#viz-settings > summary")
        browser.evaluate("document.getElementById('viz-rules').open = true")
        set_field(browser, "#viz-rule-column", "sum")
        set_field(browser, "#viz-rule-type", "range")
        assert browser.evaluate("document.querySelector('#viz-form input[name=view]').value") == "table"
        click(browser, "#viz-add-rule")
        settle(browser, "document.querySelector('table.result td[data-cell-color]')")
        painted = browser.evaluate("[...document.querySelectorAll('table.result td[data-cell-color]')]"
                                   ".map(td => td.style.backgroundColor)")
        assert len(set(painted)) > 3 and all(painted)   # shades of the range, one per sum
        assert browser.evaluate("document.querySelector('.viz-rules li').textContent").strip().startswith("Sum of")
        assert serious_violations(browser) == []
        assert browser.errors() == []
