"""/api/action as stored objects: create, read, list, update, delete; the database-enable-actions gate with
Metabase's messages; the model's collection deciding who reads and writes; save-time checks (jq handles,
the closed HTTP template, a fixed URL host, query actions' database, models with clauses)."""
import pytest

from core.testing import add_collection

from .support import enable_actions, http_action, implicit, make_model, query_action, register, table_id


def setup_model(app, admin, collection_id=None):
    db = register(app, admin)
    model = make_model(admin, db, table_id(admin, db, "people"), collection_id=collection_id)
    return db, model


def test_actions_need_the_database_setting_and_a_supporting_driver(app, admin):
    db, model = setup_model(app, admin)
    refused = implicit(admin, model, "row/create")
    assert refused.status_code == 400 and refused.json == "Actions are not enabled."
    enable_actions(admin, db)
    created = implicit(admin, model, "row/create")
    assert created.status_code == 200, created.json
    assert admin.get(f"/api/database/{db}").json["settings"]["database-enable-actions"] is True
    enable_actions(admin, db, False)
    run = admin.post(f"/api/action/{created.json['id']}/execute", json={"parameters": {"name": "X"}})
    assert run.status_code == 400 and run.json == "Actions are not enabled."
    edit = admin.put(f"/api/action/{created.json['id']}", json={"name": "Renamed"})
    assert edit.status_code == 400 and edit.json == "Actions are not enabled."


def test_create_read_list_update_delete(app, admin):
    db, model = setup_model(app, admin)
    enable_actions(admin, db)
    body = query_action(admin, model, db, "UPDATE people SET age = {{age}} WHERE id = {{id}}",
                        {"age": {"id": "age", "name": "age", "display-name": "Age", "type": "number"},
                         "id": {"id": "id", "name": "id", "display-name": "Id", "type": "number"}},
                        [{"id": "age", "type": "number/=", "target": ["variable", ["template-tag", "age"]]},
                         {"id": "id", "type": "number/=", "target": ["variable", ["template-tag", "id"]]}],
                        name="Set age")
    assert body.status_code == 200, body.json
    action = body.json
    assert action["type"] == "query" and action["database_id"] == db and action["model_id"] == model
    assert action["dataset_query"]["native"]["query"].startswith("UPDATE") and action["creator"]["id"]
    assert action["public_uuid"] is None and action["archived"] is False
    assert admin.get(f"/api/action/{action['id']}").json["name"] == "Set age"
    listed = admin.get("/api/action").json
    assert [a["id"] for a in listed] == [action["id"]]
    assert admin.get(f"/api/action?model-id={model}").json[0]["id"] == action["id"]
    updated = admin.put(f"/api/action/{action['id']}", json={"name": "Age", "description": "Sets the age"}).json
    assert updated["name"] == "Age" and updated["description"] == "Sets the age"
    assert updated["dataset_query"] == action["dataset_query"]
    # Changing the kind replaces the kind's row.
    changed = admin.put(f"/api/action/{action['id']}", json={"type": "implicit", "kind": "row/delete"}).json
    assert changed["type"] == "implicit" and changed["kind"] == "row/delete" and "dataset_query" not in changed
    assert [p["id"] for p in changed["parameters"]] == ["id"]
    archived = admin.put(f"/api/action/{action['id']}", json={"archived": True}).json
    assert archived["archived"] is True
    assert admin.get(f"/api/action/{action['id']}").status_code == 404
    assert admin.get("/api/action").json == []
    assert admin.delete(f"/api/action/{action['id']}").status_code == 204
    assert admin.delete(f"/api/action/{action['id']}").status_code == 404


@pytest.mark.security_row(11)
def test_save_time_checks(app, admin):
    db, model = setup_model(app, admin)
    enable_actions(admin, db)
    no_db = admin.post("/api/action", json={"name": "q", "type": "query", "model_id": model,
                                            "dataset_query": {"database": db, "type": "native",
                                                              "native": {"query": "DELETE FROM people"}}})
    assert no_db.status_code == 400 and no_db.json == "Must provide a database_id for query actions"
    bad_type = admin.post("/api/action", json={"name": "x", "type": "sql", "model_id": model})
    assert bad_type.status_code == 400 and "type" in bad_type.json["errors"]
    bad_kind = implicit(admin, model, "row/upsert")
    assert bad_kind.status_code == 400 and "kind" in bad_kind.json["errors"]
    template = {"method": "POST", "url": "https://example.com/hook"}
    bad_jq = http_action(admin, model, template, response_handle=".item.[")
    assert bad_jq.status_code == 400
    assert "must be a valid json-query, something like '.item.title'" in bad_jq.json["errors"]["response_handle"]
    assert http_action(admin, model, template, error_handle=".a, .b").status_code == 400
    closed = http_action(admin, model, {**template, "timeout": 3})
    assert closed.status_code == 400 and "template" in closed.json["errors"]
    assert http_action(admin, model, {**template, "method": "TRACE"}).status_code == 400
    for url in ("https://{{host}}/x", "ftp://example.com/x", "http://[[{{h}}]]example.com", "example.com/x"):
        refused = http_action(admin, model, {**template, "url": url})
        assert refused.status_code == 400 and "template" in refused.json["errors"], url
    ok = http_action(admin, model, {**template, "url": "https://example.com/{{id}}?q={{q}}"},
                     response_handle=".body.id", error_handle=".status >= 500")
    assert ok.status_code == 200, ok.json
    assert ok.json["template"]["url"].endswith("?q={{q}}") and ok.json["response_handle"] == ".body.id"
    # A question is not a model; a model with clauses cannot have implicit actions.
    people = table_id(admin, db, "people")
    question = admin.post("/api/card", json={"name": "Q", "display": "table", "visualization_settings": {},
                                             "dataset_query": {"database": db, "type": "query",
                                                               "query": {"source-table": people}}})
    refused = implicit(admin, question.json["id"], "row/create")
    assert refused.status_code == 400 and refused.json == "Actions must be made with models, not cards."
    filtered = admin.post("/api/card", json={
        "name": "F", "type": "model", "display": "table", "visualization_settings": {},
        "dataset_query": {"database": db, "type": "query",
                          "query": {"source-table": table_id(admin, db, "people"), "limit": 1}}}).json["id"]
    refused = implicit(admin, filtered, "row/create")
    assert refused.status_code == 400 and refused.json == "Implicit actions are not supported for models with clauses."
    assert admin.post("/api/action", json={"name": "x", "model_id": 999999}).status_code == 404


