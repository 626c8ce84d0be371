"""The SQL editor in Chromium (tests/plugins/sharing/browser.py): a native link opens the editor, SQL
typed with a date field filter and a text (category) variable in an optional clause, Ctrl+Enter runs it,
the rows come, the URL keeps the state across a reload; a slow query's request is aborted by Cancel.
axe-core finds no serious or critical violation (both themes, a phone's width) and no console error.

Skipped, naming the package, when Debian's `chromium` is not installed."""
from __future__ import annotations

import base64
import json
import logging
import time

import orjson
import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.app.test_dashboard_browser import wait_for
from tests.plugins.app.test_question_pages import SALES, click, first_column, ok, settle, shop  # noqa: F401
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package")

TYPED = "SELECT id, region, sold_on FROM sales WHERE {{day}} [[AND region = {{region}}]] ORDER BY id"
SLOW = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) "
        "SELECT count(*) FROM c")


def set_value(browser, selector: str, value: str) -> None:
    """Choose or type a value as a person does: the field's value, then its change event."""
    browser.evaluate(f"""(function () {{
      var field = document.querySelector({json.dumps(selector)});
      field.focus(); field.value = {json.dumps(value)};
      field.dispatchEvent(new Event('input', {{bubbles: true}}));
      field.dispatchEvent(new Event('change', {{bubbles: true}}));
      return true; }})()""")


