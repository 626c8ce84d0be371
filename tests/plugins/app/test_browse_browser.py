"""Setup with a first database, browsing it, and the password pages in a real browser (headless Chromium
over the DevTools protocol): the forms work through htmx, no console error, axe-core finds no serious or
critical violation in either theme, and nothing runs wider than a 390 px screen.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import email
import json
import re
import time

import pytest

from core.testing import make_user, sqlite_file, wait_for_sync
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations, wait_for

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                "(apt-get install chromium, or make test-setup)")


class WatchedBrowser(Browser):
    """A Browser that keeps the page's console errors and uncaught exceptions."""

    errors: list

    def __enter__(self):
        self.errors = []
        super().__enter__()
        self.send("Runtime.enable")
        self.send("Log.enable")
        return self

    def _read_message(self, deadline: float) -> dict:
        message = super()._read_message(deadline)
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.errors.append(json.dumps(params.get("exceptionDetails", {}))[:300])
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            logged = json.dumps(params.get("args", []))
            # htmx logs every 4xx it swaps (base.html's responseHandling marks them errors): a form's
            # message answered with a 4xx on purpose is the app's own error path, not a fault.
            if not re.search(r"Response Status Error Code 4\d\d from ", logged):
                self.errors.append(logged[:300])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            # A page answered with a 4xx on purpose (a form error swapped in by htmx) is logged as a
            # failed resource: that is the app's own error path, not a fault.
            if entry.get("source") != "network":
                self.errors.append(entry.get("text", "")[:300])
        return message


def load(browser, url: str) -> None:
    browser.send("Page.navigate", url=url)
    settle(browser)


def settle(browser) -> None:
    time.sleep(0.1)
    wait_for(browser, "document.readyState === 'complete' && !!window.htmx")


def width(browser, pixels: int) -> None:
    browser.send("Emulation.setDeviceMetricsOverride", width=pixels, height=900, deviceScaleFactor=1, mobile=False)


def fill(browser, values: dict) -> None:
    for selector, value in values.items():
        browser.evaluate(f"(e => {{ e.value = {json.dumps(value)}; e.dispatchEvent(new Event('input')); }})"
                         f"(document.querySelector({json.dumps(selector)}))")


def click(browser, selector: str) -> None:
    browser.evaluate(f"document.querySelector({json.dumps(selector)}).click()")


def path_is(browser, pattern: str, timeout: float = 15) -> str:
    return wait_for(browser, f"new RegExp({json.dumps(pattern)}).test(location.pathname) && location.pathname",
                    timeout)


def checked_in_both_themes(browser) -> None:
    """axe-core in the light and the dark theme, and no sideways scrolling at 390 px."""
    for theme in ("light", "dark"):
        browser.evaluate(f"document.documentElement.dataset.theme = '{theme}'")
        assert serious_violations(browser) == [], (theme, browser.evaluate("location.pathname"))
    width(browser, 390)
    assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), browser.evaluate(
        "location.pathname")
    width(browser, 1400)


def test_setup_with_a_database_then_browse_it(app, smtp_server):
    path = sqlite_file(app, "shop.db", "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);"
                                       "CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL);"
                                       "INSERT INTO customers VALUES (1, 'Ann');")
    with Server(app) as server, WatchedBrowser(chromium_path(), width=1400) as browser:
        load(browser, server.url + "/setup")
        checked_in_both_themes(browser)
        fill(browser, {"#first_name": "Ada", "#email": "ada@example.com", "#password": "An-Excellent-Passw0rd",
                       "#site_name": "Acme"})
        click(browser, "form button[type=submit]")
        path_is(browser, "^/setup/database$")
        settle(browser)
        checked_in_both_themes(browser)

        browser.evaluate("(s => { s.value = 'sqlite'; s.dispatchEvent(new Event('change', {bubbles: true})); })"
                         "(document.getElementById('engine'))")
        wait_for(browser, "!!document.getElementById('details-db')")
        assert browser.evaluate("document.querySelector('label[for=details-db]').textContent") == "Filename"
        fill(browser, {"#database-name": "Shop", "#details-db": path + ".missing"})
        click(browser, "button[hx-post='/setup/database/validate']")
        wait_for(browser, "!!document.querySelector('#database-result [role=alert]')")
        fill(browser, {"#details-db": path})
        click(browser, "button[hx-post='/setup/database/validate']")
        wait_for(browser, "document.getElementById('database-result').textContent.includes('Connected')")
        checked_in_both_themes(browser)
        click(browser, ".details-form button[type=submit]")
        database_path = path_is(browser, r"^/browse/databases/\d+-shop$")
        wait_for_sync(app)
        load(browser, server.url + database_path)
        assert "Customers" in browser.text() and "Invoices" in browser.text()
        checked_in_both_themes(browser)
        load(browser, server.url + "/browse/databases")
        assert "Shop" in browser.text()
        checked_in_both_themes(browser)
        load(browser, server.url + "/")
        assert "Start here" in browser.text()
        checked_in_both_themes(browser)

        # The password pages, with e-mail configured (through the API, with the browser's own session).
        configured = browser.evaluate(
            "fetch('/api/setting', {method: 'PUT', headers: {'Content-Type': 'application/json'}, body: JSON.stringify("
            f"{{'email-smtp-host': '{smtp_server.host}', 'email-smtp-port': {smtp_server.port}, "
            "'email-from-address': 'bi@example.com'})}).then(r => r.status)")
        assert configured == 204
        admin_cookies = browser.send("Network.getCookies")["cookies"]
        make_user(app)
        browser.send("Network.clearBrowserCookies")
        load(browser, server.url + "/auth/login")
        click(browser, "a[href='/auth/forgot_password']")
        path_is(browser, "^/auth/forgot_password$")
        settle(browser)
        checked_in_both_themes(browser)
        fill(browser, {"#email": "user@example.com"})
        click(browser, "form button[type=submit]")
        wait_for(browser, "!!document.querySelector('#forgot-result [role=status]')")
        # The reset e-mail (the user's first sign-in may also have told the administrators they joined).
        def reset_mail():
            return next((m for m in smtp_server.messages if "reset_password" in m["data"]), None)

        deadline = time.monotonic() + 10
        while reset_mail() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        text = email.message_from_string(reset_mail()["data"]).get_payload(decode=True).decode()
        link = re.search(r"https?://[^/\s]+(/auth/reset_password/\S+)", text).group(1)
        load(browser, server.url + link)
        checked_in_both_themes(browser)
        fill(browser, {"#password": "Fresh-Start-42", "#password_confirm": "Fresh-Start-42"})
        click(browser, "form button[type=submit]")
        path_is(browser, "^/$")
        settle(browser)
        assert "Welcome, Ulla" in browser.text()
        assert admin_cookies  # the administrator's session was a cookie, as the user's is now
        assert browser.errors == []
