"""Invitations over real SMTP (a loopback server from core.testing), and the e-mail settings."""
import email
import re
import socket

from core.testing import make_user


def configure_smtp(admin, host, port, **extra):
    settings = {"email-smtp-host": host, "email-smtp-port": port, "email-from-address": "bi@example.com",
                "email-from-name": "Tessera BI", "site-url": "https://bi.example.com", **extra}
    response = admin.put("/api/setting", json=settings)
    assert response.status_code == 204, response.json


def test_send_invite_without_smtp_is_a_clear_400(admin, user):
    response = admin.post(f"/api/user/{user.user['id']}/send_invite")
    assert response.status_code == 400
    assert "not configured" in response.json
    assert admin.get("/api/session/properties").json["email-configured?"] is False


def test_invite_sent_over_smtp(app, admin, smtp_server):
    configure_smtp(admin, smtp_server.host, smtp_server.port, **{"email-smtp-username": "mailer",
                                                                  "email-smtp-password": "s3cret"})
    assert admin.get("/api/session/properties").json["email-configured?"] is True
    password_row = next(s for s in admin.get("/api/setting").json if s["key"] == "email-smtp-password")
    assert "s3cret" not in str(password_row["value"])

    created = admin.post("/api/user", json={"email": "newbie@example.com", "first_name": "Nell"})
    assert created.status_code == 200
    assert len(smtp_server.messages) == 1
    first = smtp_server.messages[0]
    assert first["to"] == ["newbie@example.com"] and first["from"] == "bi@example.com"
    assert first["auth"] == ("mailer", "s3cret")

    resent = admin.post(f"/api/user/{created.json['id']}/send_invite")
    assert resent.status_code == 200 and resent.json == {"success": True}
    assert len(smtp_server.messages) == 2
    message = email.message_from_string(smtp_server.messages[1]["data"])
    assert "Test Co" in message["Subject"] and "Tessera BI" in message["From"]
    body = message.get_payload(decode=True).decode()
    token = re.search(r"https://bi\.example\.com/auth/reset_password/(\S+)#new", body).group(1)
    # the link's token is the user's current reset token; the first invitation's token is dead
    from core.identity import users

    state = app.extensions["tessera"]
    with state.db.session() as session:
        assert users.user_for_reset_token(session, token).email == "newbie@example.com"
        assert users.user_for_reset_token(session, token + "x") is None
        first_token = re.search(r"reset_password/(\S+)#new", email.message_from_string(first["data"])
                                .get_payload(decode=True).decode()).group(1)
        assert users.user_for_reset_token(session, first_token) is None


def test_invite_to_unreachable_server_is_400(app, admin, user):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    configure_smtp(admin, "127.0.0.1", closed_port)
    response = admin.post(f"/api/user/{user.user['id']}/send_invite")
    assert response.status_code == 400 and "could not be sent" in response.json
    # users are still created when the invitation fails, as Metabase does
    assert admin.post("/api/user", json={"email": "later@example.com"}).status_code == 200


def test_send_invite_rules(app, admin, user, smtp_server):
    # signed in before e-mail works, so that its first sign-in sends no notice (plugins.subscriptions)
    other = make_user(app, "other@example.com", "Otto", "Other")
    configure_smtp(admin, smtp_server.host, smtp_server.port)
    assert user.post(f"/api/user/{user.user['id']}/send_invite").status_code == 403
    assert admin.post("/api/user/999/send_invite").status_code == 404
    assert admin.put("/api/setting/email-smtp-security", json={"value": "carrier-pigeon"}).status_code == 400
    assert admin.put("/api/setting/email-smtp-port", json={"value": 70000}).status_code == 400
    assert admin.put("/api/setting/email-from-address", json={"value": "not an address"}).status_code == 400
    admin.delete(f"/api/user/{other.user['id']}")
    assert admin.post(f"/api/user/{other.user['id']}/send_invite").status_code == 404
    assert smtp_server.messages == []
