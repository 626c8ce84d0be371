"""A field's values, search, remapping and summary for a viewer whose rows of the table are restricted
(core.query.restrictions): the same answers as core.content.field_lookups and the stored FieldValues
give everyone else, but read by MBQL queries through the processor, so that the restriction applies
(only values from the viewer's rows). Callers ask `covers` first and keep their usual path otherwise.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from core.appdb.models import Field, Table
from core.http.errors import Invalid

from . import restrictions
from .errors import QueryFailed

VALUES_LIMIT = 1000


def covers(session: Session, viewer, table: Table) -> bool:
    """Is the viewer's reading of `table` restricted (stored values would show other rows' values)?"""
    return restrictions.policy(session, viewer, table.db_id).get(table.id) is not None


def _rows(session: Session, viewer, table: Table, inner: dict) -> list[tuple]:
    from .processor import open_query

    query = {"database": table.db_id, "type": "query", "query": {"source-table": table.id, **inner}}
    try:
        with open_query(session, viewer, query, context="values", disable_remaps=True) as result:
            return [tuple(row) for row in result]
    except QueryFailed as exc:
        raise Invalid(exc.message) from None


def values(session: Session, viewer, field: Field, table: Table) -> dict:
    """{field_id, values, has_more_values}: the distinct values of the viewer's rows."""
    found = _rows(session, viewer, table, {"breakout": [["field", field.id, None]], "limit": VALUES_LIMIT + 1})
    return {"field_id": field.id, "values": [[r[0]] for r in found[:VALUES_LIMIT]],
            "has_more_values": len(found) > VALUES_LIMIT}


def search(session: Session, viewer, key: Field, search_field: Field, table: Table, value: str, limit: int) -> list:
    """[key value, search value] pairs ([value] when both are one field) whose search value starts with `value`."""
    same = key.id == search_field.id
    refs = [["field", key.id, None]] + ([] if same else [["field", search_field.id, None]])
    found = _rows(session, viewer, table, {
        "breakout": refs, "limit": limit,
        "filter": ["starts-with", ["field", search_field.id, None], value, {"case-sensitive": False}]})
    return [[r[0]] if same else [r[0], r[1]] for r in found]


def remapping(session: Session, viewer, key: Field, remapped: Field, table: Table, value: Any) -> list:
    """[value, remapped value] from the viewer's rows ([value] when none holds it)."""
    found = _rows(session, viewer, table, {"fields": [["field", remapped.id, None]], "limit": 1,
                                           "filter": ["=", ["field", key.id, None], value]})
    return [value, found[0][0]] if found else [value]


def has_row(session: Session, viewer, table: Table, key: Field, value: Any) -> bool:
    """Does the viewer see the row whose `key` is `value` (an action may change only such a row)?"""
    found = _rows(session, viewer, table, {"aggregation": [["count"]], "filter": ["=", ["field", key.id, None], value]})
    return bool(found and found[0][0])


def summary(session: Session, viewer, field: Field, table: Table) -> list:
    found = _rows(session, viewer, table, {"aggregation": [["count"], ["distinct", ["field", field.id, None]]]})
    count, distincts = found[0] if found else (0, 0)
    return [["count", count], ["distincts", distincts]]


def readable_columns(session: Session, viewer, table: Table) -> frozenset[str] | None:
    """The names of the table's columns the viewer may read (None: every column), for the table's
    metadata (Metabase's sandboxed query_metadata hides the columns a sandbox's question drops)."""
    if not covers(session, viewer, table):
        return None
    import datetime as dt

    from .compiler import compile_stages
    from .preparation import prepare
    from .refs import Context

    try:
        ctx = prepare(session, viewer, {"database": table.db_id, "type": "query", "query": {"source-table": table.id}},
                      context="values")
        context = Context(session=session, driver=ctx.driver, database_id=table.db_id, now=dt.datetime.now(),
                          compile_stages=compile_stages, row_policy=ctx.row_policy)
        columns = restrictions.compile_restricted(context, table).columns
    except QueryFailed as exc:
        raise Invalid(exc.message) from None
    return columns
