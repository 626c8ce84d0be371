"""One field in the table metadata editor (`/admin/datamodel/database/:db/table/:table/field/:field`): its
foreign-key target, how its values are shown (as they are, as a column of the table its foreign key points
to, or by custom names), and re-scanning or discarding its values.

The choices offered come from the API for this user: FK targets from GET /api/database/:id/idfields,
display columns from the target table's query_metadata, values from GET /api/field/:id/values. Writes:
PUT /api/field/:id, POST or DELETE /api/field/:id/dimension (type "external" with human_readable_field_id,
or "internal" followed by POST /api/field/:id/values with every value named), and
POST /api/field/:id/rescan_values or /discard_values.
"""
from __future__ import annotations

from core.http.internal import call

from .admin_databases import posted_id, text
from .admin_datamodel import FIELD_VISIBILITY, SEMANTIC_CHOICES, TABLE
from .render import Answer, Failed, page, read
from .setup_data import administrator, error
from .views import blueprint, fragment, posted

FIELD = f"{TABLE}/field/<int:field_id>"
# A value list of more than this many values is not offered for custom names (Metabase's list limit).
MAX_NAMED_VALUES = 1000


def checked_field(database_id: int, table_id: int, field_id: int) -> dict:
    field = read(f"/api/field/{field_id}", include_editable_data_model="true")
    if field.get("table_id") != table_id or (field.get("table") or {}).get("db_id") != database_id:
        raise Failed(Answer(404, None))
    return field


@blueprint.get(FIELD)
def datamodel_field_page(database_id: int, table_id: int, field_id: int):
    user = administrator()
    field = checked_field(database_id, table_id, field_id)
    targets = read(f"/api/database/{database_id}/idfields", include_editable_data_model="true")
    display_columns = []
    target = field.get("target")
    if field.get("semantic_type") == "type/FK" and target:
        target_table = call("GET", f"/api/table/{target['table_id']}/query_metadata")
        if target_table.ok:
            display_columns = [f for f in target_table.body.get("fields", []) if f.get("id") != target.get("id")]
    values = call("GET", f"/api/field/{field_id}/values")
    listed = values.body.get("values", []) if values.ok else []
    dimension = (field.get("dimensions") or [None])[0]
    return page("app/admin/datamodel_field.html", admin_section="datamodel", name="admin-datamodel-field",
                title=field.get("display_name") or field.get("name"), obj=field, user=user, field=field,
                table=field.get("table") or {}, targets=targets, display_columns=display_columns,
                values=listed[:MAX_NAMED_VALUES], dimension=dimension, field_visibility=FIELD_VISIBILITY,
                semantic_types=SEMANTIC_CHOICES,
                remap=dimension.get("type") if dimension else "none")


@blueprint.post(f"{FIELD}/remap")
def datamodel_field_remap(database_id: int, table_id: int, field_id: int):
    administrator()
    body = posted()
    kind = body.get("remap")
    if kind == "none":
        answer = call("DELETE", f"/api/field/{field_id}/dimension")
        if not answer.ok:
            return error(answer.status, answer.message or "The remapping could not be removed.")
        return fragment("app/_form_done.html", message="Values are shown as they are.")
    name = text(body.get("name"))
    if kind == "external":
        shown_field = posted_id(body.get("human_readable_field_id"))
        if shown_field is None:
            return error(400, "Choose the column to show instead.")
        answer = call("POST", f"/api/field/{field_id}/dimension", json={
            "type": "external", "name": name, "human_readable_field_id": shown_field})
        if not answer.ok:
            return error(answer.status, answer.message or "The remapping could not be saved.")
        return fragment("app/_form_done.html", message="Saved: the chosen column is shown instead of this one.")
    if kind == "internal":
        current = call("GET", f"/api/field/{field_id}/values")
        if not current.ok:
            return error(current.status, current.message or "This field's values could not be read.")
        pairs = []
        for index, pair in enumerate(current.body.get("values", [])[:MAX_NAMED_VALUES]):
            label = text(body.get(f"value.{index}"))
            pairs.append([pair[0], label or str(pair[0])])
        # The names first: a field whose values the API will not name gets no dimension either.
        answer = call("POST", f"/api/field/{field_id}/values", json={"values": pairs})
        if answer.ok:
            answer = call("POST", f"/api/field/{field_id}/dimension", json={"type": "internal", "name": name})
        if not answer.ok:
            return error(answer.status, answer.message or "The custom values could not be saved.")
        return fragment("app/_form_done.html", message="Saved: values are shown by the names given.")
    return error(400, "Choose how this field's values are shown.")


VALUES_ACTIONS = {"rescan_values": "Re-scanning this field's values started.",
                  "discard_values": "This field's saved values were discarded."}


@blueprint.post(f"{FIELD}/rescan_values", defaults={"action": "rescan_values"})
@blueprint.post(f"{FIELD}/discard_values", defaults={"action": "discard_values"})
def datamodel_field_values(database_id: int, table_id: int, field_id: int, action: str):
    administrator()
    posted()
    answer = call("POST", f"/api/field/{field_id}/{action}")
    if not answer.ok:
        return error(answer.status, answer.message or "That did not work.")
    return fragment("app/_form_done.html", message=VALUES_ACTIONS[action])
