"""The public and embed pages in a real browser (headless Chromium over the DevTools protocol): the
issue's "done when" as a person sees it. A new administrator turns sharing on, makes a dashboard with
tabs, a chart, a number, a table, a text card and two filters, opens its public link, filters it with
the filter widgets, downloads a CSV, switches tab and theme; then signs an embed with one locked and one
enabled filter. A saved x-ray shows its section headings whole, its cards in line with its title, and
its date filter writes Metabase's date values. axe-core (vendored in axe/, injected into each page)
finds no serious or critical violation on any of these pages. One browser serves the whole module.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import csv
import io
import json
import threading
import time
from pathlib import Path

import pytest
from joserfc import jwt  # the Authlib project's JOSE library (authlib.jose is deprecated in its favour)
from joserfc.jwk import OctKey

from core.testing import sqlite_file, wait_for_sync
from tests.charts.support import colours
from tests.plugins.sharing.browser import Browser, Server, chromium_path

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                "(apt-get install chromium, or make test-setup)")

SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE invoices (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), amount REAL);
INSERT INTO customers VALUES (1, 'Ann', 'Oslo'), (2, 'Bob', 'Rome'), (3, 'Cy', 'Oslo');
INSERT INTO invoices VALUES (1, 1, 10.0), (2, 1, 5.5), (3, 2, 7.0), (4, 3, 1.0);
"""
CITY = {"id": "p_city", "name": "City", "slug": "city", "type": "string/="}
NAME = {"id": "p_name", "name": "Name", "slug": "name", "type": "string/="}
SECRET = "5f" * 32


def ok(response, status=200):
    assert response.status_code == status, (response.status_code, response.json)
    return response.json


def shop_dashboard(app, admin) -> dict:
    """Two tabs: Sales (a bar chart, a number, a text card) and Customers (a table); both filters on every card."""
    path = sqlite_file(app, "shop.db", SHOP)
    db = ok(admin.post("/api/database", json={"name": "Shop", "engine": "sqlite", "details": {"db": path}}))["id"]
    wait_for_sync(app)
    tables = {t["name"]: t for t in ok(admin.get(f"/api/database/{db}/metadata"))["tables"]}
    field = {t: {f["name"]: f["id"] for f in tables[t]["fields"]} for t in ("customers", "invoices")}
    fk = field["invoices"]["customer_id"]
    city = field["customers"]["city"]  # a list filter: its values are offered as suggestions
    ok(admin.put(f"/api/field/{city}", json={"semantic_type": "type/Category", "has_field_values": "list"}))
    ok(admin.post(f"/api/field/{city}/rescan_values"))
    wait_for_sync(app)

    def card(name, display, query, **settings):
        body = {"name": name, "display": display, "visualization_settings": settings,
                "dataset_query": {"database": db, "type": "query", "query": query}}
        return ok(admin.post("/api/card", json=body))["id"]

    amount = ["sum", ["field", field["invoices"]["amount"], None]]
    by_city = ["field", field["customers"]["city"], {"source-field": fk}]
    chart = card("Revenue by city", "bar", {"source-table": tables["invoices"]["id"], "aggregation": [amount],
                                            "breakout": [by_city]})
    total = card("Invoice total", "scalar", {"source-table": tables["invoices"]["id"], "aggregation": [amount]})
    people = card("Customer list", "table", {"source-table": tables["customers"]["id"], "order-by": [
        ["asc", ["field", field["customers"]["id"], None]]]})
    did = ok(admin.post("/api/dashboard", json={"name": "Shop overview", "parameters": [CITY, NAME]}))["id"]

    def mappings(card_id, via_fk):
        def target(name):
            return ["dimension", ["field", field["customers"][name], {"source-field": fk} if via_fk else None]]
        return [{"parameter_id": p["id"], "card_id": card_id, "target": target(p["slug"])} for p in (CITY, NAME)]

    text = {"virtual_card": {"name": None, "display": "text", "visualization_settings": {}, "dataset_query": {},
                             "archived": False}, "text": "Numbers are in **EUR**. <img src=x onerror=alert(1)>"}
    dashcards = [
        {"id": -1, "card_id": chart, "dashboard_tab_id": -1, "row": 0, "col": 0, "size_x": 12, "size_y": 6,
         "parameter_mappings": mappings(chart, True)},
        {"id": -2, "card_id": total, "dashboard_tab_id": -1, "row": 0, "col": 12, "size_x": 6, "size_y": 3,
         "parameter_mappings": mappings(total, True)},
        {"id": -3, "card_id": None, "dashboard_tab_id": -1, "row": 3, "col": 12, "size_x": 6, "size_y": 2,
         "visualization_settings": text},
        {"id": -4, "card_id": people, "dashboard_tab_id": -2, "row": 0, "col": 0, "size_x": 12, "size_y": 5,
         "parameter_mappings": mappings(people, False)},
    ]
    ok(admin.put(f"/api/dashboard/{did}", json={"tabs": [{"id": -1, "name": "Sales"}, {"id": -2, "name": "Customers"}],
                                                "dashcards": dashcards, "parameters": [CITY, NAME]}))
    return {"dashboard": did, "chart": chart, "total": total, "db": db}


