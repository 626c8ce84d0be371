"""Stored field values: which fields get them, reading distinct values from the source database,
storing them with Metabase's limits, and the JSON of GET /api/field/:id/values.

Limits (compat/core.md 8): at most 1000 distinct values, entries over 100 characters skipped, 100,000
characters in all; when a limit is hit `has_more_values` is true.
"""
from __future__ import annotations

from typing import Any, Iterable

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session
from sqlglot import exp

from core.appdb.models import Field, FieldValues, Table, utcnow

DISTINCT_LIMIT = 1000
MAX_VALUE_LENGTH = 100
MAX_TOTAL_LENGTH = DISTINCT_LIMIT * MAX_VALUE_LENGTH
LIST_KINDS = ("list", "auto-list")
UNLISTABLE_VISIBILITY = ("retired", "sensitive", "hidden")


def eligible(field: Field) -> bool:
    """Whether a field's distinct values are kept (Metabase's field-should-have-field-values?)."""
    return (field.active and field.has_field_values in LIST_KINDS
            and field.visibility_type not in UNLISTABLE_VISIBILITY and field.preview_display is not False
            and field.base_type != "type/*")


def _sort_key(value: Any):
    return (0, value) if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, str(value))


def too_many(distinct: list[Any]) -> bool:
    """More distinct values than a list field keeps: an auto-list field then becomes a search field."""
    return sum(v is not None for v in distinct) > DISTINCT_LIMIT


def limit_values(distinct: Iterable[Any], complete: bool) -> tuple[list[Any], bool]:
    """Distinct non-null values within the limits, sorted, and whether some were left out."""
    kept: list[Any] = []
    total = 0
    has_more = not complete
    for value in distinct:
        if value is None:
            continue
        if isinstance(value, (bytes, bytearray, memoryview)):
            has_more = True
            continue
        if not isinstance(value, (str, int, float, bool)):
            value = str(value)
        length = len(str(value))
        if length > MAX_VALUE_LENGTH:
            has_more = True
            continue
        if len(kept) >= DISTINCT_LIMIT or total + length > MAX_TOTAL_LENGTH:
            has_more = True
            break
        kept.append(value)
        total += length
    try:
        kept.sort(key=_sort_key)
    except TypeError:
        kept.sort(key=str)
    return kept, has_more


def table_ref(name: str, schema: str | None) -> exp.Table:
    return exp.Table(this=exp.to_identifier(name, quoted=True),
                     db=exp.to_identifier(schema, quoted=True) if schema else None)


def table_expression(table: Table) -> exp.Table:
    return table_ref(table.name, table.schema)


def column(name: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(name, quoted=True))


def with_limit(tree: exp.Select, limit: int) -> exp.Select:
    """LIMIT as a node: sqlglot's .limit(n) parses the number as SQL text, which costs more than the query."""
    tree.set("limit", exp.Limit(expression=exp.Literal.number(limit)))
    return tree


def distinct_query(table: exp.Table, column_name: str, limit: int = DISTINCT_LIMIT + 1) -> exp.Select:
    col = column(column_name)
    return with_limit(exp.select(col).distinct().from_(table)
                      .where(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null()))), limit)


def fetch_distinct(driver, engine, table: exp.Table, column_name: str) -> tuple[list[Any], bool, bool]:
    """Distinct values of a column read from its database: kept values, has_more_values, too many."""
    sql = driver.to_sql(distinct_query(table, column_name))
    with driver.execute(engine, sql, {}, timeout=60, max_rows=DISTINCT_LIMIT + 1) as result:
        values = [row[0] for row in result.rows]
    return (*limit_values(values, complete=len(values) <= DISTINCT_LIMIT), too_many(values))


def query_rows(database, tree: exp.Expression, max_rows: int) -> list[tuple]:
    """Rows of a query (a sqlglot tree) on a registered database; its failure is a 400, not a 500."""
    from core.driver import connections
    from core.http.errors import Invalid

    driver = connections.driver_for(database)
    engine = connections.engine_for(database)
    try:
        with driver.execute(engine, driver.to_sql(tree), {}, timeout=60, max_rows=max_rows) as result:
            return list(result.rows)
    except Invalid:
        raise
    except Exception as exc:  # the source database's error is the answer
        raise Invalid(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__) from exc


def store(session: Session, field_id: int, values: list[Any], has_more: bool) -> FieldValues:
    """Save a field's full values, keeping human-readable names of values still present."""
    row = session.scalar(select(FieldValues).where(FieldValues.field_id == field_id, FieldValues.type == "full"))
    if row is None:
        row = FieldValues(field_id=field_id, type="full", hash_key="")
        session.add(row)
        row.human_readable_values = None
    elif row.human_readable_values and row.values:
        names = dict(zip(map(_hashable, row.values), row.human_readable_values))
        row.human_readable_values = [names.get(_hashable(v), str(v)) for v in values]
    row.values = values
    row.has_more_values = has_more
    return row


def store_many(session: Session, items: dict[int, tuple[list[Any], bool]]) -> None:
    """store() for many fields at once (a sync): one read, one bulk insert, one bulk update."""
    if not items:
        return
    existing: dict[int, tuple[int, list | None, list | None]] = {}
    ids = list(items)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for row_id, field_id, values, names in session.execute(
                select(FieldValues.id, FieldValues.field_id, FieldValues.values, FieldValues.human_readable_values)
                .where(FieldValues.field_id.in_(chunk), FieldValues.type == "full")):
            existing[field_id] = (row_id, values, names)
    now = utcnow()
    inserts, updates = [], []
    for field_id, (values, has_more) in items.items():
        if field_id not in existing:
            inserts.append({"field_id": field_id, "type": "full", "hash_key": "", "values": values,
                            "human_readable_values": None, "has_more_values": has_more,
                            "last_used_at": now, "created_at": now, "updated_at": now})
            continue
        row_id, old_values, old_names = existing[field_id]
        names = None
        if old_names and old_values:
            known = dict(zip(map(_hashable, old_values), old_names))
            names = [known.get(_hashable(v), str(v)) for v in values]
        updates.append({"id": row_id, "values": values, "human_readable_values": names,
                        "has_more_values": has_more, "updated_at": now})
    if inserts:
        from core.appdb.bulk import insert_rows

        insert_rows(session, FieldValues.__table__, inserts)
    if updates:
        session.execute(update(FieldValues), updates)


def _hashable(value: Any):
    return tuple(value) if isinstance(value, list) else value


def discard(session: Session, field_ids: list[int]) -> None:
    if field_ids:
        session.execute(delete(FieldValues).where(FieldValues.field_id.in_(field_ids)))


def values_json(session: Session, field: Field) -> dict:
    """GET /api/field/:id/values: 1-tuples, or [value, name] pairs when the values are remapped."""
    row = None
    if field.has_field_values in LIST_KINDS or field.base_type == "type/Boolean":
        row = session.scalar(select(FieldValues).where(FieldValues.field_id == field.id, FieldValues.type == "full"))
    if row is None:
        return {"field_id": field.id, "values": [], "has_more_values": False}
    values = row.values or []
    names = row.human_readable_values or []
    if names:
        pairs = [[v, n] for v, n in zip(values, names)]
    else:
        pairs = [[v] for v in values]
    return {"field_id": field.id, "values": pairs, "has_more_values": bool(row.has_more_values)}
