"""/api/user: listing, visibility, creation, updates, passwords, deactivation and reactivation."""
import pytest

from core.testing import USER_PASSWORD, make_user, set_setting


def test_list_envelope_status_and_deprecated_flag(app, admin, user):
    other = make_user(app, "other@example.com", "Otto", "Other")
    assert admin.delete(f"/api/user/{other.user['id']}").json == {"success": True}

    listed = admin.get("/api/user").json
    assert set(listed) == {"data", "total", "limit", "offset"}
    assert [u["email"] for u in listed["data"]] == ["admin@example.com", "user@example.com"]
    assert listed["total"] == 2 and listed["limit"] is None
    first = listed["data"][0]
    for key in ("common_name", "group_ids", "user_group_memberships", "personal_collection_id", "is_active",
                "last_login", "is_superuser", "date_joined", "locale"):
        assert key in first
    assert first["group_ids"] == [1, 2]
    assert first["personal_collection_id"] is not None

    def emails(query):
        return [u["email"] for u in admin.get("/api/user", query_string=query).json["data"]]

    assert emails({"status": "deactivated"}) == ["other@example.com"]
    assert len(emails({"status": "all"})) == 3
    assert len(emails({"include_deactivated": "true"})) == 3
    # status takes priority over include_deactivated
    assert emails({"status": "deactivated", "include_deactivated": "false"}) == ["other@example.com"]
    assert admin.get("/api/user", query_string={"status": "nope"}).status_code == 400
    assert admin.get("/api/user", query_string={"include_deactivated": "yes"}).status_code == 400
    # ordinary users may not list, nor use the superuser parameters
    assert user.get("/api/user").status_code == 403
    assert user.get("/api/user", query_string={"status": "all"}).status_code == 403


def test_list_query_group_and_paging(app, admin, user):
    make_user(app, "zed@example.com", "Zed", "Zulu")
    make_user(app, "amy@example.com", "Amy", "Alpha")
    by_query = admin.get("/api/user", query_string={"query": "ZUL"}).json
    assert [u["email"] for u in by_query["data"]] == ["zed@example.com"]
    assert admin.get("/api/user", query_string={"query": "example.com"}).json["total"] == 4
    page = admin.get("/api/user", query_string={"limit": 2, "offset": 1}).json
    assert page["limit"] == 2 and page["offset"] == 1 and page["total"] == 4
    assert [u["first_name"] for u in page["data"]] == ["Amy", "Ulla"]
    admins = admin.get("/api/user", query_string={"group_id": 2}).json
    assert [u["email"] for u in admins["data"]] == ["admin@example.com"]


def test_group_manager_sees_members_of_managed_groups_only(app, admin, user):
    set_setting(app, "advanced-permissions", True)
    group = admin.post("/api/permissions/group", json={"name": "Sales"}).json
    other = make_user(app, "other@example.com", "Otto", "Other")
    outsider = make_user(app, "out@example.com", "Olga", "Outsider")
    assert admin.post("/api/permissions/membership",
                      json={"group_id": group["id"], "user_id": user.user["id"], "is_group_manager": True}).status_code == 200
    admin.post("/api/permissions/membership", json={"group_id": group["id"], "user_id": other.user["id"]})
    listed = user.get("/api/user").json
    assert sorted(u["email"] for u in listed["data"]) == ["other@example.com", "user@example.com"]
    assert "personal_collection_id" not in listed["data"][0]
    assert user.get(f"/api/user/{other.user['id']}").status_code == 200
    assert user.get("/api/user", query_string={"group_id": 1}).status_code == 403
    assert user.get("/api/user", query_string={"include_deactivated": "false"}).status_code == 200
    assert user.get("/api/user", query_string={"include_deactivated": "true"}).status_code == 403
    assert user.get("/api/user", query_string={"status": "active"}).status_code == 403
    # the manager adds the outsider to the group, and may not touch other groups
    memberships = [{"id": 1}, {"id": group["id"]}]
    response = user.put(f"/api/user/{outsider.user['id']}", json={"user_group_memberships": memberships,
                                                                    "first_name": "Renamed"})
    assert response.status_code == 200 and response.json["group_ids"] == [1, group["id"]]
    assert response.json["first_name"] == "Olga"  # a manager changes memberships only
    response = user.put(f"/api/user/{other.user['id']}", json={"user_group_memberships": [{"id": 1}]})
    assert response.status_code == 200 and response.json["group_ids"] == [1]
    response = user.put(f"/api/user/{other.user['id']}", json={"user_group_memberships": [{"id": 1}, {"id": 2}]})
    assert response.status_code == 403
    # with advanced permissions off, the manager flag means nothing
    set_setting(app, "advanced-permissions", False)
    assert user.get("/api/user").status_code == 403


