"""A card's and a dashboard's kept answers are shared by everyone (issue 29): the hydration is kept per
object and the permission answers per group set, and what each caller may do is laid over them per
request. So a second user reads no hydration at all, yet a personal collection stays its owner's and a
group of one user's changes that user's rights only. On the SQLite file and on PostgreSQL.
"""
from __future__ import annotations

import pytest

from core.appdb import changes
from core.testing import make_user
from tests.core.test_memo import make_world, read_twice, set_access
from tests.plugins.cards.fixtures import card_body, mbql_query
from tests.test_reads_write_nothing import AppDbStatements, assert_read_only

# What the hydration reads; a new caller reads only their own groups and the collections they hold a
# level on (which their personal collection decides).
HYDRATION_TABLES = ("report_card", "report_dashboard", "report_dashboardcard", "revision", "data_permission",
                    "metabase_field", "core_user")


@pytest.fixture
def world(any_app, tmp_path):
    made = make_world(any_app, tmp_path)
    made["other"] = make_user(any_app, email="other@example.com", first_name="Otto")
    return made


def statements_of(app, client, path: str) -> tuple[object, list[str]]:
    with AppDbStatements(app) as seen:
        response = client.get(path)
    assert_read_only(seen, f"GET {path}")
    return response, seen.statements


def tables_read(statements: list[str]) -> set[str]:
    return {table for statement in statements for table in changes.classify(statement)[0]}


def test_a_second_user_of_the_same_groups_reads_no_hydration(world):
    app, user, other = world["app"], world["user"], world["other"]
    for path in (f"/api/card/{world['card']}", f"/api/dashboard/{world['dashboard']}"):
        mine = read_twice(user, path)
        response, statements = statements_of(app, other, path)
        assert response.status_code == 200, response.json
        assert tables_read(statements).isdisjoint(HYDRATION_TABLES), statements
        assert len(statements) <= 4, statements  # the counters, login, groups, collection levels
        theirs = response.json
        for shown in (mine, theirs):  # the counts differ (each GET counts a view); the rest is the same
            shown.pop("view_count"), shown.pop("last_used_at", None), shown.pop("last_viewed_at", None)
        assert theirs == mine


def test_a_personal_collection_stays_its_owner_s_when_the_answer_is_shared(world):
    admin, user, other = world["admin"], world["user"], world["other"]
    personal = user.user["personal_collection_id"]
    query = admin.get(f"/api/card/{world['card']}").json["dataset_query"]
    card = admin.post("/api/card", json=card_body("Mine", query, collection_id=personal)).json["id"]
    dashboard = admin.post("/api/dashboard", json={"name": "My board", "collection_id": personal}).json["id"]
    for path in (f"/api/card/{card}", f"/api/dashboard/{dashboard}"):
        shown = read_twice(user, path)
        assert shown["can_write"] is True and shown["collection"]["can_write"] is True
        assert other.get(path).status_code == 403
        assert admin.get(path).json["can_write"] is True
        assert user.get(path).json["can_write"] is True


def test_a_group_of_one_user_changes_that_user_s_rights_only(world):
    admin, user, other = world["admin"], world["user"], world["other"]
    card = f"/api/card/{world['card']}"
    assert read_twice(user, card)["can_write"] is False
    assert read_twice(other, card)["can_write"] is False
    group = admin.post("/api/permissions/group", json={"name": "Editors"}).json["id"]
    added = admin.post("/api/permissions/membership", json={"group_id": group, "user_id": other.user["id"]})
    assert added.status_code == 200, added.json
    graph = admin.get("/api/collection/graph").json
    assert admin.put("/api/collection/graph", json={
        "revision": graph["revision"], "groups": {str(group): {str(world["collection"]): "write"}}}).status_code == 200
    assert other.get(card).json["can_write"] is True
    assert user.get(card).json["can_write"] is False
    # The dashboard's cards carry each caller's rights too.
    dashboard = f"/api/dashboard/{world['dashboard']}"
    placed = admin.put(f"{dashboard}/cards", json={"cards": [
        {"id": -1, "card_id": world["card"], "row": 0, "col": 0, "size_x": 4, "size_y": 4}]})
    assert placed.status_code == 200, placed.json
    assert other.get(dashboard).json["dashcards"][0]["card"]["can_write"] is True
    assert user.get(dashboard).json["dashcards"][0]["card"]["can_write"] is False