@pytest.fixture(scope="module")
def browser():
    with Browser(chromium_path()) as opened:
        yield opened


AXE = (Path(__file__).parent / "axe" / "axe.min.js").read_text(encoding="utf-8")


def serious_violations(browser) -> list:
    """axe-core's serious and critical violations on the page open now (WCAG 2 A/AA and best practice)."""
    if not browser.evaluate("typeof window.axe === 'object'"):  # once per document: it is half a megabyte
        browser.evaluate(AXE + "\n;true")
    found = browser.evaluate(
        "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations"
        ".filter(v => ['serious', 'critical'].includes(v.impact))"
        ".map(v => [v.id, v.nodes.map(n => n.target.join(' ') + ' ' + n.failureSummary)]))")
    return [f"{rule}: {nodes}" for rule, nodes in found]


def press(browser, key: str) -> None:
    """A real key press (Enter, Backspace, ArrowDown) on the focused element."""
    codes = {"Enter": 13, "Backspace": 8, "ArrowDown": 40, "Escape": 27}
    text = {"Enter": "\r"}.get(key)
    browser.send("Input.dispatchKeyEvent", type="keyDown", key=key, code=key, windowsVirtualKeyCode=codes[key],
                 **({"text": text} if text else {}))
    browser.send("Input.dispatchKeyEvent", type="keyUp", key=key, code=key, windowsVirtualKeyCode=codes[key])


def wait_for(browser, expression: str, timeout: float = 10):
    return browser.wait_for(expression, timeout)


def options_shown(browser, slug: str) -> list:
    return browser.evaluate(f"[...document.querySelectorAll('[data-slug={slug}] [role=option]')].map(o => o.textContent)")


def choose(browser, slug: str, typed: str, wanted: str) -> str:
    """Type into a value-list filter, wait for `wanted` among the values its search offers, pick it with
    the arrow keys and Enter; the page's state once it settled."""
    browser.evaluate(f"document.querySelector('input[name={slug}]').focus()")
    browser.send("Input.insertText", text=typed)
    # The list of the search for the text typed: every value offered holds it.
    wait_for(browser, f"(o => o.some(t => t === {json.dumps(wanted)}) && o.every(t => t.toLowerCase()"
                      f".includes({json.dumps(typed.lower())})))([...document.querySelectorAll("
                      f"'[data-slug={slug}] [role=option]')].map(o => o.textContent))")
    index = options_shown(browser, slug).index(wanted)
    for _ in range(index + 1):
        press(browser, "ArrowDown")
    press(browser, "Enter")
    return browser.wait_settled()


def enter_value(browser, slug: str, value: str) -> str:
    """Type a value the list need not hold and take it with Enter."""
    browser.evaluate(f"document.querySelector('input[name={slug}]').focus()")
    browser.send("Input.insertText", text=value)
    press(browser, "Enter")
    return browser.wait_settled()


