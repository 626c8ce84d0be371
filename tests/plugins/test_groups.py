"""/api/permissions/group and /api/permissions/membership."""
from core.testing import make_user, set_setting


def test_groups_crud_and_magic_groups(admin, user):
    groups = admin.get("/api/permissions/group").json
    assert [(g["id"], g["name"], g["member_count"]) for g in groups] == [(2, "Administrators", 1), (1, "All Users", 2)]
    assert groups[0]["magic_group_type"] == "admin" and groups[1]["magic_group_type"] == "all-internal-users"
    created = admin.post("/api/permissions/group", json={"name": "Analysts"})
    assert created.status_code == 200 and created.json["member_count"] == 0
    gid = created.json["id"]
    dup = admin.post("/api/permissions/group", json={"name": "analysts"})
    assert dup.status_code == 400 and dup.json["errors"] == {"name": "A group with that name already exists."}
    assert admin.put(f"/api/permissions/group/{gid}", json={"name": "Data team"}).json["name"] == "Data team"
    for magic in (1, 2):
        refused = admin.put(f"/api/permissions/group/{magic}", json={"name": "Renamed"})
        assert refused.status_code == 400 and "cannot edit or delete" in refused.json
        assert admin.delete(f"/api/permissions/group/{magic}").status_code == 400
    assert admin.get("/api/permissions/group/1").json["name"] == "All Users"
    assert user.post("/api/permissions/group", json={"name": "Mine"}).status_code == 403
    assert user.get("/api/permissions/group").status_code == 403
    assert user.get("/api/permissions/group/999").status_code == 403
    assert user.put(f"/api/permissions/group/{gid}", json={"name": "Mine"}).status_code == 403
    assert admin.delete(f"/api/permissions/group/{gid}").status_code == 204
    assert admin.get(f"/api/permissions/group/{gid}").status_code == 404
    assert admin.post("/api/permissions/group", json={"name": " "}).status_code == 400


def test_memberships(app, admin, user):
    uid = user.user["id"]
    gid = admin.post("/api/permissions/group", json={"name": "Analysts"}).json["id"]
    members = admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": uid})
    assert members.status_code == 200
    assert [(m["user_id"], m["group_id"], m["is_group_manager"]) for m in members.json] == [(uid, gid, False)]
    assert "membership_id" in members.json[0] and members.json[0]["email"] == "user@example.com"
    assert admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": uid}).status_code == 400
    detail = admin.get(f"/api/permissions/group/{gid}").json
    assert [m["user_id"] for m in detail["members"]] == [uid] and detail["member_count"] == 1

    mapping = admin.get("/api/permissions/membership").json
    assert sorted(m["group_id"] for m in mapping[str(uid)]) == [1, gid]
    assert set(mapping[str(uid)][0]) == {"membership_id", "group_id", "user_id", "is_group_manager"}

    # Administrators membership is superuser status, both ways
    admin.post("/api/permissions/membership", json={"group_id": 2, "user_id": uid})
    assert user.get("/api/user/current").json["is_superuser"] is True
    mapping = admin.get("/api/permissions/membership").json
    admin_membership = next(m for m in mapping[str(uid)] if m["group_id"] == 2)
    assert admin.delete(f"/api/permissions/membership/{admin_membership['membership_id']}").status_code == 204
    assert user.get("/api/user/current").json["is_superuser"] is False
    # nobody leaves All Users
    all_users = next(m for m in mapping[str(uid)] if m["group_id"] == 1)
    refused = admin.delete(f"/api/permissions/membership/{all_users['membership_id']}")
    assert refused.status_code == 400
    # the last administrator stays one
    own = next(m for m in mapping[str(admin.user["id"])] if m["group_id"] == 2)
    assert admin.delete(f"/api/permissions/membership/{own['membership_id']}").status_code == 400

    assert user.get("/api/permissions/membership").status_code == 403
    assert admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": 999}).status_code == 404
    assert admin.post("/api/permissions/membership", json={"group_id": 999, "user_id": uid}).status_code == 404


def test_group_managers_need_advanced_permissions(app, admin, user):
    uid = user.user["id"]
    gid = admin.post("/api/permissions/group", json={"name": "Sales"}).json["id"]
    gid2 = admin.post("/api/permissions/group", json={"name": "Support"}).json["id"]
    off = admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": uid, "is_group_manager": True})
    assert off.status_code == 402
    membership = admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": uid}).json[0]
    assert admin.put(f"/api/permissions/membership/{membership['membership_id']}",
                     json={"is_group_manager": True}).status_code == 402

    assert admin.get("/api/session/properties").json["token-features"]["advanced_permissions"] is False
    set_setting(app, "advanced-permissions", True)
    assert admin.get("/api/session/properties").json["token-features"]["advanced_permissions"] is True
    updated = admin.put(f"/api/permissions/membership/{membership['membership_id']}", json={"is_group_manager": True})
    assert updated.status_code == 200 and updated.json == {
        "membership_id": membership["membership_id"], "group_id": gid, "user_id": uid, "is_group_manager": True}
    other = make_user(app, "other@example.com", "Otto", "Other")
    # a manager adds and removes members of the group they manage, and sees its details
    added = user.post("/api/permissions/membership", json={"group_id": gid, "user_id": other.user["id"]})
    assert added.status_code == 200 and len(added.json) == 2
    assert user.get(f"/api/permissions/group/{gid}").status_code == 200
    assert user.get(f"/api/permissions/group/{gid2}").status_code == 403
    assert user.post("/api/permissions/membership", json={"group_id": gid2, "user_id": other.user["id"]}).status_code == 403
    # a manager may make another member a manager of the same group, never an administrator
    promoted = user.post("/api/permissions/membership", json={"group_id": gid, "user_id": admin.user["id"],
                                                               "is_group_manager": True})
    assert promoted.status_code == 400  # administrators cannot be group managers
    admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": admin.user["id"]})
    admin_membership = next(m for m in admin.get(f"/api/permissions/group/{gid}").json["members"]
                            if m["user_id"] == admin.user["id"])
    refused = user.put(f"/api/permissions/membership/{admin_membership['membership_id']}", json={"is_group_manager": True})
    assert refused.status_code == 400
    other_membership_id = next(m["membership_id"] for m in added.json if m["user_id"] == other.user["id"])
    made = user.put(f"/api/permissions/membership/{other_membership_id}", json={"is_group_manager": True})
    assert made.status_code == 200 and made.json["is_group_manager"] is True
    # managers rename their group, not others
    assert user.put(f"/api/permissions/group/{gid}", json={"name": "Sales team"}).status_code == 200
    assert user.put(f"/api/permissions/group/{gid2}", json={"name": "Mine"}).status_code == 403
    mapping = user.get("/api/permissions/membership").json
    assert {m["group_id"] for ms in mapping.values() for m in ms} == {gid}
    set_setting(app, "advanced-permissions", False)
    assert user.put(f"/api/permissions/membership/{other_membership_id}", json={"is_group_manager": False}).status_code == 402
    assert user.put(f"/api/permissions/group/{gid}", json={"name": "Sales"}).status_code == 403
    set_setting(app, "advanced-permissions", True)
    # a manager of one group may not list groups (API-SPEC: manager of more than one group)
    assert user.get("/api/permissions/group").status_code == 403
    admin.post("/api/permissions/membership", json={"group_id": gid2, "user_id": uid, "is_group_manager": True})
    assert [g["id"] for g in user.get("/api/permissions/group").json] == [gid, gid2]
    assert user.delete(f"/api/permissions/membership/{other_membership_id}").status_code == 204
