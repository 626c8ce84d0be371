"""/api/api-key and authentication with X-API-KEY."""
import re

import pytest
from sqlalchemy import select

from core.appdb.models import ApiKey
from tests.support import recorded_events


@pytest.mark.security_row(22)
def test_key_lifecycle_and_authentication(app, admin, user):
    group = admin.post("/api/permissions/group", json={"name": "Robots"}).json
    created = admin.post("/api/api-key", json={"name": "Loader", "group_id": group["id"]})
    assert created.status_code == 200, created.json
    body = created.json
    key = body["unmasked_key"]
    assert key.startswith("mb_") and len(key) == 47
    assert re.fullmatch(r"mb_.{4}\*+", body["masked_key"]) and len(body["masked_key"]) == 47
    assert body["masked_key"][:7] == key[:7]
    assert body["group"] == {"id": group["id"], "name": "Robots"}
    assert body["updated_by"]["id"] == admin.user["id"]

    # the key authenticates, in any header case, as its hidden user
    anonymous = app.test_client()
    me = anonymous.get("/api/user/current", headers={"x-api-key": key})
    assert me.status_code == 200
    assert me.json["group_ids"] == [1, group["id"]] and me.json["is_superuser"] is False
    assert anonymous.get("/api/user/current", headers={"X-API-KEY": key}).status_code == 200
    # a wrong key with the right prefix, or garbage, does not
    wrong = key[:7] + ("A" if key[7] != "A" else "B") + key[8:]
    assert anonymous.get("/api/user/current", headers={"X-API-KEY": wrong}).status_code == 401
    assert anonymous.get("/api/user/current", headers={"X-API-KEY": "nonsense"}).status_code == 401
    # the key user is hidden from user lists
    assert all(not u["email"].endswith("@api-key.invalid") for u in admin.get("/api/user",
                                                                               query_string={"status": "all"}).json["data"])
    # only the hash is stored
    state = app.extensions["tessera"]
    with state.db.session() as session:
        row = session.scalar(select(ApiKey))
        assert key not in (row.key_hash, row.key_prefix) and row.key_prefix == key[:7]

    listed = admin.get("/api/api-key").json
    assert len(listed) == 1 and "unmasked_key" not in listed[0] and key not in str(listed)
    assert admin.get("/api/api-key/count").json == 1

    renamed = admin.put(f"/api/api-key/{body['id']}", json={"name": "Uploader", "group_id": 2})
    assert renamed.status_code == 200 and renamed.json["name"] == "Uploader"
    assert renamed.json["group"]["id"] == 2
    assert anonymous.get("/api/user/current", headers={"X-API-KEY": key}).json["is_superuser"] is True

    regenerated = admin.put(f"/api/api-key/{body['id']}/regenerate").json
    assert set(regenerated) == {"id", "unmasked_key", "masked_key", "prefix"}
    assert anonymous.get("/api/user/current", headers={"X-API-KEY": key}).status_code == 401
    new_key = regenerated["unmasked_key"]
    assert anonymous.get("/api/user/current", headers={"X-API-KEY": new_key}).status_code == 200

    assert admin.delete(f"/api/api-key/{body['id']}").status_code == 204
    assert anonymous.get("/api/user/current", headers={"X-API-KEY": new_key}).status_code == 401
    assert admin.get("/api/api-key/count").json == 0
    assert admin.delete(f"/api/api-key/{body['id']}").status_code == 404


def test_key_validation_and_superuser_only(admin, user):
    assert admin.post("/api/api-key", json={"name": "K", "group_id": 1}).status_code == 200
    duplicate = admin.post("/api/api-key", json={"name": "k", "group_id": 1})
    assert duplicate.status_code == 400 and "name" in duplicate.json["errors"]
    assert admin.post("/api/api-key", json={"name": "", "group_id": 1}).status_code == 400
    assert admin.post("/api/api-key", json={"name": "L", "group_id": 0}).status_code == 400
    assert admin.post("/api/api-key", json={"name": "L", "group_id": 999}).status_code == 400
    assert admin.put("/api/api-key/999", json={"name": "x"}).status_code == 404
    assert user.get("/api/api-key").status_code == 403
    assert user.post("/api/api-key", json={"name": "M", "group_id": 1}).status_code == 403


def test_session_wins_over_key(app, admin, user):
    key = admin.post("/api/api-key", json={"name": "Admin key", "group_id": 2}).json["unmasked_key"]
    me = user.get("/api/user/current", headers={"X-API-KEY": key}).json
    assert me["email"] == "user@example.com"
    # an invalid session falls through to the key
    fallback = app.test_client().get("/api/user/current", headers={"X-Metabase-Session": "bogus", "X-API-KEY": key})
    assert fallback.status_code == 200 and fallback.json["is_superuser"] is True


@pytest.mark.security_row(22)
def test_identity_changes_are_events_without_secrets(app, admin, user):
    seen = recorded_events(app)
    created = admin.post("/api/api-key", json={"name": "Audited", "group_id": 1}).json
    regenerated = admin.put(f"/api/api-key/{created['id']}/regenerate").json
    admin.delete(f"/api/api-key/{created['id']}")
    gid = admin.post("/api/permissions/group", json={"name": "Audit"}).json["id"]
    admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": user.user["id"]})
    admin.put("/api/collection/graph", json={"revision": 0, "groups": {str(gid): {"root": "read"}}})
    admin.delete(f"/api/user/{user.user['id']}")
    topics = [e.topic for e in seen]
    assert topics == ["api-key-create", "api-key-regenerate", "api-key-delete", "group-create",
                      "group-membership-create", "permissions-graph-update", "user-deactivated"]
    assert all(e.user_id == admin.user["id"] for e in seen)
    text = repr([e.details for e in seen])
    assert created["unmasked_key"] not in text and regenerated["unmasked_key"] not in text
    assert seen[0].details["key_prefix"] == created["masked_key"][:7]