def clear_choices(browser, slug: str) -> str:
    browser.evaluate(f"document.querySelector('input[name={slug}]').focus()")
    while browser.evaluate(f"document.querySelectorAll('[data-slug={slug}] .chip').length"):
        press(browser, "Backspace")
        browser.wait_settled()
    return browser.wait_settled()


def chips(browser, slug: str) -> list:
    return browser.evaluate(f"[...document.querySelectorAll('[data-slug={slug}] .chip span')].map(s => s.textContent)")


def card_states(browser) -> dict:
    return browser.evaluate("Object.fromEntries([...document.querySelectorAll('section.card')].map("
                            "s => [s.querySelector('.card-title')?.textContent || s.className, s.dataset.state]))")


def charts_drawn(browser) -> int:
    return browser.evaluate("[...document.querySelectorAll('img.chart')].filter(i => i.naturalWidth > 50).length")


def test_public_dashboard_page_shows_filters_downloads_tabs_and_themes(app, admin, browser):
    ok(admin.put("/api/setting/enable-public-sharing", json={"value": True}), 204)
    shop = shop_dashboard(app, admin)
    uuid = ok(admin.post(f"/api/dashboard/{shop['dashboard']}/public_link"))["uuid"]
    with Server(app) as server:
        page = f"{server.url}/public/dashboard/{uuid}"
        assert browser.open(page) == "ready", browser.text()
        text = browser.text()
        for expected in ("Shop overview", "Revenue by city", "Invoice total", "23.5", "Numbers are in EUR.",
                         "City", "Name", "Sales", "Customers"):
            assert expected in text, (expected, text)
        assert set(card_states(browser).values()) == {"done"}, card_states(browser)
        assert charts_drawn(browser) == 1
        assert browser.evaluate("document.title") == "Shop overview"
        assert len(colours(browser.screenshot())) > 12  # not a blank page: the chart's colours and text
        # The text card's Markdown is drawn; markup in it stays text.
        assert browser.evaluate("document.querySelector('.text-card strong').textContent") == "EUR"
        assert "<img src=x onerror=alert(1)>" in text and browser.evaluate("document.querySelectorAll('img').length") == 1
        assert serious_violations(browser) == []

        # A narrower window (or iframe) draws the chart again for its new size.
        drawn = browser.evaluate("document.querySelector('img.chart').naturalWidth")
        browser.send("Emulation.setDeviceMetricsOverride", width=800, height=900, deviceScaleFactor=1, mobile=False)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (browser.evaluate(
                "document.querySelector('img.chart')?.naturalWidth || 0") in (0, drawn)):
            time.sleep(0.1)
        assert browser.wait_settled() == "ready"
        assert 0 < browser.evaluate("document.querySelector('img.chart').naturalWidth") < drawn

        # A phone's width: the cards stack, each as wide as the grid, in the layout's reading order.
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=900, deviceScaleFactor=1, mobile=True)
        time.sleep(0.5)
        boxes = browser.evaluate("[...document.querySelectorAll('.grid > .card')].filter((c) => c.offsetParent)"
                                 ".map((c) => { const r = c.getBoundingClientRect(); return [r.left, r.top, r.width]; })")
        grid_width = browser.evaluate("document.querySelector('.grid').getBoundingClientRect().width")
        assert len(boxes) > 1 and all(abs(width - grid_width) < 2 for _left, _top, width in boxes), (boxes, grid_width)
        assert [top for _left, top, _width in boxes] == sorted(top for _left, top, _width in boxes)
        browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        time.sleep(0.5)  # past the resize handler's 250 ms pause, so the next checks see the wide drawing settle
        assert browser.wait_settled() == "ready"

        # A value picked from the filter's search re-runs the cards and is kept in the page's URL.
        assert choose(browser, "city", "Os", "Oslo") == "ready"
        assert "16.5" in browser.text() and "23.5" not in browser.text()
        assert browser.evaluate("location.search").startswith("?city=Oslo")
        assert chips(browser, "city") == ["Oslo"]
        assert charts_drawn(browser) == 1
        # With nothing typed, the list shows every value of the field, the chosen one marked.
        wait_for(browser, "document.querySelectorAll('[data-slug=city] [role=option]').length === 2")
        assert options_shown(browser, "city") == ["Oslo", "Rome"]
        assert browser.evaluate("document.querySelector('[data-slug=city] [aria-selected=true]').textContent") == "Oslo"
        press(browser, "Escape")
        assert browser.evaluate("document.querySelector('[data-slug=city] [role=listbox]').hidden")
        # Chained: the Name filter offers only the names of the city chosen.
        browser.evaluate("document.querySelector('input[name=name]').focus()")
        wait_for(browser, "document.querySelectorAll('[data-slug=name] [role=option]').length > 0")
        assert options_shown(browser, "name") == ["Ann", "Cy"]
        browser.evaluate("document.activeElement.blur()")

        # The CSV download of the filtered number, as the page offers it.
        download = browser.evaluate("""(async () => {
            const card = [...document.querySelectorAll('section.card')]
                .find(s => s.querySelector('.card-title')?.textContent === 'Invoice total');
            const link = card.querySelector('[data-format=csv]');
            const request = link.tagName === 'A' ? fetch(link.href)
                : fetch(link.action, {method: 'POST', body: new URLSearchParams(new FormData(link))});
            const response = await request;
            return [response.status, response.headers.get('Content-Disposition'), await response.text()];
        })()""")
        assert download[0] == 200 and "attachment" in download[1]
        assert list(csv.reader(io.StringIO(download[2])))[1:] == [["16.5"]]

        # The second tab shows the table, filtered the same way.
        browser.evaluate("[...document.querySelectorAll('.tab')].find(b => b.textContent === 'Customers').click()")
        assert browser.wait_settled() == "ready"
        text = browser.text()
        assert "Customer list" in text and "Ann" in text and "Cy" in text and "Bob" not in text
        assert "Revenue by city" not in text

        # Opened anew with the filter in its URL and Metabase's hash options.
        assert browser.open(f"{page}?city=Rome#titled=false&theme=night&bordered=true&downloads=false"
                            "&hide_parameters=name") == "ready"
        assert browser.evaluate("document.querySelector('input[name=name]') === null")
        assert chips(browser, "city") == ["Rome"]
        assert "7" in browser.evaluate("document.querySelector('.scalar-value').textContent")
        assert browser.evaluate("document.querySelector('h1') === null")
        assert browser.evaluate("document.body.className") == "bordered theme-night"
        assert browser.evaluate("document.querySelector('.downloads') === null")
        assert browser.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(46, 53, 59)"

        # The public question page of the chart.
        card_uuid = ok(admin.post(f"/api/card/{shop['chart']}/public_link"))["uuid"]
        assert browser.open(f"{server.url}/public/question/{card_uuid}") == "ready", browser.text()
        assert "Revenue by city" in browser.text() and charts_drawn(browser) == 1
        assert serious_violations(browser) == []
        exported = browser.evaluate(f"fetch('/public/question/{card_uuid}.csv').then(r => r.text())")
        assert list(csv.reader(io.StringIO(exported)))[1:] == [["Oslo", "16.5"], ["Rome", "7.0"]]

        # A public question with a filter of its own (a SQL variable), set from the page's URL, then changed.
        native = ok(admin.post("/api/card", json={
            "name": "Customers in a city", "display": "table", "visualization_settings": {},
            "dataset_query": {"database": shop["db"], "type": "native", "native": {
                "query": "SELECT name FROM customers WHERE city = {{city}} ORDER BY id",
                "template-tags": {"city": {"id": "t-city", "name": "city", "display-name": "City", "type": "text"}}}}}))
        native_uuid = ok(admin.post(f"/api/card/{native['id']}/public_link"))["uuid"]
        assert browser.open(f"{server.url}/public/question/{native_uuid}?city=Rome") == "ready", browser.text()
        assert browser.evaluate("[...document.querySelectorAll('td')].map(td => td.textContent).join()") == "Bob"
        assert clear_choices(browser, "city") == "ready"
        assert enter_value(browser, "city", "Oslo") == "ready"  # a SQL variable has no list: the value typed
        assert browser.evaluate("[...document.querySelectorAll('td')].map(td => td.textContent).join()") == "Ann,Cy"
        assert serious_violations(browser) == []

        # Sharing turned off: the same link now says so, and shows nothing else.
        ok(admin.put("/api/setting/enable-public-sharing", json={"value": False}), 204)
        assert browser.open(page) == "error"
        assert browser.text().strip() == "Public sharing is not enabled."


