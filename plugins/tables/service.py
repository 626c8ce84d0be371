"""Tables plugin logic: listing and describing tables, editing their metadata, field order, FKs,
related tables and their field values."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb import memo, rows
from core.appdb.models import Database, Dimension, Field, Table, User
from core.content import related as core_related
from core.content import segments
from core.content.metadata import (
    database_json,
    dimension_json,
    field_json,
    ordered_fields,
    table_json,
)
from core.driver import crypto
from core.http.errors import Invalid, check_404
from core.policy import data_access
from core.query import restricted_values as restricted
from core.sync import field_values
from core.sync import schema as sync

EDITABLE = ("display_name", "entity_type", "visibility_type", "field_order", "description", "caveats",
            "points_of_interest", "show_in_getting_started")


def _db_json(state, database: Database, with_details: bool) -> dict:
    driver = state.drivers.get(database.engine)
    details = None
    if with_details:
        try:
            details = crypto.mask_details(driver, crypto.decrypt_details(database.details) if database.details else {})
        except ValueError:
            details = {}
    return database_json(database, driver, details)


def _readable_table(session: Session, user: User, table_id: int) -> Table:
    table = check_404(session.get(Table, table_id))
    data_access.check_read(session, user, table.db_id, table.id)
    return table


def _editable_table(session: Session, user: User, table_id: int) -> Table:
    table = check_404(session.get(Table, table_id))
    data_access.check_edit_data_model(session, user, table.db_id, table.id)
    return table


def list_tables(session: Session, state, user: User) -> list[dict]:
    """Every active table the caller may read, each with its database (details masked, for managers)."""
    by_database: dict[int, list[Table]] = {}
    for table in session.scalars(select(Table).where(Table.active.is_(True)).order_by(Table.name, Table.id)):
        by_database.setdefault(table.db_id, []).append(table)
    readable: set[int] = set()
    databases: dict[int, dict] = {}
    for db_id, tables in by_database.items():
        visible = data_access.readable_tables(session, user, db_id, tables)
        if not visible:
            continue
        readable.update(t.id for t in visible)
        database = session.get(Database, db_id)
        databases[db_id] = _db_json(state, database, data_access.can_manage(session, user, db_id))
    tables = sorted((t for ts in by_database.values() for t in ts if t.id in readable), key=lambda t: (t.name, t.id))
    return [{**table_json(t), "db": databases[t.db_id]} for t in tables]


def _pk_field_id(session: Session, table_id: int) -> int | None:
    return session.scalar(select(Field.id).where(Field.table_id == table_id, Field.semantic_type == "type/PK",
                                                 Field.active.is_(True)).order_by(Field.database_position))


def get_table(session: Session, state, user: User, table_id: int, editable: bool = False) -> dict:
    table = _editable_table(session, user, table_id) if editable else _readable_table(session, user, table_id)
    database = session.get(Database, table.db_id)
    return {**table_json(table), "db": _db_json(state, database, data_access.can_manage(session, user, database.id)),
            "pk_field": _pk_field_id(session, table_id)}


def _field_dict(field: Field, targets: dict[int, Field], dimensions: dict[int, Dimension],
                names: dict[int, Field]) -> dict:
    data = field_json(field)
    target = targets.get(field.fk_target_field_id) if field.fk_target_field_id else None
    data["target"] = field_json(target) if target is not None else None
    dimension = dimensions.get(field.id)
    data["dimensions"] = [dimension_json(dimension)] if dimension is not None else []
    name_field = names.get(field.table_id)
    data["name_field"] = field_json(name_field) if name_field is not None and field.semantic_type == "type/PK" else None
    return data


def query_metadata(session: Session, state, user: User, table_id: int, include_sensitive: bool,
                   include_hidden: bool, editable: bool) -> dict:
    """The table with its database (no details), fields, FK targets, dimensions, name fields, segments
    and the metrics the caller may read. The question builder asks for every table it opens: all but the
    metrics is kept per table, arguments and visible columns while the tables read are unchanged
    (core.appdb.memo); the caller's rights are checked on every request."""
    table = check_404(rows.get(session, Table, table_id))
    if editable:
        data_access.check_edit_data_model(session, user, table.db_id, table.id)
        readable = None
    else:
        data_access.check_read(session, user, table.db_id, table.id)
        readable = restricted.readable_columns(session, user, table)  # a sandbox's question may drop columns
    key = ("table query_metadata", table_id, include_sensitive, include_hidden,
           None if readable is None else tuple(sorted(readable)))
    shown = memo.get_or_compute(session, key, lambda: _metadata(session, state, table, include_sensitive,
                                                                include_hidden, readable))
    return {**shown, "metrics": segments.table_metrics(session, user, [table.id])[table.id], "measures": []}


