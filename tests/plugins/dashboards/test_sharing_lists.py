"""POST/DELETE /api/dashboard/:id/public_link and the administrators' public and embeddable lists."""
from .layout_helpers import dashboard


def test_public_links(admin, user):
    dash = dashboard(admin, "Shared")
    assert admin.put("/api/setting/enable-public-sharing", json={"value": False}).status_code == 204
    off = admin.post(f"/api/dashboard/{dash['id']}/public_link")
    assert off.status_code == 400 and off.json == "Public sharing is not enabled."
    assert admin.put("/api/setting/enable-public-sharing", json={"value": True}).status_code == 204
    assert user.post(f"/api/dashboard/{dash['id']}/public_link").status_code == 403
    first = admin.post(f"/api/dashboard/{dash['id']}/public_link")
    assert first.status_code == 200 and len(first.json["uuid"]) == 36
    assert admin.post(f"/api/dashboard/{dash['id']}/public_link").json == first.json
    body = admin.get(f"/api/dashboard/{dash['id']}").json
    assert body["public_uuid"] == first.json["uuid"] and body["made_public_by_id"] == admin.user["id"]
    assert admin.get("/api/dashboard/public").json == [{"id": dash["id"], "name": "Shared",
                                                        "public_uuid": first.json["uuid"]}]
    assert user.get("/api/dashboard/public").status_code == 403
    assert admin.post("/api/dashboard/99999/public_link").status_code == 404
    # a public link is not a content change: no revision
    assert len(admin.get(f"/api/dashboard/{dash['id']}/revisions").json) == 1

    admin.put(f"/api/dashboard/{dash['id']}", json={"archived": True})
    assert admin.get("/api/dashboard/public").json == []
    archived = admin.post(f"/api/dashboard/{dash['id']}/public_link")
    assert archived.status_code == 404 and archived.json["error_code"] == "archived"
    admin.put(f"/api/dashboard/{dash['id']}", json={"archived": False})

    assert user.delete(f"/api/dashboard/{dash['id']}/public_link").status_code == 403
    assert admin.delete(f"/api/dashboard/{dash['id']}/public_link").status_code == 204
    assert admin.get(f"/api/dashboard/{dash['id']}").json["public_uuid"] is None
    assert admin.get("/api/dashboard/public").json == []
    assert admin.delete(f"/api/dashboard/{dash['id']}/public_link").status_code == 404


def test_embeddable_list(admin, user):
    dash = dashboard(admin, "Embedded")
    dashboard(admin, "Not embedded")
    off = admin.get("/api/dashboard/embeddable")  # static embedding off: Metabase's 400
    assert off.status_code == 400 and off.json == "Embedding is not enabled."
    assert admin.put("/api/setting/enable-embedding-static", json={"value": True}).status_code == 204
    assert admin.get("/api/dashboard/embeddable").json == []
    assert admin.put(f"/api/dashboard/{dash['id']}", json={"enable_embedding": True}).status_code == 200
    assert admin.get("/api/dashboard/embeddable").json == [{"id": dash["id"], "name": "Embedded"}]
    assert user.get("/api/dashboard/embeddable").status_code == 403
    admin.put(f"/api/dashboard/{dash['id']}", json={"archived": True})
    assert admin.get("/api/dashboard/embeddable").json == []