def test_the_model_collection_decides_who_reads_and_writes(app, admin, user):
    secret = add_collection(app, "Secret")
    graph = admin.get("/api/collection/graph").json
    all_users = str(next(g["id"] for g in admin.get("/api/permissions/group").json if g["name"] == "All Users"))
    graph["groups"][all_users] = {**graph["groups"].get(all_users, {}), str(secret): "none"}
    assert admin.put("/api/collection/graph", json=graph).status_code == 200
    db, hidden_model = setup_model(app, admin, collection_id=secret)
    open_model = make_model(admin, db, table_id(admin, db, "people"), name="Open")
    enable_actions(admin, db)
    hidden = implicit(admin, hidden_model, "row/update").json
    shown = implicit(admin, open_model, "row/update").json
    assert user.get(f"/api/action/{hidden['id']}").status_code == 403
    assert [a["id"] for a in user.get("/api/action").json] == [shown["id"]]
    assert user.get(f"/api/action?model-id={hidden_model}").status_code == 403
    assert implicit(user, hidden_model, "row/create").status_code == 403
    assert user.put(f"/api/action/{hidden['id']}", json={"name": "x"}).status_code == 403
    assert user.delete(f"/api/action/{hidden['id']}").status_code == 403
    denied = user.post(f"/api/action/{hidden['id']}/execute", json={"parameters": {"id": 1, "name": "x"}})
    assert denied.status_code == 403
    ran = user.post(f"/api/action/{shown['id']}/execute", json={"parameters": {"id": 1, "name": "Ada B."}})
    assert ran.status_code == 200 and ran.json == {"rows-updated": [1]}
    # A query action's SQL is its author's: native query permission on the database is needed.
    assert user.post(f"/api/action/{shown['id']}/public_link").status_code == 403
    assert user.get("/api/action/public").status_code == 403


def test_public_links(app, admin):
    db, model = setup_model(app, admin)
    enable_actions(admin, db)
    action = implicit(admin, model, "row/create").json
    assert admin.put("/api/setting/enable-public-sharing", json={"value": False}).status_code == 204
    refused = admin.post(f"/api/action/{action['id']}/public_link")
    assert refused.status_code == 400 and refused.json == "Public sharing is not enabled."
    assert admin.put("/api/setting/enable-public-sharing", json={"value": True}).status_code == 204
    uuid = admin.post(f"/api/action/{action['id']}/public_link").json["uuid"]
    assert admin.post(f"/api/action/{action['id']}/public_link").json["uuid"] == uuid
    assert admin.get("/api/action/public").json == [{"id": action["id"], "name": "row/create", "public_uuid": uuid,
                                                     "model_id": model}]
    shown = admin.get(f"/api/action/{action['id']}").json
    assert shown["public_uuid"] == uuid and shown["made_public_by_id"] is not None
    assert admin.delete(f"/api/action/{action['id']}/public_link").status_code == 204
    assert admin.delete(f"/api/action/{action['id']}/public_link").status_code == 404
    assert admin.get("/api/action/public").json == []


def test_values_the_database_cannot_take_are_400s(app, admin):
    db, model = setup_model(app, admin)
    enable_actions(admin, db)
    setter = query_action(admin, model, db, "UPDATE people SET age = {{age}} WHERE id = 1",
                          {"age": {"id": "age", "name": "age", "display-name": "Age", "type": "number"}},
                          [{"id": "age", "type": "number/=", "target": ["variable", ["template-tag", "age"]]}]).json
    update = implicit(admin, model, "row/update").json
    for value in ({"a": 1}, [1, 2], True, "text", -(2**70)):
        ran = admin.post(f"/api/action/{setter['id']}/execute", json={"parameters": {"age": value}})
        assert ran.status_code == 400, (value, ran.json)
    for value in ({"a": 1}, [1, 2], 2**70):
        ran = admin.post(f"/api/action/{update['id']}/execute", json={"parameters": {"id": 1, "age": value}})
        assert ran.status_code == 400, (value, ran.json)
    assert admin.get(f"/api/action/{update['id']}/execute", query_string={"parameters": "[1]"}).status_code == 400
