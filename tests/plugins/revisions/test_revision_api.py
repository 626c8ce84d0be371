"""/api/revision: card, dashboard (and segment, legacy metric) histories and reverts by entity name, the
register_revisables hook that feeds it, and its 400/403/404 answers."""
import pytest

from core.assembly.app import create_app
from core.assembly.plugins import PluginError
from core.testing import setup_admin
from tests.plugins.cards.fixtures import card_body, mbql_query, native_query
from tests.support import write_plugin


def set_collection_access(admin, collection_id, level: str) -> None:
    graph = admin.get("/api/collection/graph").json
    graph["groups"]["1"][str(collection_id)] = level
    assert admin.put("/api/collection/graph", json=graph).status_code == 200


def shared_collection(admin, level: str = "write") -> int:
    collection = admin.post("/api/collection", json={"name": "Shared", "color": "#509EE3"}).json["id"]
    set_collection_access(admin, collection, level)
    return collection


def test_card_history_newest_first_through_both_routes(admin, user, warehouse):
    card = user.post("/api/card", json=card_body("First", native_query(warehouse["db"], "SELECT 1 AS x"))).json
    assert user.put(f"/api/card/{card['id']}", json={"name": "Second"}).status_code == 200
    listed = user.get(f"/api/revision?entity=card&id={card['id']}")
    assert listed.status_code == 200, listed.json
    assert [r["description"] for r in listed.json] == ['renamed this Card from "First" to "Second".', "created this."]
    assert [r["is_creation"] for r in listed.json] == [False, True]
    assert [r["most_recent"] for r in listed.json] == [True, False]
    assert listed.json[0]["diff"] == {"before": {"name": "First"}, "after": {"name": "Second"}}
    assert listed.json[0]["user"]["id"] == user.user["id"]
    assert not {"model", "model_id", "user_id", "object"} & set(listed.json[0])
    assert user.get(f"/api/revision/card/{card['id']}").json == listed.json


def test_card_revert_restores_the_recorded_state_as_a_reversion(admin, user, warehouse):
    first_query = native_query(warehouse["db"], "SELECT 1 AS x")
    card = user.post("/api/card", json=card_body("First", first_query, description="before")).json
    changed = user.put(f"/api/card/{card['id']}", json={
        "name": "Second", "description": None,
        "dataset_query": mbql_query(warehouse["db"], **{"source-table": warehouse["people"]})})
    assert changed.status_code == 200 and changed.json["query_type"] == "query"
    creation = user.get(f"/api/revision?entity=card&id={card['id']}").json[-1]

    reverted = user.post("/api/revision/revert", json={"entity": "card", "id": card["id"],
                                                       "revision_id": creation["id"]})
    assert reverted.status_code == 200, reverted.json
    assert reverted.json["is_reversion"] is True and reverted.json["most_recent"] is True
    assert reverted.json["description"] == "reverted to an earlier version."
    now = user.get(f"/api/card/{card['id']}").json
    assert now["name"] == "First" and now["description"] == "before"
    assert now["dataset_query"]["native"]["query"] == "SELECT 1 AS x"
    assert now["query_type"] == "native" and now["table_id"] is None  # derived columns follow the query
    history = user.get(f"/api/revision?entity=card&id={card['id']}").json
    assert [r["is_reversion"] for r in history] == [True, False, False]
    assert user.post(f"/api/card/{card['id']}/query").status_code == 202


def test_card_revert_checks_data_permissions_of_the_reverted_query(admin, user, warehouse):
    card = user.post("/api/card", json=card_body("Native first", native_query(warehouse["db"], "SELECT 1 AS x"))).json
    assert user.put(f"/api/card/{card['id']}", json={
        "dataset_query": mbql_query(warehouse["db"], **{"source-table": warehouse["people"]})}).status_code == 200
    revision = admin.get("/api/permissions/graph-v2").json["revision"]
    assert admin.put("/api/permissions/graph", json={"revision": revision, "groups": {
        "1": {str(warehouse["db"]): {"view-data": "unrestricted", "create-queries": "query-builder"}}}}).status_code == 200
    creation = user.get(f"/api/revision?entity=card&id={card['id']}").json[-1]
    refused = user.post("/api/revision/revert", json={"entity": "card", "id": card["id"], "revision_id": creation["id"]})
    assert refused.status_code == 403
    assert user.get(f"/api/card/{card['id']}").json["query_type"] == "query"
    assert len(user.get(f"/api/revision?entity=card&id={card['id']}").json) == 2
    # The administrator may run native queries: the same revert goes through.
    assert admin.post("/api/revision/revert", json={"entity": "card", "id": card["id"],
                                                    "revision_id": creation["id"]}).status_code == 200


