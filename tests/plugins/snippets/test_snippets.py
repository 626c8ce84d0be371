"""/api/native-query-snippet: create, read, list, rename, archive, folders of the snippets namespace."""
from __future__ import annotations

from core.appdb.models import Collection
from core.testing import add_collection, add_database


def test_snippet_crud(app, admin, user):
    add_database(app)  # All Users may write native queries on a new database, so they use snippets
    created = admin.post("/api/native-query-snippet", json={"name": "recent", "content": "created_at > '2024-01-01'",
                                                             "description": "Recent rows"})
    assert created.status_code == 200, created.json
    snippet = created.json
    assert snippet["name"] == "recent" and snippet["creator_id"] == admin.user["id"]
    assert snippet["creator"]["email"] == admin.user["email"] and snippet["archived"] is False
    assert len(snippet["entity_id"]) == 21 and snippet["collection_id"] is None
    # Every user with native rights reads snippets of the root folder.
    assert user.get(f"/api/native-query-snippet/{snippet['id']}").json["content"] == "created_at > '2024-01-01'"
    assert [s["name"] for s in user.get("/api/native-query-snippet").json] == ["recent"]
    # Names are unique and cannot break the {{snippet: name}} syntax.
    duplicate = admin.post("/api/native-query-snippet", json={"name": "recent", "content": "1 = 1"})
    assert duplicate.status_code == 400 and "already exists" in duplicate.json
    assert admin.post("/api/native-query-snippet", json={"name": "bad}name", "content": "x"}).status_code == 400
    assert admin.post("/api/native-query-snippet", json={"name": "  padded", "content": "x"}).status_code == 400
    assert admin.post("/api/native-query-snippet", json={"content": "x"}).status_code == 400
    # Update and archive.
    updated = admin.put(f"/api/native-query-snippet/{snippet['id']}", json={"name": "latest", "content": "1 = 1"})
    assert updated.status_code == 200 and updated.json["name"] == "latest" and updated.json["content"] == "1 = 1"
    archived = admin.put(f"/api/native-query-snippet/{snippet['id']}", json={"archived": True})
    assert archived.json["archived"] is True
    assert admin.get("/api/native-query-snippet").json == []
    assert [s["name"] for s in admin.get("/api/native-query-snippet?archived=true").json] == ["latest"]
    assert admin.get("/api/native-query-snippet/9999").status_code == 404
    assert admin.put("/api/native-query-snippet/9999", json={"name": "x"}).status_code == 404


def test_snippet_folders(app, admin):
    state = app.extensions["tessera"]
    with state.db.session() as session:
        folder = Collection(name="SQL bits", namespace="snippets", location="/")
        plain = Collection(name="Plain", location="/")
        session.add_all([folder, plain])
        session.flush()
        folder_id, plain_id = folder.id, plain.id
    ok = admin.post("/api/native-query-snippet", json={"name": "a", "content": "1", "collection_id": folder_id})
    assert ok.status_code == 200 and ok.json["collection_id"] == folder_id
    wrong = admin.post("/api/native-query-snippet", json={"name": "b", "content": "1", "collection_id": plain_id})
    assert wrong.status_code == 400
    moved = admin.put(f"/api/native-query-snippet/{ok.json['id']}", json={"collection_id": None})
    assert moved.status_code == 200 and moved.json["collection_id"] is None


def _graph(admin, namespace: str, levels: dict) -> None:
    graph = admin.get(f"/api/collection/graph?namespace={namespace}").json
    changed = admin.put(f"/api/collection/graph?namespace={namespace}",
                        json={"revision": graph["revision"], "groups": {"1": levels}})
    assert changed.status_code == 200, changed.json


def test_snippets_need_native_rights(app, admin, user):
    """Snippets belong to native-query writers: without native rights on any database, a user sees none."""
    db_id, _ = add_database(app)
    snippet = admin.post("/api/native-query-snippet", json={"name": "s", "content": "1 = 1"}).json
    assert [s["name"] for s in user.get("/api/native-query-snippet").json] == ["s"]
    revision = admin.get("/api/permissions/graph-v2").json["revision"]
    graph = admin.put("/api/permissions/graph", json={"revision": revision, "groups": {
        "1": {str(db_id): {"create-queries": "query-builder"}}}})
    assert graph.status_code == 200, graph.json
    assert user.get("/api/native-query-snippet").json == []
    assert user.get(f"/api/native-query-snippet/{snippet['id']}").status_code == 403
    assert user.post("/api/native-query-snippet", json={"name": "mine", "content": "2"}).status_code == 403
    assert user.put(f"/api/native-query-snippet/{snippet['id']}", json={"content": "0"}).status_code == 403
    assert admin.get(f"/api/native-query-snippet/{snippet['id']}").json["content"] == "1 = 1"


def test_snippet_folder_permissions(app, admin, user):
    """Folders govern snippets as collections govern cards: read to see, write to change or add."""
    add_database(app)
    secret = add_collection(app, "Secret SQL", namespace="snippets")
    shared = add_collection(app, "Shared SQL", namespace="snippets")
    hidden = admin.post("/api/native-query-snippet", json={"name": "hidden", "content": "1", "collection_id": secret})
    visible = admin.post("/api/native-query-snippet", json={"name": "visible", "content": "2", "collection_id": shared})
    assert hidden.status_code == visible.status_code == 200
    _graph(admin, "snippets", {str(secret): "none", str(shared): "read"})
    assert [s["name"] for s in user.get("/api/native-query-snippet").json] == ["visible"]
    assert user.get(f"/api/native-query-snippet/{hidden.json['id']}").status_code == 403
    assert user.get(f"/api/native-query-snippet/{visible.json['id']}").json["content"] == "2"
    # read-only folder: no changes, no new snippets there
    assert user.put(f"/api/native-query-snippet/{visible.json['id']}", json={"content": "3"}).status_code == 403
    assert user.post("/api/native-query-snippet",
                     json={"name": "n", "content": "4", "collection_id": shared}).status_code == 403
    # the root folder is writable: a snippet there cannot be moved into a folder without write access
    own = user.post("/api/native-query-snippet", json={"name": "own", "content": "5"})
    assert own.status_code == 200, own.json
    moved = user.put(f"/api/native-query-snippet/{own.json['id']}", json={"collection_id": shared})
    assert moved.status_code == 403
    assert admin.get(f"/api/native-query-snippet/{own.json['id']}").json["collection_id"] is None
    assert user.post("/api/native-query-snippet",
                     json={"name": "x", "content": "6", "collection_id": 99999}).status_code == 404
    assert admin.get(f"/api/native-query-snippet/{visible.json['id']}").json["content"] == "2"
