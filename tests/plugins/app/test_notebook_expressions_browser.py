"""The question builder's custom column in headless Chromium (tests/plugins/sharing/browser.py): on ORDERS a
person adds Net = [Total] - [Tax] by typing in the expression editor and taking its suggestions by keyboard,
sees a bad expression refused in the step, sums Net by Product → Category, filters Net > 50 with a custom
filter, opens Net again (its text printed back into the editor), visualizes the question, and the ad-hoc
question is the MBQL a client would post. axe-core finds no serious or critical violation, at 1400 and
390 px, light and dark, and the page reports no console error.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import base64
import json

import orjson
import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app import test_notebook_pages as pages
from tests.plugins.app.test_app_browser import checked, fill, load, submit
from tests.plugins.app.test_dashboard_browser import wait_for
from tests.plugins.app.test_expressions_browser import key, typed
from tests.plugins.app.test_notebook_browser import choose, submit_form_of, swapped
from tests.plugins.sharing.browser import Browser, Server, chromium_path

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                "(apt-get install chromium, or make test-setup)")

sample = pages.sample  # the fixture: the Sample Database's ids


def listed(browser, list_id: str) -> list[str]:
    return browser.evaluate(f"[...document.querySelectorAll('#{list_id}:not([hidden]) [role=option] .suggestion-label')]"
                            ".map(o => o.textContent)")


def chosen(browser, list_id: str) -> str:
    return browser.evaluate(f"(document.querySelector('#{list_id} [aria-selected=true] .suggestion-label') || {{}})"
                            ".textContent || ''")


def test_a_custom_column_typed_in_the_editor_used_in_a_summary_and_visualized(app, sample):
    orders, products = sample["ORDERS"], sample["PRODUCTS"]
    start = pages.b64(pages.table_query(sample, "ORDERS"))
    with Server(app) as server, Browser(chromium_path(), width=1400) as browser:
        browser.watch_errors()
        load(browser, server.url + "/auth/login")
        fill(browser, {"#username": ADMIN_EMAIL, "#password": ADMIN_PASSWORD})
        submit(browser, "form[hx-post='/auth/login']")
        wait_for(browser, "location.pathname === '/'")
        load(browser, f"{server.url}/question/notebook?q={start}")
        wait_for(browser, "!!document.getElementById('expression-0')")
        checked(browser, "the notebook with its expression editors")

        browser.evaluate("document.getElementById('expression-0').closest('details').open = true")
        fill(browser, {"#column-name-0": "Net"})
        browser.evaluate("document.getElementById('expression-0').focus() || true")
        # A column by its first letters inside a bracket: the list opens, the arrows move, Enter takes one.
        typed(browser, "[To")
        wait_for(browser, "!!document.querySelector('#expression-0-list:not([hidden]) [role=option]')")
        assert listed(browser, "expression-0-list")[0] == "Total"
        assert chosen(browser, "expression-0-list") == "Total"
        key(browser, "Enter")
        wait_for(browser, "document.getElementById('expression-0').value === '[Total]'")
        typed(browser, " - [Ta")
        wait_for(browser, "!!document.querySelector('#expression-0-list:not([hidden]) [role=option]')")
        options = listed(browser, "expression-0-list")
        assert "Tax" in options
        for _ in range(options.index("Tax")):
            key(browser, "ArrowDown")
        assert chosen(browser, "expression-0-list") == "Tax"
        key(browser, "Tab")
        wait_for(browser, "document.getElementById('expression-0').value === '[Total] - [Tax]'")
        # The server's check leaves the clause in the form.
        mbql = wait_for(browser, "(document.querySelector('#expression-0-result input[name=expression]') || {}).value")
        assert json.loads(mbql) == ["-", ["field", orders["TOTAL"], None], ["field", orders["TAX"], None]]
        checked(browser, "the custom column's editor with a valid text")
        submit_form_of(browser, "column-name-0")
        swapped(browser, "Net")
        assert browser.evaluate("document.querySelector('.nb-chips .nb-edit').textContent") == "Net"

        # A name taken already is refused in the step, the form still open with what was typed.
        browser.evaluate("document.getElementById('expression-0').closest('details').open = true")
        fill(browser, {"#column-name-0": "tax", "#expression-0": "[Total] * 2"})
        submit_form_of(browser, "column-name-0")
        wait_for(browser, "!!document.querySelector('[aria-labelledby=step-0-expression] .form-error')"
                          " && !document.querySelector('.htmx-request')")
        assert "already has a column named “Tax”" in browser.evaluate(
            "document.querySelector('[aria-labelledby=step-0-expression] .form-error').textContent")
        assert browser.evaluate("document.getElementById('expression-0').value") == "[Total] * 2"
        assert browser.evaluate("document.getElementById('expression-0').closest('details').open") is True
        refusals = browser.errors()  # the refused change's 400, logged by the browser as a failed load: expected
        assert len(refusals) == 1 and "400" in refusals[0] and "op=expression" in refusals[0]
        # The editor's own message while typing: the wrong part marked.
        browser.evaluate("document.getElementById('expression-0').focus() || true")
        typed(browser, " + [Taxes]")
        wait_for(browser, "!!document.querySelector('#expression-0-result .expression-error')")
        assert browser.evaluate("document.querySelector('#expression-0-result mark').textContent") == "[Taxes]"
        checked(browser, "a refused custom column and an expression error")

        # Net in a summary: the sum of Net by Product → Category.
        choose(browser, "agg-operator-0", "Sum of …")
        choose(browser, "agg-column-0", "Net")
        submit_form_of(browser, "agg-operator-0")
        swapped(browser, "Sum of Net")
        choose(browser, "group-column-0", "Product → Category")
        submit_form_of(browser, "group-column-0")
        swapped(browser, "Product → Category")
        browser.evaluate("document.querySelector('[hx-target=\"#preview-0-summarize\"]').click() || true")
        wait_for(browser, "document.querySelectorAll('#preview-0-summarize tbody tr').length === 4")
        assert "Widget" in browser.evaluate("document.getElementById('preview-0-summarize').innerText")
        checked(browser, "the summary of the custom column with its preview")

        # A custom filter written in the editor, then the custom column opened again: its text printed back.
        browser.evaluate("document.getElementById('condition-0').closest('details').open = true")
        browser.evaluate("document.getElementById('condition-0').focus() || true")
        typed(browser, "[Net] > 50")
        wait_for(browser, "!!document.querySelector('#condition-0-result input[name=condition]')")
        submit_form_of(browser, "condition-0")
        swapped(browser, "Net is greater than 50")
        browser.evaluate("document.querySelector('a.nb-edit[aria-label=\"Edit custom column: Net\"]').click() || true")
        wait_for(browser, "(document.getElementById('expression-0') || {}).value === '[Total] - [Tax]'"
                          " && document.getElementById('expression-0').closest('details').open")
        wait_for(browser, "!!document.querySelector('#expression-0-result input[name=expression]')")
        assert browser.evaluate("document.getElementById('column-name-0').value") == "Net"
        checked(browser, "a custom column opened for editing")

        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=1, mobile=True)
        try:
            load(browser, browser.evaluate("location.href"))
            browser.evaluate("[...document.querySelectorAll('details.nb-add')].forEach(d => d.open = true) || true")
            wait_for(browser, "!!document.getElementById('expression-0')")
            assert browser.evaluate("document.documentElement.scrollWidth <= 390")
            checked(browser, "the notebook at 390 px, editors open")
            browser.evaluate("document.querySelector('[data-theme-toggle]').click() || true")
            wait_for(browser, "document.documentElement.dataset.theme === 'dark'")
            checked(browser, "the notebook at 390 px, dark")
        finally:
            browser.evaluate("document.querySelector('[data-theme-toggle]').click() || true")
            browser.send("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=1, mobile=False)

        browser.evaluate("document.querySelector('.nb-visualize').click() || true")
        wait_for(browser, "location.pathname === '/question' && !!document.querySelector('#question .chart svg')")
        checked(browser, "the visualized question")
        text = browser.evaluate("location.hash.slice(1)")
        question = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        assert question["dataset_query"] == {"database": sample["db"], "type": "query", "query": {
            "source-table": orders["id"],
            "expressions": {"Net": ["-", ["field", orders["TOTAL"], None], ["field", orders["TAX"], None]]},
            "filter": [">", ["expression", "Net"], 50],
            "aggregation": [["sum", ["expression", "Net"]]],
            "breakout": [["field", products["CATEGORY"], {"source-field": orders["PRODUCT_ID"]}]]}}
        assert question["display"] == "bar"
