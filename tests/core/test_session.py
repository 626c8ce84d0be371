"""Logging in and out: cookies, tokens stored hashed, throttling, enumeration, expiry."""
import datetime as dt

import pytest
from sqlalchemy import select

from core.appdb.models import LoginSession
from core.http.auth import hash_token
from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD


def login(client, username=ADMIN_EMAIL, password=ADMIN_PASSWORD, **kw):
    return client.post("/api/session", json={"username": username, "password": password}, **kw)


@pytest.mark.security_row(19)
def test_login_returns_session_id_and_cookie(client, admin):
    response = login(client)
    assert response.status_code == 200
    token = response.json["id"]
    cookies = response.headers.getlist("Set-Cookie")
    session_cookie = next(c for c in cookies if c.startswith("metabase.SESSION="))
    assert token in session_cookie
    for flag in ("HttpOnly", "Path=/", "SameSite=Lax"):
        assert flag in session_cookie
    assert "Secure" not in session_cookie
    assert "Max-Age" not in session_cookie
    assert any(c.startswith("metabase.TIMEOUT=alive") for c in cookies)


@pytest.mark.security_row(19)
def test_cookie_is_secure_behind_https_proxy_and_permanent_with_remember(client, admin):
    response = client.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD,
                                                 "remember": True}, headers={"X-Forwarded-Proto": "https"})
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if c.startswith("metabase.SESSION="))
    assert "Secure" in cookie
    assert "Max-Age=1209600" in cookie


@pytest.mark.security_row(19)
@pytest.mark.parametrize("value, flag", [("strict", "SameSite=Strict"), ("none", "SameSite=None")])
def test_session_cookie_samesite_follows_the_setting(client, admin, value, flag):
    assert admin.put("/api/setting/session-cookie-samesite", json={"value": value}).status_code == 204
    cookie = next(c for c in login(client).headers.getlist("Set-Cookie") if c.startswith("metabase.SESSION="))
    assert flag in cookie and "SameSite=Lax" not in cookie
    # A cross-site cookie is only kept by browsers when Secure, even on plain http behind no proxy.
    assert ("Secure" in cookie) is (value == "none")


def test_header_and_cookie_both_authenticate(app, client, admin):
    token = login(client).json["id"]
    fresh = app.test_client()
    assert fresh.get("/api/user/current", headers={"X-Metabase-Session": token}).status_code == 200
    fresh.set_cookie("metabase.SESSION", token)
    assert fresh.get("/api/user/current").status_code == 200


@pytest.mark.security_row(19)
def test_only_a_hash_of_the_token_is_stored(app, client, admin):
    token = login(client).json["id"]
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        ids = session.scalars(select(LoginSession.id)).all()
    assert token not in ids
    assert hash_token(token) in ids


@pytest.mark.security_row(18)
def test_wrong_password_and_unknown_user_look_the_same(client, admin):
    wrong = login(client, password="not-the-password1")
    unknown = login(client, username="nobody@example.com", password="not-the-password1")
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json == unknown.json == {"errors": {"password": "did not match stored password"}}


@pytest.mark.security_row(18)
def test_unknown_user_still_costs_a_hash_verification(app, client, admin, monkeypatch):
    """Counted at argon2 itself, so a short cut anywhere above it (login or Hasher) shows."""
    from argon2 import PasswordHasher

    verified = []
    original = PasswordHasher.verify
    monkeypatch.setattr(PasswordHasher, "verify",
                        lambda self, stored, pw: verified.append(stored) or original(self, stored, pw))
    login(client, username="nobody@example.com", password="whatever-123")
    unknown = list(verified)
    verified.clear()
    login(client, password="whatever-123")
    assert len(unknown) == len(verified) == 1
    assert unknown[0].startswith("$argon2id$")


def test_blank_credentials_are_a_validation_error(client):
    response = client.post("/api/session", json={"username": "", "password": "x"})
    assert response.status_code == 400
    assert response.json["errors"]["username"] == "value must be a non-blank string."


@pytest.mark.security_row(19)
def test_logout_deletes_session_and_clears_cookies(client, admin):
    token = login(client).json["id"]
    response = client.delete("/api/session", headers={"X-Metabase-Session": token})
    assert response.status_code == 204
    cleared = response.headers.getlist("Set-Cookie")
    assert any(c.startswith("metabase.SESSION=;") for c in cleared)
    assert client.get("/api/user/current", headers={"X-Metabase-Session": token}).status_code == 401
    assert client.delete("/api/session", headers={"X-Metabase-Session": token}).status_code == 404
    assert client.delete("/api/session").status_code == 404