def test_only_an_administrator_reverts_embedding(admin, user, warehouse):
    shared = shared_collection(admin, "write")
    card = user.post("/api/card", json=card_body("Embedded", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                 collection_id=shared)).json
    assert admin.put("/api/setting/enable-embedding-static", json={"value": True}).status_code in (200, 204)
    assert admin.put(f"/api/card/{card['id']}", json={"enable_embedding": True, "name": "Shown"}).status_code == 200
    creation = user.get(f"/api/revision?entity=card&id={card['id']}").json[-1]
    revert = {"entity": "card", "id": card["id"], "revision_id": creation["id"]}
    assert user.post("/api/revision/revert", json=revert).status_code == 200
    now = user.get(f"/api/card/{card['id']}").json
    assert now["name"] == "Embedded" and now["enable_embedding"] is True
    assert admin.post("/api/revision/revert", json=revert).status_code == 200
    assert admin.get(f"/api/card/{card['id']}").json["enable_embedding"] is False


def test_reading_needs_read_and_reverting_needs_write(admin, user, warehouse):
    secret = admin.post("/api/card", json=card_body("Admin only", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                    collection_id=admin.user["personal_collection_id"])).json
    assert user.get(f"/api/revision?entity=card&id={secret['id']}").status_code == 403
    assert user.get(f"/api/revision/card/{secret['id']}").status_code == 403
    shared = shared_collection(admin, "read")
    readable = admin.post("/api/card", json=card_body("Read only", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                      collection_id=shared)).json
    history = user.get(f"/api/revision?entity=card&id={readable['id']}")
    assert history.status_code == 200 and len(history.json) == 1
    refused = user.post("/api/revision/revert", json={"entity": "card", "id": readable["id"],
                                                      "revision_id": history.json[0]["id"]})
    assert refused.status_code == 403
    assert len(admin.get(f"/api/revision?entity=card&id={readable['id']}").json) == 1


def test_a_revert_leaves_the_card_where_it_is_when_the_recorded_collection_is_not_writable(admin, user, warehouse):
    closed = admin.post("/api/collection", json={"name": "Closed", "color": "#509EE3"}).json["id"]
    set_collection_access(admin, closed, "read")
    shared = shared_collection(admin, "write")
    card = admin.post("/api/card", json=card_body("Moving", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                  collection_id=closed)).json
    assert admin.put(f"/api/card/{card['id']}", json={"collection_id": shared}).status_code == 200
    assert admin.put(f"/api/card/{card['id']}", json={"name": "Moved"}).status_code == 200
    creation = user.get(f"/api/revision?entity=card&id={card['id']}").json[-1]
    reverted = user.post("/api/revision/revert", json={"entity": "card", "id": card["id"], "revision_id": creation["id"]})
    assert reverted.status_code == 200, reverted.json
    now = user.get(f"/api/card/{card['id']}").json
    assert now["name"] == "Moving" and now["collection_id"] == shared
    assert admin.post("/api/revision/revert", json={"entity": "card", "id": card["id"],
                                                    "revision_id": creation["id"]}).status_code == 200
    assert admin.get(f"/api/card/{card['id']}").json["collection_id"] == closed


def test_bad_requests(admin, warehouse):
    card = admin.post("/api/card", json=card_body("A card", native_query(warehouse["db"], "SELECT 1 AS x"))).json
    unknown = admin.get(f"/api/revision?entity=pulse&id={card['id']}")
    assert unknown.status_code == 400
    assert unknown.json["errors"]["entity"].startswith("enum of ") and "card" in unknown.json["errors"]["entity"]
    assert admin.get(f"/api/revision/pulse/{card['id']}").status_code == 400
    assert admin.post("/api/revision/revert", json={"entity": "pulse", "id": card["id"],
                                                    "revision_id": 1}).status_code == 400
    assert admin.get("/api/revision").status_code == 400
    assert admin.get("/api/revision?entity=card&id=nope").status_code == 400
    assert admin.post("/api/revision/revert", json={"entity": "card", "id": card["id"]}).status_code == 400
    assert admin.get("/api/revision?entity=card&id=999999").status_code == 404
    assert admin.post("/api/revision/revert", json={"entity": "card", "id": 999999, "revision_id": 1}).status_code == 404
    other = admin.post("/api/card", json=card_body("Other", native_query(warehouse["db"], "SELECT 2 AS y"))).json
    foreign = admin.get(f"/api/revision?entity=card&id={other['id']}").json[0]["id"]
    # A revision of another object is not one of this card's.
    assert admin.post("/api/revision/revert", json={"entity": "card", "id": card["id"],
                                                    "revision_id": foreign}).status_code == 404


