"""MBQL to SQL: the only place a structured query becomes SQL, always as a sqlglot AST.

`compile_query(session, query, driver)` walks the normalised stages (core.query.mbql) innermost
first; each stage is one SELECT whose FROM is a synced table or the previous stage as a subquery.
Table and column names come from the app DB's Table and Field rows looked up by id; values become
literals with sqlglot's `exp.convert`. The driver renders the tree (`driver.to_sql`) and supplies
the engine-dependent forms (core.driver.dialect). Alongside the tree the compiler returns the result
column metadata in SELECT order, shaped as Metabase's `data.cols`.

Concerns live in sibling modules: refs.py (sources, field references, joins), clauses.py (filters,
expressions, aggregations), autobucket.py (the default day unit, applied to the stages first).
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from sqlglot import exp

from core.driver.dialect import SUNDAY
from core.http.errors import Invalid

from .autobucket import auto_bucket
from .cards import apply_model_metadata
from .clauses import ClauseCompiler
from .macros import expand as expand_macros
from .model import Query, Stage, referenced_ids
from .natives import native_source
from .refs import Col, Context, QuerySource

__all__ = ["Compiled", "compile_query", "apply_limit"]


@dataclass
class Compiled:
    # The tree `sql` was rendered from, in place (the driver's passes applied, parent links dropped):
    # read it, never render it again.
    tree: exp.Select
    sql: str
    columns: list[dict]
    aggregated: bool
    params: dict = field(default_factory=dict)
    # Placeholder -> native stage, for the processor to splice in (core.query.cards.splice).
    natives: dict = field(default_factory=dict)


def apply_limit(tree: exp.Select, limit: int) -> exp.Select:
    """The tree with at most `limit` rows: an existing smaller LIMIT stays."""
    current = tree.args.get("limit")
    if current is not None:
        value = current.expression if isinstance(current, exp.Limit) else None
        if isinstance(value, exp.Literal) and int(value.this) <= limit:
            return tree
    return tree.limit(limit, copy=False)


def compile_query(session, query: Query, driver, limit: int | None = None, now: dt.datetime | None = None,
                  week_start: int = SUNDAY, remapper=None, row_policy=None) -> Compiled:
    """Compile every stage of `query`; `limit` caps the rows (the processor's row limit). `now` is the
    clock of relative filters (the current UTC time when not given); `week_start` is the start-of-week
    setting as a Python weekday, which the processor reads per query. `remapper`
    (core.query.remaps.ExternalRemaps) adds the columns of external remappings. `row_policy`
    (core.query.restrictions.RowPolicy) replaces each restricted table by what the viewer may read."""
    if query.stages[0].native is not None and len(query.stages) == 1:
        raise Invalid("Invalid MBQL: a native query is not compiled from MBQL; run it as a native query.")
    query = expand_macros(session, query)
    context = Context(session=session, driver=driver, database_id=query.database,
                      now=now or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None), week_start=week_start,
                      remapper=remapper, compile_stages=compile_stages, row_policy=row_policy)
    context.prefetch(*referenced_ids(query.stages))
    auto_bucket(query, context.field_types)
    tree, cols = compile_stages(context, query.stages)
    if remapper is not None:
        remapper.annotate()
    if limit is not None:
        tree = apply_limit(tree, limit)
    params = bind_colon_literals(tree)
    # The tree was built by this call and nothing reads it once rendered: rendered without a copy.
    return Compiled(tree=tree, sql=driver.to_sql(tree, owned=True), columns=[c.meta for c in cols],
                    aggregated=query.last.aggregated, params=params, natives=context.natives)


# What SQLAlchemy's text() would read as a bind parameter inside the SQL string.
_TEXT_BIND = re.compile(r"(?<![:\w\\]):\w")


def bind_colon_literals(tree: exp.Expression) -> dict:
    """Bind string literals that text() would misread as `:name` parameters; the others stay inline.

    Drivers execute SQL through SQLAlchemy text(), which takes ":word" anywhere in the statement
    (quotes included) for a parameter; such values go as real bound parameters instead.
    """
    params: dict = {}
    for node in list(tree.find_all(exp.Literal)):
        if node.is_string and _TEXT_BIND.search(node.this):
            name = f"mbql_{len(params) + 1}"
            params[name] = node.this
            node.replace(exp.Var(this=f":{name}"))
    return params


def compile_stages(context: Context, stages: list[Stage]) -> tuple[exp.Select, list[Col]]:
    tree, cols = None, None
    for i, stage in enumerate(stages):
        if i > 0 and (stage.source_table is not None or stage.source_card is not None):
            raise Invalid("Invalid MBQL: only the first stage may have a source-table or source-card.")
        if stage.native is not None:
            if i > 0:
                raise Invalid("Invalid MBQL: only the first stage may be a native query.")
            tree, cols = native_source(context, stage)
            _model_boundary(stage, cols)
            continue
        if stage.source_card is not None:
            # Cards are expanded once, behind the data-access gate, before compiling (core.query.cards.expand).
            raise Invalid(f"Invalid MBQL: card {stage.source_card} was not expanded before compiling.")
        source = QuerySource(alias="source", tree=tree, cols=cols) if tree is not None else None
        tree, cols = StageCompiler(context, stage, source).compile()
        _model_boundary(stage, cols)
    return tree, cols


def _model_boundary(stage: Stage, cols: list[Col]) -> None:
    """Where a model's own query ends, its columns take the model's edited metadata, so the next stage
    (a question on the model) and the result (the model's own run) see it."""
    if stage.model_metadata:
        apply_model_metadata([c.meta for c in cols], stage.model_metadata, native=stage.native is not None)


class StageCompiler(ClauseCompiler):
    """One stage: FROM, joins, WHERE, GROUP BY, SELECT list and ORDER BY/LIMIT."""

    def compile(self) -> tuple[exp.Select, list[Col]]:
        stage = self.stage
        self.setup_source()
        self.expressions.update(stage.expressions)
        for join in stage.joins:
            self.add_join(join)
        # Several filters (MBQL 5 "filters", or parameters added to a legacy "filter") are one AND.
        where = None
        if stage.filters:
            where = self.filter(stage.filters[0] if len(stage.filters) == 1 else ["and", *stage.filters])
        cols = self.aggregated_columns() if stage.aggregated else self.plain_columns()
        if self.context.remapper is not None:
            cols = self.context.remapper.extend(self, cols)
        self.unique(cols)
        # Everything that may add an implicit join is compiled before the FROM clause is assembled.
        order = self.order_by(cols)
        select = exp.Select()
        for col in cols:
            select = select.select(exp.alias_(col.sql, col.alias, quoted=True), copy=False)
        select = select.from_(self.from_expression(), copy=False)
        for join in self.join_clauses:
            select = select.join(join, copy=False)
        if where is not None:
            select = select.where(where, copy=False)
        if stage.breakouts:
            select = select.group_by(*[c.group_sql for c in cols if c.group_sql is not None], copy=False)
        if order:
            select = select.order_by(*order, copy=False)
        limit = stage.limit
        if stage.page is not None:
            items, page = stage.page["items"], stage.page["page"]
            limit = min(items, limit) if limit is not None else items
            if page > 1:
                select = select.offset((page - 1) * items, copy=False)
        if limit is not None:
            select = select.limit(limit, copy=False)
        return select, cols

    # ---- select lists -----------------------------------------------------------------------------

    def plain_columns(self) -> list[Col]:
        stage = self.stage
        cols: list[Col] = []
        if stage.fields is not None:
            for ref in stage.fields:
                cols.append(self.column_for(ref, "fields"))
        else:
            cols.extend(self.source_columns())
            for name in stage.expressions:
                cols.append(self.column_for(["expression", name, {}], "fields"))
        for alias in self.joins:
            cols.extend(self.join_columns(alias))
        if not cols:
            raise Invalid("Invalid MBQL: the query selects no columns.")
        return cols

    def aggregated_columns(self) -> list[Col]:
        cols = [self.column_for(b, "breakout", breakout=True) for b in self.stage.breakouts]
        self.breakout_cols = list(cols)
        for i, aggregation in enumerate(self.stage.aggregations):
            cols.append(self.aggregation_column(aggregation, i))
        return cols

    def unique(self, cols: list[Col]) -> list[Col]:
        """Metabase's column names are unique in a result: later duplicates become NAME_2, NAME_3."""
        seen: dict[str, int] = {}
        taken = {c.alias.lower() for c in cols}
        for col in cols:
            key = col.alias.lower()
            if key in seen:
                n = seen[key] + 1
                while f"{key}_{n}" in taken:
                    n += 1
                seen[key] = n
                col.alias = col.meta["name"] = f"{col.alias}_{n}"
                taken.add(col.alias.lower())
            else:
                seen[key] = 1
        return cols

    # ---- order by ---------------------------------------------------------------------------------

    def order_by(self, cols: list[Col]) -> list[exp.Ordered]:
        stage = self.stage
        ordered: list[exp.Ordered] = []
        used: set[int] = set()
        for direction, ref in stage.order_by:
            target = self.order_target(ref, cols)
            if target is not None:
                # A remapped column sorts by the value it is shown as (Metabase's add-remaps).
                target = self.remapped.get(id(target), target)
                used.add(id(target))
                expression = exp.column(target.alias, quoted=True)
            else:
                if stage.aggregated:
                    raise Invalid(f"Invalid MBQL: order-by {ref!r} is neither a breakout nor an aggregation.")
                expression = self.value(ref)
            ordered.append(exp.Ordered(this=expression, desc=direction == "desc", nulls_first=direction != "desc"))
        # Metabase sorts by every breakout not already sorted on, ascending; a stage with window
        # aggregations sorts its finest temporal breakout last, the order its running totals follow.
        breakouts = self.breakouts_finest_last() if self.windowed_stage() else self.breakout_cols
        for col in breakouts:
            if id(col) not in used:
                expression = exp.column(col.alias, quoted=True)
                ordered.append(exp.Ordered(this=expression, desc=False, nulls_first=True))
        return ordered

    def order_target(self, ref: list, cols: list[Col]) -> Col | None:
        if ref[0] == "aggregation":
            index = ref[1]
            aggregations = [c for c in cols if c.aggregation_index is not None]
            if index >= len(aggregations):
                raise Invalid(f"Invalid MBQL: order-by refers to aggregation {index}, which does not exist.")
            return aggregations[index]
        key = self.ref_key(ref)
        for col in cols:
            if col.ref_key == key:
                return col
        if self.stage.aggregated and key is not None and key[0] == "field":
            # Clients sometimes sort on the plain field of a bucketed breakout (and auto-bucketing makes
            # that the rule for date breakouts): as Metabase's reconcile-breakout-and-order-by-bucketing,
            # a plain ref takes the bucketing of the field's first breakout.
            same_field = [c for c in self.breakout_cols if c.ref_key and c.ref_key[:4] == key[:4]]
            plain = key[4] is None and key[5] is None
            if same_field and (plain or len(same_field) == 1):
                return same_field[0]
        return None
