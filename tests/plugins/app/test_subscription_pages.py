"""A dashboard's subscriptions page (plugins/app/subscriptions.py) through HTTP: the pulse a form makes
(its body exactly), editing it in place, "Send now" delivered to a real SMTP server (aiosmtpd), delete,
unsubscribe, a webhook channel, and the API's refusals shown for someone who may not change another's
subscription."""
from __future__ import annotations

import json
import re
from html import unescape

import pytest

from core.testing import USER_PASSWORD, make_user
from core.testing.app import set_setting
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.plugins.app.test_share_pages import site  # noqa: F401 - the module's app and dashboard
from tests.plugins.subscriptions.support import smtp_inbox

pytestmark = pytest.mark.xdist_group("app-subscription-pages")


@pytest.fixture
def inbox(site):  # noqa: F811
    with smtp_inbox(site.app) as box:
        yield box


@pytest.fixture(autouse=True)
def no_subscriptions_left(site):  # noqa: F811
    yield
    for pulse in subscriptions(site):
        site.admin.put(f"/api/pulse/{pulse['id']}", json={"archived": True})


def subscriptions(site):  # noqa: F811
    return site.admin.get(f"/api/pulse?dashboard_id={site.shop['dashboard']}").json


def form(site, **extra):  # noqa: F811
    """The form of a new e-mail subscription: the admin and two addresses, Mondays at 9, the chart as CSV
    and the total as XLSX."""
    shop = site.shop
    admin_id = site.admin.get("/api/user/current").json["id"]
    return {"channel_type": "email", "user_ids": [str(admin_id)], "emails": "ann@example.com, bob@example.com",
            "schedule_type": "weekly", "schedule_day": "mon", "schedule_hour": "9", "schedule_frame": "first",
            f"attach.{shop['dashcard'][shop['chart']]}": "csv", f"attach.{shop['dashcard'][shop['total']]}": "xlsx",
            "param.p_city": "Oslo", "param.p_amount": "1, 8", "param.p_date": "", **extra}


def test_a_subscription_is_made_as_the_api_takes_it_then_edited_and_deleted(site):  # noqa: F811
    client = sign_in(site.app)
    path = site.shop["path"] + "/subscriptions"
    page = text(client.get(path))
    assert "Nobody is subscribed" in page and f'href="{path}?new=email"' in page
    new = text(client.get(path + "?new=email"))
    assert 'name="user_ids"' in new and 'name="emails"' in new and "Send now" in new
    saved = client.post(path + "/save", json=form(site), headers=HTMX)
    assert saved.status_code == 200 and saved.headers["HX-Redirect"] == path, text(saved)
    [pulse] = subscriptions(site)
    shop, admin_id = site.shop, site.admin.get("/api/user/current").json["id"]
    assert pulse["name"] == "Shop overview" and pulse["dashboard_id"] == shop["dashboard"]
    assert pulse["skip_if_empty"] is False
    # Every query card of the dashboard, in reading order, with its file.
    assert [{k: c[k] for k in ("id", "dashboard_card_id", "include_csv", "include_xls")} for c in pulse["cards"]] == [
        {"id": shop["chart"], "dashboard_card_id": shop["dashcard"][shop["chart"]], "include_csv": True, "include_xls": False},
        {"id": shop["total"], "dashboard_card_id": shop["dashcard"][shop["total"]], "include_csv": False, "include_xls": True},
        {"id": shop["listing"], "dashboard_card_id": shop["dashcard"][shop["listing"]], "include_csv": False, "include_xls": False},
        {"id": shop["people"], "dashboard_card_id": shop["dashcard"][shop["people"]], "include_csv": False, "include_xls": False}]
    [channel] = pulse["channels"]
    assert {k: channel[k] for k in ("channel_type", "enabled", "schedule_type", "schedule_hour", "schedule_day",
                                    "schedule_frame")} == {
        "channel_type": "email", "enabled": True, "schedule_type": "weekly", "schedule_hour": 9,
        "schedule_day": "mon", "schedule_frame": None}
    assert sorted((r.get("id") or r["email"] for r in channel["recipients"]), key=str) == sorted(
        [admin_id, "ann@example.com", "bob@example.com"], key=str)
    # The subscription's own filter values, as the dashboard's parameters with a value.
    assert [(p["id"], p["slug"], p["type"], p["value"]) for p in pulse["parameters"]] == [
        ("p_city", "city", "string/=", ["Oslo"]), ("p_amount", "amount", "number/between", [1, 8])]
    listing = text(client.get(path))
    assert "Weekly on Monday at 9:00 AM" in listing and "ann@example.com" in listing

    # Editing changes the same channel (its id kept): monthly, the last Friday, at 18:00; no files.
    edit = text(client.get(f"{path}?edit={pulse['id']}"))
    assert unescape(re.search(r'name="emails"[^>]*>([^<]*)<', edit).group(1)) == "ann@example.com, bob@example.com"
    assert 'name="param.p_city" value="Oslo"' in edit and 'name="param.p_amount" value="1, 8"' in edit
    changed = form(site, id=str(pulse["id"]), channel_row_id=str(channel["id"]), schedule_type="monthly",
                   schedule_frame="last", schedule_day="fri", schedule_hour="18", emails="ann@example.com")
    changed = {k: v for k, v in changed.items() if not k.startswith("attach.")}
    assert client.post(path + "/save", json=changed, headers=HTMX).status_code == 200
    [pulse] = subscriptions(site)
    [after] = pulse["channels"]
    assert after["id"] == channel["id"]
    assert (after["schedule_type"], after["schedule_frame"], after["schedule_day"], after["schedule_hour"]) == (
        "monthly", "last", "fri", 18)
    assert sorted(r.get("email") for r in after["recipients"] if not r.get("id")) == ["ann@example.com"]
    assert not any(c["include_csv"] or c["include_xls"] for c in pulse["cards"])
    assert [p["id"] for p in pulse["parameters"]] == ["p_city", "p_amount"]
    assert "Monthly on the last Friday of the month at 6:00 PM" in text(client.get(path))

    deleted = client.post(f"{path}/{pulse['id']}/delete", json={}, headers=HTMX)
    assert deleted.status_code == 200 and deleted.headers["HX-Redirect"] == path
    assert subscriptions(site) == []
    assert "Nobody is subscribed" in text(client.get(path))


