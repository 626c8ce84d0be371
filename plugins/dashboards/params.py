"""The values a dashboard filter can take: GET /api/dashboard/:id/params/:key/values, .../search/:query
and .../remapping.

A filter's values are those of every field it is mapped to on the dashboard's cards (an MBQL
target's field, a native field filter's dimension), only fields whose data the caller may see.
Other filters given in the query string restrict them (linked filters): their values become
parameters of the values query, on their own fields, joined through foreign keys (links.py). The
queries run through core.query.processor like any other. Labels come from the field's remapping:
a human-readable field (FK remapping) or the names stored with its field values. A filter with a
values_source_config (a static list or a card's column) takes its values from there.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Dimension, Field, FieldValues, Table, User
from core.http.errors import Invalid
from core.query import access, processor
from core.query import parameters as P
from core.query import restricted_values as restricted
from core.query.errors import QueryFailed

from . import links
from .lookup import readable_dashboard
from .models import Dashboard, DashboardCard

VALUES_LIMIT = 1000
TEXT_TYPES = ("type/Text", "type/TextLike")


# --------------------------------------------------------------------------------------------------
# Which fields a filter is wired to
# --------------------------------------------------------------------------------------------------


def declared_parameter(dashboard: Dashboard, param_key: str) -> dict:
    for param in dashboard.parameters or []:
        if isinstance(param, dict) and param.get("id") == param_key:
            return param
    raise Invalid(f"Dashboard does not have a parameter with the ID \"{param_key}\".")


def target_field_id(card: Card | None, target: Any) -> int | None:
    """The field a mapping target filters: an MBQL dimension's field id, or a native field filter's."""
    tag = P.template_tag_target(target)
    if tag is not None:
        if card is None or not isinstance(tag[1], str):
            return None
        query = card.dataset_query if isinstance(card.dataset_query, dict) else {}
        native = query.get("native") if isinstance(query.get("native"), dict) else \
            ((query.get("stages") or [{}])[0] if isinstance(query.get("stages"), list) else {})
        definition = (native.get("template-tags") or {}).get(tag[1]) if isinstance(native, dict) else None
        if not isinstance(definition, dict) or definition.get("type") != "dimension":
            return None
        target = ["dimension", definition.get("dimension")]
    ref = P.field_target(target)
    if ref and isinstance(ref[1], str) and card is not None:
        # A column of a card source (a model) named by name: the field its result column comes from.
        ref = ["field", next((c.get("id") for c in card.result_metadata or []
                              if isinstance(c, dict) and c.get("name") == ref[1]), None)]
    return ref[1] if ref and isinstance(ref[1], int) and not isinstance(ref[1], bool) else None


def mapped_fields(session: Session, user: User, dashboard: Dashboard, param_key: str) -> list[Field]:
    """The readable fields the filter drives, in dashcard order, each once."""
    ids: list[int] = []
    cards: dict[int, Card | None] = {}
    dashcards = session.scalars(select(DashboardCard).where(DashboardCard.dashboard_id == dashboard.id)
                                .order_by(DashboardCard.row, DashboardCard.col, DashboardCard.id))
    for dashcard in dashcards:
        for mapping in dashcard.parameter_mappings or []:
            if not isinstance(mapping, dict) or mapping.get("parameter_id") != param_key:
                continue
            card_id = mapping.get("card_id", dashcard.card_id)
            if isinstance(card_id, int) and card_id not in cards:
                cards[card_id] = session.get(Card, card_id)
            field_id = target_field_id(cards.get(card_id), mapping.get("target"))
            if field_id is not None and field_id not in ids:
                ids.append(field_id)
    readable = access.readable_field_ids(session, user, ids)
    rows = {f.id: f for f in session.scalars(select(Field).where(Field.id.in_(readable)))} if readable else {}
    return [rows[i] for i in ids if i in rows]


# --------------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------------


def values(session: Session, user: User, dashboard_id: int, param_key: str, constraints: dict[str, list[str]],
           search: str | None = None) -> dict:
    return values_of(session, user, readable_dashboard(session, user, dashboard_id), param_key, constraints, search)


def values_of(session: Session, user, dashboard: Dashboard, param_key: str, constraints: dict[str, list[str]],
              search: str | None = None) -> dict:
    """A filter's values for `user` (or a shared dashboard's core.query.access.SharedGrant)."""
    param = declared_parameter(dashboard, param_key)
    source = param.get("values_source_type")
    config = param.get("values_source_config") if isinstance(param.get("values_source_config"), dict) else {}
    if source == "static-list":
        listed = config.get("values") if isinstance(config.get("values"), list) else []
        rows, more = [v if isinstance(v, list) else [v] for v in listed], False
    elif source == "card":
        rows, more = _card_values(session, user, config, search)
    else:
        limits = _constraints(session, user, dashboard, param_key, constraints)
        rows, more = [], False
        for field in mapped_fields(session, user, dashboard, param_key):
            found, has_more = _field_values(session, user, field, limits, search)
            rows.extend(found)
            more = more or has_more
        rows = _distinct(rows)
    if search:
        needle = search.lower()
        rows = [r for r in rows if any(v is not None and needle in str(v).lower() for v in r)]
    if len(rows) > VALUES_LIMIT:
        rows, more = rows[:VALUES_LIMIT], True
    return {"values": rows, "has_more_values": more}


def _distinct(rows: list[list]) -> list[list]:
    """Rows from several fields, each value once (the first label wins), in value order."""
    seen: dict[Any, list] = {}
    for row in rows:
        key = row[0]
        if key not in seen or (len(row) > 1 and len(seen[key]) == 1):
            seen[key] = row
    return sorted(seen.values(), key=lambda r: (r[0] is None, type(r[0]).__name__, r[0]))


def _constraints(session: Session, user: User, dashboard: Dashboard, param_key: str,
                 given: dict[str, list[str]]) -> list[tuple[str, Any, list[Field]]]:
    """(type, value, fields) of each other filter with a value in the query string."""
    declared = {p["id"]: p for p in dashboard.parameters or [] if isinstance(p, dict) and isinstance(p.get("id"), str)}
    out = []
    for pid, raw in given.items():
        if pid == param_key or pid not in declared or P.is_empty(raw):
            continue
        value = raw if len(raw) > 1 else raw[0]
        kind = declared[pid].get("type")
        out.append((kind if isinstance(kind, str) else "category", value,
                    mapped_fields(session, user, dashboard, pid)))
    return out


def _external_remap(session: Session, user: User, field: Field) -> Field | None:
    """The readable human-readable field an FK remapping shows for `field`, if any."""
    dimension = session.scalar(select(Dimension).where(Dimension.field_id == field.id, Dimension.type == "external"))
    if dimension is None or not dimension.human_readable_field_id:
        return None
    if not access.readable_field_ids(session, user, [dimension.human_readable_field_id]):
        return None
    return session.get(Field, dimension.human_readable_field_id)


def _stored(session: Session, field: Field) -> FieldValues | None:
    row = session.scalar(select(FieldValues).where(FieldValues.field_id == field.id, FieldValues.type == "full"))
    return row if row is not None and row.values is not None else None


def _labels(stored: FieldValues | None) -> dict | None:
    """Names stored with the field values (Metabase's internal remapping)."""
    if stored is None or not stored.human_readable_values:
        return None
    return {v: n for v, n in zip(stored.values, stored.human_readable_values)}


def _remap_ref(field: Field, remap: Field) -> list:
    return ["field", remap.id, None if remap.table_id == field.table_id else {"source-field": field.id}]


def _field_values(session: Session, user: User, field: Field, limits: list, search: str | None) -> tuple[list, bool]:
    table = session.get(Table, field.table_id)
    remap = _external_remap(session, user, field)
    stored = _stored(session, field)
    labels = _labels(stored)
    # Stored values hold every row's; a sandboxed table's are queried (core.query.restricted_values).
    if not limits and not search and remap is None and stored is not None and not restricted.covers(session, user, table):
        rows = [[v, labels[v]] if labels and v in labels else [v] for v in stored.values]
        return rows, bool(stored.has_more_values)
    ref = ["field", field.id, None]
    inner: dict = {"source-table": table.id, "breakout": [ref] + ([_remap_ref(field, remap)] if remap else []),
                   "order-by": [["asc", ref]], "limit": VALUES_LIMIT + 1}
    if search and labels is None:
        searched = _remap_ref(field, remap) if remap else ref
        if remap is not None or (field.effective_type or field.base_type) in TEXT_TYPES:
            inner["filter"] = ["contains", searched, search, {"case-sensitive": False}]
    joins, parameters, edges = [], [], None
    for n, (kind, value, fields) in enumerate(limits):
        for other in fields:
            other_table = session.get(Table, other.table_id)
            if other_table is None or other_table.db_id != table.db_id:
                continue
            if edges is None:
                edges = links.fk_edges(session, table.db_id)
            chain = links.path(edges, table.id, other_table.id)
            if chain is None:
                continue
            added, opts = links.joins(chain, f"linked_{n}_{other.id}_")
            joins.extend(added)
            parameters.append({"type": kind, "value": value, "target": ["dimension", ["field", other.id, opts]]})
    if joins:
        inner["joins"] = joins
    rows = _run(session, user, {"database": table.db_id, "type": "query", "query": inner, "parameters": parameters})
    if labels:
        rows = [[r[0], labels[r[0]]] if r[0] in labels else [r[0]] for r in rows]
    return rows[:VALUES_LIMIT], len(rows) > VALUES_LIMIT


def _run(session: Session, user: User, query: dict) -> list[list]:
    try:
        result = processor.open_query(session, user, query, context="values", disable_remaps=True,
                                      filter_values=True)
        with result:
            return [list(row) for row in result if row[0] is not None]
    except QueryFailed as exc:
        raise Invalid(exc.message) from None


def _card_values(session: Session, user: User, config: dict, search: str | None) -> tuple[list, bool]:
    """The distinct values of a column of the source card; the processor's gate checks the card."""
    card_id = config.get("card_id")
    card = session.get(Card, card_id) if isinstance(card_id, int) and 0 < card_id < 2**31 else None
    if card is None or card.database_id is None:
        raise Invalid("The parameter's values card is not set.")
    ref = config.get("value_field")
    key = ref[1] if isinstance(ref, list) and len(ref) > 1 else None
    column = next((c for c in card.result_metadata or [] if isinstance(c, dict) and key is not None
                   and (c.get("name") == key or c.get("id") == key)), None)
    if column is None:
        raise Invalid("The parameter's value_field is not a column of its values card.")
    col_ref = ["field", column["name"], {"base-type": column.get("base_type") or "type/*"}]
    inner: dict = {"source-table": f"card__{card.id}", "breakout": [col_ref], "limit": VALUES_LIMIT + 1}
    if search:
        inner["filter"] = ["contains", col_ref, search, {"case-sensitive": False}]
    rows = _run(session, user, {"database": card.database_id, "type": "query", "query": inner})
    return rows[:VALUES_LIMIT], len(rows) > VALUES_LIMIT


# --------------------------------------------------------------------------------------------------
# Remapping: one value and its label
# --------------------------------------------------------------------------------------------------


def remapping(session: Session, user: User, dashboard_id: int, param_key: str, value: str) -> list:
    """[value, label] for the filter's value, or [value] when nothing names it."""
    return remapping_of(session, user, readable_dashboard(session, user, dashboard_id), param_key, value)


def remapping_of(session: Session, user, dashboard: Dashboard, param_key: str, value: str) -> list:
    """A filter value's label for `user` (or a shared dashboard's core.query.access.SharedGrant)."""
    param = declared_parameter(dashboard, param_key)
    config = param.get("values_source_config") if isinstance(param.get("values_source_config"), dict) else {}
    if param.get("values_source_type") == "static-list":
        for entry in config.get("values") if isinstance(config.get("values"), list) else []:
            if isinstance(entry, list) and len(entry) > 1 and str(entry[0]) == value:
                return entry[:2]
        return [value]
    for field in mapped_fields(session, user, dashboard, param_key):
        try:
            typed = P.coerce(value, field.effective_type or field.base_type)
        except QueryFailed:
            continue
        remap = _external_remap(session, user, field)
        if remap is not None:
            table = session.get(Table, field.table_id)
            rows = _run(session, user, {"database": table.db_id, "type": "query", "query": {
                "source-table": table.id, "fields": [["field", field.id, None], _remap_ref(field, remap)],
                "filter": ["=", ["field", field.id, None], typed], "limit": 1}})
            if rows:
                return [typed, rows[0][1]]
        labels = _labels(_stored(session, field))
        if labels and typed in labels:
            return [typed, labels[typed]]
    return [value]
