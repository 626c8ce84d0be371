"""JWT single sign-on (plugins/sso) through HTTP: tokens signed by the test as the identity provider."""
from __future__ import annotations

import base64
import json
import time
import uuid

import pytest
from joserfc import jwt
from joserfc.jwk import OctKey

from core.testing.app import ApiClient
from tests.support import recorded_events

SECRET = "a-shared-secret-of-the-identity-provider-0123456789"
PROVIDER = "https://idp.example.com/sso?app=tessera"


def sign(claims: dict, secret: str = SECRET, header: dict | None = None) -> str:
    body = {"iat": int(time.time()), "jti": str(uuid.uuid4()), **claims}
    alg = (header or {}).get("alg", "HS256")
    return jwt.encode(header or {"alg": alg}, body, OctKey.import_key(secret), algorithms=[alg])


def unsigned(claims: dict) -> str:
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part({'iat': int(time.time()), **claims})}."


@pytest.fixture
def jwt_on(admin):
    for key, value in (("jwt-identity-provider-uri", PROVIDER), ("jwt-shared-secret", SECRET),
                       ("jwt-enabled", True)):
        assert admin.put(f"/api/setting/{key}", json={"value": value}).status_code == 204
    return admin


def follow(app, token: str, return_to: str | None = "/collection/root"):
    """The browser arriving back from the provider: the response and a client carrying its cookies."""
    browser = app.test_client()
    query = {"jwt": token} | ({"return_to": return_to} if return_to is not None else {})
    return browser.get("/auth/sso", query_string=query), browser


def whoami(browser) -> dict | None:
    response = browser.get("/api/user/current")
    return response.json if response.status_code == 200 else None


def groups_of(admin, user_id: int) -> set[int]:
    return {g["id"] for g in admin.get(f"/api/user/{user_id}").json["user_group_memberships"]}


def test_start_redirects_to_the_provider_with_return_to(app, jwt_on):
    response = app.test_client().get("/auth/sso", query_string={"return_to": "/dashboard/3?x=1"})
    assert response.status_code == 302
    assert response.headers["Location"] == "https://idp.example.com/sso?app=tessera&return_to=%2Fdashboard%2F3%3Fx%3D1"


def test_a_token_signs_in_creates_the_account_and_redirects(app, jwt_on):
    token = sign({"email": "Jo@Example.com", "first_name": "Jo", "last_name": "Doe", "department": "sales",
                  "region": ["eu", "us"]})
    response, browser = follow(app, token)
    assert response.status_code == 302 and response.headers["Location"] == "/collection/root"
    cookie = browser.get_cookie("metabase.SESSION")
    assert cookie is not None and cookie.http_only
    me = whoami(browser)
    assert me["email"] == "jo@example.com" and me["first_name"] == "Jo" and me["last_name"] == "Doe"
    assert me["sso_source"] == "jwt"
    # The claims that are not the person's e-mail, names, groups or the token's own go to login_attributes.
    assert jwt_on.get(f"/api/user/{me['id']}").json["login_attributes"] == {"department": "sales",
                                                                            "region": ["eu", "us"]}


def test_the_session_is_an_ordinary_one_that_logs_out(app, jwt_on):
    _, browser = follow(app, sign({"email": "jo@example.com"}))
    token = browser.get_cookie("metabase.SESSION").value
    api = ApiClient(app, {"X-Metabase-Session": token})
    assert api.get("/api/user/current").status_code == 200
    assert api.delete("/api/session").status_code == 204
    assert api.get("/api/user/current").status_code == 401


def test_an_existing_account_signs_in_and_keeps_its_password(app, jwt_on, user):
    response, browser = follow(app, sign({"email": "user@example.com"}))
    assert response.status_code == 302
    me = whoami(browser)
    assert me["id"] == user.user["id"] and me["first_name"] == "Ulla" and me["sso_source"] is None


def refused(app, token: str, message: str, return_to: str | None = "/", status: int = 401):
    response, browser = follow(app, token, return_to)
    assert response.status_code == status, response.data
    assert message in response.get_data(as_text=True)
    assert browser.get_cookie("metabase.SESSION") is None
    assert whoami(browser) is None


def test_a_replayed_token_is_refused(app, jwt_on):
    token = sign({"email": "jo@example.com"})
    assert follow(app, token)[0].status_code == 302
    refused(app, token, "already been used")


def test_a_replay_without_jti_is_refused_too(app, jwt_on):
    token = jwt.encode({"alg": "HS256"}, {"email": "jo@example.com", "iat": int(time.time())},
                       OctKey.import_key(SECRET))
    assert follow(app, token)[0].status_code == 302
    refused(app, token, "already been used")


def test_alg_none_is_refused(app, jwt_on):
    refused(app, unsigned({"email": "jo@example.com"}), "`alg: none`")


def test_other_algorithms_and_secrets_are_refused(app, jwt_on):
    refused(app, sign({"email": "jo@example.com"}, header={"alg": "HS512"}, secret=SECRET * 2), "HS256")
    refused(app, sign({"email": "jo@example.com"}, secret="another-secret-another-secret-1234"), "signature")
    refused(app, "not-a-token", "not a signed JSON Web Token")