def test_embed_dashboard_page_keeps_its_locked_filter(app, admin, browser):
    ok(admin.put("/api/setting/enable-embedding-static", json={"value": True}), 204)
    ok(admin.put("/api/setting/embedding-secret-key", json={"value": SECRET}), 204)
    shop = shop_dashboard(app, admin)
    did = shop["dashboard"]
    ok(admin.put(f"/api/dashboard/{did}", json={"enable_embedding": True,
                                                "embedding_params": {"city": "locked", "name": "enabled"}}))
    claims = {"resource": {"dashboard": did}, "params": {"city": ["Oslo"]}, "exp": int(time.time()) + 600}
    token = jwt.encode({"alg": "HS256", "typ": "JWT"}, claims, OctKey.import_key(SECRET))
    with Server(app) as server:
        page = f"{server.url}/embed/dashboard/{token}"
        assert browser.open(f"{page}#bordered=true&titled=true") == "ready", browser.text()
        text = browser.text()
        assert "Shop overview" in text and "16.5" in text and "Revenue by city" in text
        assert charts_drawn(browser) == 1
        # The locked filter is no input; the enabled one is, and re-runs the cards.
        assert browser.evaluate("document.querySelector('input[name=city]') === null")
        assert serious_violations(browser) == []
        # Chained by the token's city: only Oslo's names are offered.
        assert choose(browser, "name", "A", "Ann") == "ready"
        assert browser.evaluate("[...document.querySelectorAll('[data-slug=name] [role=option]')]"
                                ".map(o => o.textContent)").count("Bob") == 0
        assert "15.5" in browser.text()
        assert browser.evaluate("location.search").startswith("?name=Ann")
        assert len(colours(browser.screenshot())) > 12

        # A city in the page's URL changes nothing: the token's value holds.
        assert browser.open(f"{page}?city=Rome") == "ready"
        assert browser.evaluate("document.querySelector('.scalar-value').textContent") == "16.5"

        # An embedded question, without a title.
        ok(admin.put(f"/api/card/{shop['total']}", json={"enable_embedding": True, "embedding_params": {}}))
        claims = {"resource": {"question": shop["total"]}, "params": {}, "exp": int(time.time()) + 600}
        question = jwt.encode({"alg": "HS256"}, claims, OctKey.import_key(SECRET))
        assert browser.open(f"{server.url}/embed/question/{question}#titled=false") == "ready", browser.text()
        assert browser.evaluate("document.querySelector('.scalar-value').textContent") == "23.5"
        assert browser.evaluate("document.querySelector('h1') === null") and browser.evaluate("document.title") == "Invoice total"
        assert serious_violations(browser) == []