@pytest.mark.security_row(19)
def test_expired_session_is_rejected(app, client, admin):
    token = login(client).json["id"]
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        row = session.get(LoginSession, hash_token(token))
        row.created_at = row.created_at - dt.timedelta(minutes=app.config["TESSERA_MAX_SESSION_AGE"] + 1)
    assert client.get("/api/user/current", headers={"X-Metabase-Session": token}).status_code == 401
    # The expired row goes off the request path (core.appdb.counters), not by a commit inside the request.
    from core.appdb.counters import flush

    flush(app)
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        assert session.get(LoginSession, hash_token(token)) is None


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.mark.security_row(17)
def test_throttle_by_username_blocks_even_the_right_password(app, client, admin):
    clock = FakeClock()
    for throttler in app.extensions["tessera"].throttlers.values():
        throttler.clock = clock
    for _ in range(10):
        assert login(client, password="wrong-password-1").status_code == 401
    blocked = login(client)
    assert blocked.status_code == 400
    assert blocked.json["errors"]["username"].startswith("Too many attempts! You must wait")
    clock.now += 3601
    assert login(client).status_code == 200


@pytest.mark.security_row(17)
def test_throttle_by_ip_after_fifty_usernames(app, client, admin):
    clock = FakeClock()
    for throttler in app.extensions["tessera"].throttlers.values():
        throttler.clock = clock
    for i in range(50):
        login(client, username=f"user{i}@example.com", password="wrong-password-1")
    response = login(client, username="another@example.com", password="wrong-password-1")
    assert response.status_code == 400
    assert "Too many attempts" in response.json["errors"]["username"]


@pytest.mark.security_row(17)
def test_throttle_can_be_disabled(app_config, tmp_path):
    from core.assembly.app import create_app
    from core.testing import ApiClient, setup_admin

    app = create_app({**app_config, "TESSERA_DISABLE_SESSION_THROTTLE": True})
    setup_admin(app)
    client = ApiClient(app)
    for _ in range(12):
        assert login(client, password="wrong-password-1").status_code == 401
    assert login(client).status_code == 200


def test_deactivated_user_cannot_log_in(app, client, admin):
    from core.appdb.models import User

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        session.scalar(select(User).where(User.email == ADMIN_EMAIL)).is_active = False
    response = login(client)
    assert response.status_code == 401
    assert response.json == {"errors": {"_error": "Your account is disabled."}}
    assert admin.get("/api/user/current").status_code == 401


@pytest.mark.security_row(20)
def test_password_hash_is_argon2id_and_upgraded_when_cost_changes(app, client, admin):
    from core.appdb.models import User
    from core.identity.passwords import Hasher

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        stored = session.scalar(select(User.password_hash).where(User.email == ADMIN_EMAIL))
    assert stored.startswith("$argon2id$")
    state.hasher = Hasher(time_cost=2, memory_kib=16)
    assert state.hasher.needs_rehash(stored)
    assert login(client).status_code == 200
    with app.app_context(), state.db.session() as session:
        upgraded = session.scalar(select(User.password_hash).where(User.email == ADMIN_EMAIL))
    assert upgraded != stored and not state.hasher.needs_rehash(upgraded)


@pytest.mark.security_row(20)
def test_a_200_character_password_round_trips_without_truncation(client, admin):
    long_password = "Long-passphrase-7 " * 11 + "xy"
    assert len(long_password) == 200
    changed = admin.put(f"/api/user/{admin.user['id']}/password", json={"password": long_password})
    assert changed.status_code == 200, changed.json
    assert login(client, password=long_password).status_code == 200
    # bcrypt would have compared only the first 72 bytes
    assert login(client, password=long_password[:72]).status_code == 401
    assert login(client, password=long_password[:-1] + "z").status_code == 401


def test_password_check_endpoint(client):
    assert client.post("/api/session/password-check", json={"password": "Correct-Horse-9"}).json == {"valid": True}
    response = client.post("/api/session/password-check", json={"password": "password1"})
    assert response.status_code == 400
    assert response.json["errors"] == {"password": "password is too common."}
