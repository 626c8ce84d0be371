"""POST/GET/DELETE /api/dashboard, the list, archive, move, embedding changes, related and the
plain user's view (403, can_write, cards reduced to their id)."""
from sqlalchemy import event, select
from sqlalchemy.orm import Session

from .layout_helpers import collection_for_all_users, dashboard, dashcard, mapping, mbql_card, native_card

DASHBOARD_KEYS = {"id", "name", "description", "creator_id", "parameters", "points_of_interest", "caveats",
                  "show_in_getting_started", "collection_id", "collection_position", "position", "width",
                  "auto_apply_filters", "cache_ttl", "archived", "archived_directly", "enable_embedding",
                  "embedding_params", "public_uuid", "made_public_by_id", "initially_published_at", "entity_id",
                  "view_count", "last_viewed_at", "created_at", "updated_at"}
HYDRATED_KEYS = {"dashcards", "tabs", "param_fields", "can_write", "can_restore", "can_delete", "collection",
                 "collection_authority_level", "last_used_param_values", "last-edit-info"}
DASHCARD_KEYS = {"id", "dashboard_id", "dashboard_tab_id", "card_id", "action_id", "size_x", "size_y", "row", "col",
                 "parameter_mappings", "visualization_settings", "entity_id", "created_at", "updated_at", "series",
                 "card", "collection_authority_level"}


def stored_dashboard(app, dashboard_id):
    """The stored count once the write-behind buffer (core.appdb.counters) has been written."""
    from core.appdb.counters import flush
    from plugins.dashboards.models import Dashboard

    flush(app)

    with app.extensions["tessera"].db.engine.connect() as conn:  # not a Session: the GET's session stays alone
        query = select(Dashboard.view_count, Dashboard.updated_at).where(Dashboard.id == dashboard_id)
        return conn.execute(query).one()


def test_create_validates_and_answers_the_hydrated_dashboard(app, admin, user):
    empty = admin.post("/api/dashboard", json={})
    assert empty.status_code == 400 and empty.json["errors"] == {"name": "value must be a non-blank string."}
    bad = admin.post("/api/dashboard", json={"name": "x", "parameters": [{"name": "no id"}]})
    assert bad.status_code == 400 and "parameters" in bad.json["errors"]
    assert admin.post("/api/dashboard", json={"name": "x", "collection_id": 99999}).status_code == 404
    private = admin.user["personal_collection_id"]
    assert user.post("/api/dashboard", json={"name": "x", "collection_id": private}).status_code == 403

    created = user.post("/api/dashboard", json={"name": "Sales", "description": "d", "cache_ttl": 60,
                                                "parameters": [{"id": "p1", "type": "category", "name": "P"}],
                                                "collection_id": user.user["personal_collection_id"],
                                                "collection_position": 2})
    assert created.status_code == 200, created.json
    body = created.json
    assert DASHBOARD_KEYS | HYDRATED_KEYS <= set(body)
    assert body["name"] == "Sales" and body["creator_id"] == user.user["id"] and body["cache_ttl"] == 60
    assert body["parameters"] == [{"id": "p1", "type": "category", "name": "P"}]
    assert body["dashcards"] == [] and body["tabs"] == [] and body["param_fields"] == {}
    assert body["can_write"] is True and body["collection"]["is_personal"] is True
    assert body["collection_position"] == 2 and body["width"] == "fixed" and len(body["entity_id"]) == 21
    assert body["last-edit-info"]["email"] == "user@example.com"
    revisions = user.get(f"/api/dashboard/{body['id']}/revisions").json
    assert [(r["is_creation"], r["description"]) for r in revisions] == [(True, "created this.")]


def test_get_shows_dashcards_tabs_and_the_root_collection(app, admin, warehouse):
    card = mbql_card(admin, warehouse)
    native = native_card(admin, warehouse)
    dash = dashboard(admin, parameters=[{"id": "p", "type": "string/="}])
    put = admin.put(f"/api/dashboard/{dash['id']}", json={
        "tabs": [{"id": -1, "name": "One"}],
        "dashcards": [dashcard(-1, card["id"], -1, series=[{"id": native["id"]}],
                               parameter_mappings=[mapping("p", card["id"], warehouse["people.last_name"])]),
                      dashcard(-2, native["id"], -1, row=3)]})
    assert put.status_code == 200, put.json
    body = admin.get(f"/api/dashboard/{dash['id']}?dashboard_load_id=abc").json
    assert body["collection"]["id"] == "root" and body["collection"]["name"] == "Our analytics"
    assert body["collection_authority_level"] is None and body["last_used_param_values"] == {}
    [tab] = body["tabs"]
    assert {"id", "dashboard_id", "name", "position", "entity_id"} <= set(tab) and tab["dashboard_id"] == dash["id"]
    first, second = body["dashcards"]
    assert DASHCARD_KEYS <= set(first)
    assert first["card"]["id"] == card["id"] and first["card"]["dataset_query"] == card["dataset_query"]
    assert first["card"]["can_write"] is True and first["dashboard_tab_id"] == tab["id"]
    assert [s["id"] for s in first["series"]] == [native["id"]] and first["series"][0]["name"] == "Native"
    assert second["row"] == 3 and second["card"]["query_type"] == "native"
    # param_fields: the mapped field and the native card's field filter field
    assert set(body["param_fields"]) == {str(warehouse["people.last_name"]), str(warehouse["people.first_name"])}
    assert body["param_fields"][str(warehouse["people.last_name"])]["display_name"] == "Last Name"


