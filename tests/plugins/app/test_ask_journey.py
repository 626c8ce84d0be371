"""Issue 31's "done when", as one person's visit in headless Chromium: without typing SQL, the question
builder asks "revenue by product category per month for orders over 50, with a custom column total minus
tax" (ORDERS joined to PRODUCTS on the proposed foreign key, Net = [Total] - [Tax] typed in the expression
editor, Total > 50, the sum of Net by Products → Category and Created At: Month), visualizes it as stacked
bars with a goal line, saves it into a collection and finds it on that collection's page; the saved card's
MBQL equals the MBQL a client would post for the same question. A bar of the saved question is drilled
into its rows, which are the records a client's query finds for that bar. Then SQL is written in the
editor with a date field filter and a category variable in an optional clause, run with values and
without (the clause dropped), saved through the same save panel and found in the same collection. axe-core
finds no serious or critical violation on the builder, the editor and the question pages, and no page
reports a console error.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app import test_notebook_pages as pages
from tests.plugins.app.test_app_browser import checked, fill, load, submit
from tests.plugins.app.test_dashboard_browser import wait_for
from tests.plugins.app.test_expressions_browser import key, typed
from tests.plugins.app.test_native_editor_browser import ctrl_enter, set_value, type_sql
from tests.plugins.app.test_notebook_browser import choose, filter_greater, submit_form_of, summarize, swapped
from tests.plugins.app.test_question_pages import click, first_column, ok, settle
from tests.plugins.app.test_viz_settings import bar_boxes
from tests.plugins.app.test_viz_settings_browser import chart, set_field
from tests.plugins.sharing.browser import Browser, Server, chromium_path

pytestmark = [pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                 "(apt-get install chromium, or make test-setup)"),
              pytest.mark.xdist_group("ask-journey")]

sample = pages.sample  # the fixture: the Sample Database's ids

SQL = ("SELECT PRODUCTS.CATEGORY, COUNT(*) AS ORDERS FROM ORDERS JOIN PRODUCTS ON ORDERS.PRODUCT_ID = PRODUCTS.ID"
       " WHERE {{created}} [[AND PRODUCTS.CATEGORY = {{category}}]] GROUP BY PRODUCTS.CATEGORY ORDER BY 1")


# The ad-hoc question in the page's URL, decoded (the settings panel keeps its state there).
IN_URL = "atob(new URLSearchParams(location.search).get('q').replace(/-/g, '+').replace(/_/g, '/'))"


def client_question(sample) -> dict:
    """The MBQL a client would post for the question the person builds."""
    orders, products = sample["ORDERS"], sample["PRODUCTS"]
    return {"database": sample["db"], "type": "query", "query": {
        "source-table": orders["id"],
        "joins": [{"source-table": products["id"], "alias": "Products", "strategy": "left-join", "fields": "all",
                   "condition": ["=", ["field", orders["PRODUCT_ID"], None],
                                 ["field", products["ID"], {"join-alias": "Products"}]]}],
        "expressions": {"Net": ["-", ["field", orders["TOTAL"], None], ["field", orders["TAX"], None]]},
        "filter": [">", ["field", orders["TOTAL"], None], 50],
        "aggregation": [["sum", ["expression", "Net"]]],
        "breakout": [["field", products["CATEGORY"], {"join-alias": "Products"}],
                     ["field", orders["CREATED_AT"], {"temporal-unit": "month"}]]}}


def rows_of(api, sample, query: dict) -> list[list]:
    return ok(api.post("/api/dataset", json={"database": sample["db"], "type": "query", "query": query}))["data"]["rows"]


def shown_total(browser) -> int:
    text = browser.evaluate("document.querySelector('.count[role=status]').textContent")
    return int(re.search(r"of ([\d,]+)", text).group(1).replace(",", ""))


def clean(browser, where: str) -> None:
    checked(browser, where)  # axe-core: no serious or critical violation; no console error


def test_a_question_asked_without_sql_and_one_written_in_sql(app, admin, sample):
    orders, products = sample["ORDERS"], sample["PRODUCTS"]
    shelf = ok(admin.post("/api/collection", json={"name": "Revenue shelf"}))["id"]
    with Server(app) as server, Browser(chromium_path(), width=1400) as browser:
        browser.watch_errors()
        load(browser, server.url + "/auth/login")
        fill(browser, {"#username": ADMIN_EMAIL, "#password": ADMIN_PASSWORD})
        submit(browser, "form[hx-post='/auth/login']")
        wait_for(browser, "location.pathname === '/' && !!document.querySelector('a[href=\"/question/notebook\"]')")

        # 1. The builder: ORDERS from the Sample Database.
        click(browser, "a[href='/question/notebook']")
        wait_for(browser, "location.pathname === '/question/notebook' && document.body.innerText.includes('Pick your data')")
        clean(browser, "the data picker")
        browser.evaluate("[...document.querySelectorAll('.nb-list a')].find(a => a.textContent === 'Sample Database').click() || true")
        wait_for(browser, "document.body.innerText.includes('Tables of Sample Database')")
        browser.evaluate("[...document.querySelectorAll('.nb-list a')].find(a => a.textContent === 'Orders').click() || true")
        wait_for(browser, "document.querySelector('h1') && document.querySelector('h1').innerText === 'Editing: Orders'")

        # PRODUCTS joined on the foreign key the builder proposes.
        choose(browser, "join-table", "Products")
        submit_form_of(browser, "join-table")
        swapped(browser, "The foreign key between the two tables is proposed.", ".nb-join")
        assert browser.evaluate("document.getElementById('join-left').selectedOptions[0].textContent") == "Product ID"
        submit_form_of(browser, "join-strategy")
        swapped(browser, "Products: Left outer join on Product ID = Products → ID")

        # Net = [Total] - [Tax], typed in the expression editor, columns taken from its suggestions by keyboard.
        wait_for(browser, "!!document.getElementById('expression-0')")
        browser.evaluate("document.getElementById('expression-0').closest('details').open = true")
        fill(browser, {"#column-name-0": "Net"})
        browser.evaluate("document.getElementById('expression-0').focus() || true")
        typed(browser, "[Tot")
        wait_for(browser, "!!document.querySelector('#expression-0-list:not([hidden]) [role=option]')")
        key(browser, "Enter")
        wait_for(browser, "document.getElementById('expression-0').value === '[Total]'")
        typed(browser, " - [Ta")
        wait_for(browser, "!!document.querySelector('#expression-0-list:not([hidden]) [role=option]')")
        options = browser.evaluate("[...document.querySelectorAll('#expression-0-list:not([hidden]) [role=option]"
                                   " .suggestion-label')].map(o => o.textContent)")
        for _ in range(options.index("Tax")):
            key(browser, "ArrowDown")
        key(browser, "Tab")
        wait_for(browser, "document.getElementById('expression-0').value === '[Total] - [Tax]'")
        wait_for(browser, "!!document.querySelector('#expression-0-result input[name=expression]')")
        clean(browser, "the builder with its expression editor")
        submit_form_of(browser, "column-name-0")
        swapped(browser, "Net")

        # Total > 50, and the sum of Net by Products → Category and Created At: Month.
        filter_greater(browser, "Total", "50")
        summarize(browser, "Net", ("Products → Category", "Created At: Month"))
        clean(browser, "the built question")

        click(browser, ".nb-visualize")
        wait_for(browser, "location.pathname === '/question' && !!document.querySelector('#question .chart svg')")
        clean(browser, "the visualized question")

        # 2. Stacked bars with a goal line, from the display picker and the settings panel.
        click(browser, ".viz-picker a[data-display=bar]")
        settle(browser, "document.querySelector('.viz-picker a[data-display=bar][aria-current=true]')")
        click(browser, "#viz-settings > summary")
        settle(browser, "document.getElementById('viz-settings').open")
        assert browser.evaluate("document.getElementById('viz-x').selectedOptions[0].textContent").startswith("Created At")
        assert browser.evaluate("document.getElementById('viz-breakout').selectedOptions[0].textContent").startswith(
            "Products → Category")
        grouped = bar_boxes(chart(browser))
        set_field(browser, "#viz-stack", "stacked")
        settle(browser, "document.getElementById('viz-stack').value === 'stacked' && location.pathname === '/question/adhoc'")
        stacked = bar_boxes(chart(browser))
        assert len({x for x, _ in stacked}) < len(stacked) and len({x for x, _ in grouped}) == len(grouped)
        set_field(browser, "#viz-goal-value", "2000")
        settle(browser, f"{IN_URL}.includes('graph.goal_value')")
        before = chart(browser)
        set_field(browser, "#viz-show-goal", True)
        settle(browser, f"document.querySelector('.chart svg').outerHTML !== {json.dumps(before)}")
        assert ">Goal</text>" in chart(browser)
        clean(browser, "the stacked bars with a goal line")

        # 3. Saved into the collection, then found on its page.
        click(browser, ".save-actions button.primary")
        settle(browser, "document.getElementById('save-name')")
        clean(browser, "the save panel")
        browser.evaluate("(function () { document.getElementById('save-name').value = 'Net revenue by category';"
                         f" document.getElementById('save-collection').value = '{shelf}'; return true; }})()")
        click(browser, ".save-dialog button[type=submit]")
        settle(browser, "location.pathname.startsWith('/question/') && document.querySelector('h1')"
                        " && document.querySelector('h1').textContent === 'Net revenue by category'")
        card_id = int(browser.evaluate("location.pathname").split("/")[2].split("-")[0])
        settle(browser, "document.querySelector('.chart svg')")
        clean(browser, "the saved question")
        click(browser, f"a[href^='/collection/{shelf}']")  # the question's collection, from its page
        settle(browser, f"location.pathname.startsWith('/collection/{shelf}')")
        link = f"a[href^='/question/{card_id}']"
        assert browser.evaluate(f"document.querySelector({link!r}).textContent.trim()") == "Net revenue by category"
        clean(browser, "the collection")
        saved = ok(admin.get(f"/api/card/{card_id}"))
        assert saved["dataset_query"] == client_question(sample)
        assert saved["display"] == "bar" and saved["collection_id"] == shelf
        assert saved["visualization_settings"]["stackable.stack_type"] == "stacked"
        assert saved["visualization_settings"]["graph.show_goal"] is True
        assert float(saved["visualization_settings"]["graph.goal_value"]) == 2000

        # 4. A bar of the saved question drilled into its rows.
        click(browser, link)
        settle(browser, "location.pathname.startsWith('/question/') && document.querySelector('.chart .drill-mark')")
        # The tallest Gizmo bar: its month and its sum, from its label ("x: September, 2022; y: 94.34; ...").
        labels = browser.evaluate("[...document.querySelectorAll('.chart .drill-mark[aria-label*=\"series: Gizmo;\"]')]"
                                  ".map(m => m.getAttribute('aria-label'))")
        parsed = [(float(re.search(r"y: ([\d.,-]+);", one).group(1).replace(",", "")), one) for one in labels]
        total, label = max(parsed)
        month = dt.datetime.strptime(re.search(r"x: ([^;]+);", label).group(1), "%B, %Y").date()
        mark = f".chart .drill-mark[aria-label={json.dumps(label)}]"
        browser.evaluate(f"document.querySelector({mark!r})"
                         ".dispatchEvent(new MouseEvent('click', {bubbles: true})), true")
        settle(browser, "document.querySelector('.drill-menu a')")
        clean(browser, "the drill menu")
        browser.evaluate("[...document.querySelectorAll('.drill-menu a')].find(a => a.textContent === 'View these rows')"
                         ".click(), true")
        settle(browser, "location.pathname === '/question' && document.querySelector('table.result')")
        clean(browser, "the drilled rows")
        # The records a client's query finds for that bar: Gizmo orders over 50 in that month.
        query = client_question(sample)["query"]
        expected = rows_of(admin, sample, {
            "source-table": query["source-table"], "expressions": query["expressions"],
            "joins": [{**query["joins"][0], "fields": "none"}],
            "filter": ["and", query["filter"],
                       ["=", ["field", orders["CREATED_AT"], {"temporal-unit": "month"}], month.isoformat()],
                       ["=", ["field", products["CATEGORY"], {"join-alias": "Products"}], "Gizmo"]],
            "fields": [["field", orders["ID"], None], ["expression", "Net"]],
            "order-by": [["asc", ["field", orders["ID"], None]]]})
        assert len(expected) > 1 and abs(sum(net for _, net in expected) - total) < 0.01  # the label's 2 decimals
        assert shown_total(browser) == len(expected)
        headers = browser.evaluate("[...document.querySelectorAll('table.result thead th')]"
                                   ".map(th => th.innerText.split(',')[0].trim())")
        shown_ids = [int(v.replace(",", "")) for v in first_column(browser, headers.index("ID"))]
        assert shown_ids and sorted(shown_ids) == [order_id for order_id, _ in expected][:len(shown_ids)]
        assert set(first_column(browser, headers.index("Products → Category"))) == {"Gizmo"}
        assert all(float(v.replace(",", "")) > 50 for v in first_column(browser, headers.index("Total")))

        # 5. SQL in the editor: a field filter on the orders' date, the category in an optional clause.
        click(browser, "a[href='/question/native']")  # the menu's "New SQL query"
        wait_for(browser, "location.pathname === '/question/native'")
        settle(browser, "document.querySelector('.code-wrap.highlighting')")
        assert browser.evaluate("document.querySelector(\"select[name='native-db']\").value") == str(sample["db"])
        clean(browser, "the SQL editor")
        type_sql(browser, SQL)
        settle(browser, "document.querySelectorAll('#native-tags fieldset.tag').length === 2")
        set_value(browser, "select[name='tag-type.created']", "dimension")
        settle(browser, "document.querySelector(\"select[name='tag-field.created']\")")
        set_value(browser, "select[name='tag-field.created']", str(orders["CREATED_AT"]))
        settle(browser, f"document.querySelector(\"select[name='tag-field.created']\").value === '{orders['CREATED_AT']}'")
        set_value(browser, "select[name='tag-widget.created']", "date/all-options")
        settle(browser, "document.getElementById('filter-created-mode')")
        first, last = month.isoformat(), (month.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)
        set_value(browser, "#filter-created-mode", "between")
        set_value(browser, "#filter-created-start", first)
        set_value(browser, "#filter-created-end", last.isoformat())
        set_value(browser, "#filter-category", "Gizmo")
        clean(browser, "the SQL editor with its variables")
        # What a client's MBQL counts for that month, per category.
        counted = {category: count for category, count in rows_of(admin, sample, {
            "source-table": orders["id"], "aggregation": [["count"]],
            "breakout": [["field", products["CATEGORY"], {"source-field": orders["PRODUCT_ID"]}]],
            "filter": ["between", ["field", orders["CREATED_AT"], None], first, last.isoformat()]})}
        assert len(counted) > 1

        browser.evaluate("document.getElementById('native-sql').focus() || true")
        ctrl_enter(browser)
        settle(browser, "document.querySelector('#native-result table.result')")
        assert first_column(browser, 0) == ["Gizmo"] and first_column(browser, 1) == [str(counted["Gizmo"])]
        # Without the category the optional clause is dropped: every category of the month.
        set_value(browser, "#filter-category", "")
        ctrl_enter(browser)
        settle(browser, f"document.querySelectorAll('#native-result table.result tbody tr').length === {len(counted)}")
        assert first_column(browser, 0) == sorted(counted)
        assert first_column(browser, 1) == [str(counted[c]) for c in sorted(counted)]
        clean(browser, "the SQL editor's rows")

        # Saved through the same save panel, into the same collection, and found there.
        click(browser, "#native-save")
        settle(browser, "document.getElementById('save-name')")
        clean(browser, "the SQL editor's save panel")
        set_value(browser, "#save-name", "Orders per category in a month")
        set_value(browser, "#save-collection", str(shelf))
        click(browser, "#save-panel button[type=submit]")
        settle(browser, "/^\\/question\\/\\d+/.test(location.pathname) && document.querySelector('.question-result')")
        native_id = int(re.match(r"/question/(\d+)", browser.evaluate("location.pathname")).group(1))
        clean(browser, "the saved SQL question")
        click(browser, f"a[href^='/collection/{shelf}']")  # the question's collection, from its page
        settle(browser, f"location.pathname.startsWith('/collection/{shelf}')")
        assert browser.evaluate(f"document.querySelector(\"a[href^='/question/{native_id}']\").textContent.trim()") \
            == "Orders per category in a month"
        clean(browser, "the collection with both questions")
        native = ok(admin.get(f"/api/card/{native_id}"))
        tags = native["dataset_query"]["native"]["template-tags"]
        assert native["dataset_query"]["native"]["query"] == SQL and native["collection_id"] == shelf
        assert tags["created"]["type"] == "dimension" and tags["created"]["dimension"] == [
            "field", orders["CREATED_AT"], None]
        assert tags["created"]["widget-type"] == "date/all-options" and tags["category"]["type"] == "text"
