"""Issue 19's "done when" for subscriptions, on each app-DB backend (SQLite and, when it answers,
PostgreSQL): an administrator sets the SMTP settings through /api/setting, subscribes two addresses to a
dashboard every hour, and at the next hour the e-mail with the charts arrives at both addresses."""
from __future__ import annotations

from pathlib import Path

from core.schedule.runner import run_due
from core.testing import setup_admin
from tests.plugins.cards.fixtures import make_warehouse, register_warehouse
from tests.plugins.dashboards.layout_helpers import dashcard

from .support import Inbox, add_card, card_ref, parts
from .test_send import BAR, PNG, SQL, at


def test_hourly_dashboard_subscription_to_two_addresses(any_app):
    admin = setup_admin(any_app)
    warehouse = register_warehouse(any_app, make_warehouse(Path(any_app.config["TESSERA_DATA_DIR"])))
    inbox = Inbox()
    try:
        for key, value in (("email-smtp-host", "127.0.0.1"), ("email-smtp-port", inbox.port),
                           ("email-from-address", "reports@example.com"), ("email-from-name", "Reports")):
            assert admin.put(f"/api/setting/{key}", json={"value": value}).status_code == 204
        assert admin.get("/api/pulse/form_input").json["channels"]["email"]["configured"] is True
        bar = add_card(admin, warehouse, "Ages", display="bar", sql=SQL, visualization_settings=BAR)
        line = add_card(admin, warehouse, "Trend", display="line", sql=SQL, visualization_settings=BAR)
        dash = admin.post("/api/dashboard", json={"name": "Weekly numbers"}).json
        layout = admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [
            dashcard(-1, bar["id"]), dashcard(-2, line["id"], row=4)]})
        assert layout.status_code == 200, layout.json
        ids = {d["card_id"]: d["id"] for d in layout.json["dashcards"]}
        created = admin.post("/api/pulse", json={
            "name": "Weekly numbers", "dashboard_id": dash["id"],
            "cards": [card_ref(c, dashboard_card_id=ids[c["id"]]) for c in (bar, line)],
            "channels": [{"channel_type": "email", "enabled": True, "schedule_type": "hourly",
                          "recipients": [{"email": "ceo@example.com"}, {"email": "cfo@example.com"}]}]})
        assert created.status_code == 200, created.json
        assert run_due(any_app, at(26, 13, 20)) == []
        assert len(run_due(any_app, at(26, 14, 0))) == 1
        received = inbox.wait(2)
        assert sorted(to[0] for to, _ in received) == ["ceo@example.com", "cfo@example.com"]
        for _, message in received:
            assert message["Subject"] == "Weekly numbers" and "Reports" in message["From"]
            got = parts(message)
            assert len(got["images"]) == 2 and all(data.startswith(PNG) for _, data in got["images"])
        assert run_due(any_app, at(26, 14, 30)) == []
        tasks = admin.get("/api/task").json
        assert any(t["task"] == "send-pulse" and t["status"] == "success" for t in tasks["data"])
    finally:
        inbox.close()
