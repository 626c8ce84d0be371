"""The data permissions grid (Metabase's /admin/permissions/data): a group's permissions on every
database (`/group/:id`), every group's on one database (`/database/:id`), and a group's on a database's
schemas and tables (`/group/:id/database/:id[/schema/:name]`), for each level of the v2 graph: view data,
create queries, download results, manage table metadata and (per database) manage the database.

Read from GET /api/permissions/graph-v2 and saved through PUT /api/permissions/graph with the revision
the page was drawn at, so a save over someone else's change is the API's 409 and its message. Each select
carries its place in the graph in its name (a JSON list: level, group, database, type, schema, table) and
its value when drawn (`was`), so a save sends only what changed: the API overlays what it is sent.
"""
from __future__ import annotations

from urllib.parse import quote

import orjson
from flask import request

from core.http.internal import Answer, call

from .admin_common import admin_page, bad_input, refused
from .render import Failed, go, read, signed_in_user
from .views import blueprint, posted

ADMINISTRATORS = 2
TYPES = (("view-data", "View data"), ("create-queries", "Create queries"), ("download", "Download results"),
         ("data-model", "Manage table metadata"), ("details", "Manage database"))
GRANULAR_TYPES = ("view-data", "create-queries", "download", "data-model")
WRAPPED = ("download", "data-model")
OPTIONS = {
    "view-data": (("unrestricted", "Can view"), ("blocked", "Blocked")),
    "create-queries": (("query-builder-and-native", "Query builder and native"), ("query-builder", "Query builder only"),
                       ("no", "No")),
    "download": (("full", "1 million rows"), ("limited", "10 thousand rows"), ("none", "No")),
    "data-model": (("all", "Yes"), ("none", "No")),
    "details": (("yes", "Yes"), ("no", "No")),
}
# Values the graph may hold that this grid does not offer to choose (the paid features, the legacy one).
OTHER_LABELS = {"sandboxed": "Sandboxed", "impersonated": "Impersonated", "legacy-no-self-service": "No self-service (legacy)",
                "granular": "Granular (by schema or table)"}
PREFIX = "/admin/permissions/data"


def graph() -> dict:
    return read("/api/permissions/graph-v2")


def value_at(graph_entry: dict, perm_type: str, schema: str | None = None, table: int | None = None):
    """The value of one type at a level: a string, or "granular" where it is set below that level."""
    value = graph_entry.get(perm_type)
    if perm_type in WRAPPED and isinstance(value, dict):
        value = value.get("schemas")
    if schema is not None and isinstance(value, dict):
        value = value.get(schema, "granular")
    if table is not None and isinstance(value, dict):
        value = value.get(str(table), "granular")
    return value if isinstance(value, str) else "granular"


def cell(level: str, group_id: int, db_id: int, perm_type: str, value: str, schema=None, table=None) -> dict:
    options = list(OPTIONS[perm_type])
    if level != "db" and perm_type == "create-queries":  # native queries are for a whole database only
        options = [option for option in options if option[0] != "query-builder-and-native"]
    if value not in {key for key, _ in options}:
        options.append((value, OTHER_LABELS.get(value, value)))
    return {"name": orjson.dumps([level, group_id, db_id, perm_type, schema, table]).decode(), "value": value,
            "options": options, "readonly": group_id == ADMINISTRATORS}


def tabs() -> tuple[list, list]:
    groups = read("/api/permissions/group")
    databases = read("/api/database")
    databases = databases.get("data", []) if isinstance(databases, dict) else databases
    return groups, databases


@blueprint.get(PREFIX)
def admin_permissions_home():
    signed_in_user()
    read("/api/permissions/graph-v2")  # someone who may not read the graph gets the API's refusal here
    return go(f"{PREFIX}/group/1")


def draw(user, *, title: str, heading_of_rows: str, rows: list, types, crumbs: list, revision: int, view: str,
         groups: list, databases: list, current: tuple):
    return admin_page("app/admin/permissions_data.html", section="permissions-data", user=user, title=title,
                      rows=rows, types=[t for t in TYPES if t[0] in types], heading_of_rows=heading_of_rows,
                      crumbs=crumbs, revision=revision, view=view, groups=groups, databases=databases,
                      current=current, back=request_path())


def request_path() -> str:
    return request.path


@blueprint.get(f"{PREFIX}/group/<int:group_id>")
def admin_by_group(group_id: int):
    user = signed_in_user()
    full = graph()
    groups, databases = tabs()
    group = next((g for g in groups if g["id"] == group_id), None)
    entries = full["groups"].get(str(group_id))
    if group is None or entries is None:
        raise Failed(Answer(404, "Not found."))
    rows = []
    for database in databases:
        entry = entries.get(str(database["id"]), {})
        rows.append({"label": database["name"], "href": f"{PREFIX}/group/{group_id}/database/{database['id']}",
                     "cells": [cell("db", group_id, database["id"], t, value_at(entry, t)) for t, _ in TYPES]})
    return draw(user, title=f"Data permissions: {group['name']}", heading_of_rows="Database", rows=rows,
                types=[t for t, _ in TYPES], crumbs=[], revision=full["revision"], view="group", groups=groups,
                databases=databases, current=("group", group_id))


@blueprint.get(f"{PREFIX}/database/<int:db_id>")
def admin_by_database(db_id: int):
    user = signed_in_user()
    full = graph()
    groups, databases = tabs()
    database = read(f"/api/database/{db_id}")
    rows = []
    for group in groups:
        entry = full["groups"].get(str(group["id"]), {}).get(str(db_id), {})
        rows.append({"label": group["name"], "href": f"{PREFIX}/group/{group['id']}/database/{db_id}",
                     "cells": [cell("db", group["id"], db_id, t, value_at(entry, t)) for t, _ in TYPES]})
    return draw(user, title=f"Data permissions: {database['name']}", heading_of_rows="Group", rows=rows,
                types=[t for t, _ in TYPES], crumbs=[], revision=full["revision"], view="database", groups=groups,
                databases=databases, current=("database", db_id))