def test_recipients_follow_user_visibility(app, admin, user):
    other = make_user(app, "other@example.com", "Otto", "Other")
    make_user(app, "third@example.com", "Thea", "Third")
    group = admin.post("/api/permissions/group", json={"name": "Ops"}).json
    for client in (user, other):
        admin.post("/api/permissions/membership", json={"group_id": group["id"], "user_id": client.user["id"]})

    def emails(client):
        body = client.get("/api/user/recipients").json
        assert set(body) == {"data", "total", "limit", "offset"}
        return sorted(u["email"] for u in body["data"])

    assert len(emails(user)) == 4
    assert set(user.get("/api/user/recipients").json["data"][0]) == {"id", "email", "first_name", "last_name",
                                                                      "common_name"}
    set_setting(app, "user-visibility", "group")
    assert emails(user) == ["other@example.com", "user@example.com"]
    assert len(emails(admin)) == 4
    set_setting(app, "user-visibility", "none")
    assert emails(user) == ["user@example.com"]
    assert admin.put("/api/setting/user-visibility", json={"value": "some"}).status_code == 400


def test_create_user(app, admin):
    group = admin.post("/api/permissions/group", json={"name": "Finance"}).json
    response = admin.post("/api/user", json={"email": "New@Example.com", "first_name": "Nina",
                                             "user_group_memberships": [{"id": group["id"]}],
                                             "login_attributes": {"region": "EU"}})
    assert response.status_code == 200, response.json
    body = response.json
    assert body["email"] == "new@example.com" and body["common_name"] == "Nina"
    assert body["group_ids"] == [1, group["id"]]
    assert body["user_group_memberships"] == [{"id": 1, "is_group_manager": False},
                                              {"id": group["id"], "is_group_manager": False}]
    assert body["personal_collection_id"] is not None and body["login_attributes"] == {"region": "EU"}
    taken = admin.post("/api/user", json={"email": "new@example.com"})
    assert taken.status_code == 400 and taken.json["errors"] == {"email": "Email address already in use."}
    assert admin.post("/api/user", json={"email": "not-an-email"}).status_code == 400
    assert admin.post("/api/user", json={"email": "x@example.com", "login_attributes": "no"}).status_code == 400
    assert admin.post("/api/user", json={"email": "y@example.com", "user_group_memberships": [{"id": 999}]}).status_code == 400
    # as superuser through memberships
    boss = admin.post("/api/user", json={"email": "boss@example.com", "user_group_memberships": [{"id": 1}, {"id": 2}]})
    assert boss.json["is_superuser"] is True


def test_get_user_rules(app, admin, user):
    other = make_user(app, "other@example.com", "Otto", "Other")
    assert user.get(f"/api/user/{user.user['id']}").json["email"] == "user@example.com"
    assert user.get(f"/api/user/{other.user['id']}").status_code == 403
    assert admin.get(f"/api/user/{other.user['id']}").json["user_group_memberships"] == [{"id": 1, "is_group_manager": False}]
    assert admin.get("/api/user/9999").status_code == 404
    assert admin.get("/api/user/0").status_code == 400


def test_update_user(app, admin, user):
    uid = user.user["id"]
    response = user.put(f"/api/user/{uid}", json={"first_name": "Ulrike", "locale": "de-at"})
    assert response.status_code == 200 and response.json["first_name"] == "Ulrike"
    assert response.json["locale"] == "de_AT" and response.json["common_name"] == "Ulrike User"
    bad = user.put(f"/api/user/{uid}", json={"locale": "german"})
    assert bad.status_code == 400 and "locale" in bad.json["errors"]
    # what only superusers may change is ignored when anyone else sends it, as Metabase does
    ignored = user.put(f"/api/user/{uid}", json={"is_superuser": True, "login_attributes": {"a": 1}})
    assert ignored.status_code == 200
    assert ignored.json["is_superuser"] is False and ignored.json["login_attributes"] is None
    assert user.put(f"/api/user/{uid}", json={"user_group_memberships": [{"id": 1}, {"id": 2}]}).status_code == 403
    personal = admin.get(f"/api/user/{uid}").json["personal_collection_id"]
    from core.appdb.models import Collection

    with app.extensions["tessera"].db.session() as session:
        assert session.get(Collection, personal).name == "Ulrike User's Personal Collection"
    assert user.put(f"/api/user/{admin.user['id']}", json={"first_name": "X"}).status_code == 403
    taken = user.put(f"/api/user/{uid}", json={"email": "admin@example.com"})
    assert taken.status_code == 400 and taken.json["errors"]["email"] == "Email address already associated to another user."
    # superuser status and Administrators membership move together
    promoted = admin.put(f"/api/user/{uid}", json={"is_superuser": True}).json
    assert promoted["is_superuser"] is True and 2 in promoted["group_ids"]
    demoted = admin.put(f"/api/user/{uid}", json={"user_group_memberships": [{"id": 1}]}).json
    assert demoted["is_superuser"] is False and demoted["group_ids"] == [1]
    clash = admin.put(f"/api/user/{uid}", json={"is_superuser": True, "user_group_memberships": [{"id": 1}]})
    assert clash.status_code == 400
    assert admin.put(f"/api/user/{uid}", json={"login_attributes": {"tenant": "x"}}).json["login_attributes"] == {"tenant": "x"}
    # the target must be active
    admin.delete(f"/api/user/{uid}")
    assert admin.put(f"/api/user/{uid}", json={"first_name": "Gone"}).status_code == 404


