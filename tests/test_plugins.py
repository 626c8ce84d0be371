"""The plugin core: built-ins, disabling, essential plugins, entry points, duplicates, and each hook."""
import sys

import pytest
from click.testing import CliRunner

from core.assembly.app import create_app
from core.assembly.plugins import BUILTIN_PLUGINS, ESSENTIAL_PLUGINS, PluginError
from core.testing import ApiClient, setup_admin
from tests.support import write_plugin


def plugin_names(app):
    return {name for name, _ in app.extensions["tessera"].pm.list_name_plugin()}


def test_builtins_are_registered(app):
    assert set(BUILTIN_PLUGINS) <= plugin_names(app)


@pytest.mark.parametrize("essential", sorted(ESSENTIAL_PLUGINS))
def test_essential_plugins_refuse_to_be_disabled(app_config, essential):
    with pytest.raises(PluginError, match=essential):
        create_app({**app_config, "TESSERA_PLUGINS_DISABLED": essential})


DRIVER_PLUGIN = '''
from core import hookimpl
from core.driver import Driver

class {cls}(Driver):
    engine = "fakeengine"
    display_name = "Fake"
    sqlglot_dialect = "sqlite"

@hookimpl
def register_drivers():
    return [{cls}]
'''


def test_duplicate_engine_fails_naming_both_plugins(app_config, tmp_path, monkeypatch):
    first = write_plugin(tmp_path, monkeypatch, DRIVER_PLUGIN.format(cls="One"))
    second = write_plugin(tmp_path, monkeypatch, DRIVER_PLUGIN.format(cls="Two"))
    with pytest.raises(PluginError) as error:
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": f"{first},{second}"})
    assert "fakeengine" in str(error.value)
    assert first in str(error.value) and second in str(error.value)


def test_duplicate_route_prefix_fails(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, '''
        from core import hookimpl
        from core.http.api import Api
        api = Api("util2", __name__, url_prefix="/util")
        @hookimpl
        def register_routes():
            return [api]
    ''')
    with pytest.raises(PluginError, match="route prefix '/util'.*plugins.util"):
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})


def test_duplicate_setting_key_fails(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, '''
        from core import SettingDef, hookimpl
        @hookimpl
        def register_settings():
            return [SettingDef("site-name")]
    ''')
    with pytest.raises(PluginError, match="setting key 'site-name'"):
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})


def test_misspelt_hook_fails_at_startup(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, '''
        from core import hookimpl
        @hookimpl
        def register_rotues():
            return []
    ''')
    with pytest.raises(PluginError, match="register_rotues"):
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})


def test_entry_point_discovery_is_hermetic(app_config, tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "tessera_fake_plugin-1.2.3.dist-info").mkdir(parents=True)
    (site / "tessera_fake_plugin.py").write_text(
        "from core import SettingDef, hookimpl\n"
        "@hookimpl\n"
        "def register_settings():\n"
        "    return [SettingDef('fake-entry-point-setting', default='yes', visibility='public')]\n")
    dist = site / "tessera_fake_plugin-1.2.3.dist-info"
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tessera-fake-plugin\nVersion: 1.2.3\n")
    (dist / "entry_points.txt").write_text("[tessera.plugins]\nfake = tessera_fake_plugin\n")
    monkeypatch.syspath_prepend(str(site))
    app = create_app({**app_config, "TESSERA_PLUGINS_AUTOLOAD": True})
    assert "fake" in plugin_names(app)
    assert ApiClient(app).get("/api/session/properties").json["fake-entry-point-setting"] == "yes"
    from core.assembly.plugins import describe_plugins

    row = next(r for r in describe_plugins(app.extensions["tessera"].pm) if r["name"] == "fake")
    assert row == {"name": "fake", "version": "1.2.3", "hooks": ["register_settings"]}
    disabled = create_app({**app_config, "TESSERA_PLUGINS_AUTOLOAD": True, "TESSERA_PLUGINS_DISABLED": "fake"})
    assert "fake" not in plugin_names(disabled)
    off = create_app({**app_config, "TESSERA_PLUGINS_AUTOLOAD": False})
    assert "fake" not in plugin_names(off)


