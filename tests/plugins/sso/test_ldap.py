"""LDAP logins (plugins/sso) against a real OpenLDAP (tests/plugins/sso/slapd.py), plain and StartTLS."""
from __future__ import annotations

import json

import pytest

from core.testing.app import ADMIN_EMAIL, ADMIN_PASSWORD, ApiClient

from .slapd import ADMIN_DN, GROUPS, USERS
from .slapd import ADMIN_PASSWORD as SLAPD_PASSWORD


def settings_for(slapd, **overrides) -> dict:
    return {"ldap-host": "localhost", "ldap-port": slapd.port, "ldap-security": "none", "ldap-bind-dn": ADMIN_DN,
            "ldap-password": SLAPD_PASSWORD, "ldap-user-base": USERS, "ldap-enabled": True, **overrides}


@pytest.fixture
def ldap_on(admin, slapd):
    response = admin.put("/api/ldap/settings", json=settings_for(slapd))
    assert response.status_code == 204, response.json
    return admin


def login(app, username: str, password: str):
    return app.test_client().post("/api/session", json={"username": username, "password": password})


def me(app, response) -> dict:
    return ApiClient(app, {"X-Metabase-Session": response.json["id"]}).get("/api/user/current").json


def test_a_directory_user_logs_in_by_uid_or_mail_and_gets_an_account(app, ldap_on):
    response = login(app, "jdoe", "jane-ldap-pass")
    assert response.status_code == 200, response.json
    user = me(app, response)
    assert (user["email"], user["first_name"], user["last_name"], user["sso_source"]) == (
        "jane.doe@example.com", "Jane", "Doe", "ldap")
    assert login(app, "jane.doe@example.com", "jane-ldap-pass").status_code == 200
    # The entry's other attributes are the login attributes; the password never is.
    attributes = ldap_on.get(f"/api/user/{user['id']}").json["login_attributes"]
    assert attributes["title"] == "Analyst" and attributes["departmentNumber"] == "42"
    assert "userPassword" not in attributes and "mail" not in attributes


def test_a_wrong_directory_password_is_refused_without_local_fallback(app, ldap_on):
    response = login(app, "jdoe", "not-her-password")
    assert response.status_code == 401 and response.json["errors"] == {"password": "did not match stored password"}