ORDERS = """
CREATE TABLE orders (id INTEGER PRIMARY KEY, product TEXT, total REAL, created_at TIMESTAMP);
INSERT INTO orders VALUES (1, 'Gizmo', 10.5, '2024-01-05 10:00:00'), (2, 'Widget', 20, '2024-02-07 11:00:00'),
  (3, 'Gizmo', 7.25, '2024-03-09 12:00:00'), (4, 'Doohickey', 3, '2024-04-10 09:00:00'),
  (5, 'Widget', 12, '2024-05-01 08:00:00');
"""


def saved_xray(app, admin) -> int:
    """The x-ray of a number column named Total (sections "Summary" and "How Total changes", a date and a
    category filter), saved as a dashboard."""
    path = sqlite_file(app, "orders.db", ORDERS)
    db = ok(admin.post("/api/database", json={"name": "Orders", "engine": "sqlite", "details": {"db": path}}))["id"]
    wait_for_sync(app)
    tables = {t["name"]: t for t in ok(admin.get(f"/api/database/{db}/metadata"))["tables"]}
    total = next(f for f in tables["orders"]["fields"] if f["name"] == "total")
    xray = ok(admin.get(f"/api/automagic-dashboards/field/{total['id']}"))
    return ok(admin.post("/api/dashboard/save", json=xray))["id"]


