"""/api/native-query-snippet: create, read, list, rename, archive, folders of the snippets namespace."""
from __future__ import annotations

from core.models import Collection


def test_snippet_crud(app, admin, user):
    created = admin.post("/api/native-query-snippet", json={"name": "recent", "content": "created_at > '2024-01-01'",
                                                             "description": "Recent rows"})
    assert created.status_code == 200, created.json
    snippet = created.json
    assert snippet["name"] == "recent" and snippet["creator_id"] == admin.user["id"]
    assert snippet["creator"]["email"] == admin.user["email"] and snippet["archived"] is False
    assert len(snippet["entity_id"]) == 21 and snippet["collection_id"] is None
    # Every user reads snippets.
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
