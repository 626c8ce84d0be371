"""The dashboard and x-ray pages in headless Chromium (tests/plugins/sharing/browser.py): the cards draw
(a chart, a number, rows), a value picked from a filter's list and a date range redraw them and go into
the URL, a table sorts by a click, tabs switch, the grid is 24 columns wide at 1400 px and one at 390 px,
auto-refresh reloads the cards, full screen holds the page, an x-ray is saved with its button; no script
error on the way, and axe-core finds no serious or critical violation in either theme.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import base64
import json
import time

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, wait_for_sync
from tests.plugins.app.test_dashboard_pages import build_shop, fields_of, ok
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import press, serious_violations

pytestmark = [pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                 "(apt-get install chromium, or make test-setup)"),
              pytest.mark.xdist_group("app-dashboard-browser")]

SETTLED = ("document.readyState === 'complete' && !!window.htmx"
           " && !document.querySelector('[aria-busy=true], .htmx-request, .htmx-settling, .htmx-swapping')")


def wait_for(browser, expression: str, timeout: float = 15):
    return browser.wait_for(expression, timeout)


def settle(browser) -> None:
    time.sleep(0.15)  # htmx's own delays (the swap, a search's 250 ms) start before the DOM shows them
    wait_for(browser, SETTLED)


def go(browser, url: str) -> None:
    browser.send("Page.navigate", url=url)
    wait_for(browser, f"location.href === {url!r} || location.href.startsWith({url!r})")
    settle(browser)


def set_value(browser, selector: str, value: str) -> None:
    """A form control's new value and its change event, as a person choosing it causes."""
    browser.evaluate(f"(e => {{ e.value = {value!r}; e.dispatchEvent(new Event('change', {{bubbles: true}})); }})"
                     f"(document.querySelector({selector!r}))")


def scalar(browser) -> str:
    return browser.evaluate("document.querySelector('.scalar')?.textContent")


def width(browser, w: int, h: int = 900) -> None:
    browser.send("Emulation.setDeviceMetricsOverride", width=w, height=h, deviceScaleFactor=1, mobile=w < 500)
    time.sleep(0.3)


def boxes(browser) -> list:
    return browser.evaluate("[...document.querySelectorAll('.grid > .dashcard')].map(c => {"
                            " const r = c.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top),"
                            " Math.round(r.width)]; })")


@pytest.fixture
def browser():
    with Browser(chromium_path(), 1400, 900) as opened:
        opened.watch_errors()
        yield opened


def signed_in(app, browser, server) -> None:
    session = app.test_client().post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}).json
    browser.send("Network.enable")
    browser.send("Network.setCookie", name="metabase.SESSION", value=session["id"], url=server.url, httpOnly=True)


