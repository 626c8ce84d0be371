"""What an implicit action works on: the model's one source table, and the parameters Metabase derives
from its fields (id = the field name slugified, a template-tag target of the same name, the type from
the base type). A model qualifies only when its query is that table with no clause at all (no filter,
join, expression, aggregation...). Saved parameters keep what the client stored (display names, ...)
over the derived ones, but never their type, so a schema change is seen."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Field, Table
from core.content.collections import slugify
from core.http.errors import Invalid

NUMBER_TYPES = ("type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Number")
TEMPORAL_TYPES = ("type/Date", "type/DateTime", "type/DateTimeWithLocalTZ", "type/DateTimeWithTZ",
                  "type/Time", "type/TimeWithLocalTZ", "type/Instant")
LEGACY_ALLOWED = {"source-table", "source_table"}
MBQL5_ALLOWED = {"source-table", "lib/type"}


def supported(model: Card) -> bool:
    """Is the model's query exactly one table, with no clause?"""
    query = model.dataset_query or {}
    if model.table_id is None or not isinstance(query, dict):
        return False
    if isinstance(query.get("stages"), list):
        stages = query["stages"]
        return len(stages) == 1 and isinstance(stages[0], dict) and set(stages[0]) <= MBQL5_ALLOWED
    inner = query.get("query")
    return isinstance(inner, dict) and set(inner) <= LEGACY_ALLOWED


def table_of(session: Session, model: Card) -> tuple[Table, list[Field]]:
    """The model's table and its active fields (400 when the model does not qualify)."""
    if not supported(model):
        raise Invalid("Implicit actions are not supported for models with clauses.")
    table = session.get(Table, model.table_id)
    if table is None:
        raise Invalid("Implicit actions are not supported for models with clauses.")
    fields = list(session.scalars(select(Field).where(Field.table_id == table.id, Field.active.is_(True),
                                                      Field.parent_id.is_(None)).order_by(Field.database_position,
                                                                                          Field.id)))
    return table, fields


def is_pk(field: Field) -> bool:
    return field.semantic_type == "type/PK"


def parameter_type(base_type: str | None) -> str:
    if base_type in NUMBER_TYPES:
        return "number"
    if base_type in TEMPORAL_TYPES:
        return "date"
    if base_type == "type/Boolean":
        return "boolean"
    return "text"


def _usable(field: Field) -> bool:
    # Structured and unknown columns cannot be written back from a form (Metabase leaves them out too).
    return not field.nfc_path and field.base_type not in (None, "type/*", "type/JSON", "type/Structured")


def derived(fields: list[Field], kind: str | None) -> list[dict]:
    """The parameters of an implicit action of `kind` on these fields."""
    slugs = [slugify(f.name) for f in fields]
    if len(set(slugs)) != len(slugs):
        return []
    out = []
    for field in fields:
        if not _usable(field):
            continue
        pk = is_pk(field)
        if kind == "row/delete" and not pk:
            continue
        if kind == "row/create" and (field.database_is_auto_increment or (pk and not field.database_required)):
            continue
        slug = slugify(field.name)
        out.append({"id": slug, "display-name": field.display_name, "target": ["variable", ["template-tag", slug]],
                    "type": parameter_type(field.base_type),
                    "required": bool(field.database_required or (pk and kind in ("row/update", "row/delete"))),
                    "is-auto-increment": bool(field.database_is_auto_increment)})
    return out


def enrich(session: Session, model: Card | None, out: dict[str, Any]) -> None:
    """An implicit action's JSON with its derived parameters and form settings (Metabase's enrich-action)."""
    if model is None or not supported(model):
        return
    _, fields = table_of(session, model)
    saved = {p.get("id"): p for p in out.get("parameters") or [] if isinstance(p, dict)}
    params = [{**p, **{k: v for k, v in saved.get(p["id"], {}).items() if k != "type"}}
              for p in derived(fields, out.get("kind"))]
    if not params:
        return
    out["parameters"] = params
    settings = dict(out.get("visualization_settings") or {})
    stored = settings.get("fields") if isinstance(settings.get("fields"), dict) else {}
    by_slug = {slugify(f.name): f for f in fields}
    settings["fields"] = {
        p["id"]: {"id": p["id"], "hidden": False, **stored.get(p["id"], {}),
                  "title": by_slug[p["id"]].display_name, "placeholder": by_slug[p["id"]].display_name,
                  "fieldType": "number" if p["type"] == "number" else "string",
                  "inputType": {"number": "number", "date": "date", "boolean": "boolean"}.get(p["type"], "string"),
                  "order": i, "required": p["required"]}
        for i, p in enumerate(params)}
    out["visualization_settings"] = settings
