"""Google Sign-In (plugins/sso/google.py) through HTTP: ID tokens signed by the test with its own RSA key,
whose public half a local HTTP server publishes as Google's keys (real RS256 verification)."""
from __future__ import annotations

import base64
import json
import time

import pytest
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey

from core.testing.app import ApiClient
from core.testing.http_server import HttpSink
from plugins.sso import jwks

CLIENT_ID = "1234-tessera.apps.googleusercontent.com"
ISSUER = "https://accounts.google.com"
KEY = RSAKey.generate_key(2048, parameters={"kid": "key-1", "use": "sig", "alg": "RS256"})
OTHER_KEY = RSAKey.generate_key(2048, parameters={"kid": "key-1", "use": "sig", "alg": "RS256"})


@pytest.fixture(scope="module")
def google_keys():
    sink = HttpSink()
    sink.route("/oauth2/v3/certs", headers={"Content-Type": "application/json", "Cache-Control": "max-age=300"},
               body=json.dumps({"keys": [KEY.as_dict(private=False)]}))
    yield sink
    sink.close()


@pytest.fixture
def google_on(app, admin, google_keys, monkeypatch):
    """Google Sign-In enabled for CLIENT_ID, its keys served by the local server; auto-creation for
    example.com."""
    jwks.clear_cache()
    config = app.extensions["tessera"].config
    monkeypatch.setitem(config, "TESSERA_GOOGLE_JWKS_URL", google_keys.url + "/oauth2/v3/certs")
    monkeypatch.setitem(config, "TESSERA_GOOGLE_ISSUERS", ISSUER)
    assert admin.put("/api/google/settings", json={
        "google-auth-client-id": CLIENT_ID, "google-auth-enabled": True,
        "google-auth-auto-create-accounts-domain": "example.com"}).status_code == 204
    return admin


def id_token(claims: dict | None = None, key=KEY, header: dict | None = None) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": CLIENT_ID, "sub": "1089", "iat": now, "exp": now + 600, "email": "jo@example.com",
            "email_verified": True, "given_name": "Jo", "family_name": "Doe", "hd": "example.com", **(claims or {})}
    return jwt.encode(header or {"alg": "RS256", "kid": "key-1"}, body, key)


def google_auth(app, token: str):
    browser = app.test_client()
    return browser.post("/api/session/google_auth", json={"token": token}), browser


def refused(app, token: str, message: str, status: int = 401):
    response, browser = google_auth(app, token)
    assert response.status_code == status, response.get_data(as_text=True)
    assert message in response.get_data(as_text=True)
    assert browser.get_cookie("metabase.SESSION") is None


def test_a_token_signs_in_creates_the_account_and_sets_the_cookie(app, google_on, google_keys):
    response, browser = google_auth(app, id_token())
    assert response.status_code == 200, response.json
    cookie = browser.get_cookie("metabase.SESSION")
    assert cookie is not None and cookie.http_only and cookie.value == response.json["id"]
    me = ApiClient(app, {"X-Metabase-Session": response.json["id"]}).get("/api/user/current").json
    assert (me["email"], me["first_name"], me["last_name"], me["sso_source"]) == ("jo@example.com", "Jo", "Doe",
                                                                                  "google")
    assert google_on.get(f"/api/user/{me['id']}").json["login_attributes"] == {"hd": "example.com"}
    # The keys were fetched once and kept (Cache-Control), not once per sign-in.
    google_auth(app, id_token())
    assert [r.path for r in google_keys.requests].count("/oauth2/v3/certs") == 1


def test_an_existing_account_of_another_domain_signs_in(app, google_on, user):
    assert google_on.put("/api/google/settings", json={
        "google-auth-client-id": CLIENT_ID, "google-auth-enabled": True,
        "google-auth-auto-create-accounts-domain": "example.net"}).status_code == 204
    response, _ = google_auth(app, id_token({"email": "USER@example.com", "given_name": "Ulrike"}))
    assert response.status_code == 200, response.json
    assert google_on.get(f"/api/user/{user.user['id']}").json["first_name"] == "Ulrike"


