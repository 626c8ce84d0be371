"""The table metadata editor (`/admin/datamodel`, Metabase's URLs): the databases whose data model the
user may edit, a database's tables by schema, and a table's own settings (display name, description,
visibility) with its fields' display names, descriptions, visibility and semantic types.

Reads are the editor's API listings (`include_editable_data_model`, hidden tables and sensitive fields
included); writes are PUT /api/table/:id and PUT /api/field/:id, and the values actions
POST /api/table/:id/rescan_values and /discard_values. A field's own page (FK target, remapping, custom
values) is admin_datamodel_fields.py.
"""
from __future__ import annotations

from core.http.internal import call
from core.sync.semantic_types import SEMANTIC_TYPES

from .admin_databases import posted_id
from .render import Answer, Failed, go, page, read
from .setup_data import administrator, error
from .views import blueprint, fragment, posted

TABLE_VISIBILITY = (("", "Queryable"), ("hidden", "Hidden"), ("technical", "Technical data"),
                    ("cruft", "Irrelevant/cruft"))
FIELD_VISIBILITY = (("normal", "Everywhere"), ("details-only", "Only in detail views"),
                    ("sensitive", "Do not include"))
SEMANTIC_CHOICES = sorted(SEMANTIC_TYPES, key=str.lower)
PREFIX = "/admin/datamodel/database"
TABLE = f"{PREFIX}/<int:database_id>/table/<int:table_id>"


@blueprint.app_template_filter("semantic_name")
def semantic_name(semantic_type: str | None) -> str:
    return (semantic_type or "").removeprefix("type/") or "No semantic type"


@blueprint.get("/admin/datamodel")
def datamodel_databases():
    user = administrator()
    listed = read("/api/database", include_editable_data_model=True).get("data", [])
    return page("app/admin/datamodel.html", admin_section="datamodel", name="admin-datamodel",
                title="Table metadata", user=user, databases=listed)


@blueprint.get(f"{PREFIX}/<int:database_id>")
def datamodel_database_tables(database_id: int):
    user = administrator()
    database = read(f"/api/database/{database_id}/metadata", include_hidden="true",
                    include_editable_data_model="true", remove_inactive="true", skip_fields="true")
    schemas: dict[str, list] = {}
    for table in database.get("tables", []):
        schemas.setdefault(table.get("schema") or "", []).append(table)
    return page("app/admin/datamodel_database.html", admin_section="datamodel", name="admin-datamodel-database",
                title=f"{database.get('name')}: tables", obj=database, user=user, database=database,
                schemas=sorted(schemas.items()), visibility=dict(TABLE_VISIBILITY))


@blueprint.get(TABLE)
def datamodel_table(database_id: int, table_id: int):
    user = administrator()
    shown = read(f"/api/table/{table_id}/query_metadata", include_sensitive_fields="true",
                 include_hidden_fields="true", include_editable_data_model="true")
    if shown.get("db_id") != database_id:
        raise Failed(Answer(404, None))
    return page("app/admin/datamodel_table.html", admin_section="datamodel", name="admin-datamodel-table",
                title=shown.get("display_name") or shown.get("name"), obj=shown, user=user, table=shown,
                table_visibility=TABLE_VISIBILITY, field_visibility=FIELD_VISIBILITY,
                semantic_types=SEMANTIC_CHOICES)


def text_or_none(value) -> str | None:
    text = value.strip() if isinstance(value, str) else ""
    return text or None


@blueprint.post(TABLE)
def datamodel_save_table(database_id: int, table_id: int):
    administrator()
    body = posted()
    changes = {"display_name": text_or_none(body.get("display_name")),
               "description": text_or_none(body.get("description")),
               "visibility_type": body.get("visibility_type") or None}
    answer = call("PUT", f"/api/table/{table_id}", json=changes)
    if not answer.ok:
        return error(answer.status, answer.message or "The table could not be saved.")
    hidden = answer.body.get("visibility_type")
    return fragment("app/_form_done.html", message="Saved." + (" People no longer see this table." if hidden else ""))


@blueprint.post(f"{TABLE}/field/<int:field_id>")
def datamodel_save_field(database_id: int, table_id: int, field_id: int):
    administrator()
    body = posted()
    changes = {key: text_or_none(body.get(key)) for key in ("display_name", "description") if key in body}
    if "visibility_type" in body:
        changes["visibility_type"] = body.get("visibility_type") or "normal"
    if "semantic_type" in body:
        changes["semantic_type"] = body.get("semantic_type") or None
    if "fk_target_field_id" in body:
        changes["fk_target_field_id"] = posted_id(body.get("fk_target_field_id"))
    answer = call("PUT", f"/api/field/{field_id}", json=changes)
    if not answer.ok:
        return error(answer.status, answer.message or "The field could not be saved.")
    if body.get("then") == "reload":  # the field's page: its remapping choices depend on what was saved
        return go(f"{PREFIX}/{database_id}/table/{table_id}/field/{field_id}")
    return fragment("app/_form_done.html", message=f"Saved {answer.body.get('display_name')}.")


VALUES_ACTIONS = {"rescan_values": "Re-scanning this table's field values started.",
                  "discard_values": "This table's saved field values were discarded."}


@blueprint.post(f"{TABLE}/rescan_values", defaults={"action": "rescan_values"})
@blueprint.post(f"{TABLE}/discard_values", defaults={"action": "discard_values"})
def datamodel_table_values(database_id: int, table_id: int, action: str):
    administrator()
    posted()
    answer = call("POST", f"/api/table/{table_id}/{action}")
    if not answer.ok:
        return error(answer.status, answer.message or "That did not work.")
    return fragment("app/_form_done.html", message=VALUES_ACTIONS[action])
