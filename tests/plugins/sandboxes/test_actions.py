"""Implicit update and delete actions change only rows the sandboxed user can see."""
from core.testing import make_user
from tests.plugins.actions.support import enable_actions, implicit, make_model, register, table_id


def test_implicit_actions_touch_only_visible_rows(app, admin):
    db = register(app, admin)
    enable_actions(admin, db)
    people = table_id(admin, db, "people")
    age = next(f["id"] for f in admin.get(f"/api/table/{people}/query_metadata").json["fields"] if f["name"] == "age")
    model = make_model(admin, db, people)
    update = implicit(admin, model, "row/update").json["id"]
    delete = implicit(admin, model, "row/delete").json["id"]
    group = admin.post("/api/permissions/group", json={"name": "Thirties"}).json["id"]
    rep = make_user(app, "rep@example.com")
    assert admin.put(f"/api/user/{rep.user['id']}", json={
        "login_attributes": {"age": "36"}, "user_group_memberships": [{"id": 1}, {"id": group}]}).status_code == 200
    graph = admin.get("/api/permissions/graph").json
    response = admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(db): {"view-data": "blocked", "create-queries": "no"}},
        str(group): {str(db): {"view-data": {"": {str(people): "sandboxed"}}, "create-queries": "query-builder"}}},
        "sandboxes": [{"group_id": group, "table_id": people,
                       "attribute_remappings": {"age": ["dimension", ["field", age, None]]}}]})
    assert response.status_code == 200, response.json
    execution = admin.get("/api/permissions/execution/graph").json
    assert admin.put("/api/permissions/execution/graph", json={
        "revision": execution["revision"], "groups": {str(group): {str(db): "all"}}}).status_code == 200
    hidden = rep.post(f"/api/action/{update}/execute", json={"parameters": {"id": 2, "name": "Changed"}})
    assert hidden.status_code == 400 and "doesn't exist" in hidden.json["message"]
    assert rep.post(f"/api/action/{delete}/execute", json={"parameters": {"id": 3}}).status_code == 400
    mine = rep.post(f"/api/action/{update}/execute", json={"parameters": {"id": 1, "name": "Ada L."}})
    assert mine.status_code == 200, mine.json
    names = admin.post("/api/dataset", json={"database": db, "type": "query", "query": {"source-table": people}})
    assert sorted(r[1] for r in names.json["data"]["rows"]) == ["Ada L.", "Alan", "Grace"]