def test_dashboard_history_and_revert(admin, user, warehouse):
    shared = shared_collection(admin, "write")
    card = user.post("/api/card", json=card_body("On it", native_query(warehouse["db"], "SELECT 1 AS x"),
                                                 collection_id=shared)).json
    dashboard = user.post("/api/dashboard", json={"name": "Board", "collection_id": shared}).json
    added = user.put(f"/api/dashboard/{dashboard['id']}", json={"name": "Board 2", "dashcards": [
        {"id": -1, "card_id": card["id"], "row": 0, "col": 0, "size_x": 4, "size_y": 4}]})
    assert added.status_code == 200, added.json
    listed = user.get(f"/api/revision?entity=dashboard&id={dashboard['id']}")
    assert listed.status_code == 200, listed.json
    assert [r["is_creation"] for r in listed.json] == [False, True]
    assert listed.json[0]["description"] == 'renamed this Dashboard from "Board" to "Board 2" and added a card.'
    assert user.get(f"/api/revision/dashboard/{dashboard['id']}").json == listed.json
    assert listed.json == user.get(f"/api/dashboard/{dashboard['id']}/revisions").json

    reverted = user.post("/api/revision/revert", json={"entity": "dashboard", "id": dashboard["id"],
                                                       "revision_id": listed.json[-1]["id"]})
    assert reverted.status_code == 200 and reverted.json["is_reversion"] is True
    now = user.get(f"/api/dashboard/{dashboard['id']}").json
    assert now["name"] == "Board" and now["dashcards"] == []

    assert user.get("/api/revision?entity=dashboard&id=999999").status_code == 404
    assert user.post("/api/revision/revert", json={"entity": "dashboard", "id": 999999,
                                                   "revision_id": 1}).status_code == 404
    secret = admin.post("/api/dashboard", json={"name": "Mine", "collection_id": admin.user["personal_collection_id"]}).json
    assert user.get(f"/api/revision?entity=dashboard&id={secret['id']}").status_code == 403
    readonly = shared_collection(admin, "read")
    visible = admin.post("/api/dashboard", json={"name": "Look only", "collection_id": readonly}).json
    history = user.get(f"/api/revision/dashboard/{visible['id']}")
    assert history.status_code == 200
    assert user.post("/api/revision/revert", json={"entity": "dashboard", "id": visible["id"],
                                                   "revision_id": history.json[0]["id"]}).status_code == 403


def test_segments_and_legacy_metrics_are_served_too(admin, user, warehouse):
    definition = {"source-table": warehouse["people"], "filter": [">", ["field", warehouse["people.age"], None], 40]}
    segment = admin.post("/api/segment", json={"name": "Old", "table_id": warehouse["people"],
                                               "definition": definition}).json
    assert admin.put(f"/api/segment/{segment['id']}", json={"name": "Older", "revision_message": "rename"}).status_code == 200
    history = admin.get(f"/api/revision?entity=segment&id={segment['id']}").json
    assert history == admin.get(f"/api/segment/{segment['id']}/revisions").json
    assert [r["message"] for r in history] == ["rename", None]
    # Reverting a segment is for administrators, as /api/segment/:id/revert.
    revert = {"entity": "segment", "id": segment["id"], "revision_id": history[-1]["id"]}
    assert user.post("/api/revision/revert", json=revert).status_code == 403
    assert admin.post("/api/revision/revert", json=revert).json["is_reversion"] is True
    assert admin.get(f"/api/segment/{segment['id']}").json["name"] == "Old"
    metric = admin.post("/api/metric", json={"name": "Count", "table_id": warehouse["people"],
                                             "definition": {**definition, "aggregation": [["count"]]}}).json
    assert len(admin.get(f"/api/revision/metric/{metric['id']}").json) == 1


WIDGETS = '''
    from core import Revisable, hookimpl
    from core.http.errors import NotFound

    def history(session, user, widget_id):
        if widget_id != 7:
            raise NotFound()
        return [{"id": 1, "description": f"widget {widget_id} seen by {user.email}"}]

    def revert(session, user, widget_id, revision_id):
        return {"id": 2, "is_reversion": True, "reverted_to": revision_id}

    @hookimpl
    def register_revisables():
        return [Revisable("{entity}", history, revert)]
'''


def test_a_plugin_registers_a_revisable_kind(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, WIDGETS.replace("{entity}", "widget"))
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    admin = setup_admin(app)
    assert admin.get("/api/revision?entity=widget&id=7").json == [{"id": 1, "description":
                                                                   f"widget 7 seen by {admin.user['email']}"}]
    assert admin.get("/api/revision/widget/8").status_code == 404
    assert admin.post("/api/revision/revert", json={"entity": "widget", "id": 7, "revision_id": 5}).json == {
        "id": 2, "is_reversion": True, "reverted_to": 5}
    assert set(app.extensions["tessera"].revisables) == {"card", "dashboard", "segment", "metric", "widget"}
    app.extensions["tessera"].db.dispose()


def test_a_duplicate_revisable_entity_stops_startup_naming_both_plugins(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, WIDGETS.replace("{entity}", "card"))
    with pytest.raises(PluginError) as error:
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    assert "revisable entity 'card'" in str(error.value)
    assert "plugins.cards" in str(error.value) and name in str(error.value)
