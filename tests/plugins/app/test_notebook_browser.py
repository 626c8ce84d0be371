"""The question builder in headless Chromium (tests/plugins/sharing/browser.py): a person picks the sample
database's ORDERS, joins PRODUCTS on the proposed foreign key, filters TOTAL over 50, sums TOTAL by the
products' category and the month of CREATED_AT, previews the summary and visualizes it; the question
the ad-hoc page opens is the MBQL a client would post. Every page passes axe-core with no serious or
critical violation and reports no console error, at 1280 px and at 390 px, light and dark.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import base64

import orjson
import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app.test_app_browser import checked, fill, load, submit
from tests.plugins.app.test_dashboard_browser import wait_for
from tests.plugins.app.test_notebook_pages import sample  # noqa: F401 - the fixture
from tests.plugins.sharing.browser import Browser, Server, chromium_path

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                "(apt-get install chromium, or make test-setup)")


@pytest.fixture(scope="module")
def browser():
    with Browser(chromium_path()) as opened:
        opened.watch_errors()
        yield opened


def choose(browser, select_id: str, label: str) -> None:
    """Pick the option with this label in a select, and submit the select's form (htmx swaps the page)."""
    browser.evaluate(f"""(() => {{
        const select = document.getElementById({select_id!r});
        select.closest('details') && (select.closest('details').open = true);
        const option = [...select.options].find(o => o.textContent.trim() === {label!r});
        if (!option) throw new Error('no option ' + {label!r} + ' in ' + {select_id!r});
        select.value = option.value;
        return true;
    }})()""")


def submit_form_of(browser, element_id: str) -> None:
    browser.evaluate(f"document.getElementById({element_id!r}).form.requestSubmit() || true")


def swapped(browser, text: str, where: str = ".nb-chips li") -> None:
    """Wait until the swapped page shows `text` in one of `where` (by default the steps' clauses) and htmx has
    processed it (htmx processes swapped content in its settle step, 20 ms later: a click before that is lost)."""
    wait_for(browser, f"[...document.querySelectorAll({where!r})].some(e => e.innerText.includes({text!r}))"
                      " && !document.querySelector('.htmx-request')"
                      " && [...document.querySelectorAll('#notebook form, #notebook [hx-get]')]"
                      ".every(e => !!(e['htmx-internal-data'] || {}).initHash)")


def filter_greater(browser, column: str, value: str) -> None:
    """Add the filter `column` is greater than `value` in the first stage."""
    choose(browser, "filter-column-0", column)
    submit_form_of(browser, "filter-column-0")
    wait_for(browser, "!!document.getElementById('filter-value-0')")
    choose(browser, "filter-operator-0", "Greater than")
    fill(browser, {"#filter-value-0": value})
    submit_form_of(browser, "filter-value-0")
    swapped(browser, f"{column} is greater than {value}")


def summarize(browser, column: str, groups: tuple[str, ...]) -> None:
    """Sum `column` in the first stage, grouped by each of `groups` (their labels in the builder)."""
    choose(browser, "agg-operator-0", "Sum of …")
    choose(browser, "agg-column-0", column)
    submit_form_of(browser, "agg-operator-0")
    swapped(browser, f"Sum of {column}")
    for group in groups:
        choose(browser, "group-column-0", group)
        submit_form_of(browser, "group-column-0")
        swapped(browser, group)