def ctrl_enter(browser) -> None:
    for kind in ("keyDown", "keyUp"):
        browser.send("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                     modifiers=2)


def type_sql(browser, text: str) -> None:
    browser.evaluate("(function () { var s = document.getElementById('native-sql'); s.focus(); s.select();"
                     " return true; })()")
    browser.send("Input.insertText", text=text)


def failed_loads(browser, path: str) -> list[dict]:
    return [e["params"] for e in browser.events if e.get("method") == "Network.loadingFailed"
            and path in requested(browser).get(e["params"]["requestId"], "")]


def requested(browser) -> dict:
    return {e["params"]["requestId"]: e["params"]["request"]["url"] for e in browser.events
            if e.get("method") == "Network.requestWillBeSent"}


def test_write_run_and_cancel_sql_in_a_browser(app, admin, shop, caplog):  # noqa: F811
    caplog.set_level(logging.INFO, logger="tessera.disconnects")
    token = ok(admin.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))["id"]
    empty = {"dataset_query": {"database": shop["db"], "type": "native",
                               "native": {"query": "", "template-tags": {}}},
             "display": "table", "visualization_settings": {}}
    link = base64.b64encode(orjson.dumps(empty)).decode()
    with Server(app) as server, Browser(chromium_path(), width=1400) as browser:
        browser.send("Network.enable")
        browser.send("Network.setCookie", name="metabase.SESSION", value=token, url=server.url, httpOnly=True)
        browser.watch_errors()

        # Metabase's link for a new native question opens the editor.
        browser.send("Page.navigate", url=f"{server.url}/question#{link}")
        settle(browser, "location.pathname === '/question/native' && document.querySelector('.code-wrap.highlighting')")
        assert serious_violations(browser) == []

        # Typed SQL: highlighted, and the variables panel follows it (the API's parser, on the server).
        type_sql(browser, TYPED)
        settle(browser, "document.querySelectorAll('#native-tags fieldset.tag').length === 2")
        assert browser.evaluate("document.querySelector('.code-highlight .token.template-tag').textContent") \
            == "{{day}}"
        assert browser.evaluate("document.querySelector('.code-highlight .token.keyword').textContent") == "SELECT"
        # {{day}}: a field filter on sold_on with a date widget; {{region}} stays a text variable.
        set_value(browser, "select[name='tag-type.day']", "dimension")
        settle(browser, "document.querySelector(\"select[name='tag-field.day']\")")
        set_value(browser, "select[name='tag-field.day']", str(shop["fields"]["sold_on"]))
        settle(browser, "document.querySelector(\"select[name='tag-field.day']\").value === "
                        f"{json.dumps(str(shop['fields']['sold_on']))}")
        set_value(browser, "select[name='tag-widget.day']", "date/all-options")
        settle(browser, "document.getElementById('filter-day-mode')")
        set_value(browser, "#filter-day-mode", "on")
        set_value(browser, "#filter-day-start", "2024-01-05")
        set_value(browser, "#filter-region", "North")
        assert browser.evaluate("document.querySelector('input[name=day]').value") == "2024-01-05"

        browser.evaluate("document.getElementById('native-sql').focus() || true")
        ctrl_enter(browser)
        settle(browser, "document.querySelector('#native-result table.result')")
        assert [int(v) for v in first_column(browser, 0)] == [
            i for i, r, _, d in SALES if r == "North" and d == "2024-01-05"]
        assert "native-sql=" in browser.evaluate("location.search")
        # The run posts the form once as JSON (each field once: the form is not included twice).
        posted = [e["params"]["request"].get("postData") for e in browser.events
                  if e.get("method") == "Network.requestWillBeSent"
                  and e["params"]["request"]["url"].endswith("/question/native/run")]
        body = json.loads(posted[-1])
        assert body["native-sql"] == TYPED and body["region"] == "North" and body["day"] == "2024-01-05"
        assert serious_violations(browser) == []
        assert browser.errors() == []

        # Without the region, the optional clause is left out: every region of that day.
        set_value(browser, "#filter-region", "")
        ctrl_enter(browser)
        settle(browser, "document.querySelector('#native-result .count').textContent.includes('of "
                        f"{sum(1 for *_, d in SALES if d == '2024-01-05')}')")
        assert [int(v) for v in first_column(browser, 0)] == [i for i, _, _, d in SALES if d == "2024-01-05"]

        # A reload opens the same SQL, settings and values (the run set the URL).
        browser.send("Page.reload")
        settle(browser, "document.getElementById('filter-day-start') && document.querySelector('.code-wrap.highlighting')")
        assert browser.evaluate("document.getElementById('native-sql').value") == TYPED
        assert browser.evaluate("document.getElementById('filter-day-start').value") == "2024-01-05"
        assert browser.evaluate("document.querySelector(\"select[name='tag-type.day']\").value") == "dimension"

        # A SQL error: the database's message where the rows would be.
        type_sql(browser, "SELECT nope, \"region\" FROM sales WHERE region = 'x # y' -- why")
        click(browser, "#native-run")
        settle(browser, "document.querySelector('#native-result [role=alert]')")
        assert "no such column: nope" in browser.text()
        # SQLite's dialect: "region" is a name, 'x # y' a string ("#" starts no comment), "--" a comment.
        tokens = browser.evaluate("[...document.querySelectorAll('.code-highlight .token')]"
                                  ".map(t => [t.className.replace('token ', ''), t.textContent])")
        assert ["identifier", '"region"'] in tokens and ["string", "'x # y'"] in tokens
        assert ["comment", "-- why"] in tokens
        assert all("400" in error for error in browser.errors())  # the failed run's answer, logged as a load

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

        # A slow query, cancelled: the page's request is aborted (the API then stops the query).
        type_sql(browser, SLOW)
        browser.events.clear()
        click(browser, "#native-run")
        wait_for(browser, "!document.getElementById('native-cancel').hidden")  # running
        time.sleep(0.5)
        click(browser, "#native-cancel")
        wait_for(browser, "document.getElementById('native-cancel').hidden && "
                          "document.getElementById('native-status').textContent === 'Cancelled.'")
        deadline = time.monotonic() + 5
        while not failed_loads(browser, "/question/native/run") and time.monotonic() < deadline:
            browser.evaluate("true")  # reads the protocol's events
            time.sleep(0.1)
        aborted = failed_loads(browser, "/question/native/run")
        assert aborted and aborted[0].get("canceled") is True
        # The server saw its client go and cancelled the statement, long before the count could finish.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any("its query was cancelled" in r.getMessage()
                                                      for r in caplog.records):
            time.sleep(0.1)
        assert any("its query was cancelled" in r.getMessage() for r in caplog.records)
        assert "#native-result table" not in browser.evaluate("document.getElementById('native-result').innerHTML")

        # Leaving the page while a query runs: the request is aborted and the statement cancelled.
        caplog.clear()
        browser.events.clear()
        click(browser, "#native-run")
        wait_for(browser, "!document.getElementById('native-cancel').hidden")
        time.sleep(0.5)
        browser.send("Page.navigate", url=f"{server.url}/collection/root")
        wait_for(browser, "location.pathname === '/collection/root' && document.readyState === 'complete'")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any("its query was cancelled" in r.getMessage()
                                                      for r in caplog.records):
            time.sleep(0.1)
        # (the old document's aborted load is not reported once it is gone: the server's log says it)
        assert any("its query was cancelled" in r.getMessage() for r in caplog.records)
