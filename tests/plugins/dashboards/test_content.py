"""Dashboards where they belong besides /api/dashboard: collection items and the tree, search,
bookmarks, cards' dashboard_count and /api/card/:id/dashboards, the archive cascade from collections,
and only readable dashboards for a plain user; none of it when the dashboards plugin is disabled."""
from __future__ import annotations

import pytest

from core.assembly.app import create_app
from core.testing import setup_admin
from core.testing.app import make_user

from .support import add_card, add_dashboard, dashboard_row


def ok(response):
    assert response.status_code in (200, 204), (response.status_code, response.json)
    return response.json


def collection(admin, name, parent_id=None):
    return ok(admin.post("/api/collection", json={"name": name, "parent_id": parent_id}))["id"]


def hide_from_all_users(admin, collection_id):
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                                "groups": {"1": {str(collection_id): "none"}}}))


def items(client, collection_id, query=""):
    return ok(client.get(f"/api/collection/{collection_id}/items{query}"))


def by_model(listing, model):
    return {i["name"]: i for i in listing["data"] if i["model"] == model}


# --------------------------------------------------------------------------------------------------
# Collection items and the tree
# --------------------------------------------------------------------------------------------------


def test_dashboards_are_collection_items(app, admin):
    cid = collection(admin, "Sales")
    dash = add_dashboard(app, "Revenue board", cid, creator_id=admin.user["id"], description="money",
                         edited_by=admin.user["id"])
    add_card(app, "A card", cid)
    listing = items(admin, cid)
    item = by_model(listing, "dashboard")["Revenue board"]
    assert item["id"] == dash and item["description"] == "money" and item["collection_id"] == cid
    assert item["can_write"] is True and item["archived"] is False and item["location"] == f"/{cid}/"
    assert item["can_restore"] is False and item["can_delete"] is False and item["collection_position"] is None
    assert item["last-edit-info"]["id"] == admin.user["id"] and item["last-edit-info"]["email"] == admin.user["email"]
    assert "dashboard" in listing["models"]
    root_dash = add_dashboard(app, "Top board")
    root_item = by_model(items(admin, "root"), "dashboard")["Top board"]
    assert root_item["id"] == root_dash and root_item["collection_id"] is None and root_item["location"] == "/"


def test_models_filter_pins_and_sorting(app, admin):
    cid = collection(admin, "Mixed")
    add_dashboard(app, "Zeta board", cid, collection_position=1)
    add_dashboard(app, "Beta board", cid)
    add_card(app, "Alpha card", cid)
    repeated = items(admin, cid, "?models=card&models=dashboard")
    assert {i["model"] for i in repeated["data"]} == {"card", "dashboard"} and repeated["total"] == 3
    assert [i["name"] for i in repeated["data"]] == ["Alpha card", "Beta board", "Zeta board"]
    only = items(admin, cid, "?models=dashboard")
    assert [i["name"] for i in only["data"]] == ["Beta board", "Zeta board"] and only["models"] == ["dashboard"]
    assert [i["name"] for i in items(admin, cid, "?pinned_state=is_pinned")["data"]] == ["Zeta board"]
    assert "Zeta board" not in [i["name"] for i in items(admin, cid, "?pinned_state=is_not_pinned")["data"]]
    ranked = items(admin, cid, "?sort_column=model&sort_direction=asc")
    assert [i["model"] for i in ranked["data"]] == ["dashboard", "dashboard", "card"]
    paged = items(admin, cid, "?models=dashboard&limit=1&offset=1")
    assert [i["name"] for i in paged["data"]] == ["Zeta board"] and paged["total"] == 2


def test_archived_listing_shows_archived_dashboards(app, admin):
    cid = collection(admin, "Old")
    add_dashboard(app, "Live", cid)
    add_dashboard(app, "Gone", cid, archived=True, archived_directly=True)
    assert list(by_model(items(admin, cid), "dashboard")) == ["Live"]
    archived = by_model(items(admin, cid, "?archived=true"), "dashboard")
    assert list(archived) == ["Gone"]
    assert archived["Gone"]["can_restore"] is True and archived["Gone"]["can_delete"] is True


def test_tree_here_and_below_name_dashboards(app, admin):
    top = collection(admin, "Top")
    child = collection(admin, "Child", top)
    add_dashboard(app, "Deep board", child)
    tree = ok(admin.get("/api/collection/tree"))
    node = next(n for n in tree if n["id"] == top)
    assert node["below"] == ["dashboard"] and "here" not in node
    assert node["children"][0]["here"] == ["dashboard"]
    listed = by_model(items(admin, top), "collection")["Child"]
    assert listed["here"] == ["dashboard"]
    add_dashboard(app, "Archived board", top, archived=True, archived_directly=True)
    assert "here" not in next(n for n in ok(admin.get("/api/collection/tree")) if n["id"] == top)