@blueprint.get(f"{PREFIX}/group/<int:group_id>/database/<int:db_id>")
def admin_group_database(group_id: int, db_id: int):
    schemas = read(f"/api/database/{db_id}/schemas")
    if len(schemas) == 1:  # one schema (or SQLite's none): its tables at once, as Metabase's grid
        return admin_group_schema(group_id, db_id, schemas[0])
    user = signed_in_user()
    full, (groups, databases) = graph(), tabs()
    group, database, entry = context(full, groups, group_id, db_id)
    rows = [{"label": schema or "(no schema)", "href": schema_path(group_id, db_id, schema),
             "cells": [cell("schema", group_id, db_id, t, value_at(entry, t, schema), schema) for t in GRANULAR_TYPES]}
            for schema in schemas]
    return draw(user, title=f"{group['name']} on {database['name']}", heading_of_rows="Schema", rows=rows,
                types=GRANULAR_TYPES, revision=full["revision"], view="group", groups=groups, databases=databases,
                current=("group", group_id), crumbs=[(group["name"], f"{PREFIX}/group/{group_id}")])


def schema_path(group_id: int, db_id: int, schema: str) -> str:
    return f"{PREFIX}/group/{group_id}/database/{db_id}/schema/{quote(schema, safe='')}"


def context(full: dict, groups: list, group_id: int, db_id: int):
    group = next((g for g in groups if g["id"] == group_id), None)
    if group is None or str(group_id) not in full["groups"]:
        raise Failed(Answer(404, "Not found."))
    database = read(f"/api/database/{db_id}")
    return group, database, full["groups"][str(group_id)].get(str(db_id), {})


@blueprint.get(f"{PREFIX}/group/<int:group_id>/database/<int:db_id>/schema/", defaults={"schema": ""})
@blueprint.get(f"{PREFIX}/group/<int:group_id>/database/<int:db_id>/schema/<path:schema>")
def admin_group_schema(group_id: int, db_id: int, schema: str):
    user = signed_in_user()
    full, (groups, databases) = graph(), tabs()
    group, database, entry = context(full, groups, group_id, db_id)
    tables = read(f"/api/database/{db_id}/schema/{quote(schema, safe='')}")
    rows = [{"label": table.get("display_name") or table["name"], "href": None,
             "cells": [cell("table", group_id, db_id, t, value_at(entry, t, schema, table["id"]), schema, table["id"])
                       for t in GRANULAR_TYPES]}
            for table in sorted(tables, key=lambda t: str(t.get("display_name") or t["name"]).lower())]
    crumbs = [(group["name"], f"{PREFIX}/group/{group_id}"),
              (database["name"], f"{PREFIX}/group/{group_id}/database/{db_id}")]
    return draw(user, title=f"{group['name']} on {schema or database['name']}", heading_of_rows="Table", rows=rows,
                types=GRANULAR_TYPES, revision=full["revision"], view="group", groups=groups, databases=databases,
                current=("group", group_id), crumbs=crumbs)


def changes_of(body: dict) -> dict | str:
    """The graph fragment for the selects whose value differs from the one drawn: {group: {db: entry}}."""
    groups: dict[str, dict] = {}
    for key, value in body.items():
        if not key.startswith("["):
            continue
        try:
            level, group_id, db_id, perm_type, schema, table = orjson.loads(key)
        except (orjson.JSONDecodeError, ValueError, TypeError):
            return "The permissions sent are not the grid's."
        if value == body.get("was" + key) or value == "granular":
            continue
        if not isinstance(value, str) or perm_type not in OPTIONS or level not in ("db", "schema", "table") \
                or not isinstance(group_id, int) or not isinstance(db_id, int):
            return "The permissions sent are not the grid's."
        if level == "db":
            new = value
        elif level == "schema" and isinstance(schema, str):
            new = {schema: value}
        elif level == "table" and isinstance(schema, str) and isinstance(table, int):
            new = {schema: {str(table): value}}
        else:
            return "The permissions sent are not the grid's."
        entry = groups.setdefault(str(group_id), {}).setdefault(str(db_id), {})
        current = entry.get(perm_type, {}).get("schemas") if perm_type in WRAPPED else entry.get(perm_type)
        if isinstance(current, dict) and isinstance(new, dict):  # several tables of one type: one map
            for name, inner in new.items():
                if isinstance(inner, dict) and isinstance(current.get(name), dict):
                    current[name].update(inner)
                else:
                    current[name] = inner
            new = current
        entry[perm_type] = {"schemas": new} if perm_type in WRAPPED else new
    return groups


@blueprint.post(PREFIX)
def admin_save():
    signed_in_user()
    body = posted()
    revision = body.get("revision")
    if not isinstance(revision, (int, str)) or not str(revision).isdigit():
        return bad_input("The grid was sent without its revision: reload the page.")
    groups = changes_of(body)
    if isinstance(groups, str):
        return bad_input(groups)
    if not groups:
        return bad_input("Nothing was changed.")
    answer = call("PUT", "/api/permissions/graph", query={"skip-graph": "true"},
                  json={"revision": int(revision), "groups": groups})
    if not answer.ok:
        return refused(answer)
    back = body.get("back")
    return go(back if isinstance(back, str) and back.startswith(PREFIX + "/") and "//" not in back else PREFIX)
