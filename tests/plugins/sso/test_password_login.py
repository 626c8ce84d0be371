"""`enable-password-login` (plugins/sso/password_policy.py): password login and password resets off for
everyone but the TESSERA_BREAK_GLASS_ADMIN administrator, only while a single sign-on method is on."""
from __future__ import annotations

import pytest

from core.testing import USER_PASSWORD
from core.testing.app import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.test_password_reset import configure, link_token

REFUSED = "Password login is disabled for this instance."


def log_in(app, username: str, password: str):
    return app.test_client().post("/api/session", json={"username": username, "password": password})


def password_login(client) -> bool:
    return client.get("/api/session/properties").json["enable-password-login"]


@pytest.fixture
def password_off(app, admin, user):
    """JWT single sign-on on, password login off (after `user` signed in once)."""
    for key, value in (("jwt-identity-provider-uri", "https://idp.example.com/sso"),
                       ("jwt-shared-secret", "a-shared-secret-of-the-identity-provider-0123456789"),
                       ("jwt-enabled", True), ("enable-password-login", False)):
        assert admin.put(f"/api/setting/{key}", json={"value": value}).status_code == 204
    return admin


def test_without_single_sign_on_the_setting_cannot_lock_anyone_out(app, admin, user, client):
    assert admin.put("/api/setting/enable-password-login", json={"value": False}).status_code == 204
    assert password_login(client) is True and admin.get("/api/setting/enable-password-login").json is True
    assert log_in(app, "user@example.com", USER_PASSWORD).status_code == 200


def test_password_login_off_refuses_everyone_but_the_break_glass_admin(app, password_off, user, client, monkeypatch):
    assert password_login(client) is False
    for username, password in (("user@example.com", USER_PASSWORD), ("user@example.com", "wrong-password"),
                               (ADMIN_EMAIL, ADMIN_PASSWORD), ("nobody@example.com", "whatever")):
        response = log_in(app, username, password)
        # The same 400 whether the password was right or not: the refusal comes before the check.
        assert response.status_code == 400 and REFUSED in response.get_data(as_text=True), (username, password)

    monkeypatch.setitem(app.extensions["tessera"].config, "TESSERA_BREAK_GLASS_ADMIN", ADMIN_EMAIL.upper())
    assert log_in(app, ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 200
    assert log_in(app, ADMIN_EMAIL, "wrong-password").status_code == 401
    assert log_in(app, "user@example.com", USER_PASSWORD).status_code == 400

    # An address that is no administrator's is no break-glass account.
    monkeypatch.setitem(app.extensions["tessera"].config, "TESSERA_BREAK_GLASS_ADMIN", "user@example.com")
    assert log_in(app, "user@example.com", USER_PASSWORD).status_code == 400

    # Single sign-on turned off again: passwords work whatever is stored.
    assert password_off.put("/api/setting/jwt-enabled", json={"value": False}).status_code == 204
    assert password_login(client) is True
    assert log_in(app, "user@example.com", USER_PASSWORD).status_code == 200


def test_password_resets_are_refused_too(app, admin, user, smtp_server, monkeypatch):
    configure(admin, smtp_server)
    anonymous = app.test_client()
    assert anonymous.post("/api/session/forgot_password", json={"email": "user@example.com"}).status_code == 204
    token = link_token(smtp_server.messages[0])
    for key, value in (("jwt-identity-provider-uri", "https://idp.example.com/sso"),
                       ("jwt-shared-secret", "a-shared-secret-of-the-identity-provider-0123456789"),
                       ("jwt-enabled", True), ("enable-password-login", False)):
        assert admin.put(f"/api/setting/{key}", json={"value": value}).status_code == 204

    asked = anonymous.post("/api/session/forgot_password", json={"email": "user@example.com"})
    assert asked.status_code == 400 and REFUSED in asked.get_data(as_text=True)
    assert len(smtp_server.messages) == 1
    reset = anonymous.post("/api/session/reset_password", json={"token": token, "password": "Fresh-Start-42"})
    assert reset.status_code == 400 and REFUSED in reset.get_data(as_text=True)
    assert anonymous.get("/api/session/password_reset_token_valid", query_string={"token": token}).json == {
        "valid": True}  # not spent by the refusal

    monkeypatch.setitem(app.extensions["tessera"].config, "TESSERA_BREAK_GLASS_ADMIN", ADMIN_EMAIL)
    assert anonymous.post("/api/session/forgot_password", json={"email": ADMIN_EMAIL}).status_code == 204
    assert smtp_server.messages[-1]["to"] == [ADMIN_EMAIL]
