"""The web app's side of plugins/sso: the login page's SSO button and the admin pages of JWT and LDAP,
which read and write through the API (a secret is never shown back)."""
from __future__ import annotations

from core.assembly.app import create_app
from core.testing import setup_admin

from .slapd import ADMIN_DN, USERS
from .slapd import ADMIN_PASSWORD as SLAPD_PASSWORD

HTMX = {"HX-Request": "true"}
SECRET = "page-shared-secret-0123456789-abcdefghij"


def text(response) -> str:
    return response.get_data(as_text=True)


def test_the_login_page_offers_sso_while_jwt_is_enabled(app, admin):
    page = text(app.test_client().get("/auth/login?redirect=/collection/root"))
    assert "Sign in with SSO" not in page
    for key, value in (("jwt-identity-provider-uri", "https://idp.example.com/sso"), ("jwt-shared-secret", SECRET),
                       ("jwt-enabled", True)):
        assert admin.put(f"/api/setting/{key}", json={"value": value}).status_code == 204
    page = text(app.test_client().get("/auth/login?redirect=/collection/root"))
    assert 'href="/auth/sso?return_to=/collection/root"' in page and "Sign in with SSO" in page


def test_jwt_settings_page_saves_through_the_api_and_never_shows_the_secret(admin, user):
    page = admin.get("/admin/settings/authentication/jwt")
    assert page.status_code == 200 and "Identity provider URI" in text(page)
    saved = admin.post("/admin/settings/authentication/jwt", headers=HTMX, json={
        "jwt-enabled": "1", "jwt-identity-provider-uri": "https://idp.example.com/sso", "jwt-shared-secret": SECRET,
        "jwt-user-provisioning-enabled": "1"})
    assert saved.status_code == 200 and "Saved." in text(saved)
    assert admin.get("/api/setting/jwt-enabled").json is True
    assert admin.get("/api/setting/jwt-shared-secret").json == SECRET
    again = text(admin.get("/admin/settings/authentication/jwt"))
    assert SECRET not in again and SECRET[-2:] + '"' not in again and 'placeholder="Set"' in again
    # An empty secret field keeps the secret.
    admin.post("/admin/settings/authentication/jwt", headers=HTMX, json={"jwt-enabled": "1", "jwt-shared-secret": ""})
    assert admin.get("/api/setting/jwt-shared-secret").json == SECRET
    assert user.get("/admin/settings/authentication/jwt").status_code in (403, 404)


def test_ldap_settings_page_connects_before_saving(admin, slapd):
    form = {"ldap-enabled": "1", "ldap-host": "localhost", "ldap-port": str(slapd.port), "ldap-security": "none",
            "ldap-bind-dn": ADMIN_DN, "ldap-password": "wrong", "ldap-user-base": USERS,
            "ldap-user-provisioning-enabled": "1"}
    refused = admin.post("/admin/settings/authentication/ldap", headers=HTMX, json=form)
    assert refused.status_code == 400 and "refused the bind DN" in text(refused)
    assert admin.get("/api/setting/ldap-enabled").json is False
    saved = admin.post("/admin/settings/authentication/ldap", headers=HTMX, json={**form, "ldap-password": SLAPD_PASSWORD})
    assert saved.status_code == 200 and "LDAP server accepted" in text(saved), text(saved)
    assert admin.get("/api/setting/ldap-enabled").json is True
    page = text(admin.get("/admin/settings/authentication/ldap"))
    assert SLAPD_PASSWORD not in page
    # Saved again with the password left empty: the stored one is kept (the connection test passes).
    kept = admin.post("/admin/settings/authentication/ldap", headers=HTMX, json={**form, "ldap-password": ""})
    assert kept.status_code == 200, text(kept)


def test_the_sections_go_with_the_plugin(app_config):
    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.sso"})
    admin = setup_admin(app)
    assert admin.get("/admin/settings/authentication/jwt").status_code == 404
    assert admin.get("/admin/settings/authentication/ldap").status_code == 404
    general = text(admin.get("/admin/settings/general"))
    assert "/admin/settings/authentication/jwt" not in general and "Sign in with SSO" not in text(
        app.test_client().get("/auth/login"))
    app.extensions["tessera"].db.dispose()


def test_a_directory_user_signs_in_through_the_login_page(app, admin, slapd):
    assert 'type="email"' in text(app.test_client().get("/auth/login"))
    assert admin.put("/api/ldap/settings", json={
        "ldap-enabled": True, "ldap-host": "localhost", "ldap-port": slapd.port, "ldap-bind-dn": ADMIN_DN,
        "ldap-password": SLAPD_PASSWORD, "ldap-user-base": USERS}).status_code == 204
    browser = app.test_client()
    page = text(browser.get("/auth/login"))
    assert "Username or e-mail address" in page and 'name="username" type="text"' in page
    wrong = browser.post("/auth/login", headers=HTMX, json={"username": "jdoe", "password": "nope", "redirect": "/"})
    assert wrong.status_code == 401 and "did not match" in text(wrong)
    signed_in = browser.post("/auth/login", headers=HTMX, json={"username": "jdoe", "password": "jane-ldap-pass",
                                                                "redirect": "/collection/root"})
    assert signed_in.status_code in (200, 204, 302, 303), text(signed_in)
    assert browser.get("/api/user/current").json["email"] == "jane.doe@example.com"