# --------------------------------------------------------------------------------------------------
# Archive cascade
# --------------------------------------------------------------------------------------------------


def test_archiving_a_collection_archives_its_dashboards_and_unarchiving_restores_them(app, admin):
    top = collection(admin, "Project")
    child = collection(admin, "Sub", top)
    with_it = add_dashboard(app, "Follows", child)
    on_its_own = add_dashboard(app, "Own", top, archived=True, archived_directly=True)
    ok(admin.put(f"/api/collection/{top}", json={"archived": True}))
    assert dashboard_row(app, with_it) == {"archived": True, "archived_directly": False}
    assert list(by_model(items(admin, child), "dashboard")) == ["Follows"]  # an archived collection lists archived
    ok(admin.put(f"/api/collection/{top}", json={"archived": False}))
    assert dashboard_row(app, with_it)["archived"] is False
    assert dashboard_row(app, on_its_own) == {"archived": True, "archived_directly": True}


def test_dashboards_in_archived_collection_move_out_with_it(app, admin):
    old = collection(admin, "Archived then moved")
    target = collection(admin, "Target")
    dash = add_dashboard(app, "Carried", old)
    ok(admin.put(f"/api/collection/{old}", json={"archived": True}))
    assert dashboard_row(app, dash)["archived"] is True
    ok(admin.put(f"/api/collection/{old}", json={"archived": False, "parent_id": target}))
    assert dashboard_row(app, dash)["archived"] is False
    assert "dashboard" in next(n for n in ok(admin.get("/api/collection/tree")) if n["id"] == target)["below"]


# --------------------------------------------------------------------------------------------------
# Search
# --------------------------------------------------------------------------------------------------


def test_search_finds_dashboards_with_metabase_keys(app, admin):
    cid = collection(admin, "Finance")
    card = add_card(app, "Some card", cid)
    dash = add_dashboard(app, "Quarterly revenue", cid, creator_id=admin.user["id"], description="board",
                         cards=[card, card], edited_by=admin.user["id"])
    ok(admin.post(f"/api/bookmark/dashboard/{dash}"))
    found = ok(admin.get("/api/search?q=quarterly&models=dashboard"))
    assert found["total"] == 1 and found["available_models"] == ["dashboard"]
    hit = found["data"][0]
    assert hit["model"] == "dashboard" and hit["id"] == dash and hit["name"] == "Quarterly revenue"
    assert hit["collection"] == {"id": cid, "name": "Finance", "authority_level": None, "type": None}
    assert hit["dashboardcard_count"] == 2 and hit["bookmark"] is True and hit["can_write"] is True
    assert hit["archived"] is False and hit["view_count"] == 0 and "last_viewed_at" in hit
    assert hit["creator_id"] == admin.user["id"] and hit["last_editor_id"] == admin.user["id"]
    assert hit["description"] == "board" and hit["database_id"] is None
    mixed = ok(admin.get("/api/search?q=quarterly"))
    assert [r["model"] for r in mixed["data"]] == ["dashboard"]
    assert ok(admin.get("/api/search?q=quarterly&models=card"))["data"] == []
    assert ok(admin.get("/api/search?q=quarterly&table_db_id=1"))["data"] == []


def test_search_archived_and_root_dashboards(app, admin):
    add_dashboard(app, "Rooted board")
    add_dashboard(app, "Binned board", archived=True, archived_directly=True)
    live = ok(admin.get("/api/search?q=board&models=dashboard"))["data"]
    assert [r["name"] for r in live] == ["Rooted board"]
    assert live[0]["collection"] == {"id": None, "name": None, "authority_level": None, "type": None}
    binned = ok(admin.get("/api/search?q=board&models=dashboard&archived=true"))["data"]
    assert [r["name"] for r in binned] == ["Binned board"]


# --------------------------------------------------------------------------------------------------
# Bookmarks
# --------------------------------------------------------------------------------------------------


