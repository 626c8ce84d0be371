"""Sharing settings and the core guards other plugins call."""
import re

import pytest

from core.http.errors import Invalid
from core.policy import sharing


def test_public_sharing_on_by_default_then_off(app, admin, user):
    """Current Metabase turns public sharing on by default (older releases had it off)."""
    assert admin.get("/api/setting/enable-public-sharing").json is True
    assert user.get("/api/session/properties").json["enable-public-sharing"] is True
    with app.app_context():
        from core.appdb.db import session

        sharing.check_public_sharing(session())
    assert admin.put("/api/setting/enable-public-sharing", json={"value": False}).status_code == 204
    assert user.get("/api/session/properties").json["enable-public-sharing"] is False
    with app.app_context():
        from core.appdb.db import session

        with pytest.raises(Invalid, match="Public sharing is not enabled."):
            sharing.check_public_sharing(session())


@pytest.mark.security_row(16)
def test_enabling_embedding_generates_a_secret(app, admin):
    assert admin.get("/api/setting/embedding-secret-key").json is None
    assert admin.put("/api/setting/enable-embedding-static", json={"value": True}).status_code == 204
    secret = admin.get("/api/setting/embedding-secret-key").json
    assert re.fullmatch(r"[0-9a-f]{64}", secret)
    listed = next(r for r in admin.get("/api/setting").json if r["key"] == "embedding-secret-key")
    assert secret not in str(listed["value"])
    with app.app_context():
        from core.appdb.db import session

        sharing.check_embedding(session())
        assert sharing.embedding_secret(session()) == secret


@pytest.mark.security_row(16)
def test_secret_key_must_be_64_hex(admin):
    response = admin.put("/api/setting/embedding-secret-key", json={"value": "short"})
    assert response.status_code == 400
    assert admin.put("/api/setting/embedding-secret-key", json={"value": "ab" * 32}).status_code == 204


def test_guards_report_off_when_the_plugin_is_disabled(app_config):
    from core.assembly.app import create_app

    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.sharing"})
    with app.app_context():
        from core.appdb.db import session

        assert sharing.public_sharing_enabled(session()) is False
        with pytest.raises(Invalid, match="Embedding is not enabled."):
            sharing.check_embedding(session())
