"""The public and embed pages in a real browser (headless Chromium over the DevTools protocol): the
issue's "done when" as a person sees it. A new administrator turns sharing on, makes a dashboard with
tabs, a chart, a number, a table, a text card and two filters, opens its public link, filters it,
downloads a CSV, switches tab and theme; then signs an embed with one locked and one enabled filter.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import csv
import io
import json
import time

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


@pytest.fixture
def browser():
    with Browser(chromium_path()) as opened:
        yield opened


def card_states(browser) -> dict:
    return browser.evaluate("Object.fromEntries([...document.querySelectorAll('section.card')].map("
                            "s => [s.querySelector('.card-title')?.textContent || s.className, s.dataset.state]))")


def charts_drawn(browser) -> int:
    return browser.evaluate("[...document.querySelectorAll('img.chart')].filter(i => i.naturalWidth > 50).length")


def set_filter(browser, slug: str, value: str) -> str:
    browser.evaluate(f"(() => {{ const i = document.querySelector('input[name={slug}]'); i.value = {json.dumps(value)};"
                     " i.dispatchEvent(new Event('change')); })()")
    return browser.wait_settled()


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

        # A narrower window (or iframe) draws the chart again for its new size.
        drawn = browser.evaluate("document.querySelector('img.chart').naturalWidth")
        browser.send("Emulation.setDeviceMetricsOverride", width=800, height=900, deviceScaleFactor=1, mobile=False)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (browser.evaluate(
                "document.querySelector('img.chart')?.naturalWidth || 0") in (0, drawn)):
            time.sleep(0.1)
        assert browser.wait_settled() == "ready"
        assert 0 < browser.evaluate("document.querySelector('img.chart').naturalWidth") < drawn
        browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        time.sleep(0.5)  # past the resize handler's 250 ms pause, so the next checks see the wide drawing settle
        assert browser.wait_settled() == "ready"

        # A filter re-runs the cards and is kept in the page's URL.
        assert set_filter(browser, "city", "Oslo") == "ready"
        assert "16.5" in browser.text() and "23.5" not in browser.text()
        assert browser.evaluate("location.search").startswith("?city=Oslo")
        assert charts_drawn(browser) == 1

        # The filter suggests the values of its field.
        browser.evaluate("document.querySelector('input[name=city]').focus()")
        suggestions = "[...document.querySelectorAll('#filter-city-values option')].map(o => o.value).join()"
        deadline = time.monotonic() + 10
        while browser.evaluate(suggestions) != "Oslo,Rome" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert browser.evaluate(suggestions) == "Oslo,Rome"

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
        assert browser.evaluate("document.querySelector('input[name=city]').value") == "Rome"
        assert "7" in browser.evaluate("document.querySelector('.scalar-value').textContent")
        assert browser.evaluate("document.querySelector('h1') === null")
        assert browser.evaluate("document.body.className") == "bordered theme-night"
        assert browser.evaluate("document.querySelector('.downloads') === null")
        assert browser.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(46, 53, 59)"

        # The public question page of the chart.
        card_uuid = ok(admin.post(f"/api/card/{shop['chart']}/public_link"))["uuid"]
        assert browser.open(f"{server.url}/public/question/{card_uuid}") == "ready", browser.text()
        assert "Revenue by city" in browser.text() and charts_drawn(browser) == 1
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
        assert set_filter(browser, "city", "Oslo") == "ready"
        assert browser.evaluate("[...document.querySelectorAll('td')].map(td => td.textContent).join()") == "Ann,Cy"

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
        assert set_filter(browser, "name", "Ann") == "ready"
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
