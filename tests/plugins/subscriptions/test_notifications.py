"""/api/notification over the pulse tables: a card notification with a webhook handler posts to a real
HTTP server on loopback through the outbound guard when its cron fires; send_once sends exactly once;
recipients of type user, group and raw address by e-mail; send now and send unsaved; alerts, pulses
and notifications are views of the same stored rows; filters, access and unsubscribe."""
from __future__ import annotations

import json

from core.schedule.runner import run_due
from core.testing.app import set_setting

from .support import add_card, card_ref
from .test_send import SQL, at
from .test_webhook import LOOPBACK, new_channel

HOURLY = "0 0 * * * ? *"
EMPTY_SQL = "SELECT first_name, age FROM people WHERE age > 1000"


def card_notification(card_id: int, handlers: list, condition: str = "has_result", send_once: bool = False,
                      cron: str = HOURLY) -> dict:
    return {"payload_type": "notification/card",
            "payload": {"card_id": card_id, "send_condition": condition, "send_once": send_once},
            "handlers": handlers, "subscriptions": [{"type": "notification-subscription/cron", "cron_schedule": cron}]}


def email_handler(*recipients) -> dict:
    return {"channel_type": "channel/email", "recipients": list(recipients)}


def raw(address: str) -> dict:
    return {"type": "notification-recipient/raw-value", "details": {"value": address}}


def test_webhook_handler_posts_through_the_guard(app, admin, warehouse, http_server):
    set_setting(app, "http-actions-allowed-cidrs", LOOPBACK)
    hook = new_channel(admin, f"{http_server.url}/hook").json
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    created = admin.post("/api/notification", json=card_notification(
        card["id"], [{"channel_type": "channel/http", "channel_id": hook["id"]}]))
    assert created.status_code == 200, created.json
    body = created.json
    assert (body["payload_type"], body["active"], body["payload"]["card_id"]) == ("notification/card", True, card["id"])
    assert body["subscriptions"][0]["cron_schedule"] == HOURLY
    assert body["handlers"][0]["channel_type"] == "channel/http" and body["handlers"][0]["channel_id"] == hook["id"]
    assert http_server.requests == []
    run_due(app, at(26, 10, 30))
    assert len(run_due(app, at(26, 11, 0))) == 1
    [received] = http_server.requests
    payload = json.loads(received.body)
    assert received.path == "/hook" and payload["type"] == "alert" and payload["alert_id"] == body["id"]
    assert payload["data"]["raw_data"]["rows"] == [["Ada", 36], ["Alan", 41], ["Grace", 85]]
    # the same row is an alert: /api/alert shows it, with its webhook channel
    alert = admin.get(f"/api/alert/{body['id']}").json
    assert alert["alert_condition"] == "rows" and alert["channels"][0]["channel_type"] == "http"
    # without the allow-list the guard refuses the loopback destination: the run fails, nothing is posted
    set_setting(app, "http-actions-allowed-cidrs", "")
    run_due(app, at(26, 12, 0))
    assert len(http_server.requests) == 1


def test_send_once_and_recipient_kinds(app, admin, user, warehouse, inbox):
    me = user.get("/api/user/current").json
    group = admin.post("/api/permissions/group", json={"name": "Ops"}).json
    assert admin.post("/api/permissions/membership", json={"group_id": group["id"], "user_id": me["id"]}).status_code == 200
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    created = admin.post("/api/notification", json=card_notification(card["id"], [email_handler(
        {"type": "notification-recipient/group", "permissions_group_id": group["id"]}, raw("ops@example.com"))],
        send_once=True))
    assert created.status_code == 200, created.json
    kinds = sorted(r["type"] for r in created.json["handlers"][0]["recipients"])
    assert kinds == ["notification-recipient/group", "notification-recipient/raw-value"]
    run_due(app, at(26, 10, 30))
    assert len(run_due(app, at(26, 11, 0))) == 1
    assert run_due(app, at(26, 12, 0)) == [] and run_due(app, at(26, 13, 0)) == []
    received = inbox.wait(3, timeout=2)
    assert sorted(to[0] for to, _ in received) == sorted([me["email"], "ops@example.com"])
    assert all(m["Subject"] == "Alert: Ages has results" for _, m in received)
    notification = admin.get(f"/api/notification/{created.json['id']}").json
    assert notification["active"] is False and notification["payload"]["send_once"] is True
    assert admin.get("/api/notification").json == []
    assert [n["id"] for n in admin.get("/api/notification", query_string={"include_inactive": "true"}).json] == [
        created.json["id"]]