def test_an_unknown_address_outside_the_domains_is_refused(app, google_on):
    refused(app, id_token({"email": "new@example.org"}), "You'll need an administrator to create a Tessera "
                                                         "account before you can use Google to log in.")
    assert google_on.put("/api/google/settings", json={
        "google-auth-client-id": CLIENT_ID, "google-auth-enabled": True,
        "google-auth-auto-create-accounts-domain": "example.com, example.org"}).status_code == 204
    assert google_auth(app, id_token({"email": "new@example.org"}))[0].status_code == 200


def test_refusals(app, google_on):
    now = int(time.time())
    refused(app, id_token({"aud": "someone-else.apps.googleusercontent.com"}), "appears to be incorrect")
    refused(app, id_token({"exp": now - 3600, "iat": now - 7200}), "expired")
    refused(app, id_token({"email_verified": False}), "Email is not verified.")
    refused(app, id_token({"iss": "https://evil.example"}), "another issuer")
    refused(app, id_token(key=OTHER_KEY), "signature")
    refused(app, id_token(header={"alg": "RS256", "kid": "unknown"}), "not publish")
    unsigned = ".".join(base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()
                        for part in ({"alg": "none"}, {"iss": ISSUER, "aud": CLIENT_ID, "email": "jo@example.com",
                                                       "email_verified": True, "exp": now + 600})) + "."
    refused(app, unsigned, "`alg: none`")
    # An HMAC token "signed" with the public key's text: the algorithm is refused before any key is used.
    hmac = jwt.encode({"alg": "HS256"}, {"iss": ISSUER, "aud": CLIENT_ID}, OctKey.import_key("k" * 32))
    refused(app, hmac, "must be signed with RS256")
    refused(app, "not-a-token", "not a signed JSON Web Token")


def test_disabled_or_unconfigured_is_refused(app, google_on):
    assert google_on.put("/api/setting/google-auth-enabled", json={"value": False}).status_code == 204
    refused(app, id_token(), "Google Auth is disabled.", status=400)
    assert google_on.put("/api/google/settings", json={}).status_code == 204
    assert google_on.get("/api/setting/google-auth-client-id").json is None
    refused(app, id_token(), "Google Auth is disabled.", status=400)


def test_refusals_are_throttled_per_ip(app, google_on, monkeypatch):
    state = app.extensions["tessera"]
    monkeypatch.setitem(state.config, "TESSERA_DISABLE_SESSION_THROTTLE", False)
    monkeypatch.setattr(state.throttlers["ip"], "threshold", 2)
    for _ in range(2):
        google_auth(app, "not-a-token")
    response, _ = google_auth(app, id_token())
    assert response.status_code == 400 and "Too many attempts" in response.get_data(as_text=True)


def test_settings_validation_visibility_and_permissions(app, admin, user, client):
    def put(body):
        return admin.put("/api/google/settings", json=body)

    assert "must end with" in json.dumps(put({"google-auth-client-id": "not-google"}).json)
    assert "not configured" in json.dumps(put({"google-auth-enabled": True}).json)
    assert "Invalid domain" in json.dumps(put({"google-auth-client-id": CLIENT_ID,
                                               "google-auth-auto-create-accounts-domain": "a@b.com"}).json)
    assert put({"google-auth-client-id": CLIENT_ID, "other": 1}).status_code == 400
    assert put({"google-auth-enabled": "yes"}).status_code == 400
    assert admin.get("/api/setting/google-auth-client-id").json is None  # nothing of a refused PUT was kept
    assert user.put("/api/google/settings", json={"google-auth-client-id": CLIENT_ID}).status_code == 403
    assert client.put("/api/google/settings", json={"google-auth-client-id": CLIENT_ID}).status_code == 401

    assert put({"google-auth-client-id": f"  {CLIENT_ID} ", "google-auth-enabled": True,
                "google-auth-auto-create-accounts-domain": "Example.com"}).status_code == 204
    public = client.get("/api/session/properties").json
    assert public["google-auth-client-id"] == CLIENT_ID and public["google-auth-enabled"] is True
    assert "google-auth-configured" not in public and "google-auth-auto-create-accounts-domain" not in public
    settings = {s["key"]: s["value"] for s in admin.get("/api/setting").json}
    assert settings["google-auth-configured"] is True
    assert settings["google-auth-auto-create-accounts-domain"] == "example.com"
    # A client id alone (Metabase's form sends all three): the missing switch means off.
    assert put({"google-auth-client-id": CLIENT_ID}).status_code == 204
    assert client.get("/api/session/properties").json["google-auth-enabled"] is False


