"""/api/segment: listing, reading, creating, changing, archiving, revisions and revert, permissions and validation."""
from tests.plugins.definitions.support import big_orders, grant_data_model, sample


def create(admin, ids, name="Big orders", minimum=100, **extra):
    response = admin.post("/api/segment", json={"name": name, "table_id": ids["ORDERS"],
                                                "definition": big_orders(ids, minimum), **extra})
    assert response.status_code == 200, response.json
    return response.json


def test_create_get_and_list(app, admin, user, sample_database_file):
    ids = sample(app, admin)
    segment = create(admin, ids, description="Orders over 100")
    assert segment["name"] == "Big orders" and segment["table_id"] == ids["ORDERS"]
    assert segment["definition"] == big_orders(ids) and segment["archived"] is False
    assert segment["creator_id"] == segment["creator"]["id"] and segment["creator"]["email"]
    assert len(segment["entity_id"]) == 21 and segment["caveats"] is None and segment["show_in_getting_started"] is False
    other = create(admin, ids, name="another", minimum=10)
    # reading needs data-model permission on the table, as Metabase's can-read?
    assert user.get(f"/api/segment/{segment['id']}").status_code == 403
    assert user.get("/api/segment").json == []
    grant_data_model(app, ids["db"])
    assert user.get(f"/api/segment/{segment['id']}").json["name"] == "Big orders"
    listing = user.get("/api/segment").json
    assert [s["name"] for s in listing] == ["another", "Big orders"]  # by lower-cased name
    assert listing[1]["definition_description"] == "Filtered by Total is greater than 100"
    assert listing[1]["creator"]["id"] == segment["creator_id"]
    admin.put(f"/api/segment/{other['id']}", json={"archived": True, "revision_message": "gone"})
    assert [s["name"] for s in user.get("/api/segment").json] == ["Big orders"]
    assert user.get(f"/api/segment/{other['id']}").json["archived"] is True
    assert user.get("/api/segment/99999").status_code == 404


def test_writes_need_a_superuser_and_reads_need_data_model_rights(app, admin, user, sample_database_file):
    ids = sample(app, admin)
    segment = create(admin, ids, name="Early")
    assert user.get(f"/api/segment/{segment['id']}/revisions").status_code == 403
    grant_data_model(app, ids["db"])
    body = {"name": "X", "table_id": ids["ORDERS"], "definition": big_orders(ids)}
    assert user.post("/api/segment", json=body).status_code == 403
    segment = create(admin, ids)
    assert user.put(f"/api/segment/{segment['id']}", json={"name": "Y", "revision_message": "m"}).status_code == 403
    assert user.delete(f"/api/segment/{segment['id']}?revision_message=m").status_code == 403
    assert user.post(f"/api/segment/{segment['id']}/revert", json={"revision_id": 1}).status_code == 403
    assert user.get(f"/api/segment/{segment['id']}/revisions").status_code == 200
    assert [s["name"] for s in user.get("/api/segment").json] == ["Big orders", "Early"]


