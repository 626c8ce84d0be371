"""/api/email: PUT stores the SMTP settings only after the server accepted a connection with them, DELETE
clears them, POST /test sends the caller a message; administrators only."""
from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_settings_are_checked_against_the_server_before_they_are_stored(admin, user, smtp_server):
    unreachable = admin.put("/api/email", json={"email-smtp-host": "127.0.0.1", "email-smtp-port": free_port(),
                                                "email-from-address": "bi@example.com"})
    assert unreachable.status_code == 400
    assert unreachable.json["errors"]["email-smtp-host"] == "Wrong host or port"
    assert admin.get("/api/setting/email-smtp-host").json is None
    bad_port = admin.put("/api/email", json={"email-smtp-host": "127.0.0.1", "email-smtp-port": 70000})
    assert bad_port.status_code == 400 and "email-smtp-port" in bad_port.json["errors"]

    good = admin.put("/api/email", json={"email-smtp-host": smtp_server.host, "email-smtp-port": smtp_server.port,
                                         "email-smtp-username": "robot", "email-smtp-password": "pw-123456",
                                         "email-from-address": "bi@example.com", "unrelated": 1})
    assert good.status_code == 200, good.json
    assert good.json["email-smtp-password"].startswith("**********") and "pw-123456" not in str(good.json)
    assert admin.get("/api/setting/email-smtp-port").json == smtp_server.port
    again = admin.put("/api/email", json={**good.json, "email-from-name": "BI"})  # the masked password keeps
    assert again.status_code == 200 and admin.get("/api/setting/email-smtp-password").json == "pw-123456"

    sent = admin.post("/api/email/test")
    assert sent.status_code == 200 and sent.json == {"ok": True}
    assert smtp_server.messages[-1]["to"] == ["admin@example.com"]
    assert user.post("/api/email/test").status_code == 403
    assert user.put("/api/email", json={"email-smtp-host": "x"}).status_code == 403
    assert user.delete("/api/email").status_code == 403

    assert admin.delete("/api/email").status_code == 204
    assert admin.get("/api/setting/email-smtp-host").json is None
    assert admin.get("/api/session/properties").json["email-configured?"] is False
    off = admin.post("/api/email/test")
    assert off.status_code == 400 and "not configured" in str(off.json)
