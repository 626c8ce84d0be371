"""The admin pages for people and groups (plugins/app/admin_people*.py) through HTTP as htmx sends them:
after each action the API's own state is read back; a person who is not an administrator gets the
API's 403 and no Admin link; bad input comes back as the API's message in `_form_error.html`."""
from __future__ import annotations

import re
from html import unescape

from core.testing import USER_PASSWORD, make_user

HTMX = {"HX-Request": "true"}


def text(response) -> str:
    return response.get_data(as_text=True)


def user_by_email(admin, email: str) -> dict:
    listed = admin.get("/api/user", query_string={"status": "all"}).json["data"]
    return next(person for person in listed if person["email"] == email)


def test_the_admin_link_shows_for_administrators_only(app, admin, user):
    assert 'href="/admin"' in text(admin.get("/"))
    assert 'href="/admin' not in text(user.get("/"))
    for path in ("/admin/people", "/admin/people/groups", f"/admin/people/{admin.user['id']}"):
        refused = user.get(path)
        assert refused.status_code == 403, path
        assert "permission" in text(refused)
    answer = user.post("/admin/people", json={"email": "x@example.com"}, headers=HTMX)
    assert answer.status_code == 403 and 'role="alert"' in text(answer)
    assert all(p["email"] != "x@example.com" for p in admin.get("/api/user").json["data"])


def test_an_administrator_invites_edits_deactivates_and_reactivates_someone(app, admin):
    group = admin.post("/api/permissions/group", json={"name": "Analysts"}).json["id"]
    page = text(admin.get("/admin/people"))
    assert "Invite someone" in page and "Analysts" in page and 'aria-current="page">People<' in page
    bad = admin.post("/admin/people", json={"email": "not-an-address"}, headers=HTMX)
    assert bad.status_code == 400 and 'role="alert"' in text(bad)
    wrong_attributes = admin.post("/admin/people", json={"email": "b@example.com", "login_attributes": "no colon"},
                                  headers=HTMX)
    assert wrong_attributes.status_code == 400 and "key: value" in text(wrong_attributes)

    done = admin.post("/admin/people", headers=HTMX, json={
        "first_name": "Bea", "last_name": "Bauer", "email": "bea@example.com", f"group-{group}": "1",
        "login_attributes": "region: north"})
    assert done.status_code == 200, text(done)
    password = unescape(re.search(r'data-secret>([^<]+)<', text(done)).group(1))  # no e-mail here: a temporary password
    bea = user_by_email(admin, "bea@example.com")
    assert {m["id"] for m in bea["user_group_memberships"]} == {1, group}
    assert bea["login_attributes"] == {"region": "north"}
    signed_in = app.test_client().post("/api/session", json={"username": "bea@example.com", "password": password})
    assert signed_in.status_code == 200
    taken = admin.post("/admin/people", json={"email": "bea@example.com"}, headers=HTMX)
    assert taken.status_code == 400 and "already in use" in text(taken)

    edit = text(admin.get(f"/admin/people/{bea['id']}"))
    assert 'value="Bea"' in edit and "region: north" in edit and "Deactivate Bea Bauer" in edit
    saved = admin.post(f"/admin/people/{bea['id']}", headers=HTMX, json={
        "first_name": "Beatrix", "last_name": "Bauer", "email": "beatrix@example.com", "is_superuser": "1",
        "login_attributes": "region: south\nteam: red"})
    assert saved.status_code == 200 and "Saved." in text(saved)
    bea = admin.get(f"/api/user/{bea['id']}").json
    assert (bea["first_name"], bea["email"], bea["is_superuser"]) == ("Beatrix", "beatrix@example.com", True)
    assert {m["id"] for m in bea["user_group_memberships"]} == {1, 2}  # the group's box was not ticked
    assert bea["login_attributes"] == {"region": "south", "team": "red"}
    clash = admin.post(f"/admin/people/{bea['id']}", headers=HTMX, json={"email": "admin@example.com"})
    assert clash.status_code == 400 and "already associated" in text(clash)

    gone = admin.post(f"/admin/people/{bea['id']}/deactivate", headers=HTMX)
    assert gone.headers["HX-Redirect"] == "/admin/people"
    assert admin.get(f"/api/user/{bea['id']}").json["is_active"] is False
    assert "Beatrix" not in text(admin.get("/admin/people"))
    assert "Beatrix" in text(admin.get("/admin/people?status=deactivated"))
    assert "Reactivate Beatrix" in text(admin.get(f"/admin/people/{bea['id']}"))
    back = admin.post(f"/admin/people/{bea['id']}/reactivate", headers=HTMX)
    assert back.headers["HX-Redirect"] == f"/admin/people/{bea['id']}"
    assert admin.get(f"/api/user/{bea['id']}").json["is_active"] is True
    again = admin.post(f"/admin/people/{bea['id']}/reactivate", headers=HTMX)
    assert again.status_code == 400 and "active user" in text(again)
    last = admin.post(f"/admin/people/{admin.user['id']}/deactivate", headers=HTMX)  # the API's own rule
    assert last.status_code in (400, 403) and 'role="alert"' in text(last)