def test_validation(app, admin, sample_database_file):
    ids = sample(app, admin)
    missing = admin.post("/api/segment", json={"table_id": ids["ORDERS"], "definition": {}})
    assert missing.status_code == 400 and "name" in missing.json["errors"]
    bad_table = admin.post("/api/segment", json={"name": "X", "table_id": 0, "definition": {}})
    assert bad_table.status_code == 400 and "table_id" in bad_table.json["errors"]
    unknown_table = admin.post("/api/segment", json={"name": "X", "table_id": 999999, "definition": big_orders(ids)})
    assert unknown_table.status_code == 400 and "table_id" in unknown_table.json["errors"]
    not_map = admin.post("/api/segment", json={"name": "X", "table_id": ids["ORDERS"], "definition": [1]})
    assert not_map.status_code == 400 and "definition" in not_map.json["errors"]
    for definition in ({}, {"filter": ["bogus-op", 1]}, {"filter": [">", ["field", 999999, None], 1]},
                       {"filter": [">", ["field", ids["ORDERS.TOTAL"], None], 1], "aggregation": [["count"]]},
                       {"source-table": ids["PEOPLE"], "filter": [">", ["field", ids["ORDERS.TOTAL"], None], 1]}):
        response = admin.post("/api/segment", json={"name": "X", "table_id": ids["ORDERS"], "definition": definition})
        assert response.status_code == 400, definition
        assert isinstance(response.json, str) and response.json, definition
    segment = create(admin, ids)
    no_message = admin.put(f"/api/segment/{segment['id']}", json={"name": "Y"})
    assert no_message.status_code == 400 and "revision_message" in no_message.json["errors"]
    blank = admin.put(f"/api/segment/{segment['id']}", json={"name": "Y", "revision_message": ""})
    assert blank.status_code == 400
    bad_def = admin.put(f"/api/segment/{segment['id']}", json={"definition": {"filter": ["nope"]},
                                                               "revision_message": "m"})
    assert bad_def.status_code == 400
    assert admin.get(f"/api/segment/{segment['id']}").json["definition"] == big_orders(ids)
    assert admin.delete(f"/api/segment/{segment['id']}").status_code == 400  # revision_message required
    assert admin.put("/api/segment/99999", json={"name": "Y", "revision_message": "m"}).status_code == 404


def test_update_and_deprecated_delete(app, admin, sample_database_file):
    ids = sample(app, admin)
    segment = create(admin, ids, description="d")
    changed = admin.put(f"/api/segment/{segment['id']}", json={
        "name": "Huge orders", "definition": big_orders(ids, 150), "caveats": "c", "points_of_interest": "p",
        "show_in_getting_started": True, "description": None, "archived": None, "revision_message": "bigger"}).json
    assert changed["name"] == "Huge orders" and changed["definition"] == big_orders(ids, 150)
    assert changed["caveats"] == "c" and changed["points_of_interest"] == "p"
    assert changed["show_in_getting_started"] is True and changed["description"] is None
    assert changed["archived"] is False  # null is ignored for archived, as Metabase
    deleted = admin.delete(f"/api/segment/{segment['id']}?revision_message=retired")
    assert deleted.status_code == 204 and deleted.data == b""
    assert admin.get(f"/api/segment/{segment['id']}").json["archived"] is True
    latest = admin.get(f"/api/segment/{segment['id']}/revisions").json[0]
    assert latest["message"] == "retired" and latest["diff"] == {}
    assert latest["description"] == "trashed this Segment."


def test_revisions_and_revert(app, admin, sample_database_file):
    ids = sample(app, admin)
    segment = create(admin, ids)
    sid = segment["id"]
    admin.put(f"/api/segment/{sid}", json={"name": "Renamed", "revision_message": "rename"})
    admin.put(f"/api/segment/{sid}", json={"name": "Renamed", "revision_message": "no change"})
    admin.put(f"/api/segment/{sid}", json={"definition": big_orders(ids, 150), "description": "now 150",
                                           "revision_message": "stricter"})
    history = admin.get(f"/api/segment/{sid}/revisions").json
    assert [r["message"] for r in history] == ["stricter", "rename", None]  # an unchanged PUT records nothing
    first = history[-1]
    assert first["is_creation"] is True and first["is_reversion"] is False
    assert first["diff"] == {"name": {"after": "Big orders"}, "description": {"after": None},
                             "definition": {"after": big_orders(ids)}}
    assert first["description"] == "created this."
    assert set(first) >= {"id", "is_reversion", "is_creation", "message", "user", "diff", "description", "timestamp"}
    assert set(first["user"]) == {"id", "first_name", "last_name", "common_name"}
    assert "object" not in first and "model" not in first
    assert history[1]["diff"] == {"name": {"before": "Big orders", "after": "Renamed"}}
    assert history[1]["description"] == 'renamed this Segment from "Big orders" to "Renamed".'
    assert history[0]["diff"] == {"description": {"before": None, "after": "now 150"},
                                  "definition": {"before": big_orders(ids), "after": big_orders(ids, 150)}}
    assert history[0]["has_multiple_changes"] is True
    reverted = admin.post(f"/api/segment/{sid}/revert", json={"revision_id": first["id"]})
    assert reverted.status_code == 200, reverted.json
    assert reverted.json["is_reversion"] is True and reverted.json["description"] == "reverted to an earlier version."
    assert reverted.json["diff"]["name"] == {"before": "Renamed", "after": "Big orders"}
    now = admin.get(f"/api/segment/{sid}").json
    assert now["name"] == "Big orders" and now["definition"] == big_orders(ids) and now["description"] is None
    assert admin.get(f"/api/segment/{sid}/revisions").json[0]["id"] == reverted.json["id"]
    other = create(admin, ids, name="Other")
    other_first = admin.get(f"/api/segment/{other['id']}/revisions").json[0]["id"]
    assert admin.post(f"/api/segment/{sid}/revert", json={"revision_id": other_first}).status_code == 404
    assert admin.post(f"/api/segment/{sid}/revert", json={}).status_code == 400


