"""Action buttons on dashboards: POST/GET /api/dashboard/:id/dashcard/:dcid/execute run and prefill the
dashcard's action through the action_runner hook (values sent under a dashboard parameter id reach the
action parameter the dashcard maps it to), GET /api/dashboard/:id shows each dashcard's action; the
dashboard must be readable and hold the dashcard."""
import orjson

from .support import enable_actions, implicit, make_model, param, query_action, register, table_id, tag


def dashboard_with(admin, *dashcards) -> tuple[int, list[int]]:
    dashboard = admin.post("/api/dashboard", json={
        "name": "Buttons", "parameters": [{"id": "p_age", "slug": "age", "name": "Age", "type": "number/="}]}).json
    layout = [{"id": -(i + 1), "card_id": None, "size_x": 4, "size_y": 2, "row": i * 2, "col": 0,
               "visualization_settings": {"virtual_card": {"display": "action"}}, **extra}
              for i, extra in enumerate(dashcards)]
    response = admin.put(f"/api/dashboard/{dashboard['id']}", json={"dashcards": layout})
    assert response.status_code == 200, response.json
    return dashboard["id"], [d["id"] for d in response.json["dashcards"]]


def test_dashcard_execute_and_prefill(app, admin, user):
    db = register(app, admin)
    enable_actions(admin, db)
    model = make_model(admin, db, table_id(admin, db, "people"))
    update = implicit(admin, model, "row/update").json
    setter = query_action(admin, model, db, "UPDATE people SET age = {{age}} WHERE id = {{id}}",
                          {"age": tag("age", "number"), "id": tag("id", "number")},
                          [param("age", "number/="), param("id", "number/=")]).json
    mapping = {"parameter_id": "p_age", "target": ["variable", ["template-tag", "age"]]}
    dashboard, (first, second, empty) = dashboard_with(
        admin, {"action_id": update["id"]}, {"action_id": setter["id"], "parameter_mappings": [mapping]}, {})
    shown = admin.get(f"/api/dashboard/{dashboard}").json["dashcards"]
    assert shown[0]["action"]["id"] == update["id"] and shown[0]["action"]["database_enabled_actions"] is True
    assert shown[1]["action"]["type"] == "query" and shown[2]["action"] is None

    base = f"/api/dashboard/{dashboard}/dashcard"
    ran = user.post(f"{base}/{first}/execute", json={"parameters": {"id": 2, "name": "Alan T."}})
    assert ran.status_code == 200 and ran.json == {"rows-updated": [1]}
    values = user.get(f"{base}/{first}/execute", query_string={"parameters": orjson.dumps({"id": 2}).decode()})
    assert values.status_code == 200 and values.json["name"] == "Alan T."
    # The dashboard's "Age" filter value reaches the action's age parameter through the mapping.
    ran = user.post(f"{base}/{second}/execute", json={"parameters": {"p_age": 99, "id": 2}})
    assert ran.status_code == 200 and ran.json == {"rows-affected": 1}
    assert user.get(f"{base}/{first}/execute",
                    query_string={"parameters": orjson.dumps({"id": 2}).decode()}).json["age"] == 99
    assert user.get(f"{base}/{second}/execute", query_string={"parameters": "{}"}).json == {}

    assert user.post(f"{base}/{empty}/execute", json={"parameters": {}}).status_code == 404
    other, (elsewhere,) = dashboard_with(admin, {"action_id": update["id"]})
    assert user.post(f"/api/dashboard/{other}/dashcard/{first}/execute", json={"parameters": {}}).status_code == 404
    assert user.post(f"{base}/{elsewhere}/execute", json={"parameters": {}}).status_code == 404
    assert user.post(f"/api/dashboard/999999/dashcard/{first}/execute", json={}).status_code == 404
    # Actions switched off on the database: Metabase's message, and the dashcard says so.
    enable_actions(admin, db, False)
    refused = user.post(f"{base}/{first}/execute", json={"parameters": {"id": 2, "name": "x"}})
    assert refused.status_code == 400 and refused.json == "Actions are not enabled."
    assert admin.get(f"/api/dashboard/{dashboard}").json["dashcards"][0]["action"]["database_enabled_actions"] is False


def test_without_the_actions_plugin_the_buttons_are_absent(app_config):
    from core.assembly.app import create_app
    from core.testing import setup_admin

    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.actions"})
    try:
        admin = setup_admin(app)
        dashboard, (dashcard,) = dashboard_with(admin, {"action_id": 7})
        assert admin.get(f"/api/dashboard/{dashboard}").json["dashcards"][0]["action"] is None
        for method in ("get", "post"):
            response = getattr(admin, method)(f"/api/dashboard/{dashboard}/dashcard/{dashcard}/execute",
                                              **({"query_string": {"parameters": "{}"}} if method == "get"
                                                 else {"json": {"parameters": {}}}))
            assert response.status_code == 404 and response.json == "API endpoint does not exist."
        assert admin.get("/api/action").status_code == 404
    finally:
        app.extensions["tessera"].db.dispose()
