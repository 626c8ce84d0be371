"""Window aggregations: `offset` (LAG/LEAD of an aggregation N rows away) and the running totals of
`cum-sum` and `cum-count`, all over one window per stage, plus the row order such a stage returns.

Mixed into core.query.clauses.ClauseCompiler (needs `value`, `stage`, `breakout_cols`, `ref_key`, `context`,
and the stage compiler's `order_target`). The window follows Metabase's (sql.qp window-aggregation-over-rows,
shared by offset and the cumulative aggregations): with two or more breakouts it is partitioned by every
breakout but the finest temporal one (the last breakout when none is temporal); it is ordered by the query's
order-by, then by the breakouts it does not sort on, that finest one last. Order-by entries naming a cumulative
or offset aggregation are left out of the window, as Metabase leaves them out. Without breakouts offset is
ordered by the query's order-by alone (neither is a 400) and a cumulative aggregation is its plain aggregate.
A stage with window aggregations and breakouts also returns its rows in that order (explicit order-by, the
other breakouts, the finest temporal one last), as Metabase's nest-breakouts stage sorts them.
"""
from __future__ import annotations

from sqlglot import exp

from core.driver.dialect import lit
from core.http.errors import Invalid

from .refs import Col

# Metabase's temporal granularity (nest-breakouts): lower is finer, extracted parts rank between the
# truncations they sit between, an unbucketed date-time is finest and an unbucketed date ranks as a day.
# Units missing here (second, millisecond) do not count as temporal, as in Metabase.
GRANULARITY = {"minute": 1, "minute-of-hour": 2, "hour": 3, "hour-of-day": 4, "day": 5, "day-of-week": 6,
               "day-of-month": 7, "day-of-year": 8, "week": 9, "week-of-year": 10, "month": 11, "month-of-year": 12,
               "quarter": 13, "quarter-of-year": 14, "year": 15, "year-of-era": 16}
WINDOWED = ("offset", "cum-sum", "cum-count")


def contains(clause, ops) -> bool:
    return isinstance(clause, list) and bool(clause) and (
        clause[0] in ops or any(contains(a, ops) for a in clause[1:]))


def _granularity(col: Col) -> int | None:
    if col.unit is None:
        return None
    if col.unit == "default":
        # An unbucketed date (stored as one, or a date-time coerced to its date) ranks with day.
        is_date = (col.value_type or col.meta.get("base_type")) == "type/Date"
        return GRANULARITY["day"] if is_date else 0
    return GRANULARITY.get(col.unit)


def finest_temporal(breakouts: list[Col]) -> int | None:
    """The index of the leftmost breakout of the finest temporal granularity, None when none is temporal."""
    ranks = [_granularity(c) for c in breakouts]
    temporal = [i for i, rank in enumerate(ranks) if rank is not None]
    return min(temporal, key=lambda i: (ranks[i], i)) if temporal else None


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

    def running_total(self, inner: exp.Expression) -> exp.Expression:
        """cum-sum and cum-count: the SUM of the group's aggregate over the rows up to this one in the window."""
        if not self.breakout_cols:
            return inner
        self.context.require("window-functions/cumulative", "cumulative aggregations")
        partition, order = self.window_over()
        return exp.Window(this=exp.Sum(this=inner), partition_by=partition or None, order=exp.Order(expressions=order),
                          spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW"))

    def windowed_stage(self) -> bool:
        return bool(self.stage.breakouts) and any(contains(a, WINDOWED) for a in self.stage.aggregations)

    def breakouts_finest_last(self) -> list[Col]:
        """The breakouts in the order a window stage sorts them: the finest temporal one moved last."""
        breakouts: list[Col] = self.breakout_cols
        last = finest_temporal(breakouts)
        if last is None:
            return list(breakouts)
        return [c for i, c in enumerate(breakouts) if i != last] + [breakouts[last]]

    def window_over(self) -> tuple[list[exp.Expression], list[exp.Ordered]]:
        breakouts: list[Col] = self.breakout_cols
        explicit, used = self.window_order_bys()
        if not breakouts:
            if not explicit:
                raise Invalid("Invalid MBQL: offset needs breakouts or an order-by in the query.")
            return [], explicit
        finest = finest_temporal(breakouts)
        last = finest if finest is not None else len(breakouts) - 1
        partition = [c.group_sql.copy() for i, c in enumerate(breakouts) if i != last]
        order = explicit + [exp.Ordered(this=c.group_sql.copy(), desc=False, nulls_first=True)
                            for c in self.breakouts_finest_last() if id(c) not in used]
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
                if contains(clause, WINDOWED):
                    continue
                expression = self.value(clause)
            else:
                # The same lookup as the stage's own ORDER BY, so a sort on a breakout's plain field finds it.
                col = self.order_target(ref, self.breakout_cols) if isinstance(ref, list) and ref else None
                if col is not None:
                    used.add(id(col))
                expression = col.group_sql.copy() if col is not None else self.value(ref)
            ordered.append(exp.Ordered(this=expression, desc=direction == "desc", nulls_first=direction != "desc"))
        return ordered, used
