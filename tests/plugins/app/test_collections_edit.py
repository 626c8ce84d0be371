"""Managing collections and their items from the web app (plugins/app/collections_edit*.py): each action
through HTTP as htmx sends it, then the API's own state; refusals show the API's message; a user without
write access sees no edit controls and the routes answer the API's 403."""
from __future__ import annotations

import re

from core.testing import USER_PASSWORD, make_user
from tests.plugins.app.test_pages import HTMX, sign_in, text


def native(admin) -> dict:
    """A native query on a database of its own (added once per app)."""
    from core.testing import sqlite_file, wait_for_sync

    databases = admin.get("/api/database").json["data"]
    if not databases:
        app = admin.app
        path = sqlite_file(app, "numbers.db", "CREATE TABLE numbers (n INTEGER); INSERT INTO numbers VALUES (1);")
        databases = [admin.post("/api/database", json={"name": "Numbers", "engine": "sqlite",
                                                       "details": {"db": path}}).json]
        wait_for_sync(app)
    return {"database": databases[0]["id"], "type": "native", "native": {"query": "SELECT 1 AS one"}}


def card(admin, name, collection_id=None, **extra) -> dict:
    response = admin.post("/api/card", json={"name": name, "display": "table", "visualization_settings": {},
                                             "dataset_query": native(admin), "collection_id": collection_id, **extra})
    assert response.status_code == 200, response.json
    return response.json


def collection(admin, name, parent_id=None) -> dict:
    response = admin.post("/api/collection", json={"name": name, "parent_id": parent_id})
    assert response.status_code == 200, response.json
    return response.json


def test_create_edit_move_archive_and_restore_a_collection(app, admin):
    client = sign_in(app)
    form = client.get("/collection/new?parent=root")
    assert form.status_code == 200 and 'name="parent_id"' in text(form) and "dialog-content" in text(form)
    created = client.post("/collection/new", json={"name": "Sales", "description": "Money in",
                                                   "parent_id": "root"}, headers=HTMX)
    sales_id = int(re.match(r"/collection/(\d+)-sales$", created.headers["HX-Redirect"]).group(1))
    assert admin.get(f"/api/collection/{sales_id}").json["description"] == "Money in"
    child = client.post("/collection/new", json={"name": "Q1", "parent_id": str(sales_id)}, headers=HTMX)
    q1_id = int(re.search(r"/collection/(\d+)", child.headers["HX-Redirect"]).group(1))
    assert admin.get(f"/api/collection/{q1_id}").json["location"] == f"/{sales_id}/"
    picker = text(client.get("/collection/new"))  # each place by its path; a personal collection is its own top
    assert ">Our analytics / Sales / Q1</option>" in picker and ">Ada Admin&#39;s Personal Collection</option>" in picker
    refused = client.post("/collection/new", json={"name": "", "parent_id": "root"}, headers=HTMX)
    assert refused.status_code == 400 and 'role="alert"' in text(refused)

    edited = client.post(f"/collection/{q1_id}/edit", json={"name": "First quarter", "description": ""},
                         headers=HTMX)
    assert edited.headers["HX-Redirect"] == f"/collection/{q1_id}-first-quarter"
    assert admin.get(f"/api/collection/{q1_id}").json["name"] == "First quarter"

    # The picker offers neither the collection itself nor what lies below it; the API refuses both anyway.
    picker = text(client.get(f"/collection/{sales_id}/move"))
    assert f'value="{q1_id}"' not in picker and f'value="{sales_id}"' not in picker and 'value="root"' in picker
    into_child = client.post(f"/collection/{sales_id}/move", json={"collection": str(q1_id)}, headers=HTMX)
    assert into_child.status_code == 400 and "into itself or into one of its descendants" in text(into_child)
    other = collection(admin, "Archive shelf")
    moved = client.post(f"/collection/{q1_id}/move", json={"collection": str(other["id"])}, headers=HTMX)
    assert moved.status_code == 200 and admin.get(f"/api/collection/{q1_id}").json["location"] == f"/{other['id']}/"

    card(admin, "Revenue", sales_id)
    card(admin, "Costs", sales_id)
    confirm = text(client.get(f"/collection/{sales_id}/archive"))
    assert "with the 2 items it holds" in confirm and "2 questions" in confirm
    archived = client.post(f"/collection/{sales_id}/archive", json={}, headers=HTMX)
    assert archived.headers["HX-Redirect"] == "/collection/root"
    assert admin.get(f"/api/collection/{sales_id}").json["archived"] is True
    assert "Sales" in text(client.get("/collection/trash"))
    page = text(client.get(f"/collection/{sales_id}"))
    assert "Restore" in page and "/archive" not in page  # an archived collection offers restoring only
    restored = client.post("/collection/trash/restore", json={"model": "collection", "id": sales_id}, headers=HTMX)
    assert restored.status_code == 200 and admin.get(f"/api/collection/{sales_id}").json["archived"] is False


