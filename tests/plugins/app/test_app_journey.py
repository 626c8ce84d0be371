"""Issue 30's "done when", as one person's visit in headless Chromium: set the server up through its
pages (with the sample database), sign out and in, find a dashboard by search, change its date and
category filters and see the charts change, open a card as a question, switch it to the table, sort it,
download its CSV, browse the sample database to ORDERS, x-ray it and save the x-ray. Every page passes
axe-core (no serious or critical violation) and reports no console error. Home, the dashboard and the
question are drawn in both themes and checked not blank; with TESSERA_SCREENSHOTS=<folder> they are
also written there (docs/screenshots holds the last ones).

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import pytest

from core.testing import ApiClient, wait_for_sync
from tests.plugins.app.test_dashboard_browser import set_value, settle, wait_for
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations

pytestmark = [pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                 "(apt-get install chromium, or make test-setup)"),
              pytest.mark.xdist_group("app-journey")]

EMAIL, PASSWORD = "ada@example.com", "An-Excellent-Passw0rd"
CHARTS = "[...document.querySelectorAll('.dashcard .chart')].map(c => c.innerHTML).join('|')"


def ok(response, status=200):
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:500])
    return response.json


def opened(browser, url: str) -> None:
    browser.send("Page.navigate", url=url)
    wait_for(browser, f"location.href.startsWith({url!r}) && document.readyState === 'complete' && !!window.htmx")
    settle(browser)


def clicked(browser, selector: str) -> None:
    assert browser.evaluate(f"(e => e ? (e.click(), true) : false)(document.querySelector({selector!r}))"), selector
    settle(browser)


def typed(browser, selector: str, value: str) -> None:
    browser.evaluate(f"(e => {{ e.focus(); e.value = {value!r}; e.dispatchEvent(new Event('input', {{bubbles: true}})); }})"
                     f"(document.querySelector({selector!r}))")


def submitted(browser, selector: str) -> None:
    browser.evaluate(f"document.querySelector({selector!r}).requestSubmit()")


def clean(browser, where: str) -> None:
    assert serious_violations(browser) == [], where
    assert browser.errors() == [], where


def drawn(browser, name: str, shots: dict) -> None:
    """The page now open in both themes: two pictures, neither blank, not alike."""
    pictures = []
    for theme in ("light", "dark"):
        if browser.evaluate("document.documentElement.dataset.theme") != theme:
            clicked(browser, "[data-theme-toggle]")
            browser.evaluate("location.reload()")
            time.sleep(0.2)
            wait_for(browser, "document.readyState === 'complete' && !!window.htmx")
            settle(browser)
        png = base64.b64decode(browser.send("Page.captureScreenshot", format="png")["data"])
        assert len(png) > 20_000, f"{name} ({theme}) looks blank"  # one flat colour compresses to a few KB
        pictures.append(png)
        shots[f"{name}-{theme}.png"] = png
        clean(browser, f"{name} in the {theme} theme")
    assert pictures[0] != pictures[1]
    clicked(browser, "[data-theme-toggle]")  # back to light for what follows
    browser.evaluate("location.reload()")
    time.sleep(0.2)
    wait_for(browser, "document.readyState === 'complete' && !!window.htmx")
    settle(browser)


def build_dashboard(app, session: str) -> None:
    """Orders per month (a line) and revenue per product category (a bar) over the sample database,
    with a date filter on the order date and a category filter on the product category."""
    api = ApiClient(app, {"X-Metabase-Session": session})
    database = next(d for d in ok(api.get("/api/database"))["data"] if d.get("is_sample"))["id"]
    tables = {t["name"]: t for t in ok(api.get(f"/api/database/{database}/metadata"))["tables"]}
    field = {(t, f["name"]): f["id"] for t, table in tables.items() for f in table["fields"]}
    created = ["field", field["ORDERS", "CREATED_AT"], None]
    category = ["field", field["PRODUCTS", "CATEGORY"], {"source-field": field["ORDERS", "PRODUCT_ID"]}]

    def card(name, display, aggregation, breakout):
        query = {"source-table": tables["ORDERS"]["id"], "aggregation": [aggregation], "breakout": [breakout]}
        return ok(api.post("/api/card", json={"name": name, "display": display, "visualization_settings": {},
                                              "dataset_query": {"database": database, "type": "query",
                                                                "query": query}}))["id"]

    by_month = card("Orders per month", "line", ["count"],
                    ["field", field["ORDERS", "CREATED_AT"], {"temporal-unit": "month"}])
    by_category = card("Revenue per category", "bar", ["sum", ["field", field["ORDERS", "TOTAL"], None]], category)
    parameters = [{"id": "when", "name": "Order date", "slug": "when", "type": "date/all-options"},
                  {"id": "kind", "name": "Category", "slug": "kind", "type": "string/="}]
    dashboard = ok(api.post("/api/dashboard", json={"name": "Shop journey", "parameters": parameters}))["id"]
    dashcards = [{"id": -(n + 1), "card_id": card_id, "row": 0, "col": 12 * n, "size_x": 12, "size_y": 6,
                  "parameter_mappings": [
                      {"parameter_id": "when", "card_id": card_id, "target": ["dimension", created]},
                      {"parameter_id": "kind", "card_id": card_id, "target": ["dimension", category]}]}
                 for n, card_id in enumerate((by_month, by_category))]
    ok(api.put(f"/api/dashboard/{dashboard}", json={"dashcards": dashcards, "parameters": parameters}))


@pytest.fixture(scope="module")
def browser():
    with Browser(chromium_path(), width=1400, height=1000) as opened_browser:
        opened_browser.watch_errors()
        yield opened_browser


def test_a_persons_first_visit(app, sample_database_file, browser):
    shots: dict[str, bytes] = {}
    with Server(app) as server:
        # Setup: the first account and the sample database, then home.
        opened(browser, server.url + "/")
        clean(browser, "setup")
        for selector, value in {"#first_name": "Ada", "#email": EMAIL, "#password": PASSWORD,
                                "#site_name": "Analytical Engines"}.items():
            typed(browser, selector, value)
        submitted(browser, "form[hx-post='/setup']")
        wait_for(browser, "location.pathname === '/setup/database'")
        settle(browser)
        clean(browser, "setup: your data")
        submitted(browser, "form[hx-post='/setup/database/sample']")
        wait_for(browser, "location.pathname.startsWith('/browse/databases/')", timeout=60)  # its tables
        settle(browser)
        wait_for_sync(app)
        session = app.test_client().post("/api/session", json={"username": EMAIL, "password": PASSWORD}).json["id"]
        build_dashboard(app, session)

        # Out and in again through the pages.
        opened(browser, server.url + "/")
        clicked(browser, "button[hx-post='/auth/logout']")
        wait_for(browser, "location.pathname === '/auth/login'")
        settle(browser)
        clean(browser, "sign in")
        typed(browser, "#username", EMAIL)
        typed(browser, "#password", PASSWORD)
        submitted(browser, "form[hx-post='/auth/login']")
        wait_for(browser, "location.pathname === '/' && document.body.innerText.includes('Welcome, Ada')")
        settle(browser)
        assert browser.text().count("Personal Collection") + browser.text().count("personal collection") == 1
        clean(browser, "home")
        drawn(browser, "home", shots)

        # Search finds the dashboard; its filters change its charts.
        typed(browser, "#nav-search", "journey")
        submitted(browser, "form[role=search]")
        wait_for(browser, "location.pathname === '/search'")
        settle(browser)
        clean(browser, "search")
        clicked(browser, "main a[href^='/dashboard/']")  # a result, not the menu's New dashboard
        wait_for(browser, "location.pathname.startsWith('/dashboard/')")
        settle(browser)
        wait_for(browser, "document.querySelectorAll('.dashcard .chart svg').length === 2")
        clean(browser, "dashboard")
        before = browser.evaluate(CHARTS)
        set_value(browser, "[data-slug=when] [data-part=mode]", "between")
        set_value(browser, "[data-slug=when] [data-part=start]", "2024-01-01")
        set_value(browser, "[data-slug=when] [data-part=end]", "2024-06-30")
        settle(browser)
        wait_for(browser, "document.querySelectorAll('.dashcard .chart svg').length === 2")
        assert "when=2024-01-01~2024-06-30" in browser.evaluate("location.search")
        dated = browser.evaluate(CHARTS)
        assert dated != before
        clicked(browser, "[data-slug=kind] summary")
        wait_for(browser, "document.querySelectorAll('[data-slug=kind] input[type=checkbox]').length >= 4")
        clicked(browser, "[data-slug=kind] input[value=Gizmo]")
        wait_for(browser, "location.search.includes('kind=Gizmo')")
        settle(browser)
        clicked(browser, "h1")  # a click elsewhere closes the list
        wait_for(browser, "document.querySelectorAll('.dashcard .chart svg').length === 2")
        assert browser.evaluate(CHARTS) != dated
        clean(browser, "dashboard, filtered")
        drawn(browser, "dashboard", shots)

        # A card opened as its question: the table, sorted, and its CSV.
        clicked(browser, ".dashcard-title a[href^='/question/']")
        wait_for(browser, "location.pathname.startsWith('/question/')")
        settle(browser)
        assert browser.evaluate("!!document.querySelector('.question-result svg')")
        clean(browser, "question")
        drawn(browser, "question", shots)
        clicked(browser, "a[href*='view=table']")
        wait_for(browser, "!!document.querySelector('table.result tbody tr')")
        counts = "[...document.querySelectorAll('table.result tbody tr')].map(r => r.cells[1].textContent)"
        sorting = "document.querySelector('table.result th:nth-child(2)').getAttribute('aria-sort')"
        for _ in range(2):  # a click sorts by the count, a second the other way: until it is descending
            clicked(browser, "table.result th:nth-child(2) a")
            wait_for(browser, "location.search.includes('sort=')")
            if browser.evaluate(sorting) == "descending":
                break
        assert browser.evaluate(sorting) == "descending"
        shown = [float(value.replace(",", "")) for value in browser.evaluate(counts)]
        assert shown == sorted(shown, reverse=True) and len(shown) > 3
        clean(browser, "question, sorted table")
        csv_text = browser.evaluate(
            "(f => fetch(f.action, {method: 'POST', body: new URLSearchParams(new FormData(f))})"
            ".then(r => r.ok ? r.text() : 'HTTP ' + r.status))(document.querySelector('form.downloads'))")
        assert csv_text.splitlines()[0].startswith("Created At") and len(csv_text.splitlines()) > 12, csv_text[:200]

        # Browse the sample database to ORDERS, x-ray it, save the x-ray.
        opened(browser, server.url + "/browse/databases")
        clean(browser, "browse databases")
        clicked(browser, "a[href^='/browse/databases/']")
        wait_for(browser, "location.pathname.startsWith('/browse/databases/')")
        settle(browser)
        clean(browser, "browse tables")
        orders = browser.evaluate("[...document.querySelectorAll('a[href^=\"/auto/dashboard/table/\"]')]"
                                  ".find(a => a.closest('li, tr').innerText.includes('Orders'))?.getAttribute('href')")
        assert orders, browser.text()[:500]
        opened(browser, server.url + orders)
        wait_for(browser, "document.querySelectorAll('.chart svg').length >= 4", timeout=60)
        clean(browser, "x-ray")
        clicked(browser, ".save-xray")
        wait_for(browser, "location.pathname.startsWith('/dashboard/')")
        settle(browser)
        saved = int(browser.evaluate("location.pathname").split("/")[2].split("-")[0])
        api = ApiClient(app, {"X-Metabase-Session": session})
        assert ok(api.get(f"/api/dashboard/{saved}?ignore_view=true"))["name"] == browser.evaluate(
            "document.querySelector('h1').textContent")
        clean(browser, "saved x-ray")

    folder = os.environ.get("TESSERA_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        for name, png in shots.items():
            (Path(folder) / name).write_bytes(png)
    assert sorted(shots) == sorted(f"{page}-{theme}.png" for page in ("home", "dashboard", "question")
                                   for theme in ("light", "dark"))
