"""Row and column restrictions of tables for one viewer (hook `restrict_tables`), applied where the
compiler reads a table: the one place every MBQL path meets (sources, explicit joins, implicit FK
joins, card and model sources at any depth, pivots, exports, parameter and field values, x-rays).

`policy(session, viewer, database_id)` asks the plugins once per run and returns a RowPolicy; the
compiler's Context holds it and writes a restricted table as a subquery under the table's own alias
(`SELECT * FROM t WHERE <filters>`, or the restriction's source query filtered), so every column
reference the rest of the query makes stays valid, and a column the source does not return is not
there to be read (column security: the compiler lists and resolves only the source's columns).
The source query is compiled without the policy (it is the administrator's definition of what the
viewer sees, as Metabase runs a sandbox's question) and never through the viewer's remaps.

A restricted viewer runs no native SQL on the database (their own, a saved native question, a native
card inside MBQL): only the restriction's own source may be native. Result caches key on `key`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from flask import current_app
from sqlglot import exp

from core.assembly.records import TableRestriction
from core.http.errors import Forbidden, Invalid
from core.policy import permissions

NATIVE_REFUSED = "Native queries are not allowed on a database where your data is sandboxed."


@dataclass
class RowPolicy:
    """The restrictions of one viewer on one database, by table id; empty when none applies."""

    database_id: int
    by_table: dict[int, TableRestriction] = field(default_factory=dict)
    # table id -> the stages standing for the table (set by core.query.preparation, cards expanded).
    stages: dict[int, list] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.by_table)

    def get(self, table_id: int) -> TableRestriction | None:
        return self.by_table.get(table_id)

    @property
    def key(self) -> str:
        """What tells this viewer's answers apart from another's (empty when unrestricted)."""
        return "|".join(f"{t}:{r.key}" for t, r in sorted(self.by_table.items()))

    def check(self, table_id: int) -> TableRestriction | None:
        """The table's restriction, refusing the query when the restriction says the table cannot be read."""
        restriction = self.by_table.get(table_id)
        if restriction is not None and restriction.error:
            raise Invalid(restriction.error)
        return restriction


EMPTY = RowPolicy(0)


def policy(session, viewer, database_id: int) -> RowPolicy:
    """The viewer's restrictions on the database, from every plugin implementing `restrict_tables`."""
    try:
        hook = current_app.extensions["tessera"].pm.hook.restrict_tables
    except (RuntimeError, KeyError):
        hook = None
    if hook is None:
        return RowPolicy(database_id)
    if not hook.get_hookimpls():
        # "sandboxed" rows while no plugin applies them: fail closed rather than show every row.
        if permissions.is_sandboxed(session, viewer):
            raise Forbidden("Your data access is sandboxed, and sandboxes are not available on this server.")
        if getattr(viewer, "tenant", None):
            raise Forbidden("The embedding token carries user attributes, and sandboxes are not available on "
                            "this server.")
        return RowPolicy(database_id)
    by_table: dict[int, TableRestriction] = {}
    for answer in hook(session=session, viewer=viewer, database_id=database_id):
        for restriction in answer or ():
            if restriction.table_id in by_table:
                # Two plugins restricting one table: nobody decided how they combine, so the table is refused.
                restriction = TableRestriction(restriction.table_id, key="refused", label=restriction.label,
                                               error=f"Table {restriction.table_id} is restricted twice "
                                                     f"({by_table[restriction.table_id].label}, {restriction.label}).")
            by_table[restriction.table_id] = restriction
    return RowPolicy(database_id, by_table)


def refuse_native(row_policy: RowPolicy | None) -> None:
    if row_policy:
        raise Forbidden(NATIVE_REFUSED)


def has_native(stages: list) -> bool:
    """Does a query's stages (joins included, at any depth) read native SQL?"""
    for stage in stages:
        if stage.native is not None:
            return True
        if any(has_native(join.stages) for join in stage.joins):
            return True
    return False


def prepare_stages(session, viewer, row_policy: RowPolicy) -> None:
    """The stages that stand for each restricted table, its source's cards expanded (the source is the
    administrator's: its cards need only the data not be blocked for the viewer, as a saved question's)."""
    from .cards import expand
    from .mbql import normalize
    from .model import Query, Stage

    for table_id, restriction in row_policy.by_table.items():
        if restriction.error:
            continue
        filters = _normalized_filters(table_id, row_policy.database_id, restriction.filters)
        if restriction.source is None:
            row_policy.stages[table_id] = [Stage(source_table=table_id, filters=filters)]
            continue
        source = normalize(dict(restriction.source))
        if source.database != row_policy.database_id:
            raise Invalid(f"The restriction of table {table_id} ({restriction.label}) reads another database.")
        source = expand(session, viewer, Query(database=source.database, stages=source.stages), saved=True)
        stages = source.stages
        if stages[0].native is not None:
            stages[0].native = {**stages[0].native, "parameters": [dict(p) for p in restriction.parameters]}
        if filters:
            stages = [*stages, Stage(filters=filters)]
        row_policy.stages[table_id] = stages


def _normalized_filters(table_id: int, database_id: int, filters) -> list:
    """A restriction's filter clauses in the canonical form (a plugin writes any MBQL dialect)."""
    from .mbql import normalize

    if not filters:
        return []
    clause = ["and", *[list(f) for f in filters]] if len(filters) > 1 else list(filters[0])
    query = normalize({"database": database_id, "type": "query", "query": {"source-table": table_id, "filter": clause}})
    return query.stages[0].filters


@dataclass
class Restricted:
    """A restricted table compiled: its SELECT and the names of the columns the viewer may read
    (None: every column of the table)."""

    tree: exp.Select
    columns: frozenset[str] | None


def compile_restricted(context: Any, table) -> Restricted:
    """The SELECT standing for `table` under the context's policy, compiled once per query."""
    row_policy = context.row_policy
    restriction = row_policy.check(table.id)
    cached = context.restricted.get(table.id)
    if cached is not None:
        return cached
    stages = row_policy.stages.get(table.id)
    if stages is None:
        raise Invalid(f"Table {table.name!r} is restricted ({restriction.label}) and cannot be read here.")
    # The source is compiled as its administrator wrote it: no restriction of its own tables, no remaps.
    saved_policy, saved_remapper = context.row_policy, context.remapper
    context.row_policy, context.remapper = None, None
    try:
        # The compiler fills defaults into the stages it is given: a copy, so kept policies stay as prepared.
        tree, cols = context.compile_stages(context, copy.deepcopy(stages))
    finally:
        context.row_policy, context.remapper = saved_policy, saved_remapper
    if restriction.source is None:
        # Every stored column stays readable (hidden and sensitive ones included, as in the table).
        tree.set("expressions", [exp.Star()])
        restricted = Restricted(tree, None)
    else:
        restricted = Restricted(tree, frozenset(c.alias for c in cols))
    context.restricted[table.id] = restricted
    return restricted
