"""/api/pulse: create, read, list and update pulses and dashboard subscriptions, Metabase's validation
texts and channel normalisation, form_input, unsubscribe."""
from __future__ import annotations

import pytest

from .support import add_card, card_ref, daily


def test_create_read_normalises_channels(admin, user, warehouse):
    card = add_card(admin, warehouse, "People")
    me = admin.get("/api/user/current").json
    created = admin.post("/api/pulse", json={
        "name": "Morning", "cards": [card_ref(card, include_csv=True)],
        "channels": [{"channel_type": "email", "enabled": True, "schedule_type": "weekly", "schedule_hour": 7,
                      "schedule_day": "tue", "schedule_frame": "first",
                      "recipients": [{"id": me["id"]}, {"email": "outside@example.org"}]}]})
    assert created.status_code == 200, created.json
    pulse = created.json
    assert pulse["name"] == "Morning" and pulse["creator_id"] == me["id"] and pulse["skip_if_empty"] is False
    assert pulse["dashboard_id"] is None and pulse["parameters"] == [] and pulse["archived"] is False
    assert pulse["creator"]["email"] == me["email"] and pulse["can_write"] is True
    assert [c["id"] for c in pulse["cards"]] == [card["id"]] and pulse["cards"][0]["include_csv"] is True
    assert pulse["cards"][0]["name"] == "People" and pulse["cards"][0]["display"] == "table"
    [channel] = pulse["channels"]
    # monthly-only frame dropped, day kept for weekly; raw addresses served as recipients, not details
    assert (channel["schedule_type"], channel["schedule_hour"], channel["schedule_day"], channel["schedule_frame"]) \
        == ("weekly", 7, "tue", None)
    assert channel["details"] == {}
    assert {"email": "outside@example.org"} in channel["recipients"]
    mine = next(r for r in channel["recipients"] if r.get("id") == me["id"])
    assert set(mine) == {"id", "email", "first_name", "last_name", "common_name"}
    assert admin.get(f"/api/pulse/{pulse['id']}").json["channels"][0]["recipients"] == channel["recipients"]
    [listed] = admin.get("/api/pulse").json
    assert listed["cards"][0]["download_perms"] == "full"


@pytest.mark.parametrize("channel,stored", [
    ({"schedule_type": "hourly", "schedule_hour": 5, "schedule_day": "mon", "schedule_frame": "mid"},
     (None, None, None)),
    ({"schedule_type": "daily", "schedule_hour": 5, "schedule_day": "mon", "schedule_frame": "mid"},
     (5, None, None)),
    ({"schedule_type": "monthly", "schedule_hour": 5, "schedule_day": "fri", "schedule_frame": "last"},
     (5, "fri", "last")),
    ({"schedule_type": "monthly", "schedule_hour": 0, "schedule_frame": "mid"}, (0, None, "mid")),
])
def test_schedule_normalisation(admin, warehouse, channel, stored):
    card = add_card(admin, warehouse, "People")
    body = {"name": "P", "cards": [card_ref(card)], "channels": [{"channel_type": "email", "enabled": True, **channel}]}
    response = admin.post("/api/pulse", json=body)
    assert response.status_code == 200, response.json
    got = response.json["channels"][0]
    assert (got["schedule_hour"], got["schedule_day"], got["schedule_frame"]) == stored


@pytest.mark.parametrize("channel", [
    {"schedule_type": "daily"},
    {"schedule_type": "daily", "schedule_hour": 24},
    {"schedule_type": "weekly", "schedule_hour": 3},
    {"schedule_type": "weekly", "schedule_hour": 3, "schedule_day": "someday"},
    {"schedule_type": "monthly", "schedule_hour": 3},
    {"schedule_type": "monthly", "schedule_hour": 3, "schedule_frame": "mid", "schedule_day": "mon"},
    {"schedule_type": "yearly", "schedule_hour": 3},
    {"schedule_type": "daily", "schedule_hour": 3, "channel_type": "pigeon"},
    {"schedule_type": "daily", "schedule_hour": 3, "recipients": [{"email": "not an address"}]},
    {"schedule_type": "daily", "schedule_hour": 3, "recipients": "everyone"},
])
def test_invalid_channels_are_400(admin, warehouse, channel):
    card = add_card(admin, warehouse, "People")
    response = admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)],
                                              "channels": [{"channel_type": "email", "enabled": True, **channel}]})
    assert response.status_code == 400, response.json
    assert "channels" in response.json["errors"]
    assert admin.get("/api/pulse").json == []


CARDS_ERROR = ("one or more value must be a map with the following keys `(collection_id, description, display, id, "
               "include_csv, include_xls, name, dashboard_id, parameter_mappings)`, or value must be a map with the "
               "keys `id`, `include_csv`, `include_xls`, and `dashboard_card_id`., or value must be a map with the "
               "keys `include_csv`, `include_xls`, and `dashboard_card_id`.")