def pick(browser, selector: str, value: str) -> None:
    """Set a select or input of a widget as a person's pick does: the value, then its change event."""
    browser.evaluate(f"(n => {{ n.value = {json.dumps(value)}; n.dispatchEvent(new Event('change')); }})"
                     f"(document.querySelector({json.dumps(selector)}))")


def scalar(browser, title: str) -> str:
    return browser.evaluate(f"[...document.querySelectorAll('section.card')].find(s => s.querySelector('.card-title')"
                            f"?.textContent === {json.dumps(title)}).querySelector('.scalar-value').textContent")


def test_xray_page_shows_whole_headings_one_column_and_date_filters(app, admin, browser):
    ok(admin.put("/api/setting/enable-public-sharing", json={"value": True}), 204)
    uuid = ok(admin.post(f"/api/dashboard/{saved_xray(app, admin)}/public_link"))["uuid"]
    with Server(app) as server:
        assert browser.open(f"{server.url}/public/dashboard/{uuid}") == "ready", browser.text()
        # Section headings are whole: nothing cut at the bottom, nothing to scroll, inside their card.
        headings = browser.evaluate("""[...document.querySelectorAll('.card.virtual')].map(card => {
            const text = card.querySelector('.text-card'), heading = text.firstElementChild;
            const box = card.getBoundingClientRect(), at = heading.getBoundingClientRect();
            return [heading.textContent, text.scrollHeight <= text.clientHeight, at.top >= box.top,
                    at.bottom <= box.bottom, text.hasAttribute('tabindex')]; })""")
        assert headings == [["Summary", True, True, True, False], ["How Total changes", True, True, True, False]]
        # The title, the filters and the cards start at one left edge.
        lefts = browser.evaluate("['.page-title', '.filters', '.grid', 'section.card:not(.virtual)']"
                                 ".map(s => Math.round(document.querySelector(s).getBoundingClientRect().left))")
        assert len(set(lefts)) == 1, lefts
        titles = browser.evaluate("[...document.querySelectorAll('.card-title')].map(t => t.textContent)")
        assert "Total" in titles and "Average Total" in titles
        for title in titles:
            words = title.lower().split()
            assert len(words) == len(set(words)), title
        assert serious_violations(browser) == []

        # The date filter: a range of days, written as Metabase's "from~to", narrows every card.
        assert scalar(browser, "Total") == "52.75"
        assert browser.evaluate("document.querySelector('[data-slug=timestamp] legend').textContent") == "Created At"
        pick(browser, "[data-slug=timestamp] select", "between")
        pick(browser, "[data-slug=timestamp] input[aria-label='Created At: from']", "2024-01-01")
        assert browser.evaluate("location.search") == ""  # half a range applies nothing
        pick(browser, "[data-slug=timestamp] input[aria-label='Created At: to']", "2024-02-29")
        assert browser.wait_settled() == "ready"
        assert browser.evaluate("new URLSearchParams(location.search).get('timestamp')") == "2024-01-01~2024-02-29"
        assert scalar(browser, "Total") == "30.5" and scalar(browser, "Minimum Total") == "10.5"
        # Relative dates: a preset ("Past 30 days": nothing in 2024 is), then "Past 3 years" built from its parts.
        pick(browser, "[data-slug=timestamp] select", "relative")
        pick(browser, "[data-slug=timestamp] select[aria-label='Created At']", "past30days")
        assert browser.wait_settled() == "ready"
        assert browser.evaluate("new URLSearchParams(location.search).get('timestamp')") == "past30days"
        assert scalar(browser, "Total") in ("", "–")
        pick(browser, "[data-slug=timestamp] select[aria-label='Created At']", "thismonth")
        assert browser.wait_settled() == "ready"
        assert browser.evaluate("new URLSearchParams(location.search).get('timestamp')") == "thismonth"
        pick(browser, "[data-slug=timestamp] select[aria-label='Created At']", "custom")
        pick(browser, "[data-slug=timestamp] input[aria-label='Created At: how many']", "3")
        pick(browser, "[data-slug=timestamp] select[aria-label='Created At: unit']", "year")
        assert browser.wait_settled() == "ready"
        assert browser.evaluate("new URLSearchParams(location.search).get('timestamp')") == "past3years"
        assert scalar(browser, "Total") == "52.75"
        # Opened from its URL, the widget shows the value again; a month value opens the month picker.
        assert browser.open(f"{server.url}/public/dashboard/{uuid}?timestamp=2024-02") == "ready"
        assert browser.evaluate("document.querySelector('[data-slug=timestamp] select').value") == "month"
        assert browser.evaluate("document.querySelector('[data-slug=timestamp] input[type=month]').value") == "2024-02"
        assert scalar(browser, "Total") == "20"
        # The category filter of the x-ray, picked from its list, narrows the cards too.
        # The category filter's list is chained by the date chosen: February sold only Widgets.
        assert choose(browser, "category", "Wi", "Widget") == "ready"
        assert options_shown(browser, "category") == ["Widget"]
        assert browser.evaluate("new URLSearchParams(location.search).getAll('category')") == ["Widget"]
        # Emptying the month clears the date filter: every Widget counts.
        pick(browser, "[data-slug=timestamp] input[type=month]", "")
        assert browser.wait_settled() == "ready"
        assert browser.evaluate("location.search") == "?category=Widget"
        assert scalar(browser, "Total") == "32"
        assert serious_violations(browser) == []


