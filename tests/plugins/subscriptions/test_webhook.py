"""Webhook destinations (/api/channel) and pulses sent to them, against a real HTTP server on loopback
(core.testing's HttpSink) reached only through the outbound guard's allow-list: CRUD and validation,
masked secrets, POST /api/channel/test, a scheduled send posting the cards' JSON, refused internal
destinations (nothing sent), and form_input reporting webhooks configured."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from core.schedule.runner import run_due
from core.testing.app import set_setting
from tests.plugins.dashboards.layout_helpers import dashcard

from .support import add_card, card_ref

LOOPBACK = "127.0.0.1/32"
SQL = "SELECT first_name, age FROM people ORDER BY id"


def at(day: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=dt.timezone.utc)


def details(url: str, **extra) -> dict:
    return {"url": url, "auth-method": "none", "fe-form-type": "none", **extra}


def new_channel(admin, url: str, name: str = "Hook", **extra):
    return admin.post("/api/channel", json={"name": name, "type": "channel/http", "details": details(url, **extra),
                                            "description": "Our webhook"})


def hourly_http(channel_id: int) -> dict:
    return {"channel_type": "http", "channel_id": channel_id, "enabled": True, "schedule_type": "hourly",
            "recipients": []}


@pytest.fixture
def allowed(app):
    set_setting(app, "http-actions-allowed-cidrs", LOOPBACK)


def test_channel_crud_masks_secrets_and_is_superuser_only(app, admin, user, http_server, allowed):
    secret = {"Authorization": "Bearer s3cret"}
    created = new_channel(admin, f"{http_server.url}/hook", **{"auth-method": "header", "auth-info": secret})
    assert created.status_code == 200, created.json
    hook = created.json
    assert (hook["name"], hook["type"], hook["active"], hook["description"]) == ("Hook", "channel/http", True, "Our webhook")
    assert hook["details"]["auth-info"] == {"Authorization": "**MetabasePass**"}
    assert "s3cret" not in json.dumps(admin.get(f"/api/channel/{hook['id']}").json)
    assert http_server.requests == []  # saving checks the destination, it sends nothing
    # a plain user lists and reads destinations without their details, and may not write them
    assert [c["id"] for c in user.get("/api/channel").json] == [hook["id"]]
    assert "details" not in user.get(f"/api/channel/{hook['id']}").json
    assert user.post("/api/channel", json={"name": "X", "type": "channel/http",
                                           "details": details(http_server.url)}).status_code == 403
    assert user.put(f"/api/channel/{hook['id']}", json={"name": "Mine"}).status_code == 403
    assert user.post("/api/channel/test", json={"type": "channel/http",
                                                "details": details(http_server.url)}).status_code == 403
    # the masked value sent back keeps the stored secret; a new URL is checked again
    changed = admin.put(f"/api/channel/{hook['id']}", json={"name": "Renamed", "details": {
        **hook["details"], "url": f"{http_server.url}/other"}})
    assert changed.status_code == 200, changed.json
    assert changed.json["name"] == "Renamed" and changed.json["details"]["url"].endswith("/other")
    assert admin.post("/api/channel/test", json={"type": "channel/http", "details": {
        **changed.json["details"], "auth-info": secret}}).json == {"ok": True}
    [test_post] = http_server.requests
    assert test_post.path == "/other" and test_post.header("Authorization") == "Bearer s3cret"
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        from plugins.subscriptions.models import Channel

        assert session.get(Channel, hook["id"]).details["auth-info"] == secret  # kept, not the mask
    # deactivated: left out of the list unless include_inactive
    assert admin.put(f"/api/channel/{hook['id']}", json={"active": False}).json["active"] is False
    assert admin.get("/api/channel").json == []
    assert [c["id"] for c in admin.get("/api/channel?include_inactive=true").json] == [hook["id"]]
    assert admin.get("/api/channel/999999").status_code == 404


def test_channel_validation(app, admin, http_server, allowed):
    assert new_channel(admin, http_server.url).status_code == 200
    duplicate = new_channel(admin, http_server.url)
    assert duplicate.status_code == 409 and duplicate.json["errors"] == {"name": "Channel with that name already exists"}
    for body in ({"name": "A", "type": "http", "details": details(http_server.url)},
                 {"name": "A", "type": "channel/http", "details": details("ftp://example.com/x")},
                 {"name": "A", "type": "channel/http", "details": details(http_server.url, **{"auth-method": "magic"})},
                 {"name": "A", "type": "channel/http", "details": details(http_server.url, **{"auth-info": {"k": 1}})},
                 {"name": "A", "type": "channel/http", "details": {"auth-method": "none"}},
                 {"name": " ", "type": "channel/http", "details": details(http_server.url)},
                 {"name": "A", "type": "channel/http", "details": "x"},
                 {"name": "A", "type": "channel/http", "details": details("http://[::1/x")},
                 {"name": "A", "type": "channel/http", "details": details(
                     http_server.url, **{"auth-method": "header", "auth-info": {"Bad Name": "v"}})},
                 {"name": "A", "type": "channel/http", "details": details(
                     http_server.url, **{"auth-method": "header", "auth-info": {"X-A": "v\r\nX-B: w"}})}):
        response = admin.post("/api/channel", json=body)
        assert response.status_code == 400, (body, response.json)
    assert http_server.requests == []


def test_channel_test_reports_a_failing_destination(app, admin, http_server, allowed):
    http_server.route("/broken", status=500, body="boom")
    failed = admin.post("/api/channel/test", json={"type": "channel/http", "details": details(f"{http_server.url}/broken")})
    assert failed.status_code == 400 and "500" in failed.json["message"] and "boom" in failed.json["message"]
    sent = admin.post("/api/channel/test", json={"type": "channel/http", "details": details(
        f"{http_server.url}/ok?x=1", **{"auth-method": "query-param", "auth-info": {"token": "t"}})})
    assert sent.status_code == 200, sent.json
    received = http_server.requests[-1]
    assert received.target == "/ok?x=1&token=t" and received.header("Content-Type") == "application/json"
    payload = json.loads(received.body)
    assert payload["type"] == "alert" and payload["data"]["raw_data"]["cols"] == ["name", "count"]


def test_subscription_posts_the_card_json_when_the_scheduler_runs(app, admin, warehouse, http_server, allowed):
    hook = new_channel(admin, f"{http_server.url}/hook", **{"auth-method": "request-body",
                                                              "auth-info": {"secret": "body-secret"}}).json
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    pulse = admin.post("/api/pulse", json={"name": "Ages hook", "cards": [card_ref(card)],
                                           "channels": [hourly_http(hook["id"])]})
    assert pulse.status_code == 200, pulse.json
    [channel] = pulse.json["channels"]
    assert (channel["channel_type"], channel["channel_id"]) == ("http", hook["id"])
    run_due(app, at(26, 10, 30))
    assert http_server.requests == []
    assert len(run_due(app, at(26, 11, 0))) == 1
    [received] = http_server.requests
    assert (received.method, received.path) == ("POST", "/hook")
    payload = json.loads(received.body)
    assert payload["type"] == "alert" and payload["alert_id"] == pulse.json["id"]
    assert payload["secret"] == "body-secret"
    data = payload["data"]
    assert (data["type"], data["question_id"], data["question_name"]) == ("question", card["id"], "Ages")
    assert [c.lower() for c in data["raw_data"]["cols"]] == ["first_name", "age"]
    assert data["raw_data"]["rows"] == [["Ada", 36], ["Alan", 41], ["Grace", 85]]


def test_dashboard_subscription_posts_one_payload_with_every_card(app, admin, warehouse, http_server, allowed):
    hook = new_channel(admin, f"{http_server.url}/dash").json
    bar = add_card(admin, warehouse, "Ages", display="bar", sql=SQL,
                   visualization_settings={"graph.dimensions": ["first_name"], "graph.metrics": ["age"]})
    table = add_card(admin, warehouse, "People")
    dash = admin.post("/api/dashboard", json={"name": "Team KPIs"}).json
    layout = admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [dashcard(-1, bar["id"]),
                                                                             dashcard(-2, table["id"])]}).json
    ids = {d["card_id"]: d["id"] for d in layout["dashcards"]}
    created = admin.post("/api/pulse", json={"name": "Team KPIs", "dashboard_id": dash["id"], "channels": [
        hourly_http(hook["id"])], "cards": [card_ref(c, dashboard_card_id=ids[c["id"]]) for c in (bar, table)]})
    assert created.status_code == 200, created.json
    run_due(app, at(26, 10, 30))
    assert len(run_due(app, at(26, 11, 0))) == 1
    [received] = http_server.requests
    payload = json.loads(received.body)
    assert payload["type"] == "dashboard_subscription" and payload["data"]["dashboard_name"] == "Team KPIs"
    cards = payload["data"]["cards"]
    assert [c["question_id"] for c in cards] == [bar["id"], table["id"]]
    assert cards[0]["visualization"].startswith("data:image/png;base64,") and cards[1]["visualization"] is None


def test_http_channel_needs_an_active_destination(app, admin, warehouse, http_server, allowed):
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    for channel in (hourly_http(424242), {**hourly_http(1), "channel_id": None}):
        response = admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)], "channels": [channel]})
        assert response.status_code == 400, response.json
    hook = new_channel(admin, http_server.url).json
    admin.put(f"/api/channel/{hook['id']}", json={"active": False})
    response = admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)], "channels": [hourly_http(hook["id"])]})
    assert response.status_code == 400


def test_form_input_says_webhooks_are_configured(app, admin, http_server, allowed):
    assert admin.get("/api/pulse/form_input").json["channels"]["http"]["configured"] is False
    hook = new_channel(admin, http_server.url).json
    http_entry = admin.get("/api/pulse/form_input").json["channels"]["http"]
    assert http_entry["configured"] is True and http_entry["allows_recipients"] is False
    admin.put(f"/api/channel/{hook['id']}", json={"active": False})
    assert admin.get("/api/pulse/form_input").json["channels"]["http"]["configured"] is False


@pytest.mark.security_row(10)
@pytest.mark.parametrize("host", ["127.0.0.1", "169.254.169.254"])
def test_internal_destinations_are_refused_without_the_allow_list(app, admin, warehouse, http_server, host):
    url = http_server.url if host == "127.0.0.1" else "http://169.254.169.254/latest/meta-data/"
    refused = new_channel(admin, url)
    assert refused.status_code == 400 and "not allowed" in refused.json  # the guard's bare message
    tested = admin.post("/api/channel/test", json={"type": "channel/http", "details": details(url)})
    assert tested.status_code == 400 and "not allowed" in tested.json["message"]
    assert admin.get("/api/channel?include_inactive=true").json == []
    # saved while allowed, the allow-list later emptied: the scheduled send is refused and recorded
    set_setting(app, "http-actions-allowed-cidrs", "127.0.0.1/32,169.254.169.254/32")
    hook = new_channel(admin, url)
    assert hook.status_code == 200, hook.json
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    pulse = admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)],
                                           "channels": [hourly_http(hook.json["id"])]})
    assert pulse.status_code == 200, pulse.json
    set_setting(app, "http-actions-allowed-cidrs", "")
    run_due(app, at(26, 10, 30))
    run_due(app, at(26, 11, 0))
    assert http_server.requests == []
    from sqlalchemy import select

    from core.appdb.models import TaskHistory

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        [run] = session.scalars(select(TaskHistory).where(TaskHistory.task == "send-pulse")).all()
        assert run.status == "failed" and "not allowed" in json.dumps(run.task_details)


def test_pulse_test_endpoint_posts_to_the_webhook(app, admin, warehouse, http_server, allowed):
    hook = new_channel(admin, f"{http_server.url}/now").json
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    sent = admin.post("/api/pulse/test", json={"name": "Try", "cards": [card_ref(card)],
                                               "channels": [hourly_http(hook["id"])]})
    assert sent.status_code == 200 and sent.json == {"ok": True}
    [received] = http_server.requests
    payload = json.loads(received.body)
    assert payload["type"] == "alert" and payload["data"]["question_id"] == card["id"]
    http_server.route("/now", status=503, body="down")
    failed = admin.post("/api/pulse/test", json={"name": "Try", "cards": [card_ref(card)],
                                                 "channels": [hourly_http(hook["id"])]})
    assert failed.status_code == 400 and "503" in json.dumps(failed.json)