def test_a_dashboard_filters_sorts_switches_tabs_and_refreshes_in_a_browser(app, admin, browser):
    shop = build_shop(app, admin)
    with Server(app) as server:
        signed_in(app, browser, server)
        go(browser, server.url + shop["path"])
        assert scalar(browser) == "23.5"
        assert browser.evaluate("document.querySelectorAll('.chart svg[role=img]').length") == 1
        assert browser.evaluate("document.querySelectorAll('table.result tbody tr').length") == 3
        assert browser.evaluate("document.querySelector('.markdown strong').textContent") == "EUR"
        assert serious_violations(browser) == []

        # The wide grid: the chart and the number side by side, the chart twice as wide.
        chart, number, *_ = boxes(browser)
        assert chart[1] == number[1] and number[0] > chart[0] and abs(chart[2] - 2 * number[2]) < 20
        # A phone: every card as wide as the grid, top to bottom in reading order.
        width(browser, 390, 844)
        stacked = boxes(browser)
        grid = browser.evaluate("Math.round(document.querySelector('.grid').getBoundingClientRect().width)")
        assert all(abs(w - grid) <= 2 for _, _, w in stacked) and [t for _, t, _ in stacked] == sorted(t for _, t, _ in stacked)
        assert browser.evaluate("document.documentElement.scrollWidth") <= 390
        assert serious_violations(browser) == []
        width(browser, 1400)

        # A city picked from its list: the cards redraw, the URL holds it, the other list is chained.
        browser.evaluate("document.querySelector('[data-slug=city] summary').click()")
        wait_for(browser, "document.querySelectorAll('[data-slug=city] input[type=checkbox]').length === 2")
        browser.evaluate("document.querySelector('[data-slug=city] input[value=Oslo]').click()")
        settle(browser)
        assert browser.evaluate("location.search") == f"?city=Oslo&tab={shop['tabs'][0]}-sales"
        assert scalar(browser) == "16.5"
        browser.evaluate("document.querySelector('[data-slug=name] summary').click()")
        wait_for(browser, "document.querySelectorAll('[data-slug=name] input[type=checkbox]').length === 2")
        assert browser.evaluate("[...document.querySelectorAll('[data-slug=name] input')].map(i => i.value)"
                                ".filter(Boolean).join()") == "Ann,Cy"
        browser.evaluate("document.querySelector('#filter-name-search').focus()")
        browser.send("Input.insertText", text="C")
        wait_for(browser, "[...document.querySelectorAll('[data-slug=name] input[type=checkbox]')].map(i => i.value)"
                          ".join() === 'Cy'")
        assert "name=" not in browser.evaluate("location.search")  # typing searches, it does not filter
        press(browser, "Escape")  # the list closes, the focus back on its summary
        assert browser.evaluate("document.querySelector('[data-slug=name] details').open") is False
        assert browser.evaluate("document.activeElement.tagName") == "SUMMARY"
        assert browser.evaluate("document.querySelector('[data-slug=city] details').open") is False  # one at a time
        browser.evaluate("document.querySelector('[data-slug=city] summary').click()")
        browser.evaluate("document.querySelector('h1').click()")  # a click elsewhere closes it
        assert browser.evaluate("document.querySelector('[data-slug=city] details').open") is False
        # A card's downloads menu closes the same ways.
        browser.evaluate("document.querySelector('details.downloads summary').click()")
        assert browser.evaluate("document.querySelector('details.downloads').open") is True
        browser.evaluate("document.querySelector('details.downloads summary').focus()")
        press(browser, "Escape")
        assert browser.evaluate("document.querySelector('details.downloads').open") is False
        browser.evaluate("document.querySelector('details.downloads summary').click()")
        browser.evaluate("document.querySelector('h1').click()")
        assert browser.evaluate("document.querySelector('details.downloads').open") is False
        settle(browser)

        # A date range from the date widget's parts, written in Metabase's syntax.
        set_value(browser, "[data-slug=date] [data-part=mode]", "between")
        assert browser.evaluate("document.querySelector('[data-slug=date] [data-modes=\"before between\"]').hidden") is False
        set_value(browser, "[data-slug=date] [data-part=start]", "2024-02-01")
        settle(browser)
        assert "date=" not in browser.evaluate("location.search")  # half a range filters nothing yet
        set_value(browser, "[data-slug=date] [data-part=end]", "2024-03-31")
        settle(browser)
        assert "date=2024-02-01~2024-03-31" in browser.evaluate("location.search")
        assert scalar(browser) == "6.5"
        set_value(browser, "[data-slug=date] [data-part=mode]", "this")
        settle(browser)
        assert "date=thisminute" not in browser.evaluate("location.search")
        assert "date=this" in browser.evaluate("location.search") and scalar(browser) == "–"
        set_value(browser, "[data-slug=date] [data-part=mode]", "")
        settle(browser)
        assert "date=" not in browser.evaluate("location.search") and scalar(browser) == "16.5"

        # The invoice table sorts by a click on a column, then the other way.
        browser.evaluate("[...document.querySelectorAll('table.result th a')][2].click()")
        settle(browser)
        amounts = "[...document.querySelectorAll('table.result tbody tr')].map(r => r.cells[2].textContent).join()"
        assert browser.evaluate(amounts) == "1,5.5,10"
        assert browser.evaluate("location.search").startswith("?city=Oslo")  # the card's links stay in the card
        browser.evaluate("[...document.querySelectorAll('table.result th a')][2].click()")
        settle(browser)
        assert browser.evaluate(amounts) == "10,5.5,1"

        # The other tab, with the filters kept; back to the first with the browser's Back.
        browser.evaluate("document.querySelector('.tabs a:not([aria-current])').click()")
        settle(browser)
        assert browser.evaluate("location.search") == f"?city=Oslo&tab={shop['tabs'][1]}-customers"
        wait_for(browser, "document.querySelectorAll('table.result tbody tr').length === 2")

        # Auto-refresh: each card loads itself again (a new body element), its interval in the URL.
        go(browser, server.url + shop["path"] + "#refresh=1")
        assert browser.evaluate("document.querySelector('[data-refresh]').value") == "1"
        browser.evaluate("document.querySelector('.shape-number').dataset.seen = 'yes'")
        wait_for(browser, "!document.querySelector('.shape-number[data-seen]') && !!document.querySelector('.scalar')",
                 timeout=10)
        set_value(browser, "[data-refresh]", "0")
        assert browser.evaluate("location.hash") == ""

        # Full screen: the page's main part, and the button says how to leave it.
        browser.send("Runtime.evaluate", expression="document.querySelector('[data-fullscreen]').click()",
                     userGesture=True)
        wait_for(browser, "document.fullscreenElement && document.fullscreenElement.id === 'main'")
        wait_for(browser, "document.querySelector('[data-fullscreen]').getAttribute('aria-pressed') === 'true'")
        assert browser.evaluate("document.querySelector('[data-fullscreen]').textContent") == "Leave full screen"
        browser.send("Runtime.evaluate", expression="document.exitFullscreen()", awaitPromise=True)

        # The dark theme: the charts are drawn for it, and it is still readable.
        browser.evaluate("document.querySelector('[data-theme-toggle]').click()")
        go(browser, server.url + shop["path"])
        assert browser.evaluate("document.documentElement.dataset.theme") == "dark"
        assert serious_violations(browser) == []
    assert browser.errors() == []


