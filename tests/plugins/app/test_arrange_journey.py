"""Issue 32's "done when", as one person's visit in headless Chromium (tests/plugins/sharing/browser.py),
in the manner of issue 30's journey (test_app_journey.py). Signed in through the login page, the
administrator sets up e-mail (a test send into a real SMTP server, aiosmtpd), public links and embedding
on the settings pages; makes a dashboard from the main menu, builds two tabs of three saved questions and
a text card, adds a date and a category filter wired to every card, resizes and moves a card with the
keyboard, gives the chart a goal line in its visualization settings, saves, and finds it as saved after a
reload; shares it by public link and opens the link signed out; sets up a signed embed with the category
locked and sees its preview; subscribes two addresses and "sends now" into the SMTP server. Then adds a new SQLite file through the database form, syncs it, hides
a table, remaps a column to another table's name; invites someone (the invitation arrives by e-mail, she
chooses her password from its link), puts her in a group, takes the group's query permission on that
database away in the grid, and she is refused the question she ran before. Nothing reports a console
error, and axe-core finds no serious or critical violation on any page visited.

Data is set up through the API (the shop's saved questions, the group and its first permissions) and
outcomes are asserted through it; everything else is clicks and keys on the pages.
Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import base64
import json
import re
import time

import orjson
import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, sqlite_file, wait_for_sync
from tests.plugins.app.test_admin_browser import query_status
from tests.plugins.app.test_admin_data import SHOP
from tests.plugins.app.test_app_journey import clicked, opened, submitted, typed
from tests.plugins.app.test_dashboard_browser import set_value, settle, wait_for
from tests.plugins.app.test_dashboard_edit_browser import (
    dashcard_of,
    draft,
    goal_line_on,
    key,
    two_tabs_with_the_listing_on_the_second,
)
from tests.plugins.app.test_dashboard_pages import build_shop, ok
from tests.plugins.app.test_share_browser import subscribe_two_and_send_now
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations
from tests.plugins.subscriptions.support import Inbox

pytestmark = [pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                 "(apt-get install chromium, or make test-setup)"),
              pytest.mark.xdist_group("app-arrange-journey")]

NIA_PASSWORD = "Nia-Chooses-A-G00d-One"


@pytest.fixture
def browser():
    with Browser(chromium_path(), width=1400, height=900) as opened_browser:
        opened_browser.watch_errors()
        yield opened_browser


@pytest.fixture
def inbox():
    box = Inbox()
    yield box
    box.close()


def recipients(inbox, subject: str, count: int, timeout: float = 10) -> list[str]:
    """The addresses the messages whose subject has `subject` went to, once there are `count` of them."""
    deadline = time.monotonic() + timeout
    while True:
        found = sorted(to for tos, message in inbox.received if subject in str(message["Subject"]) for to in tos)
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def clean(browser, where: str) -> None:
    assert serious_violations(browser) == [], where
    assert browser.errors() == [], where


def landed(browser, expression: str, timeout: float = 15):
    """Wait until the new page is there (`expression` true) and htmx has taken it over."""
    found = wait_for(browser, expression, timeout)
    settle(browser)
    return found


def sign_in(browser, server, email: str = ADMIN_EMAIL, password: str = ADMIN_PASSWORD) -> None:
    opened(browser, server.url + "/auth/login")
    typed(browser, "#username", email)
    typed(browser, "#password", password)
    submitted(browser, "form[hx-post='/auth/login']")
    landed(browser, "location.pathname === '/'")


def test_a_dashboard_arranged_shared_subscribed_and_its_server_administered(app, admin, browser, inbox):
    shop = build_shop(app, admin)  # the shop database and its saved questions
    with Server(app) as server:
        sign_in(browser, server)

        # The settings this needs, on the admin pages: e-mail (tried with a test send), public links, embedding.
        opened(browser, server.url + "/admin/settings/email")
        clean(browser, "admin: e-mail settings")
        for selector, value in {"#setting-email-smtp-host": "127.0.0.1", "#setting-email-smtp-port": str(inbox.port),
                                "#setting-email-from-address": "tessera@example.com"}.items():
            typed(browser, selector, value)
        submitted(browser, "form[hx-post='/admin/settings/email']")
        wait_for(browser, "document.querySelector('#settings-result')?.innerText.includes('accepted these settings')")
        clicked(browser, "button[hx-post='/admin/settings/email/test']")
        wait_for(browser, "document.querySelector('#email-test-result')?.innerText.includes('test e-mail was sent')")
        assert [to for to, _ in inbox.wait(1)] == [[ADMIN_EMAIL]]
        for section, setting in (("public-sharing", "enable-public-sharing"),
                                 ("embedding-in-other-applications", "enable-embedding-static")):
            opened(browser, server.url + f"/admin/settings/{section}")
            # Public links are on by default: the box is ticked only where it is not.
            if not browser.evaluate(f"document.querySelector('#setting-{setting}').checked"):
                clicked(browser, f"#setting-{setting}")
                submitted(browser, f"form[hx-post='/admin/settings/{section}']")
                wait_for(browser, "document.querySelector('#settings-result')?.innerText.includes('Saved.')")
            clean(browser, f"admin: {section} settings")
            assert ok(admin.get(f"/api/setting/{setting}")) is True

        # 1. A new dashboard from the main menu, straight into the editor.
        clicked(browser, "a[href='/dashboard/new']")
        landed(browser, "location.pathname === '/dashboard/new'")
        clean(browser, "new dashboard")
        typed(browser, "#new-dashboard-name", "Built in a browser")
        submitted(browser, "form[hx-post='/dashboard/new']")
        path = landed(browser, "location.pathname.endsWith('/edit') && location.pathname.slice(0, -5)")
        dashboard = int(path.split("/")[2].split("-")[0])
        wait_for(browser, "document.querySelectorAll('#dashedit-picked button').length >= 3")
        clean(browser, "the editor")

        # Three saved questions from the picker (the third found by typing) and a text card.
        clicked(browser, f"button[value='add-card:{shop['chart']}']")
        clicked(browser, f"button[value='add-card:{shop['total']}']")
        browser.evaluate("document.querySelector('#dashedit-q').focus()")
        browser.send("Input.insertText", text="Invoice")
        wait_for(browser, f"!!document.querySelector(\"button[value='add-card:{shop['listing']}']\") && "
                          "![...document.querySelectorAll('#dashedit-picked .picked-name')]"
                          ".some(n => n.textContent === 'Revenue by city')")
        clicked(browser, f"button[value='add-card:{shop['listing']}']")
        wait_for(browser, "document.querySelector('.dashedit-preview .scalar')?.textContent === '23.5'")
        clicked(browser, "button[value='add-virtual:text']")
        text_card = draft(browser)["dashcards"][-1]["id"]
        set_value(browser, f"#text-{text_card}", "Figures in **EUR**")
        settle(browser)

        # Two tabs, the invoice list moved onto the second.
        two_tabs_with_the_listing_on_the_second(browser, shop)

        # A date and a category filter, wired to one card by hand and to the others by the suggestion.
        chart = dashcard_of(browser, shop["chart"])["id"]
        slugs = []
        for kind, column in (("date", "Created At"), ("string", "Customer → City")):
            set_value(browser, "#dashedit-filter-kind", kind)
            clicked(browser, "#dashedit-add-filter")
            parameter = draft(browser)["parameters"][-1]
            slugs.append(parameter["slug"])
            pid = parameter["id"]
            value = browser.evaluate(f"[...document.querySelector('#wire-{pid}-{chart}').options]"
                                     f".find(o => o.textContent === {column!r}).value")
            set_value(browser, f"#wire-{pid}-{chart}", value)
            settle(browser)
            clicked(browser, f"button[value='autowire:{pid}']")
            wired = {d["card_id"] for d in draft(browser)["dashcards"]
                     if any(m["parameter_id"] == pid for m in d["parameter_mappings"])}
            assert wired == {shop["chart"], shop["total"], shop["listing"]}, (kind, wired)
        date_slug, city_slug = slugs
        clean(browser, "the editor with its filters")

        # The number by keyboard: two columns wider, a row taller, three columns right.
        total = dashcard_of(browser, shop["total"])
        assert (total["col"], total["size_x"], total["size_y"]) == (0, 6, 3)
        browser.evaluate(f"document.querySelector('#move-{total['id']}').focus()")
        key(browser, "ArrowRight", shift=True)
        key(browser, "ArrowRight", shift=True)
        key(browser, "ArrowDown", shift=True)
        for _ in range(3):
            key(browser, "ArrowRight")
        moved = dashcard_of(browser, shop["total"])
        assert (moved["col"], moved["size_x"], moved["size_y"]) == (3, 8, 4)
        # The chart's look on this dashboard alone: a goal line from its visualization settings.
        goal_line_on(browser, shop["chart"])

        clicked(browser, "#dashedit-save")
        landed(browser, f"location.pathname === {path!r}")
        browser.evaluate("location.reload()")
        landed(browser, "document.querySelector('.markdown strong')?.textContent === 'EUR'")
        assert browser.evaluate("document.querySelector('.dashcard.col-4.w-8.h-4') !== null")
        wait_for(browser, "[...document.querySelectorAll('.dashcard svg text')].some(t => t.textContent === 'Target')")
        assert browser.evaluate("[...document.querySelectorAll('.tabs a')].map(a => a.textContent).join()"
                                ) == "Overview,Details"
        assert browser.evaluate(f"!!document.querySelector('[data-slug={date_slug}]') && "
                                f"!!document.querySelector('[data-slug={city_slug}]')")
        clean(browser, "the dashboard as saved")
        stored = ok(admin.get(f"/api/dashboard/{dashboard}"))
        assert [p["type"] for p in stored["parameters"]] == ["date/all-options", "string/="]
        assert sorted(len(d["parameter_mappings"]) for d in stored["dashcards"]) == [0, 2, 2, 2]

        # 2. A public link from the Share page, opened signed out.
        clicked(browser, ".share-links a[href$='/share']")
        landed(browser, "location.pathname.endsWith('/share')")
        clean(browser, "share")
        clicked(browser, "#share-public button.primary")
        link = wait_for(browser, "document.querySelector('#public-link')?.value")
        assert "/public/dashboard/" in link
        browser.send("Network.clearBrowserCookies")
        public = link.replace("http://localhost", server.url)
        browser.send("Page.navigate", url=public)
        wait_for(browser, f"location.href === {public!r}")
        assert browser.wait_settled() == "ready"
        assert "Built in a browser" in browser.text() and "Sign in" not in browser.text()
        clean(browser, "the public link, signed out")
        sign_in(browser, server)

        # 3. A signed embed: the city locked to Oslo, the date editable; the preview draws Oslo's total.
        opened(browser, server.url + path + "/share")
        set_value(browser, f"select[name='rule.{city_slug}']", "locked")
        set_value(browser, f"input[name='value.{city_slug}']", "Oslo")
        set_value(browser, f"select[name='rule.{date_slug}']", "enabled")
        clicked(browser, "#embed-form button[hx-get]")
        frame = "document.querySelector('iframe.embed-preview')?.contentDocument"
        assert wait_for(browser, f"{frame}?.querySelector('.scalar')?.textContent") == "16.5"
        assert wait_for(browser, f"!!{frame}?.querySelector('[data-slug={date_slug}]')")
        assert browser.evaluate(f"!{frame}.querySelector('[data-slug={city_slug}]')")
        browser.evaluate("document.querySelector('input[name=enable_embedding]').click()")
        clicked(browser, "#embed-form button[type=submit]")
        landed(browser, "location.hash === '#embedding'")
        clean(browser, "share, embedding saved")
        saved = ok(admin.get(f"/api/dashboard/{dashboard}"))
        assert saved["enable_embedding"] is True and saved["embedding_params"][city_slug] == "locked"

        # 4. Two addresses subscribed, then sent now into the SMTP server.
        opened(browser, server.url + path + "/subscriptions")
        clicked(browser, "a[href$='?new=email']")
        wait_for(browser, "!!document.querySelector('#sub-emails')")
        clean(browser, "a new subscription")
        subscribe_two_and_send_now(browser)
        assert recipients(inbox, "Built in a browser", 2) == ["ann@example.com", "bob@example.com"]
        clean(browser, "subscriptions")

        # 5. Admin: a new SQLite file added through the form generated from the driver's details.
        corner = sqlite_file(app, "corner.db", SHOP)
        opened(browser, server.url + "/admin/databases")
        clean(browser, "admin: databases")
        clicked(browser, "a[href='/admin/databases/create']")
        landed(browser, "location.pathname === '/admin/databases/create'")
        clean(browser, "admin: add a database")
        set_value(browser, "#engine", "sqlite")
        wait_for(browser, "!!document.getElementById('details-db')")
        typed(browser, "#database-name", "Corner shop")
        typed(browser, "#details-db", corner)
        submitted(browser, "form[hx-post='/admin/databases/create']")
        db_path = landed(browser, r"/^\/admin\/databases\/\d+$/.test(location.pathname) && location.pathname")
        db = int(db_path.rsplit("/", 1)[1])
        clean(browser, "admin: the database")
        clicked(browser, f"button[hx-post='/admin/databases/{db}/sync_schema']")
        wait_for(browser, "document.querySelector('#action-result')?.innerText.includes('Syncing the schema started')")
        wait_for_sync(app)
        tables = {t["name"]: t for t in ok(admin.get(f"/api/database/{db}/metadata"))["tables"]}
        assert set(tables) == {"customers", "orders", "audit_log"}

        # The audit log hidden from people.
        clicked(browser, f"a[href='/admin/datamodel/database/{db}']")
        landed(browser, f"location.pathname === '/admin/datamodel/database/{db}'")
        clean(browser, "admin: the database's tables")
        audit = f"/admin/datamodel/database/{db}/table/{tables['audit_log']['id']}"
        clicked(browser, f"a[href='{audit}']")
        landed(browser, f"location.pathname === '{audit}'")
        clean(browser, "admin: a table's metadata")
        set_value(browser, "#table-visibility", "hidden")
        submitted(browser, f"form[hx-post='{audit}']")
        wait_for(browser, "document.querySelector('#table-result')?.innerText.includes('People no longer see')")
        assert ok(admin.get(f"/api/table/{tables['audit_log']['id']}"))["visibility_type"] == "hidden"

        # Orders' customer: a key to Customers' ID, shown as the customer's name.
        fields = {f["name"]: f["id"]
                  for f in ok(admin.get(f"/api/table/{tables['orders']['id']}/query_metadata"))["fields"]}
        customer_pk = next(f["id"] for f in ok(admin.get(f"/api/table/{tables['customers']['id']}/query_metadata"))
                           ["fields"] if f["name"] == "id")
        orders = f"/admin/datamodel/database/{db}/table/{tables['orders']['id']}"
        field = f"{orders}/field/{fields['customer_id']}"
        opened(browser, server.url + orders)
        clean(browser, "admin: the orders' fields")
        clicked(browser, f"a[href='{field}']")
        landed(browser, f"location.pathname === '{field}'")
        clean(browser, "admin: a field")
        set_value(browser, "#semantic", "type/FK")
        set_value(browser, "#fk-target", str(customer_pk))
        browser.evaluate("window.beforeSave = true")
        submitted(browser, f"form[hx-post='{field}']")
        landed(browser, "!window.beforeSave && !!document.getElementById('display-column')")
        clicked(browser, "input[name=remap][value=external]")
        name_id = browser.evaluate("[...document.querySelectorAll('#display-column option')]"
                                   ".find(o => o.textContent.trim() === 'Name').value")
        set_value(browser, "#display-column", name_id)
        typed(browser, "#remap-name", "Customer")
        submitted(browser, f"form[hx-post='{field}/remap']")
        wait_for(browser, "document.querySelector('#remap-result')?.innerText.includes('the chosen column is shown')")
        clean(browser, "admin: a field remapped")
        dimension = ok(admin.get(f"/api/field/{fields['customer_id']}"))["dimensions"][0]
        assert (dimension["type"], dimension["human_readable_field_id"]) == ("external", int(name_id))

        # A group that may query the corner shop, where everyone else may only look.
        group = ok(admin.post("/api/permissions/group", json={"name": "Analysts"}))["id"]
        graph = ok(admin.get("/api/permissions/graph-v2"))
        ok(admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
            "1": {str(db): {"view-data": "unrestricted", "create-queries": "no"}},
            str(group): {str(db): {"view-data": "unrestricted", "create-queries": "query-builder"}}}}))

        # Someone invited (the invitation arrives by e-mail), put in the group.
        opened(browser, server.url + "/admin/people")
        clean(browser, "admin: people")
        typed(browser, "#invite-first", "Nia")
        typed(browser, "#invite-last", "Nord")
        typed(browser, "#invite-email", "nia@example.com")
        mails = len(inbox.received)
        clicked(browser, "form[hx-post='/admin/people'] button[type=submit]")
        wait_for(browser, "document.querySelector('#invite-result')?.innerText.includes('invited by e-mail')")
        clean(browser, "admin: someone invited")
        invitation = inbox.wait(mails + 1)[mails]
        assert invitation[0] == ["nia@example.com"]
        token = re.search(r"/auth/reset_password/([^\s#]+)", invitation[1].get_body(("plain", "html")).get_content())[1]
        clicked(browser, "#invite-result a")
        person = landed(browser, r"/^\/admin\/people\/\d+$/.test(location.pathname) && location.pathname")
        clean(browser, "admin: a person")
        clicked(browser, f"input[name='group-{group}']")
        clicked(browser, "form[hx-post^='/admin/people/'] button[type=submit]")
        wait_for(browser, "(document.getElementById('person-result').textContent || '').includes('Saved')")
        nia = ok(admin.get(person.replace("/admin/people", "/api/user")))
        assert {m["id"] for m in nia["user_group_memberships"]} == {1, group}

        # She follows the invitation, chooses her password and is signed in; her question runs.
        question = {"dataset_query": {"database": db, "type": "query",
                                      "query": {"source-table": tables["orders"]["id"]}},
                    "display": "table", "visualization_settings": {}}
        adhoc = server.url + "/question/adhoc?q=" + base64.urlsafe_b64encode(
            orjson.dumps(question)).decode().rstrip("=")
        browser.send("Network.clearBrowserCookies")
        opened(browser, server.url + f"/auth/reset_password/{token}")
        clean(browser, "choose a password")
        typed(browser, "#password", NIA_PASSWORD)
        typed(browser, "#password_confirm", NIA_PASSWORD)
        submitted(browser, "form[hx-post='/auth/reset_password']")
        landed(browser, "location.pathname === '/' && document.body.innerText.includes('Nia')")
        opened(browser, adhoc)
        wait_for(browser, "!!document.querySelector('table.result tbody tr')")
        headers = browser.evaluate("[...document.querySelectorAll('table.result th')].map(t => t.innerText.trim())")
        assert any(h.startswith("Customer") for h in headers), headers  # the remapped column
        assert browser.errors() == []
        assert query_status(app, "nia@example.com", NIA_PASSWORD, db, tables["orders"]["id"]) < 300

        # The group's query permission taken away in the grid by the administrator.
        browser.send("Network.clearBrowserCookies")
        sign_in(browser, server)
        opened(browser, server.url + f"/admin/permissions/data/group/{group}")
        assert "Corner shop" in browser.text()
        clean(browser, "admin: the group's data permissions")
        name = json.dumps(["db", group, db, "create-queries", None, None], separators=(",", ":"))
        select = f"select[name={json.dumps(name)}]"
        set_value(browser, select, "no")
        browser.evaluate("window.beforeSave = true")
        clicked(browser, "form.perm-grid button[type=submit]")
        landed(browser, "!window.beforeSave")
        assert browser.evaluate(f"document.querySelector({select!r}).value") == "no"
        clean(browser, "admin: the permissions saved")
        assert ok(admin.get("/api/permissions/graph-v2"))["groups"][str(group)][str(db)]["create-queries"] == "no"

        # Signed in again, she is refused the same question.
        browser.send("Network.clearBrowserCookies")
        sign_in(browser, server, "nia@example.com", NIA_PASSWORD)
        opened(browser, adhoc)
        wait_for(browser, "!document.querySelector('table.result tbody tr') && "
                          "document.body.innerText.includes('You may not ask new questions of this data.')")
        # The refusal is the API's 403, which the browser logs as a failed load: that one is expected.
        assert [e for e in browser.errors() if "403" not in e] == []
        assert query_status(app, "nia@example.com", NIA_PASSWORD, db, tables["orders"]["id"]) == 403