def test_dashboard_bookmarks(app, admin):
    card = add_card(app, "Marked card")
    dash = add_dashboard(app, "Marked board", description="desc")
    created = ok(admin.post(f"/api/bookmark/dashboard/{dash}"))
    assert created["dashboard_id"] == dash and created["user_id"] == admin.user["id"]
    assert admin.post(f"/api/bookmark/dashboard/{dash}").status_code == 400  # already there
    ok(admin.post(f"/api/bookmark/card/{card}"))
    listed = ok(admin.get("/api/bookmark"))
    assert {"id": f"dashboard-{dash}", "type": "dashboard", "item_id": dash, "name": "Marked board",
            "description": "desc"} in listed
    ok(admin.put("/api/bookmark/ordering", json={"orderings": [{"type": "dashboard", "item_id": dash},
                                                               {"type": "card", "item_id": card}]}))
    assert [b["id"] for b in ok(admin.get("/api/bookmark"))] == [f"dashboard-{dash}", f"card-{card}"]
    ok(admin.put("/api/bookmark/ordering", json={"orderings": [{"type": "card", "item_id": card},
                                                               {"type": "dashboard", "item_id": dash}]}))
    assert [b["id"] for b in ok(admin.get("/api/bookmark"))] == [f"card-{card}", f"dashboard-{dash}"]
    assert admin.delete(f"/api/bookmark/dashboard/{dash}").status_code == 204
    assert [b["type"] for b in ok(admin.get("/api/bookmark"))] == ["card"]
    assert admin.post("/api/bookmark/dashboard/999999").status_code == 404


def test_archived_dashboard_bookmark_is_hidden_not_deleted(app, admin):
    cid = collection(admin, "Keep")
    dash = add_dashboard(app, "Soon archived", cid)
    ok(admin.post(f"/api/bookmark/dashboard/{dash}"))
    ok(admin.put(f"/api/collection/{cid}", json={"archived": True}))
    assert ok(admin.get("/api/bookmark")) == []
    ok(admin.put(f"/api/collection/{cid}", json={"archived": False}))
    assert [b["item_id"] for b in ok(admin.get("/api/bookmark"))] == [dash]


# --------------------------------------------------------------------------------------------------
# Cards: dashboard_count and the dashboards holding a card
# --------------------------------------------------------------------------------------------------


def test_card_dashboard_count_and_dashboards(app, admin):
    card = add_card(app, "Shown card")
    other = add_card(app, "Series card")
    first = add_dashboard(app, "First", cards=[card, card])
    second = add_dashboard(app, "Second", cards=[other], series=[card])
    assert ok(admin.get(f"/api/card/{card}"))["dashboard_count"] == 2  # placements, as Metabase counts them
    counts = {c["id"]: c["dashboard_count"] for c in ok(admin.get("/api/card"))}
    assert counts[card] == 2 and counts[other] == 1
    listed = by_model(items(admin, "root", "?models=card"), "card")
    assert listed["Shown card"]["dashboard_count"] == 2 and listed["Series card"]["dashboard_count"] == 1
    assert ok(admin.get(f"/api/card/{card}/dashboards")) == [{"id": first, "name": "First"},
                                                             {"id": second, "name": "Second"}]
    assert ok(admin.get(f"/api/card/{other}/dashboards")) == [{"id": second, "name": "Second"}]
    assert admin.get("/api/card/999999/dashboards").status_code == 404


# --------------------------------------------------------------------------------------------------
# A plain user sees only dashboards in collections they can read
# --------------------------------------------------------------------------------------------------


def test_plain_user_sees_only_readable_dashboards(app, admin, user):
    open_id = collection(admin, "Open")
    secret_id = collection(admin, "Secret")
    hide_from_all_users(admin, secret_id)
    card = add_card(app, "Shared card", open_id)
    visible = add_dashboard(app, "Visible board", open_id, cards=[card])
    hidden = add_dashboard(app, "Hidden board", secret_id, cards=[card])
    ok(admin.post(f"/api/bookmark/dashboard/{hidden}"))

    assert list(by_model(items(user, open_id), "dashboard")) == ["Visible board"]
    assert user.get(f"/api/collection/{secret_id}/items").status_code == 403
    assert [r["id"] for r in ok(user.get("/api/search?q=board&models=dashboard"))["data"]] == [visible]
    assert all(n["id"] != secret_id for n in ok(user.get("/api/collection/tree")))
    assert ok(user.get(f"/api/card/{card}/dashboards")) == [{"id": visible, "name": "Visible board"}]
    assert ok(user.get(f"/api/card/{card}"))["dashboard_count"] == 2  # Metabase counts every placement
    assert user.post(f"/api/bookmark/dashboard/{hidden}").status_code == 403
    ok(user.post(f"/api/bookmark/dashboard/{visible}"))
    assert [b["item_id"] for b in ok(user.get("/api/bookmark"))] == [visible]
    # A bookmark of a dashboard that became unreadable stays stored but is not listed.
    hide_from_all_users(admin, open_id)
    assert ok(user.get("/api/bookmark")) == []
    assert ok(user.get("/api/search?q=board&models=dashboard"))["data"] == []


