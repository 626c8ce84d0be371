"""The group mappings of the sign-in methods (plugins/sso): which groups a person joins for each group
name (JWT) or directory group DN (LDAP) their identity carries, at
/admin/settings/authentication/<jwt|ldap>/group-mappings.

A form of rows (a name and the groups it maps to, chosen by name), with "Add a mapping" and "Remove"
buttons that redraw the form without saving, and "Save", which stores the whole map in one
PUT /api/setting/<method>-group-mappings ({name: [group ids]}): the API validates and refuses it whole.
The rows (templates/app/admin/_mapping_rows.html and the helpers below) are also the OpenID Connect
provider form's group mappings (admin_oidc.py).
"""
from __future__ import annotations

from werkzeug.exceptions import NotFound

from core.appdb.models import ALL_USERS_GROUP_ID
from core.http.internal import call

from .admin_common import admin_page, reason
from .admin_settings import settings_by_key
from .render import read, signed_in_user
from .views import blueprint, fragment, posted

# method -> (setting, settings section, title, what a row's name is)
METHODS = {
    "jwt": ("jwt-group-mappings", "JWT single sign-on", "Group name in the token's groups claim"),
    "ldap": ("ldap-group-mappings", "LDAP", "Directory group DN"),
}
MAX_ROWS = 200


def mappable_groups() -> list[dict]:
    return [g for g in read("/api/permissions/group") if g.get("id") != ALL_USERS_GROUP_ID]


def _setting(method: str) -> dict:
    row = settings_by_key().get(METHODS[method][0])
    if row is None:
        raise NotFound()  # plugins/sso is disabled
    return row


def rows_of(mappings) -> list[dict]:
    return [{"name": name, "groups": [int(i) for i in ids]} for name, ids in (mappings or {}).items()]


def _ids(value) -> list[int]:
    values = value if isinstance(value, list) else [] if value in (None, "") else [value]
    return [int(v) for v in values if str(v).isdigit()]


def posted_rows(body: dict) -> list[dict]:
    try:
        count = min(int(body.get("rows") or 0), MAX_ROWS)
    except (TypeError, ValueError):
        count = 0
    return [{"name": str(body.get(f"name-{i}") or "").strip(), "groups": _ids(body.get(f"groups-{i}"))}
            for i in range(count)]


def mapped_twice(rows: list[dict]) -> str | None:
    """The refusal for a name two rows map (one row per name), or None."""
    seen: set[str] = set()
    for r in rows:
        if r["name"] in seen:
            return f"{r['name']} is mapped twice: keep one row for it."
        seen.add(r["name"])
    return None


def _form(method: str, rows: list[dict], status: int = 200, error: str | None = None, done: str | None = None,
          env: bool = False):
    return fragment("app/admin/_group_mappings.html", status=status, method=method, label=METHODS[method][2],
                    rows=rows, groups=mappable_groups(), error=error, done=done, env=env)


def group_mappings_page(method: str):
    user = signed_in_user()
    row = _setting(method)
    return admin_page("app/admin/group_mappings.html", section="settings", user=user,
                      title=f"Group mappings: {METHODS[method][1]}", method=method, section_title=METHODS[method][1],
                      label=METHODS[method][2], rows=rows_of(row.get("value")), groups=mappable_groups(),
                      env=bool(row.get("is_env_setting")), error=None, done=None)


def group_mappings_submit(method: str):
    signed_in_user()
    row = _setting(method)
    body = posted()
    rows = posted_rows(body)
    action = str(body.get("action") or "save")
    if action == "add":
        return _form(method, rows + [{"name": "", "groups": []}])
    if action.startswith("remove:") and action[7:].isdigit():
        index = int(action[7:])
        return _form(method, [r for i, r in enumerate(rows) if i != index])
    if row.get("is_env_setting"):
        return _form(method, rows, 400, error="These mappings are set by the environment.", env=True)
    named = [r for r in rows if r["name"]]
    twice = mapped_twice(named)
    if twice:
        return _form(method, rows, 400, error=twice)
    answer = call("PUT", f"/api/setting/{METHODS[method][0]}",
                  json={"value": {r["name"]: r["groups"] for r in named}})
    if not answer.ok:
        return _form(method, rows, answer.status, error=reason(answer))
    return _form(method, named, done="Saved.")


for _method in METHODS:
    _path = f"/admin/settings/authentication/{_method}/group-mappings"
    blueprint.add_url_rule(_path, f"admin_group_mappings_{_method}", group_mappings_page,
                           defaults={"method": _method}, methods=["GET"])
    blueprint.add_url_rule(_path, f"admin_group_mappings_{_method}_save", group_mappings_submit,
                           defaults={"method": _method}, methods=["POST"])
