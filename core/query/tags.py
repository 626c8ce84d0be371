"""What a native query's field-filter and snippet tags read from the app DB: the column a field filter
compares (qualified as the engine names it, read through the field's coercion) and a snippet's text
once the data-access gate lets it in. They back the native resolvers a run uses
(core.query.preparation) and those of query actions.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Field, Table, User
from core.http.types import BIGINT_MAX

from . import access
from . import native as N
from . import parameters as P
from .errors import QueryFailed


def field_info(session: Session, driver, dimension: Any, alias: str | None = None) -> N.FieldInfo:
    """The column of a field-filter tag, qualified as the engine names it (schema.table.column), read
    through the field's coercion strategy as MBQL reads it (core.query.coercion)."""
    from sqlglot import exp

    from .coercion import coerce

    ref = P.field_target(["dimension", dimension]) if isinstance(dimension, list) else None
    field_id = ref[1] if ref else None
    if isinstance(field_id, bool) or not isinstance(field_id, int) or not 0 < field_id <= BIGINT_MAX:
        raise QueryFailed(f"Invalid field filter dimension: {dimension!r}", "invalid-query")
    row = session.get(Field, field_id)
    if row is None:
        raise QueryFailed(f"Field {field_id} does not exist.", "invalid-query")
    table = session.get(Table, row.table_id)
    if alias:
        column = exp.column(row.name, table=alias, quoted=True)
    else:
        column = exp.column(row.name, table=table.name, db=table.schema or None, quoted=True)
    column, _ = coerce(driver, column, row.coercion_strategy, row.base_type, row.name)
    return N.FieldInfo(column, row.effective_type or row.base_type)


def snippet_text(session: Session, user: User | None, snippet_id: int | None, name: str, saved: bool) -> str:
    """A snippet's text, once the data-access gate lets it into this query."""
    from core.appdb.models import NativeQuerySnippet

    known = isinstance(snippet_id, int) and not isinstance(snippet_id, bool) and 0 < snippet_id <= BIGINT_MAX
    row = session.get(NativeQuerySnippet, snippet_id) if known else None
    if row is None:
        row = session.scalar(select(NativeQuerySnippet).where(NativeQuerySnippet.name == name))
    if row is None:
        raise QueryFailed(f"Snippet {name!r} does not exist.", "invalid-query")
    access.snippet(session, user, row.collection_id, saved=saved)
    return row.content