def test_views_of_one_store_filters_access_and_sends(app, admin, user, warehouse, inbox):
    me = user.get("/api/user/current").json
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    empty = add_card(admin, warehouse, "Nobody", sql=EMPTY_SQL)
    # an alert made through /api/alert is a card notification; a dashboard subscription a dashboard one
    alert = admin.post("/api/alert", json={"card": {"id": card["id"]}, "alert_condition": "goal",
                                           "alert_above_goal": False, "alert_first_only": False, "channels": [
        {"channel_type": "email", "schedule_type": "daily", "schedule_hour": 9,
         "recipients": [{"id": me["id"]}]}]}).json
    dash = admin.post("/api/dashboard", json={"name": "Team"}).json
    pulse = admin.post("/api/pulse", json={"name": "Team", "dashboard_id": dash["id"], "cards": [card_ref(card)],
                                           "channels": [{"channel_type": "email", "schedule_type": "hourly",
                                                         "recipients": [{"email": "a@example.com"}]}]}).json
    listed = {n["id"]: n for n in admin.get("/api/notification").json}
    assert listed[alert["id"]]["payload"]["send_condition"] == "goal_below"
    assert listed[alert["id"]]["subscriptions"][0]["cron_schedule"] == "0 0 9 * * ? *"
    assert listed[alert["id"]]["handlers"][0]["recipients"][0]["user_id"] == me["id"]
    assert listed[pulse["id"]]["payload_type"] == "notification/dashboard"
    assert listed[pulse["id"]]["payload"]["dashboard_id"] == dash["id"]
    by_type = admin.get("/api/notification", query_string={"payload_type": "notification/card"}).json
    assert [n["id"] for n in by_type] == [alert["id"]]
    assert [n["id"] for n in admin.get("/api/notification", query_string={"recipient_id": me["id"]}).json] == [alert["id"]]
    assert [n["id"] for n in admin.get("/api/notification", query_string={"card_id": card["id"]}).json] == [alert["id"]]
    # the recipient reads it, may not change it; the creator-or-recipient filter finds it
    assert [n["id"] for n in user.get("/api/notification").json] == [alert["id"]]
    body = {k: listed[alert["id"]][k] for k in ("payload_type", "payload", "handlers", "subscriptions")}
    assert user.put(f"/api/notification/{alert['id']}", json=body).status_code == 403
    # a notification made here, changed here, is an alert there
    made = admin.post("/api/notification", json=card_notification(empty["id"], [email_handler(raw("b@example.com"))],
                                                                  cron="0 30 8 * * ? *")).json
    changed = admin.put(f"/api/notification/{made['id']}", json={
        **card_notification(card["id"], [email_handler(raw("b@example.com"))], "goal_above"), "active": True})
    assert changed.status_code == 200, changed.json
    as_alert = admin.get(f"/api/alert/{made['id']}").json
    assert (as_alert["alert_condition"], as_alert["alert_above_goal"], as_alert["card"]["id"]) == ("goal", True, card["id"])
    assert as_alert["channels"][0]["schedule_type"] == "hourly"
    # send now: a has-result notification on the empty card sends nothing, on the card with rows sends
    quiet = admin.post("/api/notification", json=card_notification(empty["id"], [email_handler(raw("c@example.com"))])).json
    assert admin.post(f"/api/notification/{quiet['id']}/send", json={}).status_code == 204
    loud = admin.post("/api/notification", json=card_notification(card["id"], [email_handler(raw("d@example.com"))])).json
    assert admin.post(f"/api/notification/{loud['id']}/send", json={}).status_code == 204
    assert admin.post("/api/notification/send", json=card_notification(
        card["id"], [email_handler(raw("e@example.com"))])).status_code == 204
    received = inbox.wait(2, timeout=2)
    assert sorted(to[0] for to, _ in received) == ["d@example.com", "e@example.com"]
    # unsubscribe; bad input is a 400
    assert user.post(f"/api/notification/{alert['id']}/unsubscribe").status_code == 204
    assert user.get("/api/notification").json == []
    assert user.post(f"/api/notification/{alert['id']}/unsubscribe").status_code == 404
    bad = card_notification(card["id"], [email_handler(raw("x@example.com"))], cron="not a cron")
    assert admin.post("/api/notification", json=bad).status_code == 400
    assert admin.post("/api/notification", json=card_notification(card["id"], [email_handler(
        {"type": "notification-recipient/raw-value", "details": {"value": "nope"}})])).status_code == 400
    assert admin.get("/api/notification/999999").status_code == 404
