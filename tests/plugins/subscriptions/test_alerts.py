"""/api/alert on the pulse tables, sent by the scheduler's clock to a real SMTP server (aiosmtpd): a
"has results" alert sends once per occurrence and nothing when the question is empty; a goal alert
fires only when the last value is past the goal in the chosen direction; first-only sends once and
archives; the CRUD and access rules of Metabase's alert API; pulses do not list alerts."""
from __future__ import annotations

from core.schedule.runner import run_due

from .support import add_card, daily, parts
from .test_send import BAR, SQL, at

EMPTY_SQL = "SELECT first_name, age FROM people WHERE age > 1000"


def hourly(recipients) -> dict:
    return {"channel_type": "email", "enabled": True, "schedule_type": "hourly", "recipients": list(recipients)}


def new_alert(client, card: dict, condition: str = "rows", recipients=({"email": "ops@example.com"},), **extra):
    return client.post("/api/alert", json={"card": {"id": card["id"], "include_csv": False, "include_xls": False},
                                           "alert_condition": condition, "alert_first_only": False,
                                           "channels": [hourly(recipients)], **extra})


def test_rows_alert_sends_once_per_occurrence_and_not_when_empty(app, admin, warehouse, inbox):
    rows = add_card(admin, warehouse, "Ages", display="bar", sql=SQL, visualization_settings=BAR)
    empty = add_card(admin, warehouse, "Nobody old", sql=EMPTY_SQL)
    created = new_alert(admin, rows)
    assert created.status_code == 200, created.json
    alert = created.json
    assert (alert["alert_condition"], alert["alert_first_only"], alert["card"]["id"]) == ("rows", False, rows["id"])
    assert alert["card"]["include_csv"] is True and "cards" not in alert and alert["can_write"] is True
    assert new_alert(admin, empty).status_code == 200
    assert run_due(app, at(26, 5, 30)) == []
    assert len(run_due(app, at(26, 6, 0))) == 2  # both jobs ran; only the card with rows sent
    assert run_due(app, at(26, 6, 1)) == []
    [(to, message)] = inbox.wait(1)
    assert to == ["ops@example.com"] and message["Subject"] == "Alert: Ages has results"
    got = parts(message)
    assert "Alert: Ages has results" in got["html"][0] and len(got["images"]) == 1
    assert [name for name, _ in got["files"]] == ["Ages.csv"]
    assert len(run_due(app, at(26, 7, 0))) == 2
    assert len(inbox.wait(2)) == 2 and inbox.received[1][1]["Subject"] == "Alert: Ages has results"
    # alerts are not pulses in /api/pulse's list, and are in /api/alert's
    assert admin.get("/api/pulse").json == []
    assert len(admin.get("/api/alert").json) == 2
    assert [a["id"] for a in admin.get(f"/api/alert/question/{rows['id']}").json] == [alert["id"]]


def test_goal_alert_fires_only_past_the_goal_in_its_direction(app, admin, warehouse, inbox):
    # the ages are 36, 41, 85: the last value of the main series (age) is 85
    def goal_card(name, goal):
        return add_card(admin, warehouse, name, display="line", sql=SQL,
                        visualization_settings={**BAR, "graph.goal_value": goal, "graph.show_goal": True})

    above_hit, above_miss = goal_card("Above 80", 80), goal_card("Above 90", 90)
    below_hit, below_miss = goal_card("Below 90", 90), goal_card("Below 80", 80)
    for card, above in ((above_hit, True), (above_miss, True), (below_hit, False), (below_miss, False)):
        assert new_alert(admin, card, "goal", alert_above_goal=above).status_code == 200
    run_due(app, at(26, 5, 30))
    assert len(run_due(app, at(26, 6, 0))) == 4
    inbox.wait(2)
    subjects = sorted(message["Subject"] for _, message in inbox.wait(3, timeout=1))
    assert subjects == ["Alert: Above 80 has reached its goal", "Alert: Below 90 has gone below its goal"]