def test_items_move_archive_pin_duplicate_and_delete_from_the_trash(app, admin):
    client = sign_in(app)
    shelf, other = collection(admin, "Shelf"), collection(admin, "Other")
    one, two = card(admin, "One", shelf["id"]), card(admin, "Two", shelf["id"])
    board = admin.post("/api/dashboard", json={"name": "Board", "collection_id": shelf["id"]}).json
    page = text(client.get(f"/collection/{shelf['id']}"))
    for key in (f"card-{one['id']}", f"card-{two['id']}", f"dashboard-{board['id']}"):
        assert f'value="{key}" form="bulk"' in page
    assert 'id="bulk"' in page and "Move selected" in page

    picker = client.get(f"/collection/{shelf['id']}/items/move?item=card-{one['id']}&item=card-{two['id']}")
    assert picker.status_code == 200 and "One" in text(picker) and "Two" in text(picker)
    moved = client.post(f"/collection/{shelf['id']}/items/move",
                        json={"item": [f"card-{one['id']}", f"card-{two['id']}"], "collection": str(other["id"])},
                        headers=HTMX)
    assert moved.headers["HX-Redirect"] == f"/collection/{other['id']}"
    assert {admin.get(f"/api/card/{c['id']}").json["collection_id"] for c in (one, two)} == {other["id"]}
    to_root = client.post(f"/collection/{other['id']}/items/move", json={"item": f"card-{one['id']}",
                                                                          "collection": "root"}, headers=HTMX)
    assert to_root.status_code == 200 and admin.get(f"/api/card/{one['id']}").json["collection_id"] is None

    pinned = client.post(f"/collection/{shelf['id']}/items/pin", json={"item": f"dashboard-{board['id']}",
                                                                       "pinned": True}, headers=HTMX)
    assert pinned.status_code == 200 and admin.get(f"/api/dashboard/{board['id']}").json["collection_position"] == 1
    page = text(client.get(f"/collection/{shelf['id']}"))
    assert "<h2>Pinned</h2>" in page and "Unpin" in page
    client.post(f"/collection/{shelf['id']}/items/pin", json={"item": f"dashboard-{board['id']}", "pinned": False},
                headers=HTMX)
    assert admin.get(f"/api/dashboard/{board['id']}").json["collection_position"] is None

    client.post(f"/collection/{other['id']}/items/duplicate", json={"item": f"card-{two['id']}"}, headers=HTMX)
    client.post(f"/collection/{shelf['id']}/items/duplicate", json={"item": f"dashboard-{board['id']}"}, headers=HTMX)
    names = {i["name"] for i in admin.get(f"/api/collection/{other['id']}/items").json["data"]}
    assert "Copy of Two" in names
    names = {i["name"] for i in admin.get(f"/api/collection/{shelf['id']}/items").json["data"]}
    assert "Board - Duplicate" in names

    confirm = text(client.get(f"/collection/{shelf['id']}/items/archive?item=dashboard-{board['id']}"))
    assert "Board" in confirm and "can be restored" in confirm
    archived = client.post(f"/collection/{shelf['id']}/items/archive",
                           json={"item": [f"dashboard-{board['id']}", f"card-{two['id']}"]}, headers=HTMX)
    assert archived.status_code == 200
    assert admin.get(f"/api/dashboard/{board['id']}").json["archived"] is True
    assert admin.get(f"/api/card/{two['id']}").json["archived"] is True

    # The trash lists what was archived inside a collection too, and where it was.
    trash = text(client.get("/collection/trash"))
    assert re.search(r">Board</a>\s*<span class=\"place\">in Shelf</span>", trash)
    assert f"/collection/trash/delete?item=dashboard-{board['id']}" in trash
    restored = client.post("/collection/trash/restore", json={"model": "card", "id": two["id"]}, headers=HTMX)
    assert restored.status_code == 200 and admin.get(f"/api/card/{two['id']}").json["archived"] is False
    board = admin.post("/api/dashboard", json={"name": "Root board", "collection_id": None}).json
    two = card(admin, "Root card")
    for path in (f"/api/dashboard/{board['id']}", f"/api/card/{two['id']}"):
        assert admin.put(path, json={"archived": True}).status_code == 200
    trash = text(client.get("/collection/trash"))
    assert f"/collection/trash/delete?item=dashboard-{board['id']}" in trash
    assert f"/collection/trash/delete?item=card-{two['id']}" not in trash  # the API cannot delete a card
    warning = text(client.get(f"/collection/trash/delete?item=dashboard-{board['id']}"))
    assert "permanent" in warning and "cannot be restored" in warning and "Root board" in warning
    assert client.get(f"/collection/trash/delete?item=card-{two['id']}").status_code == 400
    live = admin.post("/api/dashboard", json={"name": "Live", "collection_id": shelf["id"]}).json
    kept = client.post("/collection/trash/delete", json={"item": f"dashboard-{live['id']}"}, headers=HTMX)
    assert kept.status_code == 400 and admin.get(f"/api/dashboard/{live['id']}").status_code == 200
    deleted = client.post("/collection/trash/delete", json={"item": f"dashboard-{board['id']}"}, headers=HTMX)
    assert deleted.headers["HX-Redirect"] == "/collection/trash"
    assert admin.get(f"/api/dashboard/{board['id']}").status_code == 404


