"""The web app in a real browser (headless Chromium over the DevTools protocol, tests/plugins/sharing/
browser.py): a new server is set up through its pages, then signed into, searched and browsed by
keyboard and clicks; every page passes axe-core with no serious or critical violation, reports no
console error, and is drawn in both themes at a wide and a phone width.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import pytest

from tests.plugins.app.test_dashboard_browser import wait_for
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                "(apt-get install chromium, or make test-setup)")


LOADED = "document.readyState === 'complete' && !!window.htmx"


def load(browser, url: str) -> None:
    """Open `url` and wait until it is drawn and htmx has taken over its forms."""
    browser.send("Page.navigate", url=url)
    wait_for(browser, f"{LOADED} && location.href !== 'about:blank'")


def arrived(browser, path: str, showing: str = "") -> None:
    """Wait until a redirect has reached `path` and its page is loaded (the path changes as soon as the
    new document starts, before its forms exist), showing `showing` when given."""
    wait_for(browser, f"location.pathname === {path!r} && {LOADED}"
                      + (f" && document.body.innerText.includes({showing!r})" if showing else ""))


def fill(browser, values: dict) -> None:
    for selector, value in values.items():
        browser.evaluate(f"(() => {{ const e = document.querySelector({selector!r}); e.focus(); e.value = {value!r};"
                         " e.dispatchEvent(new Event('input', {bubbles: true})); return true; })()")


def submit(browser, selector: str) -> None:
    browser.evaluate(f"document.querySelector({selector!r}).requestSubmit() || true")


def checked(browser, where: str) -> None:
    """The page now open has no serious accessibility violation and reported no error."""
    assert serious_violations(browser) == [], where
    assert browser.errors() == [], where


def pixels_differ(png: bytes) -> bool:
    return len(set(png[100:4000])) > 20  # a PNG of one flat colour compresses to a few repeated bytes


@pytest.fixture
def browser():
    with Browser(chromium_path()) as opened:
        opened.watch_errors()
        yield opened


def test_setup_sign_in_search_and_collections_in_a_browser(app, browser):
    with Server(app) as server:
        load(browser, server.url + "/")
        assert "Create the first account" in browser.text()
        checked(browser, "setup")
        fill(browser, {"#first_name": "Ada", "#last_name": "Lovelace", "#email": "ada@example.com",
                       "#password": "An-Excellent-Passw0rd", "#site_name": "Analytical Engines"})
        submit(browser, "form[hx-post='/setup']")
        arrived(browser, "/setup/database")  # the optional first database
        checked(browser, "setup: add your data")
        browser.evaluate("document.querySelector('a[href=\"/\"]:not(.brand)').click() || true")
        arrived(browser, "/", "Welcome, Ada")
        checked(browser, "home")

        load(browser, server.url + "/account/profile")
        fill(browser, {"#first_name": "Augusta"})
        submit(browser, "form[hx-post='/account/profile']")
        wait_for(browser, "document.getElementById('profile-result').innerText.includes('Saved')")
        checked(browser, "profile")

        browser.evaluate("document.querySelector('button[hx-post=\"/auth/logout\"]').click() || true")
        arrived(browser, "/auth/login")
        checked(browser, "login")
        fill(browser, {"#username": "ada@example.com", "#password": "wrong-password"})
        submit(browser, "form[hx-post='/auth/login']")
        wait_for(browser, "document.querySelector('#login-result [role=alert]')")
        browser.errors()  # the refused sign-in's 401 is logged by the browser as a failed load: expected
        fill(browser, {"#password": "An-Excellent-Passw0rd"})
        submit(browser, "form[hx-post='/auth/login']")
        arrived(browser, "/", "Welcome, Augusta")

        load(browser, server.url + "/collection/root")
        checked(browser, "collection")
        load(browser, server.url + "/search?q=analytics")
        assert "Search for" in browser.text()
        checked(browser, "search")


def test_the_theme_switch_and_a_phone_width(app, admin, browser, tmp_path):
    from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD

    admin.post("/api/collection", json={"name": "Quarterly numbers"})
    with Server(app) as server:
        load(browser, server.url + "/auth/login")
        fill(browser, {"#username": ADMIN_EMAIL, "#password": ADMIN_PASSWORD})
        submit(browser, "form[hx-post='/auth/login']")
        arrived(browser, "/")
        light = browser.screenshot()
        browser.evaluate("document.querySelector('[data-theme-toggle]').click() || true")
        assert browser.evaluate("document.documentElement.dataset.theme") == "dark"
        assert browser.evaluate("document.cookie.includes('tessera-theme=dark')")
        dark = browser.screenshot()
        assert pixels_differ(light) and pixels_differ(dark) and light != dark
        load(browser, server.url + "/collection/root")  # the choice holds on the next page
        assert browser.evaluate("document.documentElement.dataset.theme") == "dark"
        checked(browser, "collection, dark")
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=1, mobile=True)
        try:
            load(browser, server.url + "/")
            # Nothing wider than the screen: no sideways scrolling at 390 px.
            assert browser.evaluate("document.documentElement.scrollWidth <= 390")
            checked(browser, "home at 390 px")
        finally:
            browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
            browser.evaluate("localStorage.removeItem('tessera-theme') || true")