def test_last_admin_cannot_be_demoted_or_deactivated(admin):
    aid = admin.user["id"]
    assert admin.put(f"/api/user/{aid}", json={"is_superuser": False}).status_code == 400
    assert admin.delete(f"/api/user/{aid}").status_code == 400
    assert admin.get("/api/user/current").json["is_superuser"] is True


def test_modal(admin, user):
    uid = user.user["id"]
    assert user.get("/api/user/current").json["is_qbnewb"] is True
    assert user.put(f"/api/user/{uid}/modal/qbnewb").json == {"success": True}
    assert user.put(f"/api/user/{uid}/modal/datasetnewb").json == {"success": True}
    current = user.get("/api/user/current").json
    assert current["is_qbnewb"] is False and current["is_datasetnewb"] is False
    assert user.put(f"/api/user/{uid}/modal/other").status_code == 400
    assert user.put(f"/api/user/{admin.user['id']}/modal/qbnewb").status_code == 403


@pytest.mark.security_row(19)
def test_password_change(app, admin, user):
    uid = user.user["id"]
    second = make_login(app, "user@example.com", USER_PASSWORD)
    wrong = user.put(f"/api/user/{uid}/password", json={"password": "N3w-Passw0rd!x", "old_password": "nope"})
    assert wrong.status_code == 400 and wrong.json["errors"] == {"old_password": "Invalid password"}
    common = user.put(f"/api/user/{uid}/password", json={"password": "password1", "old_password": USER_PASSWORD})
    assert common.status_code == 400 and common.json["errors"] == {"password": "password is too common."}
    short = user.put(f"/api/user/{uid}/password", json={"password": "ab1", "old_password": USER_PASSWORD})
    assert short.status_code == 400
    changed = user.put(f"/api/user/{uid}/password", json={"password": "N3w-Passw0rd!x", "old_password": USER_PASSWORD})
    assert changed.status_code == 200 and changed.json["success"] is True
    # every earlier session ended; the new one works
    old_header = user.headers["X-Metabase-Session"]
    assert app.test_client().get("/api/user/current", headers={"X-Metabase-Session": old_header}).status_code == 401
    assert second.get("/api/user/current").status_code == 401
    fresh = app.test_client().get("/api/user/current", headers={"X-Metabase-Session": changed.json["session_id"]})
    assert fresh.status_code == 200
    assert app.test_client().post("/api/session", json={"username": "user@example.com",
                                                         "password": "N3w-Passw0rd!x"}).status_code == 200
    # a superuser resets another user's password without the old one; others may not
    assert admin.put(f"/api/user/{uid}/password", json={"password": "Adm1n-Set-Pass"}).json == {"success": True}
    other = make_user(app, "other@example.com", "Otto", "Other")
    assert other.put(f"/api/user/{uid}/password", json={"password": "Adm1n-Set-Pass2"}).status_code == 403


def make_login(app, email, password):
    from core.testing import ApiClient

    response = app.test_client().post("/api/session", json={"username": email, "password": password})
    assert response.status_code == 200
    return ApiClient(app, {"X-Metabase-Session": response.json["id"]})


def test_deactivate_ends_sessions_and_reactivate(app, admin, user):
    uid = user.user["id"]
    assert user.get("/api/user/current").status_code == 200
    assert admin.delete(f"/api/user/{uid}").json == {"success": True}
    assert user.get("/api/user/current").status_code == 401
    login = app.test_client().post("/api/session", json={"username": "user@example.com", "password": USER_PASSWORD})
    assert login.status_code == 401
    kept = admin.get(f"/api/user/{uid}").json
    assert kept["is_active"] is False and kept["email"] == "user@example.com"
    reactivated = admin.put(f"/api/user/{uid}/reactivate")
    assert reactivated.status_code == 200 and reactivated.json["is_active"] is True
    again = admin.put(f"/api/user/{uid}/reactivate")
    assert again.status_code == 400 and again.json == {"message": "Not able to reactivate an active user"}
    assert app.test_client().post("/api/session", json={"username": "user@example.com",
                                                         "password": USER_PASSWORD}).status_code == 200
    assert admin.delete("/api/user/9999").status_code == 404


def test_reactivated_admin_is_no_longer_superuser_and_admin_password(app, admin):
    boss = make_user(app, "boss@example.com", "Bo", "Boss", superuser=True)
    bid = boss.user["id"]
    assert admin.delete(f"/api/user/{bid}").json == {"success": True}
    back = admin.put(f"/api/user/{bid}/reactivate").json
    assert back["is_superuser"] is False and 2 not in back["group_ids"]
    # superusers set any password without the old one, their own included
    changed = admin.put(f"/api/user/{admin.user['id']}/password", json={"password": "An0ther-Admin-Pass"})
    assert changed.status_code == 200 and changed.json["session_id"]
