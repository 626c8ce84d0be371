"""plugins/sso disabled: no /auth/sso, no jwt-* settings, and POST /api/session checks passwords only."""
from core.assembly.app import create_app
from core.testing import setup_admin
from core.testing.app import ADMIN_EMAIL, ADMIN_PASSWORD


def test_disabled_plugin_leaves_password_login_only(app_config):
    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.sso"})
    admin = setup_admin(app)
    anonymous = app.test_client()
    assert anonymous.get("/auth/sso").status_code == 404
    assert anonymous.get("/auth/sso", query_string={"jwt": "a.b.c", "return_to": "/"}).status_code == 404
    assert admin.put("/api/setting/jwt-enabled", json={"value": True}).status_code == 404
    assert anonymous.get("/auth/sso/corp", query_string={"return_to": "/"}).status_code == 404
    assert admin.put("/api/setting/oidc-providers", json={"value": []}).status_code == 404
    assert "oidc-sign-in-providers" not in anonymous.get("/api/session/properties").json
    login = anonymous.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert login.status_code == 200 and login.json["id"]
    # Clients read ldap-enabled from the properties: there, and false, without the plugin that owns it.
    assert anonymous.get("/api/session/properties").json["ldap-enabled"] is False
    app.extensions["tessera"].db.dispose()
