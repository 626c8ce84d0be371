"""The expression editor in a real browser (headless Chromium, tests/plugins/sharing/browser.py): brought
into a page by htmx as the question builder brings it, typed into key by key, suggestions chosen with
the arrow keys, Enter and Tab and closed with Escape, the server's check shown as it is typed (the MBQL
in a hidden input, or the error with its place marked); axe-core finds no serious violation in either
theme at 1400 and 390 px, and the page reports no console error."""
from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app.test_expressions_routes import b64, ok, sample  # noqa: F401 - the Sample Database fixture
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                "(apt-get install chromium, or make test-setup)")

KEYS = {"ArrowDown": 40, "ArrowUp": 38, "Enter": 13, "Tab": 9, "Escape": 27}


def wait_for(browser, expression: str, timeout: float = 15):
    return browser.wait_for(expression, timeout)


def key(browser, name: str) -> None:
    browser.send("Input.dispatchKeyEvent", type="keyDown", key=name, code=name, windowsVirtualKeyCode=KEYS[name],
                 **({"text": "\r"} if name == "Enter" else {}))
    browser.send("Input.dispatchKeyEvent", type="keyUp", key=name, code=name, windowsVirtualKeyCode=KEYS[name])


def typed(browser, text: str) -> None:
    browser.send("Input.insertText", text=text)


def value(browser) -> str:
    return browser.evaluate("document.getElementById('formula').value")


def shown_options(browser) -> list[str]:
    return browser.evaluate("Array.from(document.querySelectorAll('#formula-list:not([hidden]) [role=option]'))"
                            ".map(o => o.querySelector('.suggestion-label').textContent)")


def selected(browser) -> str:
    return browser.evaluate("(document.querySelector('#formula-list [aria-selected=true] .suggestion-label') || {})"
                            ".textContent || ''")


def test_the_expression_editor_by_keyboard(sample):  # noqa: F811 - the fixture imported above
    token = ok(sample.admin.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))["id"]
    query = sample.query()
    editor = "/question/notebook/expression/editor?" + urlencode(
        {"q": b64(query), "kind": "aggregation", "id": "formula", "label": "Summary formula", "field": "clause"})
    with Server(sample.app) as server, Browser(chromium_path()) as browser:
        browser.send("Network.enable")
        browser.send("Network.setCookie", name="metabase.SESSION", value=token, url=server.url, httpOnly=True)
        browser.watch_errors()
        browser.send("Page.navigate", url=f"{server.url}/account/profile")
        wait_for(browser, "document.readyState === 'complete' && !!window.htmx")
        # What the question builder's page does: its head loads the editor's assets, htmx brings an editor.
        browser.evaluate("""new Promise(function (done) {
          var style = document.createElement('link'); style.rel = 'stylesheet';
          style.href = '/app/assets/expression.css'; document.head.append(style);
          var script = document.createElement('script'); script.src = '/app/assets/expression.js';
          script.onload = function () { done(true); }; document.head.append(script); })""")
        browser.evaluate(f"htmx.ajax('GET', {json.dumps(editor)}, {{target: '#main', swap: 'beforeend'}}).then(() => true)")
        wait_for(browser, "!!document.getElementById('formula')")
        assert browser.evaluate("document.querySelector('label[for=formula]').textContent") == "Summary formula"
        browser.evaluate("document.getElementById('formula').focus() || true")

        # A function by its first letters: the list opens on the first, arrows move, Enter takes it.
        typed(browser, "Su")
        wait_for(browser, "document.getElementById('formula').getAttribute('aria-expanded') === 'true'")
        assert shown_options(browser)[:2] == ["Sum(value)", "SumIf(value, condition)"]
        assert selected(browser) == "Sum(value)"
        key(browser, "ArrowDown")
        assert selected(browser) == "SumIf(value, condition)"
        assert browser.evaluate("document.getElementById('formula').getAttribute('aria-activedescendant')") \
            == "formula-option-2"
        key(browser, "ArrowUp")
        assert selected(browser) == "Sum(value)"
        key(browser, "Enter")
        wait_for(browser, "document.getElementById('formula').value === 'Sum('")
        # A column inside brackets, taken with Tab.
        typed(browser, "[To")
        wait_for(browser, "!!document.querySelector('#formula-list:not([hidden]) [role=option]')")
        assert shown_options(browser)[0] == "Total"
        key(browser, "Tab")
        wait_for(browser, "document.getElementById('formula').value === 'Sum([Total]'")
        assert browser.evaluate("document.activeElement.id") == "formula"  # Tab took the choice, not the focus
        typed(browser, ") / Cou")
        wait_for(browser, "!!document.querySelector('#formula-list:not([hidden]) [role=option]')")
        assert selected(browser) == "Count"
        key(browser, "Enter")
        assert value(browser) == "Sum([Total]) / Count"
        total = ["field", sample.fields[("ORDERS", "TOTAL")], None]
        mbql = wait_for(browser, "(document.querySelector('#formula-result input[name=clause]') || {}).value")
        assert json.loads(mbql) == ["/", ["sum", total], ["count"]]
        assert browser.evaluate("document.getElementById('formula').hasAttribute('aria-invalid')") is False
        assert serious_violations(browser) == []

        # An error: shown under the input with the wrong part marked; the clause is gone meanwhile.
        typed(browser, " + [Taxes]")
        wait_for(browser, "!!document.querySelector('#formula-result .expression-error')")
        assert browser.evaluate("document.querySelector('#formula-result .expression-error').textContent") \
            == "Unknown column [Taxes]. Did you mean [Tax]?"
        assert browser.evaluate("document.querySelector('#formula-result mark').textContent") == "[Taxes]"
        assert browser.evaluate("document.querySelector('#formula-result input[name=clause]')") is None
        assert browser.evaluate("document.getElementById('formula').getAttribute('aria-invalid')") == "true"
        assert serious_violations(browser) == []

        # Escape closes the list and leaves the text as it was.
        typed(browser, " + Su")
        wait_for(browser, "!!document.querySelector('#formula-list:not([hidden]) [role=option]')")
        key(browser, "Escape")
        assert browser.evaluate("document.getElementById('formula-list').hidden") is True
        assert browser.evaluate("document.getElementById('formula').getAttribute('aria-expanded')") == "false"
        assert value(browser) == "Sum([Total]) / Count + [Taxes] + Su"

        # A phone's width and the dark theme: still no serious violation, nothing wider than the screen.
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=900, deviceScaleFactor=1, mobile=True)
        browser.evaluate("document.querySelector('[data-theme-toggle]').click() || true")
        wait_for(browser, "document.documentElement.dataset.theme === 'dark'")
        assert browser.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")
        assert serious_violations(browser) == []
        browser.send("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=1, mobile=False)
        assert serious_violations(browser) == []
        assert browser.errors() == []
