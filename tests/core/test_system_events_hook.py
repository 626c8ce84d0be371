"""The register_system_events hook: a plugin's SystemEvent follows a track_event topic, its notices are
e-mailed by plugins.subscriptions to the users they name; a duplicate name stops startup."""
import pytest

from core.assembly.app import create_app
from core.testing import setup_admin
from tests.plugins.subscriptions.support import smtp_inbox
from tests.support import write_plugin

PLUGIN = '''
from core import hookimpl
from core.assembly.records import Notice, SystemEvent


def collection_made(session, event):
    return [Notice((event.user_id,), "New collection", "You made the collection " + event.object.name + ".")]


@hookimpl
def register_system_events():
    return [SystemEvent("event/collection-made", "collection-create", collection_made)]
'''


def test_a_plugin_adds_a_system_event(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, PLUGIN)
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    admin = setup_admin(app)
    assert "event/collection-made" in app.extensions["tessera"].system_events
    with smtp_inbox(app) as inbox:
        assert admin.post("/api/collection", json={"name": "Plans"}).status_code == 200
        [(to, message)] = inbox.wait(1)
        assert to == [admin.get("/api/user/current").json["email"]] and message["Subject"] == "New collection"
        assert "You made the collection Plans." in message.get_body(("plain",)).get_content()
    app.extensions["tessera"].db.dispose()


def test_a_duplicate_system_event_name_stops_startup(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, PLUGIN.replace("event/collection-made", "event/user-joined"))
    with pytest.raises(Exception, match="event/user-joined"):
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
