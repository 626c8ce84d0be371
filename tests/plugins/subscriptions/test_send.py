"""Sends on a real SMTP server (aiosmtpd on loopback), driven by the scheduler's clock
(core.schedule.runner.run_due): a daily subscription moved to an earlier hour fires once, with the
card's PNG inline (Content-ID) and its CSV attached; a dashboard subscription to two addresses arrives
at both with the charts; skip_if_empty; the test endpoint; the run recorded in the task history."""
from __future__ import annotations

import datetime as dt
import time

from core.schedule.runner import run_due
from tests.plugins.dashboards.layout_helpers import dashcard

from .support import add_card, card_ref, daily, parts

PNG = b"\x89PNG\r\n\x1a\n"
BAR = {"graph.dimensions": ["first_name"], "graph.metrics": ["age"]}
SQL = "SELECT first_name, age FROM people ORDER BY id"


def at(day: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=dt.timezone.utc)


def send_runs(app):
    from sqlalchemy import select

    from core.appdb.models import TaskHistory

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        return [(r.task, r.status, r.task_details) for r in session.scalars(
            select(TaskHistory).where(TaskHistory.task == "send-pulse").order_by(TaskHistory.id))]


def test_daily_subscription_moved_forward_fires_once(app, admin, warehouse, inbox):
    card = add_card(admin, warehouse, "Ages", display="bar", sql=SQL, visualization_settings=BAR)
    pulse = admin.post("/api/pulse", json={"name": "Ages daily", "cards": [card_ref(card, include_csv=True)],
                                           "channels": [daily(hour=9, recipients=[{"email": "boss@example.com"}])]})
    assert pulse.status_code == 200, pulse.json
    assert run_due(app, at(26, 5)) == []  # plans the next occurrence: 09:00
    # moved forward to 07:00: the job's cron changes with the pulse, in the same transaction
    moved = admin.put(f"/api/pulse/{pulse.json['id']}", json={"channels": [daily(
        hour=7, recipients=[{"email": "boss@example.com"}])]})
    assert moved.status_code == 200, moved.json
    assert run_due(app, at(26, 5, 30)) == []
    assert len(run_due(app, at(26, 7, 0))) == 1
    assert run_due(app, at(26, 7, 1)) == [] and run_due(app, at(26, 9, 5)) == []  # once, not at the old hour
    [(to, message)] = inbox.wait(1)
    assert to == ["boss@example.com"] and message["Subject"] == "Pulse: Ages daily"
    assert message["From"].addresses[0].addr_spec == "tessera@example.com"
    got = parts(message)
    [(cid, image)] = got["images"]
    assert image.startswith(PNG)
    assert f'src="cid:{cid.strip("<>")}"' in got["html"][0] and "Ages" in got["html"][0]
    [(name, csv_bytes)] = got["files"]
    assert name == "Ages.csv"
    lines = csv_bytes.decode().splitlines()
    assert lines[0].lower().replace(" ", "_") == "first_name,age" and lines[1:] == ["Ada,36", "Alan,41", "Grace,85"]
    assert [(task, status) for task, status, _ in send_runs(app)] == [("send-pulse", "success")]
    assert send_runs(app)[0][2]["sent"] is True
    # the next day fires again, once
    assert len(run_due(app, at(27, 7, 0))) == 1
    assert len(inbox.wait(2)) == 2