def test_reading_counts_the_view_after_the_response_without_an_edit(app, admin):
    dash = dashboard(admin)
    before = stored_dashboard(app, dash["id"])
    writes = []

    def flushed(*_):
        writes.append("flush")

    def committed(*_):
        writes.append("commit")
    event.listen(Session, "after_flush", flushed)
    event.listen(Session, "after_commit", committed)
    try:
        first = admin.get(f"/api/dashboard/{dash['id']}")
    finally:
        event.remove(Session, "after_flush", flushed)
        event.remove(Session, "after_commit", committed)
    assert first.status_code == 200 and first.json["view_count"] == 1 and first.json["last_viewed_at"]
    assert writes == [], "the GET flushed or committed its request session"
    after = stored_dashboard(app, dash["id"])
    assert after.view_count == 1 and after.updated_at == before.updated_at
    assert admin.get(f"/api/dashboard/{dash['id']}").json["view_count"] == 2
    assert admin.get("/api/dashboard/99999").status_code == 404
    # As GET /api/card/:id?ignore_view=true: the same answer, no view counted.
    unseen = admin.get(f"/api/dashboard/{dash['id']}?ignore_view=true")
    assert unseen.status_code == 200 and unseen.json["view_count"] == 2
    assert admin.get(f"/api/dashboard/{dash['id']}").json["view_count"] == 3


def test_plain_user_is_refused_unreadable_dashboards_and_sees_only_card_ids(app, admin, user, warehouse):
    hidden = dashboard(admin, collection_id=admin.user["personal_collection_id"])
    refused = user.get(f"/api/dashboard/{hidden['id']}")
    assert refused.status_code == 403 and refused.json == "You don't have permissions to do that."
    assert stored_dashboard(app, hidden["id"]).view_count == 0
    assert user.get(f"/api/dashboard/{hidden['id']}/revisions").status_code == 403
    assert user.get(f"/api/dashboard/{hidden['id']}/related").status_code == 403

    secret = mbql_card(admin, warehouse, "Secret card", collection_id=admin.user["personal_collection_id"])
    open_card = mbql_card(admin, warehouse, "Open card")
    readable = collection_for_all_users(admin, "Read only", "read")
    dash = dashboard(admin, collection_id=readable, parameters=[{"id": "p", "type": "category"}])
    assert admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [
        dashcard(-1, secret["id"], series=[{"id": open_card["id"]}, {"id": secret["id"]}],
                 parameter_mappings=[mapping("p", secret["id"], warehouse["people.age"])]),
        dashcard(-2, open_card["id"])]}).status_code == 200
    body = user.get(f"/api/dashboard/{dash['id']}").json
    assert body["can_write"] is False and body["collection"]["id"] == readable
    first, second = body["dashcards"]
    assert first["card"] == {"id": secret["id"]}
    assert first["series"][0]["name"] == "Open card" and first["series"][1] == {"id": secret["id"]}
    assert second["card"]["name"] == "Open card" and second["card"]["can_write"] is True
    assert "Secret card" not in str(body)
    assert user.put(f"/api/dashboard/{dash['id']}", json={"name": "mine"}).status_code == 403
    assert user.delete(f"/api/dashboard/{dash['id']}").status_code == 403


def test_list_filters_and_permissions(app, admin, user):
    dashboard(admin, "b admin root")
    dashboard(admin, "a admin private", collection_id=admin.user["personal_collection_id"])
    mine = dashboard(user, "C user")
    gone = dashboard(admin, "archived one")
    assert admin.put(f"/api/dashboard/{gone['id']}", json={"archived": True}).status_code == 200
    names = [d["name"] for d in admin.get("/api/dashboard/").json]
    assert names == ["a admin private", "b admin root", "C user"]
    assert [d["name"] for d in user.get("/api/dashboard").json] == ["b admin root", "C user"]
    assert [d["name"] for d in user.get("/api/dashboard?f=mine").json] == ["C user"]
    assert [d["name"] for d in admin.get("/api/dashboard?f=archived").json] == ["archived one"]
    listed = user.get("/api/dashboard?f=mine").json[0]
    assert {"id", "name", "archived", "collection_id", "creator", "last-edit-info"} <= set(listed)
    assert listed["id"] == mine["id"]
    assert admin.get("/api/dashboard?f=other").status_code == 400


