"""OpenID Connect sign-in (plugins/sso/oidc*.py) against a real OpenID provider: the npm package
oidc-provider run by Node.js (oidcop.py). A person starts from the app's login page, signs in at the
provider's own forms and comes back to Tessera's callback; every refusal leaves no session."""
from __future__ import annotations

import html
import re
import time
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

from plugins.sso import id_tokens
from plugins.sso.accounts import SignInRefused
from tests.serving import free_port
from tests.support import recorded_events

from . import oidcop

NAME = "test"
CALLBACK = f"http://localhost/auth/sso/{NAME}/callback"
JO = {"email": "jo@example.com", "email_verified": True, "given_name": "Jo", "family_name": "Doe",
      "groups": ["analysts", "finance"], "department": "sales"}
ACCOUNTS = {
    "jo": JO,
    "unverified": {"email": "un@example.com", "email_verified": False, "groups": []},
    "outsider": {"email": "out@elsewhere.org", "email_verified": True},
}


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    if oidcop.NODE is None:
        pytest.skip("node not found: install Node.js (Debian's nodejs package) to run the OpenID Connect tests "
                    "against oidc-provider")
    server = oidcop.start(tmp_path_factory.mktemp("oidc"), [CALLBACK], ACCOUNTS)
    yield server
    server.stop()


@pytest.fixture
def thin_provider(provider, tmp_path):
    """A second provider whose ID tokens carry no profile claims: those come from its userinfo endpoint."""
    server = oidcop.start(tmp_path, [CALLBACK], ACCOUNTS, thin_id_tokens=True)
    yield server
    server.stop()


@pytest.fixture
def groups(admin) -> dict[str, int]:
    return {name: admin.post("/api/permissions/group", json={"name": name}).json["id"]
            for name in ("Analysts", "Finance", "Manual")}


@pytest.fixture
def oidc_on(admin, provider, groups):
    return configure(admin, provider, groups)


def configure(admin, provider, groups):
    provider.set_accounts(ACCOUNTS)
    # The provider runs on loopback: the outbound guard lets Tessera reach it only when allowed.
    assert admin.put("/api/setting/http-actions-allowed-cidrs", json={"value": "127.0.0.0/8"}).status_code == 204
    config = [{"name": NAME, "display_name": "Test IdP", "issuer": provider.issuer, "client_id": oidcop.CLIENT_ID,
               "client_secret": oidcop.CLIENT_SECRET, "scopes": ["openid", "email", "profile", "groups"],
               "allowed_email_domains": ["example.com"], "auto_create_accounts": True,
               "group_mappings": {"analysts": [groups["Analysts"]], "finance": [groups["Finance"]]}}]
    assert admin.put("/api/setting/oidc-providers", json={"value": config}).status_code == 204
    return admin


def start(app, return_to: str = "/collection/root"):
    """A browser opens the login page, clicks the provider's button and is sent to the provider."""
    browser = app.test_client()
    page = browser.get("/auth/login", query_string={"redirect": return_to}).get_data(as_text=True)
    found = re.search(rf'href="(/auth/sso/{NAME}\?return_to=[^"]*)">Sign in with Test IdP<', page)
    assert found and dict(parse_qsl(urlsplit(html.unescape(found[1])).query)) == {"return_to": return_to}, page
    response = browser.get(html.unescape(found[1]))
    assert response.status_code == 302, response.get_data(as_text=True)
    return browser, response.headers["Location"]


def come_back(browser, callback_url: str):
    parts = urlsplit(callback_url)
    return browser.get(parts.path, query_string=parts.query)


def whoami(browser) -> dict | None:
    response = browser.get("/api/user/current")
    return response.json if response.status_code == 200 else None


def groups_of(admin, user_id: int) -> set[int]:
    return {g["id"] for g in admin.get(f"/api/user/{user_id}").json["user_group_memberships"]}