def test_dashboard_subscription_to_two_addresses(app, admin, warehouse, inbox):
    bar = add_card(admin, warehouse, "Ages", display="bar", sql=SQL, visualization_settings=BAR)
    line = add_card(admin, warehouse, "Trend", display="line", sql=SQL, visualization_settings=BAR)
    table = add_card(admin, warehouse, "People")
    dash = admin.post("/api/dashboard", json={"name": "Team KPIs"}).json
    layout = admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [
        dashcard(-1, bar["id"]), dashcard(-2, line["id"]), dashcard(-3, table["id"])]})
    assert layout.status_code == 200, layout.json
    dashcards = {d["card_id"]: d["id"] for d in layout.json["dashcards"]}
    cards = [card_ref(c, dashboard_card_id=dashcards[c["id"]]) for c in (bar, line, table)]
    hourly = {"channel_type": "email", "enabled": True, "schedule_type": "hourly",
              "recipients": [{"email": "one@example.com"}, {"email": "two@example.com"}]}
    created = admin.post("/api/pulse", json={"name": "Team KPIs", "dashboard_id": dash["id"], "cards": cards,
                                             "channels": [hourly]})
    assert created.status_code == 200, created.json
    run_due(app, at(26, 10, 30))
    assert len(run_due(app, at(26, 11, 0))) == 1
    received = inbox.wait(2)
    assert sorted(to[0] for to, _ in received) == ["one@example.com", "two@example.com"]
    for _, message in received:
        assert message["Subject"] == "Team KPIs"
        got = parts(message)
        assert len(got["images"]) == 2 and all(image.startswith(PNG) for _, image in got["images"])
        html = got["html"][0]
        assert all(f"cid:{cid.strip('<>')}" in html for cid, _ in got["images"])
        assert "Ada" in html and "Lovelace" in html  # the table card is an HTML table
        assert got["files"] == []


def test_skip_if_empty(app, admin, warehouse, inbox):
    empty = add_card(admin, warehouse, "Nobody", sql="SELECT first_name FROM people WHERE age > 200")
    admin.post("/api/pulse", json={"name": "Empty", "cards": [card_ref(empty)], "skip_if_empty": True,
                                   "channels": [daily(hour=8, recipients=[{"email": "x@example.com"}])]})
    run_due(app, at(26, 7))
    assert len(run_due(app, at(26, 8))) == 1
    assert inbox.wait(1, timeout=1) == []
    [(_, status, details)] = send_runs(app)
    assert status == "success" and details["sent"] is False and details["skipped"] == "every card is empty"


def test_failed_send_is_recorded(app, admin, warehouse):
    from core.testing.app import set_setting

    card = add_card(admin, warehouse, "People")
    set_setting(app, "email-smtp-host", "127.0.0.1")
    set_setting(app, "email-smtp-port", 1)  # nothing listens there
    set_setting(app, "email-from-address", "tessera@example.com")
    admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)],
                                   "channels": [daily(hour=8, recipients=[{"email": "x@example.com"}])]})
    run_due(app, at(26, 7))
    run_due(app, at(26, 8))
    [(_, status, details)] = send_runs(app)
    assert status == "failed" and details["exception"] == "MailError"
    # every attempt (TESSERA_MAIL_RETRY_ATTEMPTS, 3 in these tests) is in the task history
    assert details["attempted_retries"] == 3 and details["messages_sent"] == 0
    assert [e["message"].split(":")[0] for e in details["retry_errors"]] == ["ConnectionRefusedError"] * 3
    assert details["retry_config"]["max_attempts"] == 3 and details["channel_id"]


def test_email_lost_to_a_mail_server_outage_is_retried_until_the_server_is_back(app, admin, warehouse):
    """A real SMTP server (aiosmtpd) that is down for the first two attempts and started before the third:
    the message arrives, the run succeeds, and both failed attempts are in the task history."""
    import logging

    from core.testing.app import set_setting

    from .support import Inbox

    app.config["TESSERA_MAIL_RETRY_ATTEMPTS"] = 5
    box = Inbox(start=False)
    set_setting(app, "email-smtp-host", "127.0.0.1")
    set_setting(app, "email-smtp-port", box.port)
    set_setting(app, "email-from-address", "tessera@example.com")

    class StartAfterTwoFailures(logging.Handler):  # runs in the job's thread, between attempts
        failures = 0

        def emit(self, record):
            if "attempt" in record.getMessage():
                self.failures += 1
                if self.failures == 2:
                    box.start()

    watcher = StartAfterTwoFailures()
    logging.getLogger("tessera.subscriptions").addHandler(watcher)
    try:
        card = add_card(admin, warehouse, "People")
        admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)],
                                       "channels": [daily(hour=8, recipients=[{"email": "x@example.com"}])]})
        run_due(app, at(26, 7))
        assert not box.started
        assert len(run_due(app, at(26, 8))) == 1
        [(recipients, message)] = box.wait(1)
        assert recipients == ["x@example.com"] and message["Subject"] == "Pulse: P"
        [(_, status, details)] = send_runs(app)
        assert status == "success" and details["sent"] is True and details["messages_sent"] == 1
        assert details["attempted_retries"] == 2 and len(details["retry_errors"]) == 2
        assert all(e["message"].startswith("ConnectionRefusedError") and e["timestamp"] for e in details["retry_errors"])
    finally:
        logging.getLogger("tessera.subscriptions").removeHandler(watcher)
        box.close()


