"""Password reset over real SMTP: forgot_password, the token check, reset_password, and the link of
an invitation used to choose a first password."""
import email
import re

import pytest

from core.testing import USER_PASSWORD


def configure(admin, sink):
    assert admin.put("/api/setting", json={"email-smtp-host": sink.host, "email-smtp-port": sink.port,
                                           "email-from-address": "bi@example.com",
                                           "site-url": "https://bi.example.com"}).status_code == 204


def link_token(message) -> str:
    body = email.message_from_string(message["data"]).get_payload(decode=True).decode()
    return re.search(r"https://bi\.example\.com/auth/reset_password/([^\s#]+)", body).group(1)


@pytest.mark.security_row(21)
def test_forgot_and_reset_password(app, admin, user, smtp_server):
    anonymous = app.test_client()
    assert anonymous.post("/api/session/forgot_password", json={"email": "user@example.com"}).status_code == 400
    configure(admin, smtp_server)
    # the same answer for unknown addresses, and nothing sent to them
    assert anonymous.post("/api/session/forgot_password", json={"email": "nobody@example.com"}).status_code == 204
    assert smtp_server.messages == []
    assert anonymous.post("/api/session/forgot_password", json={"email": "User@Example.com"}).status_code == 204
    assert [m["to"] for m in smtp_server.messages] == [["user@example.com"]]
    token = link_token(smtp_server.messages[0])
    assert anonymous.get("/api/session/password_reset_token_valid", query_string={"token": token}).json == {"valid": True}
    assert anonymous.get("/api/session/password_reset_token_valid",
                         query_string={"token": token[:-1] + "x"}).json == {"valid": False}
    tampered_id = f"{admin.user['id']}_{token.partition('_')[2]}"  # the user's secret with another user's id
    assert anonymous.get("/api/session/password_reset_token_valid",
                         query_string={"token": tampered_id}).json == {"valid": False}

    weak = anonymous.post("/api/session/reset_password", json={"token": token, "password": "password"})
    assert weak.status_code == 400 and weak.json["errors"] == {"password": "password is too common."}
    done = anonymous.post("/api/session/reset_password", json={"token": token, "password": "Fresh-Start-42"})
    assert done.status_code == 200 and done.json["success"] is True
    # the old session ended, the new one works, the token is spent
    assert user.get("/api/user/current").status_code == 401
    assert app.test_client().get("/api/user/current",
                                 headers={"X-Metabase-Session": done.json["session_id"]}).status_code == 200
    reused = anonymous.post("/api/session/reset_password", json={"token": token, "password": "Fresh-Start-43"})
    assert reused.status_code == 400 and reused.json["errors"] == {"password": "Invalid reset token"}
    assert app.test_client().post("/api/session", json={"username": "user@example.com",
                                                         "password": USER_PASSWORD}).status_code == 401


@pytest.mark.security_row(21)
def test_invited_user_chooses_a_password_and_deactivated_users_cannot(app, admin, smtp_server):
    configure(admin, smtp_server)
    created = admin.post("/api/user", json={"email": "invitee@example.com"}).json
    token = re.search(r"reset_password/([^\s#]+)#new", email.message_from_string(smtp_server.messages[0]["data"])
                      .get_payload(decode=True).decode()).group(1)
    admin.delete(f"/api/user/{created['id']}")
    client = app.test_client()
    assert client.get("/api/session/password_reset_token_valid", query_string={"token": token}).json == {"valid": False}
    assert client.post("/api/session/reset_password", json={"token": token, "password": "Welcome-2026"}).status_code == 400
    admin.put(f"/api/user/{created['id']}/reactivate")
    admin.post(f"/api/user/{created['id']}/send_invite")
    token = link_token(smtp_server.messages[-1])
    assert client.post("/api/session/reset_password", json={"token": token, "password": "Welcome-2026"}).status_code == 200
    assert client.post("/api/session", json={"username": "invitee@example.com",
                                             "password": "Welcome-2026"}).status_code == 200


@pytest.mark.security_row(21)
def test_expired_token_is_invalid(app, admin, user, smtp_server):
    import datetime as dt

    from core.appdb.models import User

    configure(admin, smtp_server)
    app.test_client().post("/api/session/forgot_password", json={"email": "user@example.com"})
    token = link_token(smtp_server.messages[0])
    with app.extensions["tessera"].db.session() as session:
        row = session.get(User, user.user["id"])
        row.reset_triggered = row.reset_triggered - dt.timedelta(hours=49)
    assert app.test_client().get("/api/session/password_reset_token_valid",
                                 query_string={"token": token}).json == {"valid": False}
