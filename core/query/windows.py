"""`offset`: an aggregation's value N rows before (negative N) or after, as LAG/LEAD over the stage's rows.

Mixed into core.query.clauses.ClauseCompiler (needs `value`, `stage`, `breakout_cols`, `ref_key`, `context`).
The window follows Metabase's (sql.qp window-aggregation-over-rows): with breakouts it is partitioned by every
breakout but the finest temporal one (the last breakout when none is temporal) and ordered by the query's
order-by, then by the breakouts it does not sort on, that finest one last; without breakouts it is ordered
by the query's order-by alone, and a query with neither is refused. Order-by entries naming a cumulative or
offset aggregation are left out of the window, as Metabase leaves them out.
"""
from __future__ import annotations

from sqlglot import exp

from ..errors import Invalid
from .dialect import lit
from .refs import Col

# Finer units rank lower; an unbucketed date-time is finest, extracted parts (hour-of-day, ...) coarsest.
GRANULARITY = {unit: rank for rank, unit in enumerate(
    ("default", "millisecond", "second", "minute", "hour", "day", "week", "month", "quarter", "year"))}
WINDOWED = ("offset", "cum-sum", "cum-count")


def _contains(clause, ops) -> bool:
    return isinstance(clause, list) and bool(clause) and (
        clause[0] in ops or any(_contains(a, ops) for a in clause[1:]))


def _granularity(col: Col) -> int | None:
    if col.unit is None:
        return None
    if col.unit == "default" and col.meta.get("base_type") == "type/Date":
        return GRANULARITY["day"]
    return GRANULARITY.get(col.unit, len(GRANULARITY))


class WindowCompiler:
    def offset(self, args: list) -> exp.Expression:
        if not self.allow_aggregations:
            raise Invalid("Invalid MBQL: offset is only allowed in the aggregation clause.")
        value, n = args
        if isinstance(n, bool) or not isinstance(n, int) or n == 0:
            raise Invalid(f"Invalid MBQL: offset needs a non-zero whole number of rows, got {n!r}.")
        self.context.require("window-functions/offset", "the offset function")
        inner = self.value(value)
        partition, order = self.window_over()
        function = exp.Lead if n > 0 else exp.Lag
        return exp.Window(this=function(this=inner, offset=lit(abs(n))), partition_by=partition or None,
                          order=exp.Order(expressions=order))

    def window_over(self) -> tuple[list[exp.Expression], list[exp.Ordered]]:
        breakouts: list[Col] = self.breakout_cols
        explicit, used = self.window_order_bys()
        if not breakouts:
            if not explicit:
                raise Invalid("Invalid MBQL: offset needs breakouts or an order-by in the query.")
            return [], explicit
        ranks = [_granularity(c) for c in breakouts]
        temporal = [i for i, rank in enumerate(ranks) if rank is not None]
        last = min(temporal, key=lambda i: (ranks[i], i)) if temporal else len(breakouts) - 1
        partition = [c.group_sql.copy() for i, c in enumerate(breakouts) if i != last]
        implicit = [i for i in range(len(breakouts)) if i != last and id(breakouts[i]) not in used]
        if id(breakouts[last]) not in used:
            implicit.append(last)
        order = explicit + [exp.Ordered(this=breakouts[i].group_sql.copy(), desc=False, nulls_first=True)
                            for i in implicit]
        return partition, order

    def window_order_bys(self) -> tuple[list[exp.Ordered], set[int]]:
        """The stage's order-by as window ORDER BY expressions, and the ids of the breakouts it names."""
        ordered: list[exp.Ordered] = []
        used: set[int] = set()
        for direction, ref in self.stage.order_by:
            if isinstance(ref, list) and ref and ref[0] == "aggregation":
                aggregations = self.stage.aggregations
                if not isinstance(ref[1], int) or not 0 <= ref[1] < len(aggregations):
                    raise Invalid(f"Invalid MBQL: order-by refers to aggregation {ref[1]!r}, which does not exist.")
                clause = aggregations[ref[1]]
                if clause[0] == "aggregation-options":
                    clause = clause[1]
                if _contains(clause, WINDOWED):
                    continue
                expression = self.value(clause)
            else:
                key = self.ref_key(ref) if isinstance(ref, list) else None
                col = next((c for c in self.breakout_cols if key is not None and c.ref_key == key), None)
                if col is not None:
                    used.add(id(col))
                expression = col.group_sql.copy() if col is not None else self.value(ref)
            ordered.append(exp.Ordered(this=expression, desc=direction == "desc", nulls_first=direction != "desc"))
        return ordered, used
