"""The register_shareables hook: kinds reach core.content.shared; a duplicate model stops startup."""
import pytest

from core.assembly.app import create_app
from core.assembly.plugins import PluginError
from tests.support import write_plugin

TOY = '''
from core import Shareable, hookimpl
from core.appdb.models import Card

@hookimpl
def register_shareables():
    return [Shareable("toy", table=Card, public_json=lambda session, obj, hide=frozenset(): {"id": obj.id})]
'''


def test_hook_register_shareables_reaches_core_content_shared(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, TOY)
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    from core.content import shared

    with app.app_context():
        toy = shared.shareable("toy")
        assert toy is not None and toy.run is None and toy.public_json(None, type("O", (), {"id": 3})) == {"id": 3}
        assert shared.require("toy").model == "toy"
        with pytest.raises(Exception) as err:
            shared.require("toy", "run")
        assert getattr(err.value, "status", None) == 404
    assert shared.shareables() == {}  # outside an app there are none


def test_duplicate_shareable_model_fails_naming_both_plugins(app_config, tmp_path, monkeypatch):
    first = write_plugin(tmp_path, monkeypatch, TOY)
    second = write_plugin(tmp_path, monkeypatch, TOY)
    with pytest.raises(PluginError, match=f"shareable model 'toy'.*{first}.*{second}|"
                                          f"shareable model 'toy'.*{second}.*{first}"):
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": f"{first},{second}"})


def test_cards_and_dashboards_are_shareable(app):
    assert {"card", "dashboard"} <= set(app.extensions["tessera"].shareables)


def test_a_disabled_owner_makes_its_public_urls_404(app_config):
    from core.testing import setup_admin

    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.dashboards"})
    admin = setup_admin(app)
    assert admin.put("/api/setting/enable-public-sharing", json={"value": True}).status_code == 204
    assert "dashboard" not in app.extensions["tessera"].shareables
    got = admin.get("/api/public/dashboard/00000000-0000-4000-8000-000000000000")
    assert got.status_code == 404