# --------------------------------------------------------------------------------------------------
# One test per hook
# --------------------------------------------------------------------------------------------------

HOOKS_PLUGIN = '''
import click
from flask import current_app
from core import Exporter, SettingDef, hookimpl
from core.http.api import Api
from core.driver import Driver

api = Api("hooktest", __name__, url_prefix="/hooktest")
STARTED = []
EVENTS = []

@api.get("/whoami")
def whoami():
    from core.http.auth import current_user
    return {"email": current_user().email}

class HookDriver(Driver):
    engine = "hookengine"
    display_name = "Hook engine"
    sqlglot_dialect = "sqlite"

@hookimpl
def register_settings():
    return [SettingDef("hook-setting", default=42, type="integer", visibility="authenticated")]

@hookimpl
def register_drivers():
    return [HookDriver]

@hookimpl
def register_exporters():
    return [Exporter("hooktxt", "text/plain", "txt", lambda columns, rows, options: iter([b"x"]))]

@hookimpl
def register_routes():
    return [api]

@hookimpl
def register_commands(cli):
    @cli.command("hook-hello")
    def hello():
        click.echo("hello from a plugin")

@hookimpl
def startup(app):
    STARTED.append(app.name)

@hookimpl
def authenticate(request, session):
    if request.headers.get("X-Hook-User"):
        from sqlalchemy import select
        from core.appdb.models import User
        return session.scalar(select(User).where(User.email == request.headers["X-Hook-User"]))
    return None

@hookimpl
def track_event(event):
    EVENTS.append(event.topic)
    raise RuntimeError("a broken listener must not matter")
'''


@pytest.fixture
def hooked(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, HOOKS_PLUGIN)
    monkeypatch.setenv("TESSERA_PLUGINS_EXTRA", name)
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    return app, sys.modules[name]


def test_hook_register_settings(hooked):
    app, _ = hooked
    admin = setup_admin(app)
    assert admin.get("/api/setting/hook-setting").json == 42
    assert admin.get("/api/session/properties").json["hook-setting"] == 42


def test_hook_register_drivers(hooked):
    app, _ = hooked
    engines = ApiClient(app).get("/api/session/properties").json["engines"]
    assert engines["hookengine"]["driver-name"] == "Hook engine"


def test_hidden_driver_when_dbapi_missing(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, DRIVER_PLUGIN.format(cls="Missing").replace(
        'sqlglot_dialect = "sqlite"', 'sqlglot_dialect = "sqlite"\n    dbapi_modules = ("no_such_dbapi_module",)'))
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    assert "fakeengine" not in app.extensions["tessera"].drivers


def test_drivers_can_be_disabled(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, DRIVER_PLUGIN.format(cls="Off"))
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name, "TESSERA_DRIVERS_DISABLED": "fakeengine"})
    assert "fakeengine" not in app.extensions["tessera"].drivers


def test_hook_register_exporters(hooked):
    app, _ = hooked
    assert app.extensions["tessera"].exporters["hooktxt"].extension == "txt"


def test_hook_register_routes(hooked):
    app, _ = hooked
    admin = setup_admin(app)
    assert admin.get("/api/hooktest/whoami").json == {"email": "admin@example.com"}
    assert ApiClient(app).get("/api/hooktest/whoami").status_code == 401


def test_hook_register_commands(hooked, monkeypatch, app_config):
    from core.assembly import cli

    monkeypatch.setenv("TESSERA_DATA_DIR", app_config["TESSERA_DATA_DIR"])
    monkeypatch.setenv("TESSERA_PLUGINS_AUTOLOAD", "false")
    result = CliRunner().invoke(cli.build_cli(), ["hook-hello"])
    assert result.exit_code == 0, result.output
    assert "hello from a plugin" in result.output