# -- the login page's button: GET /auth/google, Google's redirect back, POST /auth/google/callback ------------

AUTHORIZE = "https://google.test/o/oauth2/v2/auth"


def start(app, google_on, monkeypatch, return_to: str = "/collection/root"):
    """A browser starting the sign-in: it and the query Google would receive."""
    from urllib.parse import parse_qs, urlsplit

    monkeypatch.setitem(app.extensions["tessera"].config, "TESSERA_GOOGLE_AUTHORIZATION_URL", AUTHORIZE)
    browser = app.test_client()
    response = browser.get("/auth/google", query_string={"return_to": return_to})
    assert response.status_code == 302, response.get_data(as_text=True)
    location = response.headers["Location"]
    assert location.startswith(AUTHORIZE + "?")
    return browser, {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def test_the_button_redirects_to_google_and_the_callback_signs_in(app, google_on, monkeypatch):
    browser, query = start(app, google_on, monkeypatch)
    assert query["client_id"] == CLIENT_ID and query["response_type"] == "id_token"
    assert query["redirect_uri"] == "http://localhost/auth/google/callback" and "openid" in query["scope"]
    page = browser.get("/auth/google/callback")
    assert 'src="/auth/google/callback.js"' in page.get_data(as_text=True)
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert browser.get("/auth/google/callback.js").status_code == 200

    done = browser.post("/auth/google/callback", json={"id_token": id_token({"nonce": query["nonce"]}),
                                                       "state": query["state"]})
    assert done.status_code == 200 and done.json == {"location": "/collection/root"}
    assert browser.get("/api/user/current").json["email"] == "jo@example.com"


def test_the_callback_refuses_another_state_nonce_or_browser(app, google_on, monkeypatch):
    cases = ((lambda q: {"id_token": id_token({"nonce": q["nonce"]}), "state": "forged"}, "wrong state"),
             (lambda q: {"id_token": id_token({"nonce": "other"}), "state": q["state"]}, "wrong nonce"),
             (lambda q: {"id_token": id_token(), "state": q["state"]}, "wrong nonce"))
    for body, message in cases:
        browser, query = start(app, google_on, monkeypatch)
        refused_here = browser.post("/auth/google/callback", json=body(query))
        assert refused_here.status_code == 401 and message in refused_here.json["message"]
        assert browser.get("/api/user/current").status_code == 401
    # A browser that did not start the sign-in (no cookie) is refused even with the right state.
    other = app.test_client()
    refused_there = other.post("/auth/google/callback", json={"id_token": id_token({"nonce": query["nonce"]}),
                                                              "state": query["state"]})
    assert refused_there.status_code == 401 and "wrong state" in refused_there.json["message"]
    assert app.test_client().get("/auth/google", query_string={"return_to": "https://evil.example/"}).status_code == 401


def test_the_settings_one_by_one(admin):
    assert admin.put("/api/setting/google-auth-enabled", json={"value": True}).status_code == 400
    assert admin.get("/api/setting/google-auth-enabled").json is False
    assert admin.put("/api/setting/google-auth-client-id", json={"value": CLIENT_ID}).status_code == 204
    assert admin.get("/api/setting/google-auth-enabled").json is True  # never set: on with a client id
    assert admin.put("/api/setting/google-auth-client-id", json={"value": "  "}).status_code == 204
    assert admin.get("/api/setting/google-auth-client-id").json is None
    assert admin.get("/api/setting/google-auth-enabled").json is False
