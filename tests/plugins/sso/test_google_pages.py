"""The web app's pages for Google Sign-In, password login off and the group mappings of JWT and LDAP:
they read and write through the API."""
from __future__ import annotations

from tests.plugins.sso.test_google import CLIENT_ID

HTMX = {"HX-Request": "true"}


def text(response) -> str:
    return response.get_data(as_text=True)


def test_google_section_saves_the_three_settings_through_the_api(admin, user):
    assert "Client ID" in text(admin.get("/admin/settings/authentication/google"))
    refused = admin.post("/admin/settings/authentication/google", headers=HTMX, json={
        "google-auth-client-id": "not-a-google-id", "google-auth-enabled": "1"})
    assert refused.status_code == 400 and "must end with" in text(refused)
    saved = admin.post("/admin/settings/authentication/google", headers=HTMX, json={
        "google-auth-client-id": CLIENT_ID, "google-auth-enabled": "1",
        "google-auth-auto-create-accounts-domain": "example.com"})
    assert saved.status_code == 200 and "Saved." in text(saved)
    assert admin.get("/api/setting/google-auth-enabled").json is True
    assert admin.get("/api/setting/google-auth-auto-create-accounts-domain").json == "example.com"
    assert user.get("/admin/settings/authentication/google").status_code in (403, 404)


def test_group_mappings_form_adds_removes_and_saves(admin, user):
    ids = {name: admin.post("/api/permissions/group", json={"name": name}).json["id"] for name in ("Sales", "Finance")}
    page = text(admin.get("/admin/settings/authentication/ldap/group-mappings"))
    assert "No mappings yet." in page and "Group mappings: LDAP" in page
    path = "/admin/settings/authentication/jwt/group-mappings"

    added = text(admin.post(path, headers=HTMX, json={"rows": "1", "name-0": "sales", "groups-0": str(ids["Sales"]),
                                                      "action": "add"}))
    assert 'name="name-1"' in added and 'value="sales"' in added  # the typed row is kept, a new one added
    assert f'<option value="{ids["Finance"]}">Finance</option>' in added and ">All Users<" not in added
    removed = text(admin.post(path, headers=HTMX, json={"rows": "2", "name-0": "sales", "name-1": "gone",
                                                        "action": "remove:1"}))
    assert 'value="gone"' not in removed and 'value="sales"' in removed
    assert admin.get("/api/setting/jwt-group-mappings").json == {}  # nothing saved by adding or removing

    saved = admin.post(path, headers=HTMX, json={"rows": "3", "name-0": "sales", "groups-0": str(ids["Sales"]),
                                                  "name-1": "money", "groups-1": [str(ids["Finance"]), str(ids["Sales"])],
                                                  "name-2": "", "groups-2": str(ids["Sales"])})
    assert saved.status_code == 200 and "Saved." in text(saved)
    assert admin.get("/api/setting/jwt-group-mappings").json == {"sales": [ids["Sales"]],
                                                                 "money": [ids["Finance"], ids["Sales"]]}
    again = text(admin.get(path))
    assert 'value="money"' in again and f'<option value="{ids["Finance"]}" selected>' in again

    twice = admin.post(path, headers=HTMX, json={"rows": "2", "name-0": "a", "name-1": "a"})
    assert twice.status_code == 400 and "mapped twice" in text(twice)
    assert user.post(path, headers=HTMX, json={"rows": "0"}).status_code in (403, 404)


def test_the_login_page_hides_the_password_form_while_password_login_is_off(app, admin):
    for key, value in (("jwt-identity-provider-uri", "https://idp.example.com/sso"),
                       ("jwt-shared-secret", "a-shared-secret-of-the-identity-provider-0123456789"),
                       ("jwt-enabled", True), ("enable-password-login", False)):
        assert admin.put(f"/api/setting/{key}", json={"value": value}).status_code == 204
    page = text(app.test_client().get("/auth/login?redirect=/collection/root"))
    assert 'type="password"' not in page and "Sign in with SSO" in page
    assert 'href="/auth/login?password=1&amp;redirect=/collection/root"' in page
    glass = text(app.test_client().get("/auth/login?password=1&redirect=/collection/root"))
    assert 'type="password"' in glass and "break-glass administrator" in glass
    # Turned on again from its settings page.
    assert admin.post("/admin/settings/authentication/password", headers=HTMX,
                      json={"enable-password-login": "1"}).status_code == 200
    assert 'type="password"' in text(app.test_client().get("/auth/login"))
