"""Collection items kept per permission set (plugins.collections.listing): callers of the same groups
share one listing, each still sees their own personal collection; a permission change or an edit of
an item is seen by the next request; a flush of view counts keeps the listing and shows the new last use.
On the SQLite file and on PostgreSQL; statements are counted on the app DB's engine
(tests.test_reads_write_nothing.AppDbStatements)."""
from __future__ import annotations

import pytest

from core.appdb.counters import flush
from core.testing import make_user, setup_admin
from tests.core.test_memo import set_access
from tests.test_reads_write_nothing import AppDbStatements

ROOT_ITEMS = "/api/collection/root/items"
ROOT_KEYS = ("report_card.collection_id IS NULL", "report_dashboard.collection_id IS NULL")


@pytest.fixture
def world(any_app):
    app, admin = any_app, setup_admin(any_app)
    ulla = make_user(app, "ulla@example.com", "Ulla", "User")
    olaf = make_user(app, "olaf@example.com", "Olaf", "Other")
    shared = admin.post("/api/collection", json={"name": "Shared"}).json["id"]
    hidden = admin.post("/api/collection", json={"name": "Hidden"}).json["id"]
    set_access(admin, shared, "read")
    set_access(admin, hidden, "none")
    board = admin.post("/api/dashboard", json={"name": "Board"}).json["id"]
    return {"app": app, "admin": admin, "ulla": ulla, "olaf": olaf, "shared": shared, "hidden": hidden,
            "board": board}


def listed(client, path: str = ROOT_ITEMS) -> dict:
    response = client.get(path)
    assert response.status_code == 200, response.json
    return {(item["model"], item["id"]): item for item in response.json["data"]}


def listed_with_statements(app, client, path: str = ROOT_ITEMS) -> tuple[dict, list[str]]:
    with AppDbStatements(app) as seen:
        items = listed(client, path)
    return items, seen.statements


def test_users_of_the_same_groups_share_the_listing_and_each_sees_their_own_personal_collection(world):
    app, admin, ulla, olaf = world["app"], world["admin"], world["ulla"], world["olaf"]
    ulla_pc, olaf_pc = ulla.user["personal_collection_id"], olaf.user["personal_collection_id"]
    olaf_sub = olaf.post("/api/collection", json={"name": "Olaf's drafts", "parent_id": olaf_pc}).json["id"]
    mine = listed(ulla)
    assert ("collection", ulla_pc) in mine and ("collection", olaf_pc) not in mine
    assert mine[("collection", ulla_pc)]["name"] == "Ulla User's Personal Collection"
    assert mine[("collection", ulla_pc)]["can_write"] is True
    assert mine[("collection", ulla_pc)]["personal_owner_id"] == ulla.user["id"]
    assert ("collection", world["shared"]) in mine and ("collection", world["hidden"]) not in mine
    assert mine[("collection", world["shared"])]["can_write"] is False

    # Olaf is in the same groups: the root's items are not read again, only his own part is.
    theirs, statements = listed_with_statements(app, olaf)
    assert not [s for s in statements if any(k in s for k in ROOT_KEYS)], statements
    assert ("collection", olaf_pc) in theirs and ("collection", ulla_pc) not in theirs
    assert theirs[("collection", olaf_pc)]["here"] == ["collection"]  # his drafts, which only he sees
    assert ("collection", olaf_sub) not in theirs
    assert {k for k in theirs if k[1] != olaf_pc} == {k for k in mine if k[1] != ulla_pc}

    # In name order among the rest, and counted in the total and the page.
    order = [item["name"] for item in olaf.get(ROOT_ITEMS).json["data"]]
    assert order == ["Board", "Olaf Other's Personal Collection", "Shared"]
    paged = olaf.get(f"{ROOT_ITEMS}?limit=1&offset=1").json
    assert paged["total"] == len(theirs) and [i["name"] for i in paged["data"]] == order[1:2]

    # An administrator sees their own personal collection at the root, no other user's nor what is in one.
    admins = listed(admin)
    assert ("collection", admin.user["personal_collection_id"]) in admins
    assert not {("collection", ulla_pc), ("collection", olaf_pc), ("collection", olaf_sub)} & set(admins)
    assert ("collection", world["hidden"]) in admins and admins[("collection", world["hidden"])]["can_write"]
    # ... and lists the inside of one by opening it, as its owner does.
    assert ("collection", olaf_sub) in listed(admin, f"/api/collection/{olaf_pc}/items")
    assert ("collection", olaf_sub) in listed(olaf, f"/api/collection/{olaf_pc}/items")
    assert ulla.get(f"/api/collection/{olaf_pc}/items").status_code == 403


def test_a_permission_change_is_seen_by_the_next_listing(world):
    admin, ulla, olaf = world["admin"], world["ulla"], world["olaf"]
    hidden = ("collection", world["hidden"])
    assert hidden not in listed(ulla) and hidden not in listed(olaf)
    set_access(admin, world["hidden"], "write")
    assert listed(ulla)[hidden]["can_write"] is True and listed(olaf)[hidden]["can_write"] is True
    set_access(admin, world["hidden"], "read")
    assert listed(ulla)[hidden]["can_write"] is False
    set_access(admin, world["hidden"], "none")
    assert hidden not in listed(ulla) and hidden not in listed(olaf)


def test_an_edit_of_an_item_is_seen_by_the_next_listing(world):
    admin, ulla = world["admin"], world["ulla"]
    board, shared = ("dashboard", world["board"]), ("collection", world["shared"])
    inside = f"/api/collection/{world['shared']}/items"
    assert listed(ulla)[board]["name"] == "Board" and board not in listed(ulla, inside)
    assert admin.put(f"/api/dashboard/{world['board']}", json={"name": "Panel"}).status_code == 200
    assert listed(ulla)[board]["name"] == "Panel"
    assert admin.put(f"/api/dashboard/{world['board']}", json={"collection_id": world["shared"]}).status_code == 200
    assert board not in listed(ulla) and listed(ulla, inside)[board]["name"] == "Panel"
    assert listed(ulla)[shared]["here"] == ["dashboard"]
    assert admin.put(f"/api/collection/{world['shared']}", json={"name": "Common"}).status_code == 200
    assert listed(ulla)[shared]["name"] == "Common"
    assert admin.put(f"/api/dashboard/{world['board']}", json={"archived": True}).status_code == 200
    assert board not in listed(ulla, inside) and "here" not in listed(ulla)[shared]
    assert admin.put(f"/api/collection/{world['shared']}", json={"archived": True}).status_code == 200
    assert shared not in listed(ulla)


def test_a_flush_of_view_counts_keeps_the_listing_and_shows_the_last_use(world):
    app, ulla = world["app"], world["ulla"]
    board = ("dashboard", world["board"])
    set_access(world["admin"], world["shared"], "read")  # nothing changes after this but the views
    assert listed(ulla)[board]["last_used_at"] is None
    assert ulla.get(f"/api/dashboard/{world['board']}").status_code == 200
    flush(app)
    items, statements = listed_with_statements(app, ulla)
    assert not [s for s in statements if any(k in s for k in ROOT_KEYS) or "FROM collection" in s], statements
    assert items[board]["last_used_at"] is not None