def test_resetting_a_password_without_email_shows_a_temporary_one(app, admin, user):
    reset = admin.post(f"/admin/people/{user.user['id']}/reset_password", headers=HTMX)
    assert reset.status_code == 200
    password = unescape(re.search(r'data-secret>([^<]+)<', text(reset)).group(1))
    anonymous = app.test_client()
    assert anonymous.post("/api/session", json={"username": user.user["email"],
                                                "password": USER_PASSWORD}).status_code == 401
    assert anonymous.post("/api/session", json={"username": user.user["email"], "password": password}).status_code == 200
    assert user.get("/api/user/current").status_code == 401  # the reset ended their sessions


def test_groups_are_created_renamed_filled_and_deleted(app, admin, user):
    page = admin.get("/admin/people/groups")
    assert page.status_code == 200 and "All Users" in text(page)
    empty = admin.post("/admin/people/groups", json={"name": ""}, headers=HTMX)
    assert empty.status_code == 400 and 'role="alert"' in text(empty)
    made = admin.post("/admin/people/groups", json={"name": "Finance"}, headers=HTMX)
    group = int(made.headers["HX-Redirect"].rsplit("/", 1)[1])
    assert admin.get(f"/api/permissions/group/{group}").json["name"] == "Finance"
    twice = admin.post("/admin/people/groups", json={"name": "finance"}, headers=HTMX)
    assert twice.status_code == 400 and "already exists" in text(twice)

    shown = text(admin.get(f"/admin/people/groups/{group}"))
    assert "Nobody is in this group" in shown and user.user["email"] in shown  # offered to add
    added = admin.post(f"/admin/people/groups/{group}/members", json={"user_id": str(user.user["id"])}, headers=HTMX)
    assert added.headers["HX-Redirect"] == f"/admin/people/groups/{group}"
    members = admin.get(f"/api/permissions/group/{group}").json["members"]
    assert [m["user_id"] for m in members] == [user.user["id"]]
    assert "Remove Ulla User from Finance" in text(admin.get(f"/admin/people/groups/{group}"))
    nobody = admin.post(f"/admin/people/groups/{group}/members", json={"user_id": ""}, headers=HTMX)
    assert nobody.status_code == 400
    twice = admin.post(f"/admin/people/groups/{group}/members", json={"user_id": user.user["id"]}, headers=HTMX)
    assert twice.status_code == 400 and "already a member" in text(twice)

    renamed = admin.post(f"/admin/people/groups/{group}", json={"name": "Money"}, headers=HTMX)
    assert renamed.status_code == 200 and admin.get(f"/api/permissions/group/{group}").json["name"] == "Money"
    fixed = admin.post("/admin/people/groups/1", json={"name": "Everyone"}, headers=HTMX)
    assert fixed.status_code == 400 and "cannot edit" in text(fixed)
    assert "Delete All Users" not in text(admin.get("/admin/people/groups/1"))

    removed = admin.post(f"/admin/people/groups/{group}/members/remove",
                         json={"membership_id": members[0]["membership_id"]}, headers=HTMX)
    assert removed.status_code == 200 and admin.get(f"/api/permissions/group/{group}").json["members"] == []
    assert user.post(f"/admin/people/groups/{group}/delete", headers=HTMX).status_code == 403
    deleted = admin.post(f"/admin/people/groups/{group}/delete", headers=HTMX)
    assert deleted.headers["HX-Redirect"] == "/admin/people/groups"
    assert admin.get(f"/api/permissions/group/{group}").status_code == 404