def test_hook_startup(hooked):
    app, module = hooked
    assert module.STARTED == [app.name]


def test_hook_authenticate(hooked):
    app, _ = hooked
    setup_admin(app)
    response = ApiClient(app).get("/api/user/current", headers={"X-Hook-User": "admin@example.com"})
    assert response.status_code == 200
    assert ApiClient(app).get("/api/user/current", headers={"X-Hook-User": "nobody@x.com"}).status_code == 401


def test_hook_track_event_listener_failure_is_isolated(hooked):
    app, module = hooked
    from core.assembly.events import emit

    with app.app_context():
        emit("thing-created", user_id=None, obj=None)
    assert module.EVENTS == ["thing-created"]


def test_a_track_event_listener_hears_only_the_topics_it_follows(app_config):
    from core import hookimpl
    from core.assembly import events

    app = create_app(app_config)
    heard = []

    class Follower:
        @hookimpl
        @events.following({"thing-created"})
        def track_event(self, event):
            heard.append(event.topic)

    with app.app_context():
        # The builtin listener (plugins.subscriptions) follows the system events' topics only, so a card
        # read stays answered from core.appdb.memo.
        assert events.has_listeners("user-joined") and not events.has_listeners("card-read")
        app.extensions["tessera"].pm.register(Follower(), name="test.follower")
        assert events.has_listeners("thing-created") and not events.has_listeners("card-read")
        events.emit("thing-created")
        events.emit("card-read")
    assert heard == ["thing-created"]
    app.extensions["tessera"].db.dispose()


def test_tessera_plugins_command_lists_hooks(app_config, monkeypatch):
    from core.assembly import cli

    monkeypatch.setenv("TESSERA_DATA_DIR", app_config["TESSERA_DATA_DIR"])
    monkeypatch.setenv("TESSERA_PLUGINS_AUTOLOAD", "false")
    result = CliRunner().invoke(cli.build_cli(), ["plugins"])
    assert result.exit_code == 0, result.output
    lines = {line.split("\t")[0]: line.split("\t") for line in result.output.splitlines()}
    assert "register_routes" in lines["plugins.util"][2]
    assert lines["core.http.auth"][2] == "authenticate"


@pytest.mark.parametrize("former_name", ["plugins.segments", "plugins.metrics"])
def test_former_definition_plugin_names_still_disable_it(app_config, former_name):
    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": former_name})
    assert "plugins.definitions" not in plugin_names(app)
    admin = setup_admin(app)
    for path in ("/api/segment/", "/api/metric/"):
        response = admin.get(path)
        assert response.status_code == 404 and response.json == "API endpoint does not exist."


def _tables(app) -> set[str]:
    from sqlalchemy import inspect

    return set(inspect(app.extensions["tessera"].db.engine).get_table_names())


def test_hook_register_migrations_runs_each_plugin_set_in_its_own_version_table(app_config, tmp_path, monkeypatch):
    """A plugin's tables come with it: absent while it is disabled, created once it is enabled, and
    recorded apart from the core's revisions, so disabling it again starts without error."""
    from sqlalchemy import text

    fresh = {**app_config, "TESSERA_DB_URL": f"sqlite:///{tmp_path / 'fresh.db'}", "TESSERA_RUN_MIGRATIONS": True}
    without = create_app({**fresh, "TESSERA_PLUGINS_DISABLED": "plugins.dashboards"})
    assert "report_card" in _tables(without) and "report_dashboard" not in _tables(without)
    without.extensions["tessera"].db.dispose()

    enabled = create_app(fresh)
    assert {"report_dashboard", "dashboard_tab", "report_dashboardcard", "alembic_version_dashboards"} <= _tables(enabled)
    with enabled.extensions["tessera"].db.engine.connect() as connection:
        # The plugin's head (dashboards_0002: its search-index triggers) in its own table, none in the core's.
        assert connection.execute(text("SELECT version_num FROM alembic_version_dashboards")).scalars().all() == \
            ["dashboards_0002"]
        core_versions = connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
        assert not any(version.startswith("dashboards_") for version in core_versions)
    enabled.extensions["tessera"].db.dispose()

    again = create_app({**fresh, "TESSERA_PLUGINS_DISABLED": "plugins.dashboards"})
    assert "report_dashboard" in _tables(again)  # kept, untouched
    again.extensions["tessera"].db.dispose()


