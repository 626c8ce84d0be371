"""A field's values as a filter widget asks for them: its listed values (remapped through an FK
remapping when it has one), the values whose search field starts with a text, and one value's
remapped display value. Shared by GET /api/field/:id/... (plugins.fields) and the shared objects' field
routes (core.content.public), which differ only in who may read which table.

Queries on the source database are sqlglot trees; request values are literals. `check(table)` is the
caller's rule for reading a second table (an FK target): it raises to refuse.
"""
from __future__ import annotations

from typing import Any, Callable

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlglot import exp

from core.appdb.models import Database, Dimension, Field, Table
from core.http.errors import Invalid
from core.sync import field_values
from core.sync.analyze import kind
from core.sync.field_values import column, query_rows, table_expression

SEARCH_LIMIT = 1000
SHOULD_HAVE_VALUES = ("list", "auto-list")

Check = Callable[[Table], None]


def external_dimension(session: Session, field: Field) -> Dimension | None:
    return session.scalar(select(Dimension).where(Dimension.field_id == field.id, Dimension.type == "external"))


def values(session: Session, field: Field, table: Table, check: Check, remap_readable: Callable[[int], bool]) -> dict:
    """{field_id, values, has_more_values}: [id, name] pairs read through an FK remapping whose target
    `remap_readable` allows, else the stored values."""
    dimension = external_dimension(session, field)
    if (dimension is not None and dimension.human_readable_field_id and field.has_field_values in SHOULD_HAVE_VALUES
            and remap_readable(dimension.human_readable_field_id)):
        return remapped_values(session, field, table, dimension, check)
    return field_values.values_json(session, field)


def remapped_values(session: Session, field: Field, table: Table, dimension: Dimension, check: Check) -> dict:
    """The values of an FK field with an external remapping: [id, name] pairs from the target table."""
    remap = session.get(Field, dimension.human_readable_field_id)
    lookup_table, key = lookup(session, field, table, remap, check)
    tree = (exp.select(column(key.name), column(remap.name)).distinct().from_(table_expression(lookup_table))
            .where(exp.Not(this=exp.Is(this=column(key.name), expression=exp.Null())))
            .order_by(column(key.name)).limit(field_values.DISTINCT_LIMIT + 1))
    rows = query_rows(session.get(Database, lookup_table.db_id), tree, field_values.DISTINCT_LIMIT + 1)
    pairs = [[r[0], None if r[1] is None else str(r[1])] for r in rows[:field_values.DISTINCT_LIMIT]]
    return {"field_id": field.id, "values": pairs, "has_more_values": len(rows) > field_values.DISTINCT_LIMIT}


def lookup(session: Session, field: Field, table: Table, other: Field, check: Check) -> tuple[Table, Field]:
    """The table holding `other` and the field of it that carries `field`'s values: `field` itself when
    both share a table, its FK target when `other` lives in the target's table (which `check` must
    allow too)."""
    if other.table_id == field.table_id:
        return table, field
    if field.fk_target_field_id:
        target = session.get(Field, field.fk_target_field_id)
        if target is not None and target.table_id == other.table_id:
            lookup_table = session.get(Table, target.table_id)
            check(lookup_table)
            return lookup_table, target
    raise Invalid("Invalid Request: the two fields are not in the same table or linked by a foreign key.")


def typed(field: Field, value: str) -> Any:
    """A value from the URL as the field's type (a bound literal either way)."""
    if field.base_type in ("type/Integer", "type/BigInteger"):
        try:
            return int(value)
        except ValueError:
            raise Invalid({"value": "value must be an integer for this field."}) from None
    if field.base_type in ("type/Float", "type/Decimal", "type/Number"):
        try:
            return float(value)
        except ValueError:
            raise Invalid({"value": "value must be a number for this field."}) from None
    return value


def remapping(session: Session, field: Field, table: Table, remapped: Field, value: str, check: Check) -> list:
    """[value, remapped value] ([value] when none)."""
    lookup_table, key = lookup(session, field, table, remapped, check)
    value = typed(key, value)
    tree = (exp.select(column(remapped.name)).from_(table_expression(lookup_table))
            .where(exp.EQ(this=column(key.name), expression=exp.convert(value))).limit(1))
    rows = query_rows(session.get(Database, lookup_table.db_id), tree, 1)
    return [value, rows[0][0]] if rows else [value]


def search(session: Session, field: Field, table: Table, search_field: Field, value: str, limit: int | None,
           check: Check) -> list:
    """Values whose search field starts with `value` (case-insensitive), as [value, search value] pairs."""
    lookup_table, key = lookup(session, field, table, search_field, check)
    limit = min(limit or SEARCH_LIMIT, SEARCH_LIMIT)
    needle = value.lower()
    searched: exp.Expression = column(search_field.name)
    if kind(search_field.base_type) != "text":
        searched = exp.Cast(this=searched, to=exp.DataType.build("text"))
    starts = exp.EQ(this=exp.Substring(this=exp.Lower(this=searched), start=exp.Literal.number(1),
                                       length=exp.Literal.number(len(needle))),
                    expression=exp.Literal.string(needle))
    same = key.id == search_field.id
    columns = [column(key.name)] if same else [column(key.name), column(search_field.name)]
    tree = (exp.select(*columns).distinct().from_(table_expression(lookup_table)).where(starts)
            .order_by(column(search_field.name)).limit(limit))
    rows = query_rows(session.get(Database, lookup_table.db_id), tree, limit)
    return [[r[0]] if same else [r[0], r[1]] for r in rows]