def test_archive_unarchive_and_delete(app, admin):
    dash = dashboard(admin, collection_position=1)
    archived = admin.put(f"/api/dashboard/{dash['id']}", json={"archived": True})
    assert archived.status_code == 200
    body = archived.json
    assert body["archived"] is True and body["archived_directly"] is True and body["collection_position"] is None
    assert body["can_restore"] is True and body["can_delete"] is True
    restored = admin.put(f"/api/dashboard/{dash['id']}", json={"archived": False}).json
    assert restored["archived"] is False and restored["archived_directly"] is False
    descriptions = [r["description"] for r in admin.get(f"/api/dashboard/{dash['id']}/revisions").json]
    assert descriptions[:2] == ["untrashed this Dashboard.", "changed pin position and trashed it."]
    deleted = admin.delete(f"/api/dashboard/{dash['id']}")
    assert deleted.status_code == 204
    assert admin.get(f"/api/dashboard/{dash['id']}").status_code == 404
    assert admin.delete(f"/api/dashboard/{dash['id']}").status_code == 404


def test_plain_keys_move_and_embedding(app, admin, user):
    dash = dashboard(user, "Mine")
    changed = user.put(f"/api/dashboard/{dash['id']}", json={
        "name": "Renamed", "description": "about", "width": "full", "auto_apply_filters": False, "cache_ttl": 10,
        "caveats": "c", "points_of_interest": "poi", "position": 3, "parameters": [{"id": "x", "type": "number/="}]})
    assert changed.status_code == 200, changed.json
    body = changed.json
    assert (body["name"], body["description"], body["width"], body["auto_apply_filters"], body["cache_ttl"],
            body["caveats"], body["position"]) == ("Renamed", "about", "full", False, 10, "c", 3)
    # null clears the keys Metabase writes when present, and is ignored for the others
    cleared = user.put(f"/api/dashboard/{dash['id']}", json={"description": None, "name": None}).json
    assert cleared["description"] is None and cleared["name"] == "Renamed"
    assert user.put(f"/api/dashboard/{dash['id']}", json={"width": "wide"}).status_code == 400

    private = admin.user["personal_collection_id"]
    assert user.put(f"/api/dashboard/{dash['id']}", json={"collection_id": private}).status_code == 403
    personal = user.user["personal_collection_id"]
    moved = user.put(f"/api/dashboard/{dash['id']}", json={"collection_id": personal})
    assert moved.status_code == 200 and moved.json["collection"]["id"] == personal

    assert user.put(f"/api/dashboard/{dash['id']}", json={"enable_embedding": True}).status_code == 403
    off = admin.put(f"/api/dashboard/{dash['id']}", json={"enable_embedding": True})
    assert off.status_code == 400 and off.json == "Embedding is not enabled."
    assert admin.put("/api/setting/enable-embedding-static", json={"value": True}).status_code == 204
    bad = admin.put(f"/api/dashboard/{dash['id']}", json={"embedding_params": {"p": "sometimes"}})
    assert bad.status_code == 400
    on = admin.put(f"/api/dashboard/{dash['id']}", json={"enable_embedding": True, "embedding_params": {"p": "locked"}})
    assert on.status_code == 200 and on.json["enable_embedding"] is True
    assert on.json["embedding_params"] == {"p": "locked"}
    # the same values again (a GET body posted back) need no administrator
    assert user.put(f"/api/dashboard/{dash['id']}", json={"enable_embedding": True,
                                                          "embedding_params": {"p": "locked"}}).status_code == 200


def test_related_and_the_dashboard_hooks(app, admin, user, warehouse):
    by_age = [["field", warehouse["people.age"], None]]
    on_dashboard = mbql_card(admin, warehouse, "Count people", aggregation=[["count"]], breakout=by_age)
    similar = mbql_card(admin, warehouse, "Average age", aggregation=[["avg", by_age[0]]], breakout=by_age)
    mate = mbql_card(admin, warehouse, "Orders", table="orders")
    dash = dashboard(admin, "Related dash")
    assert admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [
        dashcard(-1, on_dashboard["id"]), dashcard(-2, mate["id"])]}).status_code == 200
    related = admin.get(f"/api/dashboard/{dash['id']}/related").json
    assert [c["id"] for c in related["cards"]] == [similar["id"]]
    card_related = admin.get(f"/api/card/{on_dashboard['id']}/related").json
    assert [c["id"] for c in card_related["dashboard-mates"]] == [mate["id"]]
    assert dash["id"] in [d["id"] for d in card_related["dashboards"]]
    # an archived dashboard is not recommended
    admin.put(f"/api/dashboard/{dash['id']}", json={"archived": True})
    assert dash["id"] not in [d["id"] for d in admin.get(f"/api/card/{on_dashboard['id']}/related").json["dashboards"]]