def assert_refused(response, browser, message: str, status: int = 401):
    text = response.get_data(as_text=True)
    assert response.status_code == status and message in text, text
    assert browser.get_cookie("metabase.SESSION") is None and whoami(browser) is None


def with_query(url: str, **changes) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query)) | changes
    return urlunsplit(parts._replace(query=urlencode(query)))


def test_a_person_signs_in_from_the_login_page_and_their_groups_follow_the_provider(app, oidc_on, provider, groups):
    seen = recorded_events(app)
    browser, authorize = start(app, "/collection/root?tab=1")
    query = dict(parse_qsl(urlsplit(authorize).query))
    assert authorize.startswith(provider.issuer)
    assert query["code_challenge_method"] == "S256" and query["redirect_uri"] == CALLBACK
    assert query["nonce"] and query["state"] and "groups" in query["scope"].split()
    landed = come_back(browser, oidcop.sign_in(authorize, "jo"))
    assert landed.status_code == 302 and landed.headers["Location"] == "/collection/root?tab=1"
    me = whoami(browser)
    assert me["email"] == "jo@example.com" and me["first_name"] == "Jo" and me["sso_source"] == "oidc"
    detail = oidc_on.get(f"/api/user/{me['id']}").json
    assert detail["login_attributes"] == {"department": "sales"}
    assert groups_of(oidc_on, me["id"]) >= {groups["Analysts"], groups["Finance"]}
    assert oidc_on.post("/api/permissions/membership",
                        json={"user_id": me["id"], "group_id": groups["Manual"]}).status_code == 200

    # The provider drops "finance": the next sign-in leaves Finance only; Manual is nobody's mapping.
    provider.set_accounts({**ACCOUNTS, "jo": {**JO, "groups": ["analysts"]}})
    again, authorize = start(app, "/")
    assert come_back(again, oidcop.sign_in(authorize, "jo")).status_code == 302
    assert whoami(again)["id"] == me["id"]
    assert [(e.user_id, e.details) for e in seen if e.topic == "user-login"] == [(me["id"], login)] * 2
    now_in = groups_of(oidc_on, me["id"])
    assert groups["Analysts"] in now_in and groups["Manual"] in now_in and groups["Finance"] not in now_in


login = {"method": "oidc", "provider": NAME}


def test_claims_only_the_userinfo_endpoint_sends_are_used(app, admin, thin_provider, groups):
    configure(admin, thin_provider, groups)
    browser, authorize = start(app)
    assert come_back(browser, oidcop.sign_in(authorize, "jo")).status_code == 302
    me = whoami(browser)
    assert me["first_name"] == "Jo" and me["last_name"] == "Doe"
    assert groups_of(admin, me["id"]) >= {groups["Analysts"], groups["Finance"]}
    assert admin.get(f"/api/user/{me['id']}").json["login_attributes"] == {"department": "sales"}


def test_refusals_count_against_the_login_throttle(app, oidc_on, monkeypatch):
    state = app.extensions["tessera"]
    monkeypatch.setitem(state.config, "TESSERA_DISABLE_SESSION_THROTTLE", False)
    monkeypatch.setattr(state.throttlers["ip"], "threshold", 2)
    for _ in range(2):
        browser, _ = start(app)
        assert come_back(browser, f"{CALLBACK}?code=x&state=forged").status_code == 401
    browser, authorize = start(app)
    assert_refused(come_back(browser, oidcop.sign_in(authorize, "jo")), browser, "Too many attempts", status=400)


def test_a_wrong_or_foreign_state_is_refused(app, oidc_on):
    browser, authorize = start(app)
    callback = oidcop.sign_in(authorize, "jo")
    assert_refused(come_back(browser, with_query(callback, state="forged-state")), browser, "state does not match")
    # The real callback in a browser that did not start the sign-in (login CSRF) is refused too.
    stranger = app.test_client()
    assert_refused(come_back(stranger, callback), stranger, "not started in this browser")


