"""Implicit actions: row/create, row/update and row/delete on a model's table (Metabase's
build-implicit-query and its sql-jdbc row actions).

Request values are keyed by the slugified field names of the derived parameters; each maps to its
column. The statement is a SQLAlchemy Core construct on a table described from the stored Field rows
(names come from the metadata, never from the request) with every value a bound parameter, run in one
writable transaction (writes.py). update and delete need the single primary key's value and must touch
exactly one row, else the transaction rolls back and the answer is a 400 with the row count.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.appdb.models import Card, Database, Field
from core.content.collections import slugify
from core.http.errors import Invalid, check_404
from core.query import processor
from core.query import restricted_values as restricted
from core.query.context import timeout_seconds

from . import writes
from .errors import ActionFailed, check_no_extra
from .implicit_params import is_pk, table_of


def _plan(session: Session, model: Card, shown: dict, values: dict, kind: str):
    table, fields = table_of(session, model)
    slugs = [slugify(f.name) for f in fields]
    if len(set(slugs)) != len(slugs):
        raise Invalid("Cannot execute implicit action on a table with ambiguous column names.")
    pks = [f for f in fields if is_pk(f)]
    if len(pks) != 1:
        raise Invalid("Must execute implicit action on a table with a single primary key.")
    params = {p.get("id") for p in shown.get("parameters") or [] if isinstance(p, dict)}
    by_slug = {slugify(f.name): f for f in fields if slugify(f.name) in params}
    check_no_extra(values, list(by_slug))
    # The client does not reliably leave out blank optional values (Metabase #29049): nulls are dropped.
    row = {by_slug[k].name: v for k, v in values.items() if v is not None}
    pk = pks[0]
    if kind in ("row/update", "row/delete") and row.get(pk.name) is None:
        raise Invalid(f'Missing primary key parameter: "{slugify(pk.name)}"')
    return table, fields, pk, row


def _sa_table(table, fields: list[Field], pk: Field) -> sa.Table:
    # Only an integer key is typed: it lets an engine without RETURNING report the new row's key.
    key_type = sa.BigInteger() if pk.base_type in ("type/Integer", "type/BigInteger") else sa.types.NullType()
    columns = [sa.Column(f.name, key_type if f.id == pk.id else sa.types.NullType(), primary_key=f.id == pk.id)
               for f in fields]
    return sa.Table(table.name, sa.MetaData(), *columns, schema=table.schema or None)


def run(session: Session, model: Card, shown: dict, values: dict, user=None) -> dict:
    kind = shown.get("kind")
    table, fields, pk, row = _plan(session, model, shown, values, kind)
    if kind != "row/delete" and not (row if kind == "row/create" else {k: v for k, v in row.items() if k != pk.name}):
        raise Invalid("Implicit parameters must be provided.")
    if kind in ("row/update", "row/delete") and restricted.covers(session, user, table):
        # A sandboxed user updates and deletes only rows they can see (core.query.restrictions).
        if not restricted.has_row(session, user, table, pk, row[pk.name]):
            raise ActionFailed(f"Sorry, the row you're trying to {kind[4:]} doesn't exist")
    target = _sa_table(table, fields, pk)
    database = check_404(session.get(Database, table.db_id))
    with writes.transaction(database, timeout_seconds(session, database)) as conn:
        if kind == "row/create":
            return {"created-row": _create(conn, target, row)}
        key = target.c[pk.name] == row.pop(pk.name)
        if kind == "row/update":
            changed = conn.execute(sa.update(target).where(key).values(row)).rowcount
            _exactly_one(changed, "update")
            return {"rows-updated": [1]}
        changed = conn.execute(sa.delete(target).where(key)).rowcount
        _exactly_one(changed, "delete")
        return {"rows-deleted": [1]}


def _create(conn, target: sa.Table, row: dict) -> dict:
    if conn.dialect.insert_returning:
        created = conn.execute(sa.insert(target).values(row).returning(*target.c)).mappings().one()
        return dict(created)
    result = conn.execute(sa.insert(target).values(row))
    key = result.inserted_primary_key
    pk = next(iter(target.primary_key.columns))
    value = key[0] if key and key[0] is not None else row.get(pk.name)
    found = conn.execute(sa.select(target).where(pk == value)).mappings().first()
    return dict(found) if found is not None else row


def _exactly_one(count: int, verb: str) -> None:
    if count == 1:
        return
    if count == 0:
        raise writes.Rollback(ActionFailed(f"Sorry, the row you're trying to {verb} doesn't exist"))
    raise writes.Rollback(ActionFailed(f"Sorry, this would {verb} {count:,} rows, but you can only act on 1"))


def current_values(session: Session, user, model: Card, shown: dict, values: dict) -> dict[str, Any]:
    """The row the primary key names, as {parameter id: value} for the action's visible parameters,
    read through the query processor as the model (prefilling a form with stale data would be bad, so
    not from the result cache)."""
    table, fields, pk, row = _plan(session, model, shown, values, shown.get("kind"))
    query = {"database": table.db_id, "type": "query",
             "query": {"source-table": table.id, "filter": ["=", ["field", pk.id, None], row[pk.name]], "limit": 1}}
    envelope, status = processor.run_query(session, user, query, context="action", card_id=model.id)
    if status >= 300:
        raise Invalid(envelope.get("error") or "Error fetching values.")
    data = envelope.get("data") or {}
    rows = data.get("rows") or []
    fields_settings = (shown.get("visualization_settings") or {}).get("fields") or {}
    hidden = {k for k, f in fields_settings.items() if isinstance(f, dict) and f.get("hidden")}
    exposed = {p.get("id") for p in shown.get("parameters") or [] if isinstance(p, dict)} - hidden
    if not rows:
        return {}
    return {slugify(col["name"]): value for col, value in zip(data.get("cols") or [], rows[0])
            if slugify(col["name"]) in exposed}
