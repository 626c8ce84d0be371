"""Sign in with Google from the login page in a real browser: the button, a local stand-in for Google's
authorization endpoint that answers as Google does (a redirect with the ID token in the fragment), the
callback page's own script, and landing on the page the person started from, signed in.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from core.testing.http_server import HttpSink
from tests.plugins.app.test_dashboard_browser import wait_for
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations
from tests.plugins.sso.test_google import google_keys, google_on, id_token  # noqa: F401 - fixtures

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                "(apt-get install chromium, or make test-setup)")


def google_answers(received, out) -> None:
    """Google's authorization endpoint after the person chose their account: back to redirect_uri."""
    query = {k: v[0] for k, v in parse_qs(urlsplit(received.target).query).items()}
    fragment = urlencode({"id_token": id_token({"nonce": query["nonce"]}), "state": query["state"]})
    out.answer(302, {"Location": f"{query['redirect_uri']}#{fragment}"}, b"")


def test_sign_in_with_google_from_the_login_page(app, google_on, monkeypatch):  # noqa: F811
    google = HttpSink()
    google.route("/o/oauth2/v2/auth", handler=google_answers)
    monkeypatch.setitem(app.extensions["tessera"].config, "TESSERA_GOOGLE_AUTHORIZATION_URL",
                        google.url + "/o/oauth2/v2/auth")
    try:
        with Server(app) as server, Browser(chromium_path()) as browser:
            browser.watch_errors()
            browser.send("Page.navigate", url=server.url + "/auth/login?redirect=/collection/root")
            wait_for(browser, "document.readyState === 'complete' && !!document.querySelector('a[href^=\"/auth/google\"]')")
            assert serious_violations(browser) == []
            browser.evaluate("document.querySelector('a[href^=\"/auth/google\"]').click() || true")
            wait_for(browser, "location.pathname === '/collection/root' && document.readyState === 'complete'")
            assert "jo@example.com" in browser.evaluate(
                "fetch('/api/user/current').then(r => r.text())")
            assert browser.errors() == []
    finally:
        google.close()