def test_a_wrong_nonce_is_refused(app, oidc_on):
    browser, authorize = start(app)
    # The provider is asked for another nonce than the one this browser's flow remembers.
    callback = oidcop.sign_in(with_query(authorize, nonce="not-the-flows-nonce"), "jo")
    assert_refused(come_back(browser, callback), browser, "nonce does not match")


def test_an_expired_id_token_is_refused(app, oidc_on, monkeypatch):
    browser, authorize = start(app)
    callback = oidcop.sign_in(authorize, "jo")
    monkeypatch.setattr(id_tokens, "clock", lambda: time.time() + 3 * 3600)  # the token is hours old on arrival
    assert_refused(come_back(browser, callback), browser, "has expired")


def test_an_unverified_email_and_a_foreign_domain_are_refused(app, oidc_on):
    browser, authorize = start(app)
    assert_refused(come_back(browser, oidcop.sign_in(authorize, "unverified")), browser, "not verified")
    browser, authorize = start(app)
    assert_refused(come_back(browser, oidcop.sign_in(authorize, "outsider")), browser,
                   "e-mail domain elsewhere.org may not sign in")


def test_return_to_another_site_is_refused_before_the_provider(app, oidc_on):
    for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
        browser = app.test_client()
        response = browser.get(f"/auth/sso/{NAME}", query_string={"return_to": target})
        assert_refused(response, browser, "must be a path on this site")


def test_an_unknown_provider_is_a_404(app, oidc_on):
    response = app.test_client().get("/auth/sso/nobody")
    assert response.status_code == 404 and "no OpenID Connect provider named 'nobody'" in response.get_data(as_text=True)


def test_id_tokens_are_verified_against_the_providers_published_keys(provider):
    """The checks no honest provider's token endpoint lets us provoke, on tokens signed with the
    provider's own key and verified against the key set it publishes."""
    now = int(time.time())
    good = {"iss": provider.issuer, "aud": oidcop.CLIENT_ID, "sub": "jo", "iat": now, "exp": now + 300,
            "nonce": "n-1", "email": "jo@example.com", "email_verified": True}

    def verify(token, nonce="n-1"):
        return id_tokens.verify(token, jwks_uri=f"{provider.issuer}/jwks", issuer=provider.issuer,
                                audience=oidcop.CLIENT_ID, nonce=nonce, allowed_cidrs="127.0.0.0/8")

    assert verify(provider.sign(good))["email"] == "jo@example.com"
    cases = [
        (provider.sign({**good, "aud": oidcop.OTHER_CLIENT_ID}), "another application"),
        (provider.sign({**good, "aud": [oidcop.CLIENT_ID, "x"], "azp": "x"}), "another application"),
        (provider.sign({**good, "iat": now - 7200, "exp": now - 3600}), "has expired"),
        (provider.sign({**good, "iss": "https://other.example"}), "comes from another issuer"),
        (provider.sign({**good, "email_verified": "false"}), "not verified"),
        (provider.sign(good, header={"kid": "unknown-key"}), "a key the identity provider does not publish"),
        (unsigned(good), "`alg: none`"),
        (unsigned(good, alg="HS256"), "must be signed with RS256"),
        ("not-a-token", "not a signed JSON Web Token"),
    ]
    for token, message in cases:
        with pytest.raises(SignInRefused, match=message.replace("`", ".")):
            verify(token)
    with pytest.raises(SignInRefused, match="nonce does not match"):
        verify(provider.sign(good), nonce="n-2")


def unsigned(claims: dict, alg: str = "none") -> str:
    import base64
    import json

    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f"{part({'alg': alg, 'typ': 'JWT'})}.{part(claims)}." + ("c2ln" if alg != "none" else "")


