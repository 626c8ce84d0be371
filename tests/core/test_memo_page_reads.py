"""What every page and every client's start asks for, kept while its tables are unchanged (issue 29):
GET /api/session/properties reads the stored settings in one statement and, repeated, none; GET
/api/user/current reads the caller's groups and personal collection once. A change through the API is
seen by the next request. On the SQLite file and on PostgreSQL.
"""
from __future__ import annotations

import pytest

from core.testing import make_user, setup_admin
from tests.core.test_memo import set_access
from tests.core.test_memo_people import tables_read
from tests.plugins.cards.fixtures import make_warehouse, register_warehouse
from tests.test_reads_write_nothing import AppDbStatements, assert_read_only


@pytest.fixture
def people(any_app):
    admin = setup_admin(any_app)
    return any_app, admin, make_user(any_app)


def repeated(app, client, path: str) -> tuple[dict, set[str], int]:
    """The answer of a third GET of `path`, the tables it read and its statement count."""
    for _ in range(2):
        assert client.get(path).status_code == 200
    with AppDbStatements(app) as seen:
        response = client.get(path)
    assert response.status_code == 200, response.json
    assert_read_only(seen, f"GET {path}")
    return response.json, tables_read(seen.statements), len(seen.statements)


def test_the_settings_map_is_read_in_one_statement_and_then_kept(people):
    app, admin, user = people
    assert admin.put("/api/setting/enable-query-caching", json={"value": True}).status_code == 204  # a commit
    with AppDbStatements(app) as seen:
        first = user.get("/api/session/properties")
    assert first.status_code == 200
    selects = [s for s in seen.statements if "setting" in tables_read([s])]
    # One statement for every stored value at once, and one for each setting a derived one reads (each
    # kept from then on): not one per setting of the map, which holds dozens.
    assert len(selects) < len(first.json) / 3, selects
    assert sum(" IN (" in s for s in selects) == 1, selects
    for client in (admin, user):
        answer, tables, _ = repeated(app, client, "/api/session/properties")
        assert "setting" not in tables, tables
        assert answer["enable-query-caching"] is True
        assert answer["has-user-setup"] is True


def test_a_changed_setting_is_in_the_next_settings_map(people):
    app, admin, user = people
    assert repeated(app, user, "/api/session/properties")[0]["site-name"] != "Acme Analytics"
    assert admin.put("/api/setting/site-name", json={"value": "Acme Analytics"}).status_code == 204
    assert user.get("/api/session/properties").json["site-name"] == "Acme Analytics"
    assert admin.put("/api/setting/site-name", json={"value": None}).status_code == 204
    assert user.get("/api/session/properties").json["site-name"] != "Acme Analytics"


def test_the_current_user_s_groups_are_kept_and_a_membership_change_is_seen(people):
    app, admin, user = people
    before, tables, _ = repeated(app, user, "/api/user/current")
    assert {"permissions_group_membership", "collection"}.isdisjoint(tables), tables
    group = admin.post("/api/permissions/group", json={"name": "Analysts"}).json["id"]
    assert group not in before["group_ids"]
    membership = admin.post("/api/permissions/membership", json={"group_id": group, "user_id": user.user["id"]})
    assert membership.status_code == 200, membership.json
    joined = user.get("/api/user/current").json
    assert group in joined["group_ids"]
    assert {"id": group, "is_group_manager": False} in joined["user_group_memberships"]
    assert joined["personal_collection_id"] == before["personal_collection_id"] is not None
    membership_id = next(m["membership_id"] for m in admin.get("/api/permissions/membership").json[str(user.user["id"])]
                         if m["group_id"] == group)
    assert admin.delete(f"/api/permissions/membership/{membership_id}").status_code in (200, 204)
    assert group not in user.get("/api/user/current").json["group_ids"]


