"""Values a card's parameter can take (GET /api/card/:id/params/:key/values and .../search/:query):
a static list, another card's column, or the field the parameter filters; at most 1000."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Field, FieldValues, Table, User
from core.http.errors import Invalid, NotFound
from core.query import access, processor
from core.query import parameters as P
from core.query import restricted_values as restricted
from core.query.errors import QueryFailed

from .running import runnable_card

VALUES_LIMIT = 1000


def values(session: Session, user: User, card_id: int, param_key: str, search: str | None = None) -> dict:
    card = runnable_card(session, user, card_id)
    return values_of(session, user, card, card.parameters or [], param_key, search,
                     lambda source_id: runnable_card(session, user, source_id))


def values_of(session: Session, user, card: Card, declared: list, param_key: str, search: str | None,
              source_card) -> dict:
    """The values of one of `declared` (the card's parameters) for `user` (or a shared card's
    core.query.access.SharedGrant); `source_card(id)` loads a values card the caller may use."""
    param = next((p for p in declared if isinstance(p, dict) and p.get("id") == param_key), None)
    if param is None:
        raise NotFound(f"Card {card.id} does not have a parameter with the ID \"{param_key}\".")
    source = param.get("values_source_type")
    config = param.get("values_source_config") or {}
    if source == "static-list":
        rows = [v if isinstance(v, list) else [v] for v in config.get("values") or []]
        more = False
    elif source == "card":
        rows, more = _card_values(session, user, config, search, source_card)
    else:
        field_id = _field_of(card, param)
        if field_id is None:
            return {"values": [], "has_more_values": False}
        rows, more = _field_values(session, user, field_id, search)
    if search:
        needle = search.lower()
        rows = [r for r in rows if r and r[0] is not None and needle in str(r[0]).lower()]
    if len(rows) > VALUES_LIMIT:
        rows, more = rows[:VALUES_LIMIT], True
    return {"values": rows, "has_more_values": more}


def _field_of(card: Card, param: dict) -> int | None:
    """The field a parameter filters: a field-filter template tag's dimension, or an MBQL target."""
    target = param.get("target")
    tag = P.template_tag_target(target)
    if tag is not None:
        tags = ((card.dataset_query or {}).get("native") or {}).get("template-tags") or {}
        definition = tags.get(tag[1]) if isinstance(tag[1], str) else None
        if isinstance(definition, dict) and definition.get("type") == "dimension":
            ref = P.field_target(["dimension", definition.get("dimension")])
            return ref[1] if ref and isinstance(ref[1], int) else None
        return None
    ref = P.field_target(target)
    return ref[1] if ref and isinstance(ref[1], int) else None


def _field_values(session: Session, user: User, field_id: int, search: str | None) -> tuple[list, bool]:
    field = session.get(Field, field_id)
    if field is None:
        return [], False
    access.field(session, user, field)
    table = session.get(Table, field.table_id)
    stored = session.scalar(select(FieldValues).where(FieldValues.field_id == field.id, FieldValues.type == "full"))
    # Stored values hold every row's; a sandboxed table's are queried (core.query.restricted_values).
    if stored is not None and stored.values is not None and not search and not restricted.covers(session, user, table):
        human = stored.human_readable_values or []
        return ([[v, human[i]] if i < len(human) else [v] for i, v in enumerate(stored.values)],
                bool(stored.has_more_values))
    inner: dict = {"source-table": table.id, "breakout": [["field", field.id, None]], "limit": VALUES_LIMIT + 1}
    if search:
        inner["filter"] = ["contains", ["field", field.id, None], search, {"case-sensitive": False}]
    return _distinct(session, user, {"database": table.db_id, "type": "query", "query": inner})


def _card_values(session: Session, user: User, config: dict, search: str | None, source_card) -> tuple[list, bool]:
    source_id = config.get("card_id")
    if not isinstance(source_id, int):
        raise Invalid("The parameter's values card is not set.")
    source = source_card(source_id)
    ref = config.get("value_field")
    name = _column_name(source, ref)
    inner: dict = {"source-table": f"card__{source.id}",
                   "breakout": [["field", name, {"base-type": _base_type(source, name)}]], "limit": VALUES_LIMIT + 1}
    if search:
        inner["filter"] = ["contains", ["field", name, {"base-type": _base_type(source, name)}], search,
                           {"case-sensitive": False}]
    return _distinct(session, user, {"database": source.database_id, "type": "query", "query": inner})


def _column_name(card: Card, ref: Any) -> str:
    names = [c.get("name") for c in card.result_metadata or [] if isinstance(c, dict)]
    if isinstance(ref, list) and len(ref) > 1:
        if isinstance(ref[1], str) and ref[1] in names:
            return ref[1]
        for column in card.result_metadata or []:
            if column.get("id") == ref[1]:
                return column["name"]
    raise Invalid("The parameter's value_field is not a column of its values card.")


def _base_type(card: Card, name: str) -> str:
    for column in card.result_metadata or []:
        if column.get("name") == name:
            return column.get("base_type") or "type/*"
    return "type/*"


def _distinct(session: Session, user: User, query: dict) -> tuple[list, bool]:
    try:
        result = processor.open_query(session, user, query, context="values", disable_remaps=True,
                                      filter_values=True)
        with result:
            rows = [[row[0]] for row in result if row[0] is not None]
    except QueryFailed as exc:
        raise Invalid(exc.message) from None
    return rows[:VALUES_LIMIT], len(rows) > VALUES_LIMIT
