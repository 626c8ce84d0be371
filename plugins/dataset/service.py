"""/api/dataset logic: which processor call each endpoint makes, downloads and parameter values."""
from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Field, FieldValues, Table, User
from core.appdb.models import Query as QueryStats
from core.export.response import download_cap, exporter_for, pivots, query_download
from core.http.api import json_response
from core.http.errors import Invalid, NotFound
from core.policy import data_access, permissions
from core.query import access, processor
from core.query import pivot as pivot_query
from core.query import restricted_values as restricted
from core.query.context import query_hash
from core.query.errors import QueryFailed

VALUES_LIMIT = 1000


def run(session: Session, user: User, query: dict):
    body, status = processor.run_json(session, user, query, context="ad-hoc", ignore_cache=True)
    return json_response(orjson.Fragment(body), status)


def _download_level(session: Session, user: User, query: dict) -> str:
    """The caller's download level on the query's database (a card source's for -1337); "full" when
    the query cannot be read, whose run then fails with the reason."""
    database_id = access.database_of(session, query)
    if database_id is None:
        return "full"
    return permissions.download_level(session, user, database_id)


def export(session: Session, user: User, exporters: dict, export_format: str, query: Any, options: dict):
    """A streamed download of all rows (up to the absolute cap), or the failed-query body."""
    exporter = exporter_for(exporters, export_format)
    if not isinstance(query, dict):
        raise Invalid({"query": "value must be a valid JSON string."})
    cap = download_cap(_download_level(session, user, query))
    split = _pivot_split(query, options) if pivots(exporter, options) else None
    return query_download(session, user, exporter, export_format, query, api_context="ad-hoc", options=options,
                          pivot=split is not None, column_split=split, **cap)


def _pivot_split(query: dict, options: dict) -> dict | None:
    """The column split of an ad-hoc pivot table: its visualization settings' pivot_table.column_split,
    or the default split when only the query says it was a pivot (Metabase's `was-pivot`). None: not
    a pivot table, downloaded flat."""
    viz = options.get("visualization_settings") or {}
    if "pivot_table.column_split" in viz:
        split = viz["pivot_table.column_split"]
        if not isinstance(split, dict):
            raise Invalid({"visualization_settings": "pivot_table.column_split must be a map of rows, columns "
                                                     "and values."})
        return split
    return {} if query.get("was-pivot") is True else None


def native(session: Session, user: User, query: dict, pretty: bool):
    try:
        return processor.compile_native(session, user, query, pretty=pretty)
    except QueryFailed as exc:
        raise Invalid(exc.message) from None


def duration(session: Session, query: dict) -> dict:
    row = session.get(QueryStats, query_hash(query))
    return {"average": row.average_execution_time if row is not None else 0}


def pivot(session: Session, user: User, query: dict, rows: list[int] | None, cols: list[int] | None):
    envelope, status = pivot_query.run_pivot(session, user, query, rows, cols)
    return json_response(envelope, status)


def parameter_values(session: Session, user: User, parameter: dict, field_ids: list[int],
                     search: str | None = None) -> dict:
    """Distinct values of the fields behind a parameter (stored field values when synced, else a
    distinct query through the processor), optionally only those containing `search`."""
    values: list = []
    seen: set = set()
    has_more = False
    needle = search.lower() if search else None
    source = parameter.get("values_source_type")
    config = parameter.get("values_source_config") or {}
    if source == "static-list":
        listed = [v if isinstance(v, list) else [v] for v in (config.get("values") or [])]
        found = [v for v in listed if needle is None or needle in str(v[-1]).lower()]
        return {"values": found[:VALUES_LIMIT], "has_more_values": len(found) > VALUES_LIMIT}
    if source == "card":
        return _card_values(session, user, config, needle)
    for field_id in field_ids:
        field = session.get(Field, field_id)
        if field is None:
            raise NotFound()
        found, more = _field_values(session, user, field, search)
        has_more = has_more or more
        for value in found:
            key = value[0]
            if needle is not None and needle not in str(key).lower():
                continue
            if key not in seen:
                seen.add(key)
                values.append(value)
    values.sort(key=lambda v: (v[0] is None, str(type(v[0])), v[0] if v[0] is not None else 0))
    if len(values) > VALUES_LIMIT:
        values, has_more = values[:VALUES_LIMIT], True
    return {"values": values, "has_more_values": has_more}


def _field_values(session: Session, user: User, field: Field, search: str | None) -> tuple[list, bool]:
    # No saved question or dashboard authorises these values: reading them is reading the table.
    table = session.get(Table, field.table_id)
    data_access.check_read(session, user, table.db_id, table.id)
    stored = session.scalar(select(FieldValues).where(FieldValues.field_id == field.id, FieldValues.type == "full"))
    # Stored values hold every row's; a sandboxed table's are queried (core.query.restricted_values).
    if stored is not None and stored.values is not None and not search and not restricted.covers(session, user, table):
        human = stored.human_readable_values or []
        rows = [[v, human[i]] if i < len(human) else [v] for i, v in enumerate(stored.values)]
        return rows, bool(stored.has_more_values)
    inner: dict = {"source-table": table.id, "breakout": [["field", field.id, None]], "limit": VALUES_LIMIT + 1}
    if search:
        inner["filter"] = ["contains", ["field", field.id, None], search, {"case-sensitive": False}]
    query = {"database": table.db_id, "type": "query", "query": inner}
    try:
        result = processor.open_query(session, user, query, context="values", disable_remaps=True)
        rows = [[row[0]] for row in result]
    except QueryFailed as exc:
        raise Invalid(exc.message) from None
    more = len(rows) > VALUES_LIMIT
    return rows[:VALUES_LIMIT], more


def _card_values(session: Session, user: User, config: dict, needle: str | None) -> dict:
    """Distinct values of one column of a saved question (values_source_type "card")."""
    from core.appdb.models import Card

    card_id = config.get("card_id")
    card = session.get(Card, card_id) if isinstance(card_id, int) and 0 < card_id < 2**31 else None
    if card is None or card.archived:
        raise NotFound()
    access.card_source(session, user, card.id, card.database_id, saved=False)
    value_field = config.get("value_field")
    try:
        result = processor.open_query(session, user, card.dataset_query, context="values", card_id=card.id,
                                      disable_remaps=True)
        index = _column_index(result.cols, value_field)
        if index is None:
            result.close()
            raise Invalid({"value_field": "is not a column of the card"})
        distinct: dict = {}
        for row in result:
            value = row[index]
            if value is None or (needle is not None and needle not in str(value).lower()):
                continue
            distinct.setdefault(value, None)
            if len(distinct) > VALUES_LIMIT:
                result.close()
                break
    except QueryFailed as exc:
        raise Invalid(exc.message) from None
    values = [[v] for v in distinct]
    return {"values": values[:VALUES_LIMIT], "has_more_values": len(values) > VALUES_LIMIT}


def _column_index(cols: list[dict], ref: Any) -> int | None:
    """The column a value_field ref (["field", id | name, opts]) names."""
    if not isinstance(ref, list) or len(ref) < 2:
        return 0 if cols else None
    for i, col in enumerate(cols):
        if ref[1] in (col.get("id"), col.get("name")):
            return i
    return None