def test_revisions_keep_the_latest_fifteen(app, admin, sample_database_file):
    ids = sample(app, admin)
    sid = create(admin, ids)["id"]
    for i in range(20):
        admin.put(f"/api/segment/{sid}", json={"name": f"Name {i}", "revision_message": f"m{i}"})
    history = admin.get(f"/api/segment/{sid}/revisions").json
    assert len(history) == 15 and history[0]["message"] == "m19" and history[-1]["message"] == "m5"
    assert history[-1]["description"] == "modified this."  # its predecessor is gone


def test_lifecycle_on_each_app_db(any_app, sample_database_template):
    """JSON definitions, revisions (with their trimming order) and revert on SQLite and PostgreSQL."""
    import shutil

    from core.sync.sample_data import FILE_NAME, directory
    from core.testing import setup_admin

    target = directory(any_app.config["TESSERA_DATA_DIR"])
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(sample_database_template, target / FILE_NAME)
    admin = setup_admin(any_app)
    ids = sample(any_app, admin)
    sid = create(admin, ids)["id"]
    for i in range(16):
        admin.put(f"/api/segment/{sid}", json={"definition": big_orders(ids, i), "revision_message": f"m{i}"})
    history = admin.get(f"/api/segment/{sid}/revisions").json
    assert len(history) == 15 and [r["message"] for r in history[:2]] == ["m15", "m14"]
    assert history[0]["diff"]["definition"] == {"before": big_orders(ids, 14), "after": big_orders(ids, 15)}
    reverted = admin.post(f"/api/segment/{sid}/revert", json={"revision_id": history[-1]["id"]}).json
    assert reverted["is_reversion"] is True
    assert admin.get(f"/api/segment/{sid}").json["definition"] == big_orders(ids, 1)
    assert admin.get("/api/segment").json[0]["definition_description"] == "Filtered by Total is greater than 1"


def test_a_segment_cannot_reach_itself(app, admin, sample_database_file):
    ids = sample(app, admin)
    a = create(admin, ids, name="A")["id"]
    b = admin.post("/api/segment", json={"name": "B", "table_id": ids["ORDERS"],
                                         "definition": {"filter": ["segment", a]}}).json["id"]
    through_b = {"filter": ["and", ["segment", b], [">", ["field", ids["ORDERS.ID"], None], 1]]}
    for definition in ({"filter": ["segment", a]}, through_b):
        response = admin.put(f"/api/segment/{a}", json={"definition": definition, "revision_message": "loop"})
        assert response.status_code == 400, definition
        assert response.json == "Segment expansion failed. Check mutually recursive segment definitions."
    assert admin.get(f"/api/segment/{a}").json["definition"] == big_orders(ids)
