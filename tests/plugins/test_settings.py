"""/api/setting: listing, reading, changing, environment overrides, validation, transactions."""


def test_list_has_metabase_keys(admin):
    rows = {row["key"]: row for row in admin.get("/api/setting").json}
    assert rows["site-name"]["value"] == "Test Co"
    assert rows["site-name"]["env_name"] == "TESSERA_SITE_NAME"
    assert rows["site-name"]["is_env_setting"] is False
    assert set(rows["site-name"]) >= {"key", "value", "is_env_setting", "env_name", "description", "default"}


def test_get_and_put_one_setting(admin):
    assert admin.put("/api/setting/site-url", json={"value": "https://bi.example.com/"}).status_code == 204
    assert admin.get("/api/setting/site-url").json == "https://bi.example.com"
    assert admin.put("/api/setting/site_url", json={"value": None}).status_code == 204
    assert admin.get("/api/setting/site-url").json is None


def test_invalid_value_is_400_and_changes_nothing(admin):
    response = admin.put("/api/setting/start-of-week", json={"value": "someday"})
    assert response.status_code == 400
    assert "value" in response.json["errors"]
    assert admin.get("/api/setting/start-of-week").json == "sunday"


def test_bulk_put_is_all_or_nothing(admin):
    response = admin.put("/api/setting", json={"site-name": "Changed", "start-of-week": "someday"})
    assert response.status_code == 400
    assert admin.get("/api/setting/site-name").json == "Test Co"
    assert admin.put("/api/setting", json={"site-name": "Changed", "start-of-week": "monday"}).status_code == 204
    assert admin.get("/api/setting/site-name").json == "Changed"


def test_environment_overrides_and_is_read_only(admin, monkeypatch):
    monkeypatch.setenv("TESSERA_SITE_NAME", "From Env")
    assert admin.get("/api/setting/site-name").json == "From Env"
    row = next(r for r in admin.get("/api/setting").json if r["key"] == "site-name")
    assert row["is_env_setting"] is True and row["value"] is None
    assert row["default"] == "Using value of env var $TESSERA_SITE_NAME"
    assert admin.put("/api/setting/site-name", json={"value": "x"}).status_code == 400


def test_type_checked_values(admin):
    assert admin.put("/api/setting/anon-tracking-enabled", json={"value": "maybe"}).status_code == 400
    assert admin.put("/api/setting/anon-tracking-enabled", json={"value": "false"}).status_code == 204
    assert admin.get("/api/setting/anon-tracking-enabled").json is False


def test_computed_settings_are_read_only(admin):
    assert admin.put("/api/setting/version", json={"value": "x"}).status_code == 400


def test_plain_users_get_403(user):
    assert user.get("/api/setting").status_code == 403
    assert user.put("/api/setting/site-name", json={"value": "x"}).status_code == 403


def test_properties_visibility(client, user, admin):
    public = client.get("/api/session/properties").json
    assert "admin-email" not in public
    assert "session-cookie-samesite" not in public
    authenticated = user.get("/api/session/properties").json
    assert authenticated["admin-email"] == "admin@example.com"
    assert "session-cookie-samesite" not in authenticated
    assert admin.get("/api/session/properties").json["session-cookie-samesite"] == "lax"


def test_properties_mask_secrets_even_for_admins(admin):
    # The map every page and client reads: a secret is read on purpose, by its own key (GET /api/setting/:key).
    assert admin.put("/api/setting/email-smtp-password", json={"value": "hunter2-smtp"}).status_code == 204
    secret = "ab" * 32
    assert admin.put("/api/setting/embedding-secret-key", json={"value": secret}).status_code == 204
    assert admin.get("/api/setting/embedding-secret-key").json == secret
    shown = admin.get("/api/session/properties").json
    assert shown["email-smtp-password"] == "**********tp"
    assert shown["embedding-secret-key"] == "**********ab"