def test_a_misconfigured_provider_is_refused_when_saved(admin):
    answer = admin.put("/api/setting/oidc-providers", json={"value": [{"name": "Bad Name", "client_id": "x",
                                                                       "issuer": "https://idp.example.com"}]})
    assert answer.status_code == 400 and "name" in str(answer.json)
    answer = admin.put("/api/setting/oidc-providers", json={"value": [{"name": "ok", "client_id": "x"}]})
    assert answer.status_code == 400 and "issuer or a discovery_url" in str(answer.json)


def test_providers_from_the_environment_show_on_the_login_page(app, monkeypatch):
    monkeypatch.setenv("TESSERA_OIDC_PROVIDERS", '[{"name": "corp", "display_name": "Corp login", '
                       '"issuer": "https://idp.example.com", "client_id": "tessera", "client_secret": "s3cret"}]')
    properties = app.test_client().get("/api/session/properties").json
    assert properties["oidc-sign-in-providers"] == [{"name": "corp", "display_name": "Corp login"}]
    assert "oidc-providers" not in properties


def test_the_admin_section_lists_the_providers_and_never_their_secrets(admin, user):
    secret = "a-client-secret-nobody-may-read-back"
    config = [{"name": "corp", "display_name": "Corp login", "issuer": "https://idp.example.com/realms/corp",
               "client_id": "tessera-app", "client_secret": secret, "allowed_email_domains": ["corp.example"],
               "group_mappings": {"bi-admins": [2]}}]
    assert admin.put("/api/setting/site-url", json={"value": "https://bi.example.com"}).status_code == 204
    assert admin.put("/api/setting/oidc-providers", json={"value": config}).status_code == 204
    page = admin.get("/admin/settings/authentication/oidc")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "Corp login" in text and "tessera-app" in text and "corp.example" in text
    assert "https://bi.example.com/auth/sso/corp/callback" in text and "bi-admins → 2" in text
    assert secret not in text and "<dt>Client secret</dt><dd>Set</dd>" in text
    assert 'href="/admin/settings/authentication/oidc"' in admin.get("/admin/settings/general").get_data(as_text=True)
    assert user.get("/admin/settings/authentication/oidc").status_code in (403, 404)


def test_the_provider_is_reached_through_the_outbound_guard(app, admin):
    """Discovery goes through core.outbound.http: a loopback provider is refused until its network is
    allowed, and one that does not answer is a 502 that says so."""
    port = free_port()  # nothing listens there
    config = [{"name": "local", "issuer": f"http://127.0.0.1:{port}", "client_id": "tessera"}]
    assert admin.put("/api/setting/oidc-providers", json={"value": config}).status_code == 204
    browser = app.test_client()
    refused = browser.get("/auth/sso/local")
    assert refused.status_code == 502 and "http-actions-allowed-cidrs" in refused.get_data(as_text=True)
    assert admin.put("/api/setting/http-actions-allowed-cidrs", json={"value": "127.0.0.0/8"}).status_code == 204
    down = browser.get("/auth/sso/local")
    assert down.status_code == 502 and "discovery document could not be read" in down.get_data(as_text=True)
    assert browser.get_cookie("tessera.oidc", path="/auth/sso/local/") is None


def test_a_configured_provider_lets_password_login_be_turned_off(app, admin, user):
    from core.testing import USER_PASSWORD

    def log_in():
        return app.test_client().post("/api/session", json={"username": "user@example.com", "password": USER_PASSWORD})

    assert admin.put("/api/setting/enable-password-login", json={"value": False}).status_code == 204
    assert log_in().status_code == 200  # no sign-on method yet: the setting is not in force
    config = [{"name": "corp", "issuer": "https://idp.example.com", "client_id": "tessera"}]
    assert admin.put("/api/setting/oidc-providers", json={"value": config}).status_code == 204
    refused = log_in()
    assert refused.status_code == 400 and "Password login is disabled" in str(refused.json)