# --------------------------------------------------------------------------------------------------
# With the dashboards plugin disabled: no dashboards anywhere, and no errors
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def without_dashboards(app_config):
    application = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.dashboards"})
    yield application
    application.extensions["tessera"].db.dispose()


def test_disabled_plugin_shows_no_dashboards(without_dashboards):
    app = without_dashboards
    admin = setup_admin(app)
    cid = collection(admin, "Plain")
    card = add_card(app, "Lonely card", cid)
    dash = add_dashboard(app, "Invisible board", cid, cards=[card])
    listing = items(admin, cid)
    assert [i["model"] for i in listing["data"]] == ["card"] and "dashboard" not in listing["models"]
    only = items(admin, cid, "?models=dashboard")
    assert only["data"] == [] and only["total"] == 0
    assert items(admin, "root", "?models=card&models=dashboard")["total"] == 0
    node = next(n for n in ok(admin.get("/api/collection/tree")) if n["id"] == cid)
    assert node["here"] == ["card"]
    assert ok(admin.get("/api/search?q=board&models=dashboard"))["data"] == []
    assert ok(admin.get("/api/search?q=board"))["available_models"] == []
    assert admin.post(f"/api/bookmark/dashboard/{dash}").status_code == 404
    assert admin.delete(f"/api/bookmark/dashboard/{dash}").status_code == 204
    assert ok(admin.get("/api/bookmark")) == []
    assert ok(admin.get(f"/api/card/{card}"))["dashboard_count"] == 0
    assert ok(admin.get(f"/api/card/{card}/dashboards")) == []
    assert admin.get(f"/api/dashboard/{dash}").status_code == 404
    ok(admin.put(f"/api/collection/{cid}", json={"archived": True}))  # the cascade skips the absent kind
    assert dashboard_row(app, dash)["archived"] is False
    user = make_user(app)
    assert ok(user.get("/api/search?q=board"))["data"] == []


# --------------------------------------------------------------------------------------------------
# Both app-DB backends, and the timelines Metabase's frontend asks for a dashboard's collection
# --------------------------------------------------------------------------------------------------


def test_dashboards_elsewhere_on_each_app_db_backend(any_app):
    app = any_app
    admin = setup_admin(app)
    me = admin.user["id"]
    cid = collection(admin, "Backend")
    card = add_card(app, "Backend card", cid, creator_id=me)
    dash = add_dashboard(app, "Backend board", cid, creator_id=me, cards=[card], series=[card], edited_by=me)
    assert by_model(items(admin, cid, "?models=card&models=dashboard&sort_column=last_edited_at"),
                    "dashboard")["Backend board"]["last-edit-info"]["id"] == me
    assert [r["id"] for r in ok(admin.get("/api/search?q=backend&models=dashboard"))["data"]] == [dash]
    assert ok(admin.get(f"/api/card/{card}/dashboards")) == [{"id": dash, "name": "Backend board"}]
    assert ok(admin.get(f"/api/card/{card}"))["dashboard_count"] == 1
    ok(admin.post(f"/api/bookmark/dashboard/{dash}"))
    assert [b["id"] for b in ok(admin.get("/api/bookmark"))] == [f"dashboard-{dash}"]
    timeline = ok(admin.post("/api/timeline", json={"name": "Releases", "collection_id": cid}))
    assert [t["id"] for t in ok(admin.get(f"/api/collection/{cid}/timelines"))] == [timeline["id"]]
    ok(admin.put(f"/api/collection/{cid}", json={"archived": True}))
    assert dashboard_row(app, dash) == {"archived": True, "archived_directly": False}
    ok(admin.put(f"/api/collection/{cid}", json={"archived": False}))
    assert dashboard_row(app, dash)["archived"] is False


def test_search_personal_collection_filter_and_owner_only(app, admin, user):
    mine = add_dashboard(app, "Private board", admin.user["personal_collection_id"])
    shared = add_dashboard(app, "Shared board")

    def found(client, extra=""):
        return [r["id"] for r in ok(client.get(f"/api/search?q=board&models=dashboard{extra}"))["data"]]

    assert sorted(found(admin)) == sorted([mine, shared])
    assert found(admin, "&filter_items_in_personal_collection=only") == [mine]
    assert found(admin, "&filter_items_in_personal_collection=exclude") == [shared]
    assert found(user) == [shared]
    assert found(admin, f"&created_by={user.user['id']}") == []
