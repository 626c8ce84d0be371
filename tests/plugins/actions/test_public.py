"""Public action links (compat/security.md row 13): sharing off is a 400 before any lookup; an unknown,
revoked or archived action's UUID is a 404; the public JSON holds no SQL and no request template; a public
execution needs the database's actions still enabled."""
import pytest

from .support import enable_actions, http_action, make_model, param, query_action, register, table_id, tag


@pytest.mark.security_row(13)
def test_public_action_links(app, admin):
    anonymous = app.test_client()
    db = register(app, admin)
    enable_actions(admin, db)
    model = make_model(admin, db, table_id(admin, db, "people"))
    secret_sql = "UPDATE people SET age = {{age}} WHERE id = 1 /* SECRET-SQL */"
    query = query_action(admin, model, db, secret_sql, {"age": tag("age", "number")}, [param("age", "number/=")]).json
    hook = http_action(admin, model, {"method": "POST", "url": "https://hooks.example.com/SECRET-URL",
                                      "headers": '{"Authorization": "Bearer SECRET-TOKEN"}'}).json
    assert admin.put("/api/setting/enable-public-sharing", json={"value": True}).status_code == 204
    uuids = {a["id"]: admin.post(f"/api/action/{a['id']}/public_link").json["uuid"] for a in (query, hook)}
    for action_id, uuid in uuids.items():
        shown = anonymous.get(f"/api/public/action/{uuid}")
        assert shown.status_code == 200 and shown.json["id"] == action_id
        assert "SECRET" not in shown.get_data(as_text=True)
        assert not {"dataset_query", "template", "database_id", "creator", "public_uuid"} & set(shown.json)
    assert anonymous.get("/api/public/action/00000000-0000-4000-8000-000000000000").status_code == 404
    ran = anonymous.post(f"/api/public/action/{uuids[query['id']]}/execute", json={"parameters": {"age": 7}})
    assert ran.status_code == 200 and ran.json == {"rows-affected": 1}
    enable_actions(admin, db, False)
    off = anonymous.post(f"/api/public/action/{uuids[query['id']]}/execute", json={"parameters": {"age": 8}})
    assert off.status_code == 400 and off.json == "Actions are not enabled."
    enable_actions(admin, db)

    assert admin.put("/api/setting/enable-public-sharing", json={"value": False}).status_code == 204
    for path in (f"/api/public/action/{uuids[query['id']]}", "/api/public/action/00000000-0000-4000-8000-000000000000"):
        refused = anonymous.get(path)
        assert refused.status_code == 400 and refused.json == "Public sharing is not enabled."
    refused = anonymous.post(f"/api/public/action/{uuids[query['id']]}/execute", json={"parameters": {}})
    assert refused.status_code == 400
    assert admin.put("/api/setting/enable-public-sharing", json={"value": True}).status_code == 204

    assert admin.delete(f"/api/action/{hook['id']}/public_link").status_code == 204
    assert anonymous.get(f"/api/public/action/{uuids[hook['id']]}").status_code == 404
    assert admin.put(f"/api/action/{query['id']}", json={"archived": True}).status_code == 200
    assert anonymous.get(f"/api/public/action/{uuids[query['id']]}").status_code == 404
    assert anonymous.post(f"/api/public/action/{uuids[query['id']]}/execute",
                          json={"parameters": {"age": 9}}).status_code == 404
