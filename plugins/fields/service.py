"""Fields plugin logic: one field's metadata and edits, its stored values and their human-readable
names, its dimension (remapping), and questions answered by its database (summary, search,
remapped value). Queries on the source database are sqlglot trees; request values are literals.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from sqlglot import exp

from core.appdb.models import Database, Dimension, Field, FieldValues, Table, User
from core.appdb.models.base import new_entity_id
from core.content import field_lookups as lookups
from core.content import related as core_related
from core.content.metadata import database_json, dimension_json, field_json, table_json
from core.http.errors import Invalid, check_404
from core.policy import data_access
from core.query import restricted_values as restricted
from core.sync import field_values
from core.sync import schema as sync
from core.sync.field_values import column, query_rows, table_expression
from core.sync.semantic_types import COERCIONS, coercible

SHOULD_HAVE_VALUES = ("list", "auto-list")


def _field(session: Session, user: User, field_id: int, edit: bool = False) -> tuple[Field, Table]:
    field = check_404(session.get(Field, field_id))
    table = session.get(Table, field.table_id)
    if edit:
        data_access.check_edit_data_model(session, user, table.db_id, table.id)
    else:
        data_access.check_read(session, user, table.db_id, table.id)
    return field, table


def field_details(session: Session, state, field: Field, table: Table) -> dict:
    """A field with its table (and database, without details), FK target, dimensions and name field."""
    data = field_json(field)
    database = session.get(Database, table.db_id)
    data["table"] = {**table_json(table), "db": database_json(database, state.drivers.get(database.engine))}
    target = session.get(Field, field.fk_target_field_id) if field.fk_target_field_id else None
    data["target"] = field_json(target) if target is not None else None
    dimension = session.scalar(select(Dimension).where(Dimension.field_id == field.id))
    data["dimensions"] = [dimension_json(dimension)] if dimension is not None else []
    name_field = None
    if field.semantic_type == "type/PK":
        name_field = session.scalar(select(Field).where(Field.table_id == table.id, Field.semantic_type == "type/Name",
                                                        Field.active.is_(True)).order_by(Field.database_position))
    data["name_field"] = field_json(name_field) if name_field is not None else None
    return data


def get_field(session: Session, state, user: User, field_id: int) -> dict:
    field, table = _field(session, user, field_id)
    return field_details(session, state, field, table)


def update_field(session: Session, state, user: User, field_id: int, changes: dict) -> dict:
    field, table = _field(session, user, field_id, edit=True)
    values_were_listed = field.has_field_values in SHOULD_HAVE_VALUES
    if "fk_target_field_id" in changes and changes["fk_target_field_id"] is not None:
        target = session.get(Field, changes["fk_target_field_id"])
        if target is None:
            raise Invalid({"fk_target_field_id": "There is no field with this id."})
    for key in ("display_name", "description", "caveats", "points_of_interest", "settings", "nfc_path",
                "json_unfolding", "fk_target_field_id"):
        if key in changes:
            if key in ("display_name", "json_unfolding") and changes[key] is None:
                continue
            setattr(field, key, changes[key])
    if "visibility_type" in changes:
        field.visibility_type = changes["visibility_type"] or "normal"
    if "has_field_values" in changes:
        field.has_field_values = changes["has_field_values"]
    if changes.get("coercion_strategy") and not coercible(changes["coercion_strategy"], field.base_type):
        # Metabase's answer: the strategy cannot read this column's values (UNIX times need numbers, ...).
        raise Invalid("Incompatible coercion strategy.")
    if "coercion_strategy" in changes:
        field.coercion_strategy = changes["coercion_strategy"]
        field.effective_type = COERCIONS.get(field.coercion_strategy, field.base_type) if field.coercion_strategy \
            else field.base_type
    if "semantic_type" in changes:
        old = field.semantic_type
        field.semantic_type = changes["semantic_type"]
        if old == "type/FK" and field.semantic_type != "type/FK" and "fk_target_field_id" not in changes:
            # No longer a foreign key: it points nowhere, and an FK remapping has nothing to show.
            field.fk_target_field_id = None
            session.execute(delete(Dimension).where(Dimension.field_id == field.id, Dimension.type == "external"))
    listed = field.has_field_values in SHOULD_HAVE_VALUES
    if values_were_listed and not listed:
        field_values.discard(session, [field.id])
    session.commit()
    if listed and not values_were_listed:
        sync.rescan_values(state, table.db_id, [field.id])
        session.expire_all()
    return field_details(session, state, session.get(Field, field_id), table)


def related(session: Session, user: User, field_id: int) -> dict:
    """Metabase's related entities of a field (core.content.related)."""
    field, _ = _field(session, user, field_id)
    return core_related.for_field(session, user, field)


# --------------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------------


def values(session: Session, user: User, field_id: int) -> dict:
    field, table = _field(session, user, field_id)
    if restricted.covers(session, user, table):  # a sandboxed table: the values of the user's rows only
        return restricted.values(session, user, field, table)
    # A remap target in a table the user may not read is not shown: the plain values are.
    return lookups.values(session, field, table, _reader(session, user),
                          lambda remap_id: _readable_field(session, user, remap_id))


def _reader(session: Session, user: User):
    return lambda table: data_access.check_read(session, user, table.db_id, table.id)


