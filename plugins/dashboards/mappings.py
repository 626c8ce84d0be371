"""Which field a dashboard filter reaches through a dashcard's parameter mapping, and who may add one.

A mapping's target is `["dimension", <field ref>]` (an MBQL column: `["field", id, opts]`, legacy
`["field-id", id]`, `["fk->", a, b]`), `["dimension", ["template-tag", name]]` (a native field filter,
whose field is the card's template tag `dimension`) or `["variable", ["template-tag", name]]` (a plain
native variable: no field). Metabase's rule (0.41+): adding a mapping that reaches a field needs query
permission on that field's table.
"""
from __future__ import annotations

from typing import Any, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Field, Table, User
from core.http.errors import Forbidden, NotFound
from core.policy import permissions


def _head(value: Any) -> str | None:
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0].lstrip(":").lower().replace("_", "-")
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63 else None


def template_tags(dataset_query: Any) -> dict:
    """A native query's template tags (legacy `native.template-tags` or MBQL 5's first stage)."""
    if not isinstance(dataset_query, dict):
        return {}
    stages = dataset_query.get("stages")
    holder = stages[0] if isinstance(stages, list) and stages and isinstance(stages[0], dict) else \
        dataset_query.get("native")
    if not isinstance(holder, dict):
        return {}
    tags = holder.get("template-tags", holder.get("template_tags"))
    return tags if isinstance(tags, dict) else {}


def ref_field_id(ref: Any, dataset_query: Any = None, depth: int = 0) -> int | None:
    """The field id a reference names (None for a column named by text, an expression or a variable)."""
    head = _head(ref)
    if head is None or depth > 8:
        return None
    if head in ("field", "field-id") and len(ref) > 1:
        # MBQL 5 puts the options second: ["field", {...}, id].
        return _int(ref[1]) or (_int(ref[2]) if len(ref) > 2 and isinstance(ref[1], dict) else None)
    if head == "fk->" and len(ref) > 2:
        return ref_field_id(ref[2], dataset_query, depth + 1)
    if head == "template-tag" and len(ref) > 1:
        name = ref[1].get("id") if isinstance(ref[1], dict) else ref[1]
        tag = template_tags(dataset_query).get(name) if isinstance(name, str) else None
        if isinstance(tag, dict) and tag.get("type") == "dimension":
            return ref_field_id(tag.get("dimension"), dataset_query, depth + 1)
    return None


def target_field_id(target: Any, dataset_query: Any) -> int | None:
    if _head(target) == "dimension" and len(target) > 1:
        return ref_field_id(target[1], dataset_query)
    return None


def tag_field_ids(dataset_query: Any) -> set[int]:
    """Fields of a native query's field-filter template tags (Metabase shows them in param_fields too)."""
    found = set()
    for tag in template_tags(dataset_query).values():
        if isinstance(tag, dict) and tag.get("type") == "dimension":
            field_id = ref_field_id(tag.get("dimension"))
            if field_id is not None:
                found.add(field_id)
    return found


def check_new_mappings(session: Session, user: User, mappings: Iterable[tuple[dict, int | None]]) -> None:
    """403 unless `user` may query every table the mappings reach. Each item is (mapping, the dashcard's
    card id); a mapping's own `card_id` wins. A mapping on a card that does not exist is a 404."""
    field_ids: set[int] = set()
    queries: dict[int, Any] = {}
    for mapping, dashcard_card_id in mappings:
        card_id = _int(mapping.get("card_id")) or dashcard_card_id
        if card_id is None:
            continue
        if card_id not in queries:
            card = session.get(Card, card_id) if card_id < 2**31 else None
            if card is None:
                raise NotFound(f"Card {card_id} does not exist or does not have a valid query.")
            queries[card_id] = card.dataset_query
        field_id = target_field_id(mapping.get("target"), queries[card_id])
        if field_id is not None and field_id < 2**31:
            field_ids.add(field_id)
    if not field_ids:
        return
    tables = session.execute(select(Table.id, Table.db_id, Table.name).where(
        Table.id.in_(select(Field.table_id).where(Field.id.in_(field_ids)))).order_by(Table.id)).all()
    for table_id, db_id, name in tables:
        if not permissions.can_query(session, user, db_id, table_id=table_id):
            raise Forbidden(f"You must have data permissions to add a parameter referencing the Table {name!r}.")