def test_local_accounts_still_log_in(app, ldap_on):
    assert login(app, ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 200


@pytest.mark.parametrize("username", ["*", "j*", "*)(uid=*", "jdoe)(|(uid=*", "\\2a", "jdoe\x00"])
def test_filter_characters_in_the_username_find_nobody(app, ldap_on, slapd, username, monkeypatch):
    from plugins.sso import ldap

    found = []
    find = ldap._find
    monkeypatch.setattr(ldap, "_find", lambda values, login: found.append(find(values, login)) or found[-1])
    response = login(app, username, "jane-ldap-pass")
    # The directory matched no entry (the login then fails against local accounts): unescaped, each of
    # these would have matched Jane, or everyone.
    assert found == [None]
    assert response.status_code == 401 and "id" not in (response.json or {})
    import ldap3
    conn = ldap3.Connection(ldap3.Server("127.0.0.1", port=slapd.port), ADMIN_DN, SLAPD_PASSWORD, auto_bind=True)
    try:
        raw = conn.search(USERS, ldap.DEFAULT_FILTER.replace("{login}", username))
    except ldap3.core.exceptions.LDAPException:
        raw = None  # not even a filter once pasted in: the server would have been asked something else
    if username in ("*", "j*", "*)(uid=*"):
        assert raw, "the unescaped filter should have matched someone"
    conn.unbind()


def test_a_login_made_of_filter_characters_matches_only_itself(app, ldap_on):
    assert login(app, "star*", "star-ldap-pass").status_code == 200
    assert login(app, "star*", "jane-ldap-pass").status_code == 401


@pytest.mark.parametrize("password", ["", "   "])
def test_an_empty_password_is_refused(app, ldap_on, password, monkeypatch):
    from plugins.sso import ldap

    binds = []
    monkeypatch.setattr(ldap, "_connection", lambda *a: binds.append(a) or pytest.fail("bound"))
    response = login(app, "jdoe", password)
    assert response.status_code in (400, 401) and "id" not in (response.json or {})
    assert binds == []
    # Asked directly, the directory refuses it too, before any bind.
    with app.app_context():
        state = app.extensions["tessera"]
        with state.db.session() as session:
            check = ldap.check_login(session, state.settings, "jdoe", password)
    assert check is not None and check.user is None and binds == []


def test_group_sync_adds_and_removes_mapped_groups_only(app, ldap_on, slapd):
    ids = {name: ldap_on.post("/api/permissions/group", json={"name": name}).json["id"]
           for name in ("Analysts", "Finance", "Manual")}
    mappings = {f"cn=analysts,{GROUPS}": [ids["Analysts"]], f"CN=Finance, {GROUPS}": [ids["Finance"]]}
    assert ldap_on.put("/api/ldap/settings", json=settings_for(
        slapd, **{"ldap-group-sync": True, "ldap-group-base": GROUPS, "ldap-group-mappings": mappings})
    ).status_code == 204
    jane = me(app, login(app, "jdoe", "jane-ldap-pass"))["id"]

    def groups():
        return {g["id"] for g in ldap_on.get(f"/api/user/{jane}").json["user_group_memberships"]}

    assert groups() == {1, ids["Analysts"], ids["Finance"]}
    assert ldap_on.post("/api/permissions/membership", json={"user_id": jane, "group_id": ids["Manual"]}).status_code == 200

    import ldap3
    conn = ldap3.Connection(ldap3.Server("127.0.0.1", port=slapd.port), ADMIN_DN, SLAPD_PASSWORD, auto_bind=True)
    conn.modify(f"cn=finance,{GROUPS}", {"member": [(ldap3.MODIFY_REPLACE, [f"uid=rsmith,{USERS}"])]})
    assert conn.result["result"] == 0
    conn.unbind()

    assert login(app, "jdoe", "jane-ldap-pass").status_code == 200
    assert groups() == {1, ids["Analysts"], ids["Manual"]}


def test_settings_are_tested_before_they_are_saved(admin, slapd):
    wrong = admin.put("/api/ldap/settings", json=settings_for(slapd, **{"ldap-password": "wrong"}))
    assert wrong.status_code == 400 and "ldap-password" in wrong.json["errors"]
    unreachable = admin.put("/api/ldap/settings", json=settings_for(slapd, **{"ldap-port": 1}))
    assert unreachable.status_code == 400 and "ldap-host" in unreachable.json["errors"]
    # Nothing of a refused change was kept.
    assert admin.get("/api/setting/ldap-enabled").json is False
    assert admin.get("/api/setting/ldap-host").json is None
    assert admin.put("/api/ldap/settings", json={"ldap-bogus": 1}).status_code == 400
    assert admin.put("/api/ldap/settings", json={"ldap-user-filter": "(uid=x)"}).status_code == 400


def test_the_password_is_never_echoed_and_a_masked_one_keeps_it(app, ldap_on, slapd):
    listed = json.dumps(ldap_on.get("/api/setting").json)
    assert SLAPD_PASSWORD not in listed
    shown = {s["key"]: s["value"] for s in ldap_on.get("/api/setting").json}["ldap-password"]
    assert ldap_on.put("/api/ldap/settings", json=settings_for(slapd, **{"ldap-password": shown})).status_code == 204
    assert login(app, "jdoe", "jane-ldap-pass").status_code == 200


def test_ordinary_users_cannot_change_ldap_settings(user, slapd):
    assert user.put("/api/ldap/settings", json=settings_for(slapd)).status_code == 403


def test_starttls_with_a_verified_certificate(app, admin, slapd, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(slapd.cert))
    response = admin.put("/api/ldap/settings", json=settings_for(slapd, **{"ldap-security": "starttls"}))
    assert response.status_code == 204, response.json
    assert login(app, "rsmith", "rob-ldap-pass").status_code == 200


def test_ldaps_with_a_verified_certificate(app, admin, slapd, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(slapd.cert))
    response = admin.put("/api/ldap/settings", json=settings_for(
        slapd, **{"ldap-security": "ssl", "ldap-port": slapd.ldaps_port}))
    assert response.status_code == 204, response.json
    assert login(app, "rsmith", "rob-ldap-pass").status_code == 200


def test_starttls_refuses_an_untrusted_certificate(admin, slapd, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    response = admin.put("/api/ldap/settings", json=settings_for(slapd, **{"ldap-security": "starttls"}))
    assert response.status_code == 400, response.json
    assert "certificate" in json.dumps(response.json).lower()


def test_an_unreachable_directory_leaves_local_accounts(app, ldap_on, slapd, monkeypatch):
    monkeypatch.setenv("TESSERA_LDAP_PORT", "1")
    assert login(app, ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 200
    assert login(app, "jdoe", "jane-ldap-pass").status_code == 401
