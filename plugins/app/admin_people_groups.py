"""The admin pages for groups (Metabase's /admin/people/groups): the list with member counts, creating,
renaming and deleting a group (POST, PUT, DELETE /api/permissions/group), and a group's members: adding
and removing them (POST, DELETE /api/permissions/membership) and, when the advanced-permissions setting
allows group managers, making a member the group's manager (PUT /api/permissions/membership/:id).
"""
from __future__ import annotations

from core.http.internal import call

from . import render
from .admin_common import admin_page, bad_input, positive_id, refused
from .render import go, read, signed_in_user
from .views import blueprint, fragment, posted

FIXED = (1, 2)  # All Users and Administrators: never renamed nor deleted


@blueprint.get("/admin/people/groups")
def admin_groups():
    user = signed_in_user()
    listed = read("/api/permissions/group")
    return admin_page("app/admin/groups.html", section="groups", user=user, title="Groups", groups=listed, fixed=FIXED)


@blueprint.post("/admin/people/groups")
def admin_create_group():
    signed_in_user()
    body = posted()
    answer = call("POST", "/api/permissions/group", json={"name": (body.get("name") or "").strip()})
    return refused(answer) if not answer.ok else go(f"/admin/people/groups/{answer.body['id']}")


@blueprint.get("/admin/people/groups/<int:group_id>")
def admin_group(group_id: int):
    user = signed_in_user()
    shown = read(f"/api/permissions/group/{group_id}")
    member_ids = {member["user_id"] for member in shown.get("members", [])}
    everyone = call("GET", "/api/user")  # whom a member may be chosen from: the API's list for this person
    candidates = [person for person in (everyone.body.get("data", []) if everyone.ok else [])
                  if person["id"] not in member_ids]
    return admin_page("app/admin/group.html", section="groups", user=user, obj=shown, title=shown.get("name") or "Group",
                      group=shown, candidates=candidates, fixed=group_id in FIXED,
                      managers_on=bool(render.properties().get("advanced-permissions")))


@blueprint.post("/admin/people/groups/<int:group_id>")
def admin_rename_group(group_id: int):
    signed_in_user()
    body = posted()
    answer = call("PUT", f"/api/permissions/group/{group_id}", json={"name": (body.get("name") or "").strip()})
    return refused(answer) if not answer.ok else fragment("app/_form_done.html", message="Renamed.")


@blueprint.post("/admin/people/groups/<int:group_id>/delete")
def admin_delete_group(group_id: int):
    signed_in_user()
    posted()
    answer = call("DELETE", f"/api/permissions/group/{group_id}")
    return refused(answer) if not answer.ok else go("/admin/people/groups")


@blueprint.post("/admin/people/groups/<int:group_id>/members")
def admin_add_member(group_id: int):
    signed_in_user()
    body = posted()
    user_id = positive_id(body.get("user_id"))
    if user_id is None:
        return bad_input("Choose someone to add.")
    answer = call("POST", "/api/permissions/membership", json={"group_id": group_id, "user_id": user_id})
    return refused(answer) if not answer.ok else go(f"/admin/people/groups/{group_id}")


@blueprint.post("/admin/people/groups/<int:group_id>/members/remove")
def admin_remove_member(group_id: int):
    signed_in_user()
    body = posted()
    membership_id = positive_id(body.get("membership_id"))
    if membership_id is None:
        return bad_input("Say which membership to remove.")
    answer = call("DELETE", f"/api/permissions/membership/{membership_id}")
    return refused(answer) if not answer.ok else go(f"/admin/people/groups/{group_id}")


@blueprint.post("/admin/people/groups/<int:group_id>/members/manager")
def admin_set_manager(group_id: int):
    signed_in_user()
    body = posted()
    membership_id = positive_id(body.get("membership_id"))
    if membership_id is None:
        return bad_input("Say which membership to change.")
    answer = call("PUT", f"/api/permissions/membership/{membership_id}",
                  json={"is_group_manager": body.get("is_group_manager") in (True, "true", "1")})
    return refused(answer) if not answer.ok else go(f"/admin/people/groups/{group_id}")
