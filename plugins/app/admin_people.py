"""The admin pages for people (Metabase's /admin/people): the list of active or deactivated users,
inviting one (POST /api/user), editing names, e-mail, superuser status, groups and login attributes
(PUT /api/user/:id), deactivating and reactivating (DELETE /api/user/:id, PUT /api/user/:id/reactivate)
and resetting a password: the reset e-mail (POST /api/session/forgot_password) when e-mail is set up,
otherwise a temporary password set through PUT /api/user/:id/password and shown once to the
administrator, as Metabase's admin does.

Group managers reach the list of their groups' members here too: what they may see and change is the
API's decision (GET /api/user lists only their groups' members for them).
"""
from __future__ import annotations

from flask import request

from core.http.internal import call

from . import render
from .admin_common import admin_page, bad_input, positive_id, refused, temporary_password
from .render import go, read, signed_in_user
from .views import blueprint, fragment, posted

ALL_USERS, ADMINISTRATORS = 1, 2


def groups_visible() -> list[dict]:
    """The groups this person may list (none for a manager of a single group: the API says so)."""
    answer = call("GET", "/api/permissions/group")
    return answer.body if answer.ok and isinstance(answer.body, list) else []


def parse_attributes(text: str) -> dict | str:
    """Login attributes typed one "key: value" a line; a message when a line is not one."""
    out: dict[str, str] = {}
    for number, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            return f"Line {number} of the login attributes is not “key: value”."
        out[key.strip()] = value.strip()
    return out


def attributes_text(attributes) -> str:
    return "\n".join(f"{key}: {value}" for key, value in (attributes or {}).items())


def chosen_groups(body: dict) -> set[int]:
    """The group ids of the ticked `group-<id>` boxes."""
    return {group_id for key, value in body.items() if key.startswith("group-") and value
            for group_id in [positive_id(key[6:])] if group_id}


@blueprint.get("/admin/people")
def admin_people():
    user = signed_in_user()
    status = "deactivated" if request.args.get("status") == "deactivated" else "active"
    query = {"status": status} if user.is_superuser else {}
    listed = read("/api/user", **query)
    groups = groups_visible()
    names = {group["id"]: group["name"] for group in groups}
    return admin_page("app/admin/people.html", section="people", user=user, title="People", status_shown=status,
                      people=listed.get("data", []), total=listed.get("total", 0), groups=groups, group_names=names,
                      email_configured=bool(render.properties().get("email-configured?")))


@blueprint.post("/admin/people")
def admin_invite():
    signed_in_user()
    body = posted()
    attributes = parse_attributes(body.get("login_attributes") or "")
    if isinstance(attributes, str):
        return bad_input(attributes)
    memberships = [{"id": group_id} for group_id in sorted(chosen_groups(body) | {ALL_USERS})]
    answer = call("POST", "/api/user", json={
        "first_name": (body.get("first_name") or "").strip() or None,
        "last_name": (body.get("last_name") or "").strip() or None,
        "email": (body.get("email") or "").strip(), "user_group_memberships": memberships,
        "login_attributes": attributes or None})
    if not answer.ok:
        return refused(answer)
    created = answer.body
    if render.properties().get("email-configured?"):
        return fragment("app/admin/_invited.html", person=created, password=None)
    # No e-mail to send the invitation with: the administrator hands on a temporary password, as in Metabase.
    password = temporary_password()
    reset = call("PUT", f"/api/user/{created['id']}/password", json={"password": password})
    if not reset.ok:
        return refused(reset)
    return fragment("app/admin/_invited.html", person=created, password=password)


@blueprint.get("/admin/people/<int:user_id>")
def admin_person(user_id: int):
    user = signed_in_user()
    shown = read(f"/api/user/{user_id}")
    groups = [group for group in groups_visible() if group["id"] not in (ALL_USERS, ADMINISTRATORS)]
    member_of = {m["id"] for m in shown.get("user_group_memberships") or []}
    return admin_page("app/admin/person.html", section="people", user=user, obj=shown,
                      title=shown.get("common_name") or shown.get("email") or "Person", person=shown, groups=groups,
                      member_of=member_of, attributes=attributes_text(shown.get("login_attributes")),
                      email_configured=bool(render.properties().get("email-configured?")))


@blueprint.post("/admin/people/<int:user_id>")
def admin_person_submit(user_id: int):
    user = signed_in_user()
    body = posted()
    current = call("GET", f"/api/user/{user_id}")
    if not current.ok:
        return refused(current)
    attributes = parse_attributes(body.get("login_attributes") or "")
    if isinstance(attributes, str):
        return bad_input(attributes)
    visible = {group["id"] for group in groups_visible()} - {ALL_USERS, ADMINISTRATORS}
    had = {m["id"]: bool(m.get("is_group_manager")) for m in current.body.get("user_group_memberships") or []}
    # Groups this person cannot see here keep their memberships; the boxes decide the others.
    wanted = ({g for g in had if g not in visible} | (chosen_groups(body) & visible)) - {ADMINISTRATORS}
    wanted.add(ALL_USERS)
    changes: dict = {"user_group_memberships": None}
    if user.is_superuser:
        superuser = bool(body.get("is_superuser"))
        if superuser:
            wanted.add(ADMINISTRATORS)
        changes = {"first_name": (body.get("first_name") or "").strip() or None,
                   "last_name": (body.get("last_name") or "").strip() or None,
                   "email": (body.get("email") or "").strip(), "is_superuser": superuser,
                   "login_attributes": attributes}
    elif ADMINISTRATORS in had:
        wanted.add(ADMINISTRATORS)
    changes["user_group_memberships"] = [{"id": g, "is_group_manager": had.get(g, False)} for g in sorted(wanted)]
    answer = call("PUT", f"/api/user/{user_id}", json=changes)
    if not answer.ok:
        return refused(answer)
    return fragment("app/_form_done.html", message="Saved.")


@blueprint.post("/admin/people/<int:user_id>/deactivate")
def admin_deactivate(user_id: int):
    signed_in_user()
    posted()
    answer = call("DELETE", f"/api/user/{user_id}")
    return refused(answer) if not answer.ok else go("/admin/people")


@blueprint.post("/admin/people/<int:user_id>/reactivate")
def admin_reactivate(user_id: int):
    signed_in_user()
    posted()
    answer = call("PUT", f"/api/user/{user_id}/reactivate")
    return refused(answer) if not answer.ok else go(f"/admin/people/{user_id}")


@blueprint.post("/admin/people/<int:user_id>/reset_password")
def admin_reset_password(user_id: int):
    signed_in_user()
    posted()
    shown = call("GET", f"/api/user/{user_id}")
    if not shown.ok:
        return refused(shown)
    if render.properties().get("email-configured?"):
        answer = call("POST", "/api/session/forgot_password", json={"email": shown.body.get("email") or ""})
        if not answer.ok:
            return refused(answer)
        return fragment("app/_form_done.html",
                        message=f"A link to choose a new password was e-mailed to {shown.body.get('email')}.")
    password = temporary_password()
    answer = call("PUT", f"/api/user/{user_id}/password", json={"password": password})
    if not answer.ok:
        return refused(answer)
    return fragment("app/admin/_password.html", person=shown.body, password=password)