def _readable_field(session: Session, user: User, field_id: int) -> bool:
    field = session.get(Field, field_id)
    table = session.get(Table, field.table_id) if field is not None else None
    return table is not None and data_access.can_read(session, user, table.db_id, table.id)


def update_values(session: Session, user: User, field_id: int, pairs: list[list[Any]]) -> dict:
    """POST /api/field/:id/values: set human-readable names (all values named, or none)."""
    field, _ = _field(session, user, field_id, edit=True)
    if field.has_field_values not in SHOULD_HAVE_VALUES and field.base_type != "type/Boolean":
        raise Invalid("You can only update the human readable values of a mapped values of a Field whose value of "
                      "`has_field_values` is `list` or whose 'base_type' is 'type/Boolean'.")
    named = [len(p) == 2 for p in pairs]
    if any(named) and not all(named):
        raise Invalid({"values": "If remapped values are specified, they must be specified for all field values."})
    row = session.scalar(select(FieldValues).where(FieldValues.field_id == field.id, FieldValues.type == "full"))
    if row is None:
        row = FieldValues(field_id=field.id, type="full", hash_key="", has_more_values=False)
        session.add(row)
    row.values = [p[0] for p in pairs]
    row.human_readable_values = [p[1] for p in pairs] if pairs and all(named) else None
    session.commit()
    return {"status": "success"}


def discard_values(session: Session, user: User, field_id: int) -> dict:
    field, table = _field(session, user, field_id)
    data_access.check_manage(session, user, table.db_id)
    field_values.discard(session, [field.id])
    session.commit()
    return {"status": "success"}


def rescan_values(session: Session, state, user: User, field_id: int) -> dict:
    field, table = _field(session, user, field_id)
    data_access.check_manage(session, user, table.db_id)
    session.commit()
    if not sync.rescan_values(state, table.db_id, [field.id]):
        raise Invalid("The values of this field could not be read from its database.")
    return {"status": "success"}


# --------------------------------------------------------------------------------------------------
# Dimension
# --------------------------------------------------------------------------------------------------


def set_dimension(session: Session, user: User, field_id: int, kind: str, name: str,
                  human_readable_field_id: int | None) -> dict:
    field, table = _field(session, user, field_id, edit=True)
    if kind == "external":
        if human_readable_field_id is None:
            raise Invalid({"human_readable_field_id": "Foreign key based remappings require a human readable field id."})
        remap = session.get(Field, human_readable_field_id)
        if remap is None:
            raise Invalid({"human_readable_field_id": "There is no field with this id."})
        lookups.lookup(session, field, table, remap, _reader(session, user))
    else:
        human_readable_field_id = None
    dimension = session.scalar(select(Dimension).where(Dimension.field_id == field.id))
    if dimension is None:
        dimension = Dimension(field_id=field.id, entity_id=new_entity_id())
        session.add(dimension)
    dimension.type = kind
    dimension.name = name
    dimension.human_readable_field_id = human_readable_field_id
    session.commit()
    return dimension_json(dimension)


def delete_dimension(session: Session, user: User, field_id: int) -> None:
    field, _ = _field(session, user, field_id, edit=True)
    session.execute(delete(Dimension).where(Dimension.field_id == field.id))
    session.commit()


# --------------------------------------------------------------------------------------------------
# Questions asked of the source database
# --------------------------------------------------------------------------------------------------


def summary(session: Session, user: User, field_id: int) -> list:
    field, table = _field(session, user, field_id)
    if restricted.covers(session, user, table):
        return restricted.summary(session, user, field, table)
    tree = exp.select(exp.Count(this=exp.Star()), exp.Count(this=exp.Distinct(expressions=[column(field.name)]))) \
        .from_(table_expression(table))
    rows = query_rows(session.get(Database, table.db_id), tree, 1)
    count, distincts = rows[0] if rows else (0, 0)
    return [["count", count], ["distincts", distincts]]


def remapping(session: Session, user: User, field_id: int, remapped_id: int, value: str) -> list:
    """GET /api/field/:id/remapping/:remapped-id: [value, remapped value] ([value] when none)."""
    field, table = _field(session, user, field_id)
    remapped = check_404(session.get(Field, remapped_id))
    lookup_table, key = lookups.lookup(session, field, table, remapped, _reader(session, user))
    if restricted.covers(session, user, lookup_table):
        return restricted.remapping(session, user, key, remapped, lookup_table, lookups.typed(key, value))
    return lookups.remapping(session, field, table, remapped, value, _reader(session, user))


def search(session: Session, user: User, field_id: int, search_id: int, value: str, limit: int | None) -> list:
    """Values whose search field starts with `value` (case-insensitive), as [value, search value] pairs."""
    field, table = _field(session, user, field_id)
    search_field = check_404(session.get(Field, search_id))
    lookup_table, key = lookups.lookup(session, field, table, search_field, _reader(session, user))
    if restricted.covers(session, user, lookup_table):
        return restricted.search(session, user, key, search_field, lookup_table, value,
                                 min(limit or lookups.SEARCH_LIMIT, lookups.SEARCH_LIMIT))
    return lookups.search(session, field, table, search_field, value, limit, _reader(session, user))