def test_a_card_the_caller_cannot_read_shows_as_its_id_on_a_shared_dashboard(world):
    admin, user, other = world["admin"], world["user"], world["other"]
    personal = user.user["personal_collection_id"]
    query = mbql_query(admin.get(f"/api/card/{world['card']}").json["database_id"],
                       **admin.get(f"/api/card/{world['card']}").json["dataset_query"]["query"])
    mine = admin.post("/api/card", json=card_body("Mine", query, collection_id=personal)).json["id"]
    dashboard = f"/api/dashboard/{world['dashboard']}"
    placed = admin.put(f"{dashboard}/cards", json={"cards": [
        {"id": -1, "card_id": mine, "row": 0, "col": 0, "size_x": 4, "size_y": 4}]})
    assert placed.status_code == 200, placed.json
    assert read_twice(user, dashboard)["dashcards"][0]["card"]["name"] == "Mine"
    assert other.get(dashboard).json["dashcards"][0]["card"] == {"id": mine}
    assert user.get(dashboard).json["dashcards"][0]["card"]["name"] == "Mine"


def test_a_card_s_rights_are_kept_per_group_set_and_end_with_a_data_permission_change(world):
    app, admin, user, other = world["app"], world["admin"], world["user"], world["other"]
    card = f"/api/card/{world['card']}?ignore_view=true"
    shown = read_twice(user, card)
    assert shown["can_run_adhoc_query"] is True and shown["can_manage_db"] is False
    # Another member of the same groups: their groups are read, no permission row (kept per group set).
    response, statements = statements_of(app, other, card)
    assert response.status_code == 200 and response.json["can_run_adhoc_query"] is True
    assert tables_read(statements) & {"collection_permission", "data_permission", "collection"} == set(), statements
    graph = admin.get("/api/permissions/graph").json
    revoked = admin.put("/api/permissions/graph", json={
        "revision": graph["revision"], "groups": {"1": {str(shown["database_id"]): {"create-queries": "no"}}}})
    assert revoked.status_code == 200, revoked.json
    assert user.get(card).json["can_run_adhoc_query"] is False
    assert other.get(card).json["can_run_adhoc_query"] is False


def test_a_dashboard_as_a_group_set_is_shown_it_is_kept_and_ends_with_a_card_s_permission_change(world):
    app, admin, user, other = world["app"], world["admin"], world["user"], world["other"]
    dashboard = f"/api/dashboard/{world['dashboard']}"
    hidden = admin.post("/api/collection", json={"name": "Hidden"}).json["id"]
    set_access(admin, hidden, "none")  # All Users read the root, which a new collection copies
    query = admin.get(f"/api/card/{world['card']}").json["dataset_query"]
    card = admin.post("/api/card", json=card_body("Hidden card", query, collection_id=hidden)).json["id"]
    placed = admin.put(f"{dashboard}/cards", json={"cards": [
        {"id": -1, "card_id": card, "row": 0, "col": 0, "size_x": 4, "size_y": 4}]})
    assert placed.status_code == 200, placed.json
    assert read_twice(user, dashboard)["dashcards"][0]["card"] == {"id": card}
    response, statements = statements_of(app, other, dashboard)
    assert response.json["dashcards"][0]["card"] == {"id": card}
    assert tables_read(statements) & {"collection_permission", "data_permission", "collection"} == set(), statements
    set_access(admin, hidden, "read")
    assert user.get(dashboard).json["dashcards"][0]["card"]["name"] == "Hidden card"
    assert other.get(dashboard).json["dashcards"][0]["card"]["can_write"] is False


def test_a_collection_moved_into_a_personal_collection_ends_the_answer_kept_for_the_group_set(world):
    admin, user, other = world["admin"], world["user"], world["other"]
    card = f"/api/card/{world['card']}?ignore_view=true"
    assert read_twice(user, card)["can_write"] is False
    assert read_twice(other, card)["can_write"] is False
    personal = user.user["personal_collection_id"]
    moved = admin.put(f"/api/collection/{world['collection']}", json={"parent_id": personal})
    assert moved.status_code == 200, moved.json
    assert user.get(card).json["can_write"] is True  # now under the user's own collection
    assert other.get(card).status_code == 403
