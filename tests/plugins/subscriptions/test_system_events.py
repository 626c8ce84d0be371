"""System events e-mailed to a real SMTP server (aiosmtpd): archiving an alert's question archives the
alert (its job goes) and tells its creator; a user's first sign-in tells the administrators, a second
does not; a failed database sync tells the administrators."""
from __future__ import annotations

from core.schedule.runner import run_due
from core.testing import sqlite_file, wait_for_sync
from core.testing.app import USER_PASSWORD, make_user

from .support import add_card
from .test_send import SQL, at


def test_archiving_the_card_disables_its_alert_and_tells_the_creator(app, admin, user, warehouse, inbox):
    card = add_card(admin, warehouse, "Ages", sql=SQL)
    alert = user.post("/api/alert", json={"card": {"id": card["id"]}, "alert_condition": "rows",
                                          "alert_first_only": False, "channels": [
        {"channel_type": "email", "schedule_type": "hourly", "recipients": [{"id": user.user["id"]}]}]})
    assert alert.status_code == 200, alert.json
    run_due(app, at(26, 5, 30))
    assert admin.put(f"/api/card/{card['id']}", json={"archived": True}).status_code == 200
    [(to, message)] = inbox.wait(1)
    assert to == [user.user["email"]] and message["Subject"] == "Your alert on Ages was turned off"
    assert admin.get(f"/api/alert/{alert.json['id']}").json["archived"] is True
    assert run_due(app, at(26, 6, 0)) == []  # its job is gone
    assert admin.put(f"/api/card/{card['id']}", json={"description": "still archived"}).status_code == 200
    assert len(inbox.wait(2, timeout=0.5)) == 1  # told once


def test_first_sign_in_tells_the_administrators_once(app, admin, inbox):
    newcomer = make_user(app, email="new@example.com", first_name="Nia")
    [(to, message)] = inbox.wait(1)
    assert to == [admin.get("/api/user/current").json["email"]]
    assert message["Subject"] == "Nia User signed in for the first time"
    again = app.test_client().post("/api/session", json={"username": "new@example.com", "password": USER_PASSWORD})
    assert again.status_code == 200 and newcomer.get("/api/user/current").status_code == 200
    assert len(inbox.wait(2, timeout=0.5)) == 1


def test_a_failed_sync_tells_the_administrators(app, admin, inbox):
    path = sqlite_file(app, "doomed.db", "CREATE TABLE t (id INTEGER PRIMARY KEY);")
    database = admin.post("/api/database", json={"name": "Doomed", "engine": "sqlite", "details": {"db": path}})
    assert database.status_code == 200, database.json
    wait_for_sync(app)
    with open(path, "wb") as broken:  # overwritten in place, as tests/core/test_sync.py breaks a database
        broken.write(b"this is not a SQLite file" * 100)
    assert admin.post(f"/api/database/{database.json['id']}/sync_schema").status_code == 200
    wait_for_sync(app)
    [(_, message)] = inbox.wait(1)
    assert message["Subject"] == "Sync of Doomed failed"