def test_validation_messages(admin):
    refs = [{"id": 100, "include_csv": False, "include_xls": False, "dashboard_card_id": None}]
    cases = [({}, {"name": "value must be a non-blank string."}),
             ({"name": "abc"}, {"cards": CARDS_ERROR}),
             ({"name": "abc", "cards": "foobar"}, {"cards": CARDS_ERROR}),
             ({"name": "abc", "cards": ["abc"]}, {"cards": CARDS_ERROR}),
             ({"name": "abc", "cards": []}, {"cards": CARDS_ERROR}),
             ({"name": "abc", "cards": refs}, {"channels": "one or more map"}),
             ({"name": "abc", "cards": refs, "channels": "foobar"}, {"channels": "one or more map"}),
             ({"name": "abc", "cards": refs, "channels": ["abc"]}, {"channels": "one or more map"})]
    for body, errors in cases:
        response = admin.post("/api/pulse", json=body)
        assert response.status_code == 400, body
        for key, text in errors.items():
            assert response.json["errors"][key] == text, (body, response.json)


def test_recipient_checks(admin, warehouse):
    card = add_card(admin, warehouse, "People")
    me = admin.get("/api/user/current").json

    def post(recipients):
        return admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)],
                                              "channels": [daily(recipients=recipients)]})
    assert post([{"id": 99999}]).status_code == 404
    assert post([{"id": 2**64}]).status_code == 400 and post([{"id": True}]).status_code == 400
    wrong = post([{"id": me["id"], "email": "someone-else@example.com"}])
    assert wrong.status_code == 403 and wrong.json == f"Wrong email address for User {me['id']}."
    assert post([{"id": me["id"], "email": me["email"]}]).status_code == 200


def test_unknown_or_hidden_cards(admin, user, warehouse):
    assert admin.post("/api/pulse", json={"name": "P", "cards": [{"id": 4242}],
                                          "channels": [daily()]}).status_code == 404


def test_update_channels_cards_and_archive(admin, warehouse):
    first, second = add_card(admin, warehouse, "One"), add_card(admin, warehouse, "Two")
    pulse = admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(first)], "channels": [daily(9)]}).json
    changed = admin.put(f"/api/pulse/{pulse['id']}", json={
        "name": "Renamed", "cards": [card_ref(second), card_ref(first, include_xls=True)], "skip_if_empty": True,
        "channels": [{"channel_type": "email", "enabled": True, "schedule_type": "monthly", "schedule_hour": 6,
                      "schedule_frame": "first", "recipients": [{"email": "a@example.com"}]}]})
    assert changed.status_code == 200, changed.json
    body = changed.json
    assert body["name"] == "Renamed" and body["skip_if_empty"] is True
    assert [c["id"] for c in body["cards"]] == [second["id"], first["id"]] and body["cards"][1]["include_xls"]
    [channel] = body["channels"]
    assert channel["id"] == pulse["channels"][0]["id"]  # the e-mail channel is updated in place
    assert (channel["schedule_type"], channel["schedule_frame"]) == ("monthly", "first")
    assert admin.put(f"/api/pulse/{pulse['id']}", json={"archived": True}).json["archived"] is True
    assert admin.get("/api/pulse").json == []
    assert [p["id"] for p in admin.get("/api/pulse?archived=true").json] == [pulse["id"]]
    assert admin.put(f"/api/pulse/{pulse['id']}", json={"name": ""}).status_code == 400
    assert admin.put("/api/pulse/99999", json={"name": "x"}).status_code == 404


def test_form_input_says_what_is_configured(admin, app):
    from core.testing.app import set_setting

    channels = admin.get("/api/pulse/form_input").json["channels"]
    assert set(channels) == {"email", "slack", "http"}
    assert channels["email"]["configured"] is False and channels["slack"]["configured"] is False
    assert channels["http"]["configured"] is False
    assert channels["email"]["recipients"] == ["user", "email"]
    assert channels["email"]["schedules"] == ["hourly", "daily", "weekly", "monthly"]
    assert channels["slack"]["fields"][0]["name"] == "channel"
    set_setting(app, "email-smtp-host", "127.0.0.1")
    set_setting(app, "email-from-address", "tessera@example.com")
    assert admin.get("/api/pulse/form_input").json["channels"]["email"]["configured"] is True


def test_unconfigured_channels_are_refused(admin, warehouse):
    card = add_card(admin, warehouse, "People")
    for kind in ("slack", "http"):
        response = admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)],
                                                  "channels": [daily(channel_type=kind)]})
        assert response.status_code == 400


def test_dashboard_subscription(admin, warehouse):
    card = add_card(admin, warehouse, "People")
    dashboard = admin.post("/api/dashboard", json={"name": "KPIs"}).json
    params = [{"id": "abc123", "name": "test", "type": "date"}]
    created = admin.post("/api/pulse", json={"name": "KPIs", "cards": [card_ref(card)], "channels": [daily()],
                                             "dashboard_id": dashboard["id"], "parameters": params})
    assert created.status_code == 200, created.json
    assert created.json["dashboard_id"] == dashboard["id"] and created.json["parameters"] == params
    assert created.json["cards"][0]["dashboard_id"] == dashboard["id"]
    listed = admin.get(f"/api/pulse?dashboard_id={dashboard['id']}").json
    assert [p["id"] for p in listed] == [created.json["id"]]
    assert admin.get(f"/api/pulse?dashboard_id={dashboard['id'] + 1}").json == []
    assert admin.post("/api/pulse", json={"name": "X", "cards": [card_ref(card)], "channels": [daily()],
                                          "dashboard_id": 99999}).status_code == 404