def test_a_question_built_in_the_notebook_and_visualized(app, sample, browser):  # noqa: F811 - the fixture
    orders, products = sample["ORDERS"], sample["PRODUCTS"]
    with Server(app) as server:
        load(browser, server.url + "/auth/login")
        fill(browser, {"#username": ADMIN_EMAIL, "#password": ADMIN_PASSWORD})
        submit(browser, "form[hx-post='/auth/login']")
        wait_for(browser, "location.pathname === '/' && !!document.querySelector('a[href=\"/question/notebook\"]')")
        browser.evaluate("document.querySelector('a[href=\"/question/notebook\"]').click() || true")
        wait_for(browser, "location.pathname === '/question/notebook' && document.body.innerText.includes('Pick your data')")
        checked(browser, "the data picker")
        browser.evaluate("[...document.querySelectorAll('.nb-list a')].find(a => a.textContent === 'Sample Database').click() || true")
        wait_for(browser, "document.body.innerText.includes('Tables of Sample Database')")
        browser.evaluate("[...document.querySelectorAll('.nb-list a')].find(a => a.textContent === 'Orders').click() || true")
        wait_for(browser, "document.querySelector('h1') && document.querySelector('h1').innerText === 'Editing: Orders'")
        checked(browser, "the notebook on Orders")

        # Join Products: the foreign key is proposed.
        choose(browser, "join-table", "Products")
        submit_form_of(browser, "join-table")
        swapped(browser, "The foreign key between the two tables is proposed.", ".nb-join")
        assert browser.evaluate("document.getElementById('join-left').selectedOptions[0].textContent") == "Product ID"
        assert browser.evaluate("document.getElementById('join-right').selectedOptions[0].textContent") == "ID"
        checked(browser, "the join form")
        submit_form_of(browser, "join-strategy")
        swapped(browser, "Products: Left outer join on Product ID = Products → ID")

        # A date column's widget is the dashboards' one; then the filter on Total.
        choose(browser, "filter-column-0", "Created At")
        submit_form_of(browser, "filter-column-0")
        wait_for(browser, "!!document.querySelector('#notebook [data-date]')")
        checked(browser, "the date filter widget")
        filter_greater(browser, "Total", "50")
        summarize(browser, "Total", ("Products → Category", "Created At: Month"))

        # The summary's preview: its first rows under the step.
        # Clicked once htmx has bound the swapped-in button (on a loaded machine the test can be quicker).
        button = "document.querySelector('[hx-target=\"#preview-0-summarize\"]')"
        wait_for(browser, f"!!(({button} || {{}})['htmx-internal-data'] || {{}}).listenerInfos")
        browser.evaluate(f"{button}.click() || true")
        wait_for(browser, "document.querySelectorAll('#preview-0-summarize tbody tr').length === 10")
        checked(browser, "the built question with a preview")
        assert "Doohickey" in browser.evaluate("document.getElementById('preview-0-summarize').innerText")

        # The same page at a phone's width: nothing wider than the screen.
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=1, mobile=True)
        try:
            load(browser, browser.evaluate("location.href"))
            assert browser.evaluate("document.documentElement.scrollWidth <= 390")
            checked(browser, "the notebook at 390 px")
            browser.evaluate("document.querySelector('[data-theme-toggle]').click() || true")
            assert browser.evaluate("document.documentElement.dataset.theme") == "dark"
            checked(browser, "the notebook at 390 px, dark")
        finally:
            browser.evaluate("document.querySelector('[data-theme-toggle]').click() || true")
            browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)

        browser.evaluate("document.querySelector('.nb-visualize').click() || true")
        wait_for(browser, "location.pathname === '/question' && !!document.querySelector('#question .chart svg')")
        checked(browser, "the visualized question")
        text = browser.evaluate("location.hash.slice(1)")
        question = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        assert question["dataset_query"] == {"database": sample["db"], "type": "query", "query": {
            "source-table": orders["id"],
            "joins": [{"source-table": products["id"], "alias": "Products", "strategy": "left-join", "fields": "all",
                       "condition": ["=", ["field", orders["PRODUCT_ID"], None],
                                     ["field", products["ID"], {"join-alias": "Products"}]]}],
            "filter": [">", ["field", orders["TOTAL"], None], 50],
            "aggregation": [["sum", ["field", orders["TOTAL"], None]]],
            "breakout": [["field", products["CATEGORY"], {"join-alias": "Products"}],
                         ["field", orders["CREATED_AT"], {"temporal-unit": "month"}]]}}
        # And back into the editor from the question.
        browser.evaluate("document.querySelector('a.open-editor').click() || true")
        wait_for(browser, "location.pathname === '/question/notebook' && document.body.innerText.includes('Sum of Total')")
        checked(browser, "the notebook again")