def test_duplicate_migrations_name_fails_naming_both_plugins(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, '''
        from pathlib import Path
        from core import Migrations, hookimpl
        @hookimpl
        def register_migrations():
            return [Migrations("dashboards", Path("."))]
    ''')
    with pytest.raises(PluginError, match=f"migrations name 'dashboards'.*plugins.dashboards.*{name}|"
                                          f"migrations name 'dashboards'.*{name}.*plugins.dashboards"):
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})


KINDS_PLUGIN = '''
from core import ContentKind, hookimpl
from core.content.items import Key
from core.content.search import result

ARCHIVED = []

class PulseSource:
    models = ("pulse",)
    namespaces = (None,)

    def keys(self, ctx, model):
        return [] if ctx.collection is not None or ctx.options.archived else [Key("pulse", 7, "Weekly pulse")]

    def hydrate(self, ctx, keys):
        return {("pulse", k.id): {"id": k.id, "name": k.name, "model": "pulse"} for k in keys}

    def holds(self, session, collection_ids):
        return [(cid, "pulse") for cid in collection_ids or ()]

    def archive(self, session, collection_ids, archived):
        ARCHIVED.append((sorted(collection_ids), archived))

def search(ctx):
    return [result("action", 3, "Toy action", _texts=["Toy action"], _pinned=False, _updated=None)]

@hookimpl
def register_content_kinds():
    return [ContentKind("pulse", items=PulseSource()), ContentKind("action", search=search)]
'''


def test_hook_register_content_kinds_feeds_items_search_and_archiving(app_config, tmp_path, monkeypatch):
    """A plugin's kinds reach the plugins that list content (collections, search), which import nothing
    of it; the archive cascade asks its source too."""
    name = write_plugin(tmp_path, monkeypatch, KINDS_PLUGIN)
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    assert set(app.extensions["tessera"].content_kinds) == {"dashboard", "pulse", "action"}
    admin = setup_admin(app)
    root = admin.get("/api/collection/root/items?models=pulse").json
    assert root["data"] == [{"id": 7, "name": "Weekly pulse", "model": "pulse"}] and root["models"] == ["pulse"]
    assert "pulse" in admin.get("/api/collection/root/items").json["models"]
    found = admin.get("/api/search?q=toy").json
    assert [(r["model"], r["id"], r["name"]) for r in found["data"]] == [("action", 3, "Toy action")]
    collection_id = admin.post("/api/collection", json={"name": "Holder"}).json["id"]
    assert admin.get("/api/collection/root/items?models=collection").json["data"][0]["here"] == ["pulse"]
    assert admin.put(f"/api/collection/{collection_id}", json={"archived": True}).status_code == 200
    assert sys.modules[name].ARCHIVED == [([collection_id], True)]


def test_duplicate_content_kind_fails_naming_both_plugins(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, '''
        from core import ContentKind, hookimpl
        @hookimpl
        def register_content_kinds():
            return [ContentKind("dashboard")]
    ''')
    with pytest.raises(PluginError, match=f"content kind 'dashboard'.*plugins.dashboards.*{name}|"
                                          f"content kind 'dashboard'.*{name}.*plugins.dashboards"):
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})


def test_content_kind_may_not_take_a_built_in_name(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, '''
        from core import ContentKind, hookimpl
        @hookimpl
        def register_content_kinds():
            return [ContentKind("card")]
    ''')
    with pytest.raises(PluginError, match=f"content kind 'card' from {name} is a built-in kind"):
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