def test_a_collection_archive_counts_what_it_holds_and_collections_in_a_bulk_archive(app, admin):
    client = sign_in(app)
    outer = collection(admin, "Outer")
    inner = collection(admin, "Inner", outer["id"])
    card(admin, "Deep", inner["id"])
    confirm = text(client.get(f"/collection/{outer['id']}/items/archive?item=collection-{inner['id']}"))
    assert "Inner (a collection holding 1 item, which goes with it)" in confirm
    done = client.post(f"/collection/{outer['id']}/items/archive", json={"item": f"collection-{inner['id']}"},
                       headers=HTMX)
    assert done.status_code == 200 and admin.get(f"/api/collection/{inner['id']}").json["archived"] is True
    trash = text(client.get("/collection/trash"))  # the collection, not what went with it
    assert re.search(r">Inner</a>\s*<span class=\"place\">in Outer</span>", trash) and "Deep" not in trash


def test_a_user_without_write_access_sees_no_controls_and_gets_the_apis_403(app, admin):
    shelf = collection(admin, "Read only shelf")
    question = card(admin, "Look only", shelf["id"])
    open_shelf, other_shelf = collection(admin, "Open shelf"), collection(admin, "Other open shelf")
    mine = card(admin, "Writable", open_shelf["id"])
    graph = admin.get("/api/collection/graph").json
    admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                             "groups": {"1": {str(shelf["id"]): "read", "root": "read"}}})
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    page = text(client.get(f"/collection/{shelf['id']}"))
    assert "Look only" in page
    for control in ('id="bulk"', "/edit", "/move", "/archive", "items/pin", "/permissions", "New collection"):
        assert control not in page, control
    assert "Bookmark" in page  # reading is enough to bookmark
    for action in ("edit", "move", "archive"):
        assert client.get(f"/collection/{shelf['id']}/{action}").status_code == 403
    for path, body in ((f"/collection/{shelf['id']}/edit", {"name": "Mine now"}),
                       (f"/collection/{shelf['id']}/move", {"collection": "root"}),
                       (f"/collection/{shelf['id']}/archive", {}),
                       (f"/collection/{shelf['id']}/items/archive", {"item": f"card-{question['id']}"}),
                       (f"/collection/{shelf['id']}/items/pin", {"item": f"card-{question['id']}", "pinned": True}),
                       (f"/collection/{shelf['id']}/items/move", {"item": f"card-{question['id']}",
                                                                   "collection": "root"}),
                       ("/collection/new", {"name": "Nope", "parent_id": str(shelf["id"])})):
        refused = client.post(path, json=body, headers=HTMX)
        assert refused.status_code == 403 and 'role="alert"' in text(refused), path
    # A partial bulk move says what was done before the refusal.
    partial = client.post(f"/collection/{open_shelf['id']}/items/move", json={
        "item": [f"card-{mine['id']}", f"card-{question['id']}"], "collection": str(other_shelf["id"])},
        headers=HTMX)
    assert partial.status_code == 403 and f"1 of 2 done; the card with id {question['id']} was refused" in text(partial)
    assert admin.get(f"/api/collection/{shelf['id']}").json["name"] == "Read only shelf"
    assert admin.get(f"/api/card/{question['id']}").json["archived"] is False
    assert admin.get(f"/api/card/{question['id']}").json["collection_position"] is None


def test_junk_is_a_clear_400(app, admin):
    client = sign_in(app)
    shelf = collection(admin, "Junk shelf")
    assert client.get(f"/collection/{shelf['id']}/items/move").status_code == 400
    assert client.get(f"/collection/{shelf['id']}/items/archive?item=user-1").status_code == 400
    for path, body in ((f"/collection/{shelf['id']}/items/move", {"item": "card-x", "collection": "root"}),
                       (f"/collection/{shelf['id']}/items/pin", {"item": "collection-1", "pinned": True}),
                       (f"/collection/{shelf['id']}/move", {"collection": "nowhere"}),
                       ("/collection/new", {"name": "No parent"})):
        assert client.post(path, json=body, headers=HTMX).status_code == 400, path