def test_the_admin_form_adds_edits_and_removes_a_provider_keeping_its_secret(admin):
    hx, form = {"HX-Request": "true"}, "/admin/settings/authentication/oidc/provider"
    secret = "a-secret-the-form-never-shows"
    fields = {"original": "", "name": "corp", "display_name": "Corp login", "issuer": "https://idp.example.com",
              "client_id": "tessera-app", "client_secret": secret, "scopes": "openid email groups",
              "claim_email": "mail", "claim_groups": "roles", "allowed_email_domains": "corp.example, @Example.org",
              "auto_create_accounts": "1", "group_sync": "1", "rows": "1", "name-0": "bi-admins", "groups-0": ["2"]}
    answer = admin.post(form, json=fields, headers=hx)
    assert answer.status_code == 200 and answer.headers["HX-Redirect"] == "/admin/settings/authentication/oidc"
    [stored] = admin.get("/api/setting/oidc-providers").json
    assert stored == {"name": "corp", "display_name": "Corp login", "issuer": "https://idp.example.com",
                      "client_id": "tessera-app", "client_secret": secret, "scopes": ["openid", "email", "groups"],
                      "claims": {"email": "mail", "groups": "roles"},
                      "allowed_email_domains": ["corp.example", "@Example.org"], "auto_create_accounts": True,
                      "group_sync": True, "group_mappings": {"bi-admins": [2]}}
    page = admin.get(f"{form}?name=corp").get_data(as_text=True)
    assert "Leave empty to keep the secret set now." in page and 'value="roles"' in page and secret not in page
    assert secret not in admin.get("/admin/settings/authentication/oidc").get_data(as_text=True)
    # A redraw (a mapping row added) does not echo the typed secret either.
    assert secret not in admin.post(form, json={**fields, "action": "add"}, headers=hx).get_data(as_text=True)

    edit = {**fields, "original": "corp", "client_secret": "", "display_name": "Corp SSO", "group_sync": None,
            "rows": "0"}
    assert admin.post(form, json=edit, headers=hx).status_code == 200
    [stored] = admin.get("/api/setting/oidc-providers").json
    assert stored["client_secret"] == secret and stored["display_name"] == "Corp SSO"
    assert stored["group_sync"] is False and stored["group_mappings"] == {}

    bad = admin.post(form, json={**edit, "issuer": "idp.example.com"}, headers=hx)
    assert bad.status_code == 400 and "issuer" in bad.get_data(as_text=True)
    assert "must be an http or https URL" in bad.get_data(as_text=True)
    assert admin.get("/api/setting/oidc-providers").json[0]["issuer"] == "https://idp.example.com"

    listing = admin.get("/admin/settings/authentication/oidc").get_data(as_text=True)
    assert "can no longer do so" in listing and f'href="{form}?name=corp"' in listing
    answer = admin.post(f"{form}/remove", json={"name": "corp"}, headers=hx)
    assert answer.status_code == 200 and admin.get("/api/setting/oidc-providers").json == []
    assert admin.get(f"{form}?name=corp").status_code == 404


def test_the_admin_form_is_read_only_while_the_environment_sets_the_providers(admin, monkeypatch):
    monkeypatch.setenv("TESSERA_OIDC_PROVIDERS", '[{"name": "corp", "issuer": "https://idp.example.com", '
                       '"client_id": "tessera", "client_secret": "env-s3cret"}]')
    form = "/admin/settings/authentication/oidc/provider"
    page = admin.get(f"{form}?name=corp").get_data(as_text=True)
    assert "this form is read-only" in page and "<fieldset disabled>" in page and "env-s3cret" not in page
    listing = admin.get("/admin/settings/authentication/oidc").get_data(as_text=True)
    assert "read-only here" in listing and "Add a provider" not in listing
    fields = {"original": "corp", "name": "corp", "issuer": "https://idp.example.com", "client_id": "other"}
    answer = admin.post(form, json=fields, headers={"HX-Request": "true"})
    assert answer.status_code == 400 and "set by the environment" in answer.get_data(as_text=True)
    assert admin.post(f"{form}/remove", json={"name": "corp"}, headers={"HX-Request": "true"}).status_code == 400