def _metadata(session: Session, state, table: Table, include_sensitive: bool, include_hidden: bool,
              readable: set[str] | None) -> dict:
    database = session.get(Database, table.db_id)
    query = select(Field).where(Field.table_id == table.id, Field.active.is_(True))
    hidden = [v for v, shown in (("sensitive", include_sensitive), ("hidden", include_hidden)) if not shown]
    if hidden:
        query = query.where(Field.visibility_type.not_in(hidden))
    fields = list(session.scalars(query))
    if readable is not None:
        fields = [f for f in fields if f.name in readable]
    target_ids = {f.fk_target_field_id for f in fields if f.fk_target_field_id}
    targets = {f.id: f for f in session.scalars(select(Field).where(Field.id.in_(target_ids)))} if target_ids else {}
    dimensions = {d.field_id: d for d in session.scalars(
        select(Dimension).where(Dimension.field_id.in_([f.id for f in fields])))} if fields else {}
    name_field = next((f for f in ordered_fields(table, fields) if f.semantic_type == "type/Name"), None)
    names = {table.id: name_field} if name_field is not None else {}
    data = {**table_json(table, schema_as_string=True), "db": _db_json(state, database, False)}
    data["fields"] = [_field_dict(f, targets, dimensions, names) for f in ordered_fields(table, fields)]
    data["segments"] = segments.table_segments(session, [table.id])[table.id]
    return data


def fks(session: Session, user: User, table_id: int) -> list[dict]:
    """Foreign keys elsewhere whose target is a field of this table."""
    table = _readable_table(session, user, table_id)
    own = {f.id: f for f in session.scalars(select(Field).where(Field.table_id == table.id, Field.active.is_(True)))}
    if not own:
        return []
    result = []
    origins = session.execute(select(Field, Table).join(Table, Field.table_id == Table.id).where(
        Field.fk_target_field_id.in_(list(own)), Field.active.is_(True), Table.active.is_(True)).order_by(Field.id))
    for origin, origin_table in origins:
        destination = own[origin.fk_target_field_id]
        result.append({
            "relationship": "Mt1",
            "origin_id": origin.id,
            "origin": {**field_json(origin), "table": table_json(origin_table)},
            "destination_id": destination.id,
            "destination": {**field_json(destination), "table": table_json(table)},
        })
    return result


def related(session: Session, user: User, table_id: int) -> dict:
    """Metabase's related entities of a table (core.content.related)."""
    return core_related.for_table(session, user, _readable_table(session, user, table_id))


def _apply(table: Table, changes: dict) -> None:
    for key, value in changes.items():
        if key not in EDITABLE:
            continue
        if key == "display_name" and value is None:
            continue
        if key == "field_order" and value is None:
            value = "database"
        if key == "show_in_getting_started" and value is None:
            value = False
        setattr(table, key, value)


def update_table(session: Session, user: User, table_id: int, changes: dict) -> dict:
    table = _editable_table(session, user, table_id)
    _apply(table, changes)
    session.commit()
    return table_json(table)


def update_tables(session: Session, user: User, ids: list[int], changes: dict) -> list[dict]:
    """PUT /api/table/: the same changes to every listed table, in one transaction."""
    tables = []
    for table_id in dict.fromkeys(ids):
        tables.append(_editable_table(session, user, table_id))
    for table in tables:
        _apply(table, changes)
    session.commit()
    return [table_json(t) for t in tables]


def reorder_fields(session: Session, user: User, table_id: int, field_ids: list[int]) -> dict:
    """PUT /api/table/:id/fields/order: custom positions from the order of the ids."""
    table = _editable_table(session, user, table_id)
    fields = {f.id: f for f in session.scalars(select(Field).where(Field.table_id == table.id))}
    if len(set(field_ids)) != len(field_ids) or any(fid not in fields for fid in field_ids):
        raise Invalid({"field_order": "Every id must be a distinct field of this table."})
    for position, field_id in enumerate(field_ids):
        fields[field_id].custom_position = position
    table.field_order = "custom"
    session.commit()
    return {"success": True}


def discard_values(session: Session, user: User, table_id: int) -> dict:
    table = check_404(session.get(Table, table_id))
    data_access.check_manage(session, user, table.db_id)
    field_values.discard(session, list(session.scalars(select(Field.id).where(Field.table_id == table.id))))
    session.commit()
    return {"status": "success"}


def rescan_values(session: Session, user: User, table_id: int) -> dict:
    table = check_404(session.get(Table, table_id))
    data_access.check_manage(session, user, table.db_id)
    field_ids = list(session.scalars(select(Field.id).where(Field.table_id == table.id)))
    sync.start(table.db_id, job="values", field_ids=field_ids)
    return {"status": "success"}