def test_a_refusal_is_not_retried(app, admin, warehouse):
    """A 5xx answer (the recipient refused) would be refused again: one attempt, the run failed at once."""
    from core.testing.app import set_setting

    from .support import Inbox

    app.config["TESSERA_MAIL_RETRY_INITIAL_SECONDS"] = 5  # a retry would show in the time taken
    box = Inbox(refuse="550 5.1.1 no such mailbox")
    try:
        set_setting(app, "email-smtp-host", "127.0.0.1")
        set_setting(app, "email-smtp-port", box.port)
        set_setting(app, "email-from-address", "tessera@example.com")
        card = add_card(admin, warehouse, "People")
        admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)],
                                       "channels": [daily(hour=8, recipients=[{"email": "x@example.com"}])]})
        run_due(app, at(26, 7))
        started = time.monotonic()
        run_due(app, at(26, 8))
        assert time.monotonic() - started < 4
        [(_, status, details)] = send_runs(app)
        assert status == "failed" and "SMTPRecipientsRefused" in details["message"]
        assert details["attempted_retries"] == 0 and details["retry_errors"] == [] and box.received == []
    finally:
        box.close()


def test_archived_or_disabled_pulses_have_no_job(app, admin, warehouse):
    from core.schedule import scheduled

    card = add_card(admin, warehouse, "People")
    pulse = admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)], "channels": [daily()]}).json

    def jobs():
        with app.app_context(), app.extensions["tessera"].db.session() as session:
            return [(j.key, j.cron) for j in scheduled(session, "send-pulse")]
    assert jobs() == [(str(pulse["channels"][0]["id"]), "0 0 8 * * ? *")]
    admin.put(f"/api/pulse/{pulse['id']}", json={"channels": [daily(enabled=False)]})
    assert jobs() == []
    admin.put(f"/api/pulse/{pulse['id']}", json={"channels": [daily(hour=3)]})
    assert jobs() == [(str(pulse["channels"][0]["id"]), "0 0 3 * * ? *")]
    admin.put(f"/api/pulse/{pulse['id']}", json={"archived": True})
    assert jobs() == []


def test_test_endpoint_sends_now(app, admin, warehouse, inbox):
    card = add_card(admin, warehouse, "Ages", display="bar", sql=SQL, visualization_settings=BAR)
    me = admin.get("/api/user/current").json
    response = admin.post("/api/pulse/test", json={
        "name": "Try", "cards": [card_ref(card, include_xls=True)],
        "channels": [daily(recipients=[{"id": me["id"]}, {"email": "other@example.com"}])]})
    assert response.status_code == 200 and response.json == {"ok": True}
    received = inbox.wait(2)
    assert sorted(to[0] for to, _ in received) == sorted([me["email"], "other@example.com"])
    got = parts(received[0][1])
    assert got["images"][0][1].startswith(PNG)
    assert got["files"][0][0] == "Ages.xlsx" and got["files"][0][1].startswith(b"PK")
    assert admin.get("/api/pulse").json == []  # nothing saved


def test_test_endpoint_without_smtp_is_400(admin, warehouse):
    card = add_card(admin, warehouse, "People")
    response = admin.post("/api/pulse/test", json={"name": "Try", "cards": [card_ref(card)],
                                                   "channels": [daily(recipients=[{"email": "a@example.com"}])]})
    assert response.status_code == 400 and "not configured" in response.json