def test_each_card_shows_its_progress_until_its_answer_arrives(app, admin, browser):
    ok(admin.put("/api/setting/enable-public-sharing", json={"value": True}), 204)
    shop = shop_dashboard(app, admin)
    uuid = ok(admin.post(f"/api/dashboard/{shop['dashboard']}/public_link"))["uuid"]
    gate = threading.Event()

    def held(environ, start_response):
        """The app, with every card's query held until the test lets it go."""
        if "/dashcard/" in environ.get("PATH_INFO", ""):
            gate.wait(30)
        return app(environ, start_response)

    with Server(held) as server:
        try:
            browser.send("Page.navigate", url="about:blank")
            browser.send("Page.navigate", url=f"{server.url}/public/dashboard/{uuid}")
            wait_for(browser, "document.querySelectorAll('section.card[data-state=loading]').length === 2")
            waiting = browser.evaluate("""[...document.querySelectorAll('section.card:not(.virtual)')].map(card => {
                const bar = card.querySelector('[role=progressbar]');
                return [card.querySelector('.card-title').textContent, card.getAttribute('aria-busy'),
                        bar && bar.getAttribute('aria-label'), !!(bar && bar.querySelector('.progress-bar'))]; })""")
            assert waiting == [["Revenue by city", "true", "Loading Revenue by city", True],
                               ["Invoice total", "true", "Loading Invoice total", True]]
            # The text card is already there; the cards count the seconds they wait.
            assert "Numbers are in EUR." in browser.text()
            wait_for(browser, "[...document.querySelectorAll('.progress-text')].every(t => / \\d+ s$/.test(t.textContent))")
            assert browser.evaluate("document.getElementById('page').getAttribute('aria-busy')") == "true"
            assert serious_violations(browser) == []
        finally:
            gate.set()
        assert browser.wait_settled() == "ready"
        assert browser.evaluate("document.querySelectorAll('[role=progressbar], [aria-busy]').length") == 0
        assert charts_drawn(browser) == 1