def test_first_only_sends_once_and_archives(app, admin, warehouse, inbox):
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    alert = new_alert(admin, card, alert_first_only=True).json
    run_due(app, at(26, 5, 30))
    assert len(run_due(app, at(26, 6, 0))) == 1
    assert run_due(app, at(26, 7, 0)) == [] and run_due(app, at(26, 8, 0)) == []
    assert len(inbox.wait(2, timeout=1)) == 1
    assert admin.get(f"/api/alert/{alert['id']}").json["archived"] is True
    assert [a["id"] for a in admin.get("/api/alert", query_string={"archived": "true"}).json] == [alert["id"]]


def test_access_update_and_unsubscribe(app, admin, user, warehouse):
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    me = user.get("/api/user/current").json
    alert = new_alert(admin, card, recipients=[{"id": me["id"]}]).json
    # a recipient sees it (cannot write it); a stranger's alert list is empty
    mine = user.get("/api/alert").json
    assert [a["id"] for a in mine] == [alert["id"]] and mine[0]["can_write"] is False
    assert user.get(f"/api/alert/{alert['id']}").status_code == 200
    assert user.put(f"/api/alert/{alert['id']}", json={"alert_condition": "goal"}).status_code == 403
    assert admin.get("/api/alert", query_string={"user_id": me["id"]}).json[0]["id"] == alert["id"]
    # the admin changes the condition and the schedule
    changed = admin.put(f"/api/alert/{alert['id']}", json={
        "alert_condition": "goal", "alert_above_goal": False,
        "channels": [daily(hour=9, recipients=[{"id": me["id"]}])]})
    assert changed.status_code == 200, changed.json
    assert (changed.json["alert_condition"], changed.json["alert_above_goal"]) == ("goal", False)
    assert changed.json["channels"][0]["schedule_type"] == "daily"
    # the recipient leaves; then it is no longer theirs to read, and leaving twice is a 404
    assert user.delete(f"/api/alert/{alert['id']}/subscription").status_code == 204
    assert user.get("/api/alert").json == []
    assert user.delete(f"/api/alert/{alert['id']}/subscription").status_code == 404
    assert user.get(f"/api/alert/{alert['id']}").status_code == 403
    # channels left without recipients archive it
    emptied = admin.put(f"/api/alert/{alert['id']}", json={"channels": [hourly([])]})
    assert emptied.status_code == 200 and emptied.json["archived"] is True
    # bad input is a 400; a pulse id is not an alert
    assert admin.post("/api/alert", json={"card": {"id": card["id"]}, "alert_condition": "sometimes",
                                          "alert_first_only": False, "channels": [hourly([])]}).status_code == 400
    pulse = admin.post("/api/pulse", json={"name": "P", "cards": [{"id": card["id"]}], "channels": [hourly([])]})
    assert admin.get(f"/api/alert/{pulse.json['id']}").status_code == 404


def test_user_alert_needs_a_readable_card(app, admin, user, warehouse):
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    own = new_alert(user, card, recipients=[])
    assert own.status_code == 200, own.json
    assert own.json["creator_id"] == user.get("/api/user/current").json["id"]
    assert new_alert(user, {"id": 99999}).status_code == 404


def test_metabase_sync_counts_alerts_with_an_api_key(app, admin, warehouse):
    """metabase-sync authenticates with an administrators' API key and counts GET /api/alert
    (/work/shared/compat/clients.md, section 4)."""
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    assert new_alert(admin, card).status_code == 200
    key = admin.post("/api/api-key", json={"name": "metabase-sync", "group_id": 2})
    assert key.status_code == 200, key.json
    client = app.test_client()
    for query in ({}, {"archived": "false"}):
        listed = client.get("/api/alert", query_string=query, headers={"X-API-Key": key.json["unmasked_key"]})
        assert listed.status_code == 200 and len(listed.json) == 1