def test_the_installer_s_second_user_is_seen_by_the_next_request(any_app):
    admin = setup_admin(any_app)
    alone, _, _ = repeated(any_app, admin, "/api/user/current")
    assert alone["is_installer"] is True and alone["has_invited_second_user"] is False
    user = make_user(any_app)
    assert admin.get("/api/user/current").json["has_invited_second_user"] is True
    answer = user.get("/api/user/current").json
    assert answer["is_installer"] is False and answer["has_invited_second_user"] is False


def test_the_bookmark_list_is_kept_and_a_new_or_removed_bookmark_is_seen(people):
    app, admin, user = people
    collection = admin.post("/api/collection", json={"name": "Shared"}).json["id"]
    set_access(admin, collection, "read")
    answer, tables, _ = repeated(app, user, "/api/bookmark")
    assert answer == []
    assert not any(table.endswith("bookmark") or table == "bookmark_ordering" for table in tables), tables
    assert user.post(f"/api/bookmark/collection/{collection}").status_code == 200
    assert [(b["type"], b["item_id"]) for b in user.get("/api/bookmark").json] == [("collection", collection)]
    assert admin.get("/api/bookmark").json == []  # another user's list is their own
    assert user.delete(f"/api/bookmark/collection/{collection}").status_code == 204
    assert user.get("/api/bookmark").json == []


def _names(tree: list[dict]) -> set[str]:
    return {node["name"] for node in tree} | {name for node in tree for name in _names(node["children"])}


def test_the_collection_tree_is_kept_and_a_new_collection_dashboard_or_permission_change_is_seen(people):
    app, admin, user = people
    shared = admin.post("/api/collection", json={"name": "Shared"}).json["id"]
    set_access(admin, shared, "read")
    tree, tables, _ = repeated(app, user, "/api/collection/tree")
    assert "collection" not in tables, tables
    assert "Shared" in _names(tree)
    assert admin.post("/api/collection", json={"name": "Inner", "parent_id": shared}).status_code == 200
    assert "Inner" in _names(user.get("/api/collection/tree").json)
    node = next(n for n in user.get("/api/collection/tree").json if n["id"] == shared)
    assert "dashboard" not in node.get("here", [])
    assert admin.post("/api/dashboard", json={"name": "Board", "collection_id": shared}).status_code == 200
    node = next(n for n in user.get("/api/collection/tree").json if n["id"] == shared)
    assert "dashboard" in node["here"]
    set_access(admin, shared, "none")
    assert "Shared" not in _names(user.get("/api/collection/tree").json)
    assert "Shared" in _names(admin.get("/api/collection/tree").json)


def test_a_table_s_query_metadata_is_kept_and_a_field_or_permission_change_is_seen(people, tmp_path):
    app, admin, user = people
    warehouse = register_warehouse(app, make_warehouse(tmp_path))
    path = f"/api/table/{warehouse['people']}/query_metadata"
    answer, tables, _ = repeated(app, user, path)
    assert "metabase_field" not in tables, tables
    assert {f["name"] for f in answer["fields"]} == {"id", "first_name", "last_name", "age"}
    assert answer == user.get(path).json
    hidden = admin.put(f"/api/field/{warehouse['people.age']}", json={"visibility_type": "sensitive"})
    assert hidden.status_code == 200, hidden.json
    assert "age" not in {f["name"] for f in user.get(path).json["fields"]}
    assert "age" in {f["name"] for f in user.get(path + "?include_sensitive_fields=true").json["fields"]}
    orders = user.get(f"/api/table/{warehouse['orders']}/query_metadata").json
    assert next(f for f in orders["fields"] if f["name"] == "person_id")["target"]["name"] == "id"
    revision = admin.get("/api/permissions/graph-v2").json["revision"]
    blocked = admin.put("/api/permissions/graph", json={"revision": revision, "groups": {
        "1": {str(warehouse["db"]): {"view-data": "blocked", "create-queries": "no"}}}})
    assert blocked.status_code == 200, blocked.json
    assert user.get(path).status_code == 403
    assert admin.get(path).status_code == 200
