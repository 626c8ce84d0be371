"""Sharing in headless Chromium (tests/plugins/sharing/browser.py): a dashboard's public link made from
its Share page and opened signed out; a signed embed with a locked filter set up and its preview drawn
in the page's frame; two addresses subscribed and "Send now" received by an SMTP server (aiosmtpd); an
alert set up from a question's Alerts link. No
script error on the way; axe-core finds no serious or critical violation on the share and
subscriptions pages, a question's alerts page and the account's alerts, in both themes, at 1400 and 390 px.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import pytest

from tests.plugins.app.test_dashboard_browser import go, set_value, settle, signed_in, wait_for, width
from tests.plugins.app.test_dashboard_pages import build_shop, ok
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations
from tests.plugins.subscriptions.support import smtp_inbox

pytestmark = [pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                 "(apt-get install chromium, or make test-setup)"),
              pytest.mark.xdist_group("app-share-browser")]


@pytest.fixture
def browser():
    with Browser(chromium_path(), 1400, 900) as opened:
        opened.watch_errors()
        yield opened


@pytest.fixture
def inbox(app):
    with smtp_inbox(app) as box:
        yield box


def accessible_in_both_themes(browser) -> None:
    for _ in range(2):
        for size in (1400, 390):
            width(browser, size, 900 if size > 500 else 844)
            assert serious_violations(browser) == []
            assert browser.evaluate("document.documentElement.scrollWidth") <= size
        browser.evaluate("document.querySelector('[data-theme-toggle]').click()")
    width(browser, 1400)


def click(browser, selector: str) -> None:
    browser.evaluate(f"document.querySelector({selector!r}).click()")
    settle(browser)


def subscribe_two_and_send_now(browser) -> None:
    """On a new e-mail subscription's form: ann and bob daily at 7, saved and listed, then opened again
    and sent now ("Sent.")."""
    set_value(browser, "#sub-emails", "ann@example.com, bob@example.com")
    set_value(browser, "#sub-schedule", "daily")
    set_value(browser, "#sub-hour", "7")
    click(browser, "#subscription-form button[type=submit]")
    wait_for(browser, "!document.querySelector('#subscription-form') && "
                      "document.body.innerText.includes('ann@example.com')")
    assert "Daily at 7:00 AM" in browser.text()
    click(browser, ".subscription-actions a")
    wait_for(browser, "!!document.querySelector('#subscription-form')")
    click(browser, "#subscription-form button[hx-post$='/send']")
    assert wait_for(browser, "document.querySelector('#subscription-result')?.textContent") == "Sent."


def test_share_by_link_embed_with_a_locked_filter_and_subscribe_in_a_browser(app, admin, browser, inbox):
    ok(admin.put("/api/setting/enable-embedding-static", json={"value": True}), 204)
    ok(admin.put("/api/setting/enable-public-sharing", json={"value": True}), 204)
    shop = build_shop(app, admin)
    with Server(app) as server:
        signed_in(app, browser, server)
        go(browser, server.url + shop["path"])
        click(browser, ".share-links a[href$='/share']")
        wait_for(browser, "location.pathname.endsWith('/share')")
        settle(browser)
        accessible_in_both_themes(browser)

        # A public link, opened by someone signed out.
        click(browser, "#share-public button.primary")
        link = wait_for(browser, "document.querySelector('#public-link')?.value")
        assert "/public/dashboard/" in link
        browser.send("Network.clearBrowserCookies")
        public = link.replace("http://localhost", server.url)
        browser.send("Page.navigate", url=public)
        wait_for(browser, f"location.href === {public!r}")
        assert browser.wait_settled() == "ready"
        assert "Shop overview" in browser.text()
        signed_in(app, browser, server)

        # A signed embed: the city locked to Oslo, the name editable; the preview draws Oslo's total.
        go(browser, server.url + shop["path"] + "/share")
        set_value(browser, "select[name='rule.city']", "locked")
        set_value(browser, "input[name='value.city']", "Oslo")
        set_value(browser, "select[name='rule.name']", "enabled")
        click(browser, "#embed-form button[hx-get]")
        frame = "document.querySelector('iframe.embed-preview')?.contentDocument"
        assert wait_for(browser, f"{frame}?.querySelector('.scalar')?.textContent") == "16.5"
        assert wait_for(browser, f"!!{frame}?.querySelector('[data-slug=name]')")
        assert browser.evaluate(f"!{frame}.querySelector('[data-slug=city]')")
        assert '"city": "Oslo"' in browser.evaluate("document.querySelector('#code-python').value")
        browser.evaluate("document.querySelector('input[name=enable_embedding]').click()")
        click(browser, "#embed-form button[type=submit]")
        wait_for(browser, "location.hash === '#embedding'")
        settle(browser)
        saved = ok(admin.get(f"/api/dashboard/{shop['dashboard']}"))
        assert saved["enable_embedding"] is True and saved["embedding_params"]["city"] == "locked"

        # Two addresses subscribed, then sent now.
        go(browser, server.url + shop["path"] + "/subscriptions")
        click(browser, "a[href$='?new=email']")
        wait_for(browser, "!!document.querySelector('#sub-emails')")
        accessible_in_both_themes(browser)
        subscribe_two_and_send_now(browser)
        received = inbox.wait(2)
        assert sorted(to for tos, _ in received for to in tos) == ["ann@example.com", "bob@example.com"]

        # An alert on a question, from its Alerts link, then listed in the account's alerts.
        go(browser, f"{server.url}/question/{shop['chart']}")
        click(browser, ".share-links a[href$='/alerts']")
        wait_for(browser, "!!document.querySelector('#alert-condition')")
        accessible_in_both_themes(browser)
        set_value(browser, "#alert-schedule", "hourly")
        click(browser, "form.subscription-form button[type=submit]")
        wait_for(browser, "document.body.innerText.includes('When it has results')")
        assert [a["alert_condition"] for a in ok(admin.get(f"/api/alert/question/{shop['chart']}"))] == ["rows"]
        go(browser, server.url + "/account/notifications")
        assert "Revenue by city" in browser.text()
        accessible_in_both_themes(browser)
        assert browser.errors() == []