def test_an_xray_is_drawn_and_saved_in_a_browser(app, admin, sample_database_file, browser):
    sample = ok(admin.post("/api/database/sample_database"))["id"]
    wait_for_sync(app)
    orders = fields_of(admin, sample)[0]["ORDERS"]["id"]
    with Server(app) as server:
        signed_in(app, browser, server)
        go(browser, f"{server.url}/auto/dashboard/table/{orders}")
        charts = browser.evaluate("document.querySelectorAll('.chart svg').length")
        assert charts >= 8 and browser.evaluate("document.querySelectorAll('.scalar').length") == 4
        assert browser.evaluate("document.querySelectorAll('.card-error').length") == 0
        assert serious_violations(browser) == []
        set_value(browser, "[data-slug=timestamp] [data-part=mode]", "quarter")
        set_value(browser, "[data-slug=timestamp] [data-part=year]", "2024")
        settle(browser)
        assert "timestamp=Q1-2024" in browser.evaluate("location.search")
        browser.evaluate("document.querySelector('.save-xray').click()")
        wait_for(browser, "location.pathname.startsWith('/dashboard/')")
        settle(browser)
        saved = int(browser.evaluate("location.pathname").split("/")[2].split("-")[0])
        assert ok(admin.get(f"/api/dashboard/{saved}?ignore_view=true"))["name"] == browser.evaluate(
            "document.querySelector('h1').textContent")
        assert browser.evaluate("document.querySelectorAll('.chart svg').length") == charts
        # A cell of the x-ray (orders under 20) and its comparison with the whole table: pages of their own.
        total = next(f["id"] for f in fields_of(admin, sample)[0]["ORDERS"]["fields"] if f["name"] == "TOTAL")
        cell = base64.urlsafe_b64encode(json.dumps(["<", ["field", total, None], 20]).encode()).decode().rstrip("=")
        go(browser, f"{server.url}/auto/dashboard/table/{orders}/cell/{cell}")
        assert browser.evaluate("document.querySelectorAll('.chart svg, .scalar').length") >= 4
        assert browser.evaluate("document.querySelectorAll('.card-error').length") == 0
        assert serious_violations(browser) == []
        browser.evaluate("[...document.querySelectorAll('.related-xrays a')].find(a => a.href.includes('/compare/')).click()")
        wait_for(browser, "location.pathname.includes('/compare/table/')")
        settle(browser)
        assert browser.evaluate("document.querySelectorAll('.chart svg, .scalar').length") >= 2
        assert browser.evaluate("document.querySelectorAll('.card-error').length") == 0
        assert serious_violations(browser) == []
    assert browser.errors() == []