def test_expired_and_old_tokens_are_refused(app, jwt_on):
    now = int(time.time())
    refused(app, sign({"email": "jo@example.com", "iat": now - 600, "exp": now - 300}), "expired")
    refused(app, sign({"email": "jo@example.com", "iat": now - 3600}), "too old")
    no_iat = jwt.encode({"alg": "HS256"}, {"email": "jo@example.com", "exp": now + 60}, OctKey.import_key(SECRET))
    refused(app, no_iat, "`iat`")


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "/\\evil.example",
                                    "javascript:alert(1)", "collection/root"])
def test_return_to_another_site_is_refused(app, jwt_on, target):
    refused(app, sign({"email": "jo@example.com"}), "`return_to` must be a path on this site", target, status=401)
    start = app.test_client().get("/auth/sso", query_string={"return_to": target})
    assert start.status_code == 401 and "Location" not in start.headers


def test_without_return_to_the_person_lands_home(app, jwt_on):
    response, _ = follow(app, sign({"email": "jo@example.com"}), None)
    assert response.headers["Location"] == "/"


def test_refused_while_disabled_or_without_email_or_provisioning(app, jwt_on):
    refused(app, sign({"mail": "jo@example.com"}), "no e-mail address in its `email` claim")
    assert jwt_on.put("/api/setting/jwt-user-provisioning-enabled", json={"value": False}).status_code == 204
    refused(app, sign({"email": "new@example.com"}), "accounts are not created automatically")
    assert jwt_on.put("/api/setting/jwt-enabled", json={"value": False}).status_code == 204
    refused(app, sign({"email": "jo@example.com"}), "not enabled")


def test_a_deactivated_account_is_refused(app, jwt_on, user):
    assert jwt_on.delete(f"/api/user/{user.user['id']}").status_code == 200
    refused(app, sign({"email": "user@example.com"}), "Your account is disabled.")


def test_the_shared_secret_is_never_shown(app, jwt_on):
    values = {s["key"]: s["value"] for s in jwt_on.get("/api/setting").json}
    assert SECRET not in json.dumps(values)


def test_group_sync_touches_only_mapped_groups(app, jwt_on):
    ids = {name: jwt_on.post("/api/permissions/group", json={"name": name}).json["id"]
           for name in ("Sales", "Finance", "Manual")}
    mappings = {"sales": [ids["Sales"]], "finance": [ids["Finance"]]}
    assert jwt_on.put("/api/setting/jwt-group-mappings", json={"value": mappings}).status_code == 204
    assert jwt_on.put("/api/setting/jwt-group-sync", json={"value": True}).status_code == 204

    _, browser = follow(app, sign({"email": "jo@example.com", "groups": ["sales", "finance", "unmapped"]}))
    jo = whoami(browser)["id"]
    assert groups_of(jwt_on, jo) == {1, ids["Sales"], ids["Finance"]}
    assert jwt_on.post("/api/permissions/membership",
                       json={"user_id": jo, "group_id": ids["Manual"]}).status_code == 200

    # The provider dropped "finance": that membership goes, the unmapped Manual group stays.
    follow(app, sign({"email": "jo@example.com", "groups": ["sales"]}))
    assert groups_of(jwt_on, jo) == {1, ids["Sales"], ids["Manual"]}

    # No groups claim at all: memberships are left as they are.
    follow(app, sign({"email": "jo@example.com"}))
    assert groups_of(jwt_on, jo) == {1, ids["Sales"], ids["Manual"]}

    # With sync off, the claim changes nothing.
    assert jwt_on.put("/api/setting/jwt-group-sync", json={"value": False}).status_code == 204
    follow(app, sign({"email": "jo@example.com", "groups": []}))
    assert groups_of(jwt_on, jo) == {1, ids["Sales"], ids["Manual"]}


def test_group_mappings_must_map_names_to_ids(jwt_on):
    response = jwt_on.put("/api/setting/jwt-group-mappings", json={"value": {"sales": "3"}})
    assert response.status_code == 400 and "Group mappings" in json.dumps(response.json)


def test_refusals_are_throttled_per_ip_as_password_logins(app, app_config, jwt_on, monkeypatch):
    state = app.extensions["tessera"]
    monkeypatch.setitem(state.config, "TESSERA_DISABLE_SESSION_THROTTLE", False)
    monkeypatch.setattr(state.throttlers["ip"], "threshold", 2)
    for _ in range(2):
        follow(app, "not-a-token")
    response, browser = follow(app, sign({"email": "jo@example.com"}))
    assert response.status_code == 400 and "Too many attempts" in response.get_data(as_text=True)
    assert whoami(browser) is None


def test_each_sign_in_is_an_event(app, jwt_on):
    seen = recorded_events(app)
    _, browser = follow(app, sign({"email": "jo@example.com"}))
    follow(app, "not-a-token")
    # the account's first sign-in is also the "user-joined" system event (core.http.auth.create_session)
    assert [(e.topic, e.user_id, e.details) for e in seen] == [
        ("user-joined", whoami(browser)["id"], {}), ("user-login", whoami(browser)["id"], {"method": "jwt"})]