def test_a_group_manager_sees_the_admin_link_and_their_groups_members(app, admin):
    admin.put("/api/setting/advanced-permissions", json={"value": True})
    group = admin.post("/api/permissions/group", json={"name": "Team"}).json["id"]
    manager = make_user(app, email="manager@example.com", first_name="Mo")
    member = make_user(app, email="member@example.com", first_name="Mia")
    admin.post("/api/permissions/membership", json={"group_id": group, "user_id": member.user["id"]})
    row = admin.post("/api/permissions/membership", json={"group_id": group, "user_id": manager.user["id"]}).json
    membership = next(m["membership_id"] for m in row if m["user_id"] == manager.user["id"])
    made = admin.post(f"/admin/people/groups/{group}/members/manager",
                      json={"membership_id": membership, "is_group_manager": "true"}, headers=HTMX)
    assert made.status_code == 200
    members = admin.get(f"/api/permissions/group/{group}").json["members"]
    assert {m["user_id"]: m["is_group_manager"] for m in members} == {manager.user["id"]: True, member.user["id"]: False}
    home = text(manager.get("/"))
    assert 'href="/admin/people"' in home
    people = manager.get("/admin/people")
    assert people.status_code == 200 and "member@example.com" in text(people)
    assert "Invite someone" not in text(people)


def test_a_manager_of_two_groups_moves_a_member_between_them(app, admin):
    admin.put("/api/setting/advanced-permissions", json={"value": True})
    first = admin.post("/api/permissions/group", json={"name": "North"}).json["id"]
    second = admin.post("/api/permissions/group", json={"name": "South"}).json["id"]
    manager = make_user(app, email="boss@example.com", first_name="Bo")
    member = make_user(app, email="worker@example.com", first_name="Wil")
    for group in (first, second):
        admin.post("/api/permissions/membership", json={"group_id": group, "user_id": manager.user["id"],
                                                        "is_group_manager": True})
    admin.post("/api/permissions/membership", json={"group_id": first, "user_id": member.user["id"]})
    page = manager.get(f"/admin/people/groups/{second}")
    assert page.status_code == 200 and "worker@example.com" in text(page) and "Delete South" in text(page)
    added = manager.post(f"/admin/people/groups/{second}/members", json={"user_id": member.user["id"]}, headers=HTMX)
    assert added.status_code == 200, text(added)
    assert member.user["id"] in {m["user_id"] for m in admin.get(f"/api/permissions/group/{second}").json["members"]}
    # From the person's page, the manager's boxes cover their own groups only; the API keeps the rest.
    shown = text(manager.get(f"/admin/people/{member.user['id']}"))
    assert "North" in shown and "South" in shown and "Administrator" not in shown
    saved = manager.post(f"/admin/people/{member.user['id']}", json={f"group-{second}": "1"}, headers=HTMX)
    assert saved.status_code == 200, text(saved)
    groups = {m["id"] for m in admin.get(f"/api/user/{member.user['id']}").json["user_group_memberships"]}
    assert groups == {1, second}
    assert manager.get("/admin/people/groups/2").status_code == 403
