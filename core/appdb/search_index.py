"""The search index: one `search_index` row (model, model_id, text) per searchable object, kept in step
with the content by triggers on the content tables, and the statement that reads its candidates.

The database keeps the index, not the Python code: triggers see every write (ORM flushes, bulk
updates, sync's Core inserts, foreign-key cascades, other processes), in the same transaction. The
text is what search's prefilter matched before the index: each searchable column lowered with the
database's own lower(), joined by newlines (a query token never holds whitespace, so no match spans
two columns). Search scores the candidates from the content tables, so a stale extra candidate costs
a little time and never shows; a missing one would hide a result, hence triggers.

Engines differ in how the text is searched (AppBackend.search_index): SQLite keeps an FTS5 table with
the trigram tokenizer beside it (substring matches, as LIKE; tokens shorter than three characters use
LIKE on the index table), PostgreSQL a pg_trgm GIN index that serves LIKE itself (a plain scan of the
index table when the extension cannot be created). An engine without one (AppBackend.search_index
None) keeps no index: search filters the content tables with LIKE as it did before.

A kind's triggers are created by the migration of whoever owns its table: the core's for cards,
collections, databases, tables and segments, a plugin's for its own kinds (dashboards), with
`create_triggers` and `fill`; and every process declares them with `indexed(table)`, since the change
counters (core.appdb.changes) cannot see what a trigger writes.
"""
from __future__ import annotations

import functools
import logging

from sqlalchemy import Integer, String, column, text

from . import memo
from .db import backend_of
from .search_engines import CORE_KINDS, ENGINE_OBJECTS, TABLE, PlainIndex, indexed  # noqa: F401  (the index's names)

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------------
# Migrations: creating the table, a kind's triggers, filling
# --------------------------------------------------------------------------------------------------


def index_of(bind) -> PlainIndex | None:
    """The search index of the app DB behind `bind` (an engine, connection or session); None: none."""
    if hasattr(bind, "get_bind"):
        bind = bind.get_bind()
    return backend_of(bind.dialect.name).search_index


def setup(bind) -> None:
    """The engine's text index over the (new) search_index table; an index the database refuses
    (pg_trgm not installable) is logged and searches scan the table."""
    index = index_of(bind)
    for statement in index.setup_sql() if index is not None else ():
        try:
            with bind.begin_nested():
                bind.exec_driver_sql(statement)
        except Exception as error:  # noqa: BLE001 - any refusal leaves a working, slower search
            log.warning("search index: %s failed (%s); searches scan the index table", statement.split("(")[0], error)


def create_triggers(bind, model: str, table: str, columns) -> None:
    """Keep `model`'s rows of search_index in step with `table` from now on, and fill them."""
    index = index_of(bind)
    if index is None:
        return
    for statement in index.trigger_sql(model, table, columns):
        bind.exec_driver_sql(statement)
    fill(bind, model, table, columns)


def drop_triggers(bind, model: str, table: str) -> None:
    index = index_of(bind)
    for statement in index.drop_trigger_sql(model, table) if index is not None else ():
        bind.exec_driver_sql(statement)
    bind.execute(text(f"DELETE FROM {TABLE} WHERE model = :model"), {"model": model})


def fill(bind, model: str, table: str, columns) -> None:
    """(Re)write `model`'s index rows from its table: what the triggers would have written."""
    bind.execute(text(f"DELETE FROM {TABLE} WHERE model = :model"), {"model": model})
    body = " || :newline || ".join(f"lower(coalesce({c}, ''))" for c in columns)
    bind.execute(text(f"INSERT INTO {TABLE} (model, model_id, text) SELECT '{model}', id, {body} FROM {table}"),
                 {"newline": "\n"})


# --------------------------------------------------------------------------------------------------
# Reading: the candidates of a query
# --------------------------------------------------------------------------------------------------


@functools.cache
def _statement(index: PlainIndex, long_tokens: int, short_tokens: int):
    # A textual SELECT (with its columns), not a bare text(): the session then knows it reads, and
    # core.appdb.memo keeps answering for the rest of the request.
    sql = f"SELECT model, model_id FROM {TABLE} WHERE {index.match_sql(long_tokens, short_tokens)}"
    return text(sql).columns(column("model", String), column("model_id", Integer))


def candidates(session, tokens: list[str]) -> dict[str, frozenset[int]] | None:
    """model -> ids of the indexed objects whose text holds any of `tokens` (normalised, lower case),
    in one statement, kept while the index is unchanged (core.appdb.memo: the same for every user);
    None when the app DB keeps no index."""
    index = index_of(session)
    if index is None:
        return None
    tokens = tuple(dict.fromkeys(tokens))
    return memo.get_or_compute(session, ("search index", tokens), lambda: _read(session, index, tokens), alone=True)


def _read(session, index: PlainIndex, tokens: tuple[str, ...]) -> dict[str, frozenset[int]]:
    long_tokens = [t for t in tokens if len(t) >= 3]
    short_tokens = [t for t in tokens if len(t) < 3]
    statement = _statement(index, len(long_tokens), len(short_tokens))
    out: dict[str, set[int]] = {}
    for model, model_id in session.execute(statement, index.match_params(long_tokens, short_tokens)):
        out.setdefault(model, set()).add(model_id)
    return {model: frozenset(ids) for model, ids in out.items()}