def test_bad_input_is_the_apis_refusal(site):  # noqa: F811
    client = sign_in(site.app)
    path = site.shop["path"] + "/subscriptions"
    weekly_without_day = client.post(path + "/save", json=form(site, schedule_day=""), headers=HTMX)
    assert weekly_without_day.status_code == 400 and 'class="form-error"' in text(weekly_without_day)
    nobody = client.post(path + "/send", json=form(site, user_ids=[], emails="not an address"), headers=HTMX)
    assert nobody.status_code == 400 and 'class="form-error"' in text(nobody)
    assert subscriptions(site) == []


def test_send_now_delivers_to_each_address(site, inbox):  # noqa: F811
    client = sign_in(site.app)
    body = form(site, user_ids=[], emails="ann@example.com, bob@example.com")
    sent = client.post(site.shop["path"] + "/subscriptions/send", json=body, headers=HTMX)
    assert sent.status_code == 200 and "Sent." in text(sent), text(sent)
    received = inbox.wait(2)
    assert sorted(to for tos, _ in received for to in tos) == ["ann@example.com", "bob@example.com"]
    message = received[0][1]
    assert "Shop overview" in message["Subject"]
    names = sorted(part.get_filename() for part in message.walk() if part.get_filename())
    assert any(n.endswith(".csv") for n in names) and any(n.endswith(".xlsx") for n in names), names
    assert subscriptions(site) == []  # sending now saves nothing


def test_a_recipient_unsubscribes_and_may_not_change_anothers(site):  # noqa: F811
    user_id = make_user(site.app, email="reader@example.com").get("/api/user/current").json["id"]
    admin = sign_in(site.app)
    path = site.shop["path"] + "/subscriptions"
    admin.post(path + "/save", json=form(site, user_ids=[str(user_id)], emails=""), headers=HTMX)
    [pulse] = subscriptions(site)
    reader = sign_in(site.app, "reader@example.com", USER_PASSWORD)
    page = text(reader.get(path))
    assert f"{path}/{pulse['id']}/unsubscribe" in page
    refused = reader.post(f"{path}/{pulse['id']}/delete", json={}, headers=HTMX)
    assert refused.status_code == 403 and 'class="form-error"' in text(refused)
    edit = reader.post(path + "/save", json=form(site, id=str(pulse["id"])), headers=HTMX)
    assert edit.status_code == 403
    gone = reader.post(f"{path}/{pulse['id']}/unsubscribe", json={}, headers=HTMX)
    assert gone.status_code == 200 and gone.headers["HX-Redirect"] == path
    [after] = subscriptions(site)
    assert [r for c in after["channels"] for r in c["recipients"]] == [] or all(
        r.get("id") != user_id for c in after["channels"] for r in c["recipients"])
    assert f"{path}/{pulse['id']}/unsubscribe" not in text(reader.get(path))
    admin.post(f"{path}/{pulse['id']}/delete", json={}, headers=HTMX)


def test_a_webhook_subscription_is_offered_saved_and_sent(site, http_server):  # noqa: F811
    set_setting(site.app, "http-actions-allowed-cidrs", "127.0.0.1/32")
    hook = site.admin.post("/api/channel", json={"name": "Team hook", "type": "channel/http", "details": {
        "url": f"{http_server.url}/hook", "auth-method": "none", "fe-form-type": "none"}}).json
    client = sign_in(site.app)
    path = site.shop["path"] + "/subscriptions"
    assert f'href="{path}?new=http"' in text(client.get(path))
    new = text(client.get(path + "?new=http"))
    assert f'<option value="{hook["id"]}">Team hook</option>' in new and 'name="emails"' not in new
    body = {"channel_type": "http", "channel_id": str(hook["id"]), "schedule_type": "hourly"}
    sent = client.post(path + "/send", json=body, headers=HTMX)
    assert sent.status_code == 200, text(sent)
    [request] = [r for r in http_server.requests if r.path == "/hook"]
    assert json.loads(request.body)["type"] == "dashboard_subscription"
    assert client.post(path + "/save", json=body, headers=HTMX).status_code == 200
    [pulse] = subscriptions(site)
    [channel] = pulse["channels"]
    assert (channel["channel_type"], channel["channel_id"], channel["schedule_type"]) == ("http", hook["id"], "hourly")
    assert "Webhook" in text(client.get(path)) and "Hourly" in text(client.get(path))
    site.admin.put(f"/api/channel/{hook['id']}", json={"active": False})
