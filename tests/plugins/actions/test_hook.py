"""The action_runner hook: the dashboards plugin runs, prefills and shows a dashcard's action through
whichever plugin answers it (firstresult), importing none. Here a toy plugin stands in for plugins.actions."""
from core.assembly.app import create_app
from core.testing import setup_admin
from tests.support import write_plugin

from .test_dashcard import dashboard_with

TOY_RUNNER = '''
from core import hookimpl
from core.assembly.records import ActionRunner

CALLS = []


def execute(session, user, action_id, values, mappings):
    CALLS.append(("execute", user.id, action_id, values, mappings))
    return {"ran": action_id}


def prefill(session, user, action_id, values):
    CALLS.append(("prefill", user.id, action_id, values))
    return {"name": "current"}


def describe(session, user, action_ids):
    return {i: {"id": i, "name": f"toy {i}"} for i in action_ids if i != 404}


@hookimpl
def action_runner():
    return ActionRunner(execute=execute, prefill=prefill, describe=describe)
'''


def test_hook_action_runner_serves_dashcard_buttons(app_config, tmp_path, monkeypatch):
    import sys

    name = write_plugin(tmp_path, monkeypatch, TOY_RUNNER)
    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.actions", "TESSERA_PLUGINS_EXTRA": name})
    try:
        admin = setup_admin(app)
        mapping = {"parameter_id": "p_age", "target": ["variable", ["template-tag", "age"]]}
        dashboard, (first, gone) = dashboard_with(admin, {"action_id": 5, "parameter_mappings": [mapping]},
                                                  {"action_id": 404})
        shown = admin.get(f"/api/dashboard/{dashboard}").json["dashcards"]
        assert shown[0]["action"] == {"id": 5, "name": "toy 5"} and shown[1]["action"] is None
        base = f"/api/dashboard/{dashboard}/dashcard/{first}/execute"
        assert admin.post(base, json={"parameters": {"p_age": 3}}).json == {"ran": 5}
        assert admin.get(base, query_string={"parameters": '{"id": 1}'}).json == {"name": "current"}
        user_id = admin.user["id"]
        assert sys.modules[name].CALLS == [("execute", user_id, 5, {"p_age": 3}, [mapping]),
                                           ("prefill", user_id, 5, {"id": 1})]
    finally:
        app.extensions["tessera"].db.dispose()
