"""The SQL forms ClickHouse needs differently from core.driver.dialect's defaults (sqlglot ASTs).

Temporal buckets use ClickHouse's own toStartOf*/to* functions (DATE_TRUNC's week starts on Monday
and its result types vary by unit); weekdays come from toDayOfWeek in mode 3 (Sunday 1 .. Saturday 7).
Percentiles are exact and interpolated (quantileExactInclusive, PERCENTILE_CONT's definition):
ClickHouse's plain `quantile`, which sqlglot writes, samples.
"""
from __future__ import annotations

from sqlglot import exp

from core.driver.dialect import SUNDAY, QueryDialect, lit, numbered_from


def fn(name: str, *args) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


class ClickHouseDialect(QueryDialect):
    _STARTS = {"second": "toStartOfSecond", "minute": "toStartOfMinute", "hour": "toStartOfHour",
               "day": "toStartOfDay", "month": "toStartOfMonth", "quarter": "toStartOfQuarter", "year": "toStartOfYear"}
    _PARTS = {"second": "toSecond", "minute-of-hour": "toMinute", "hour-of-day": "toHour", "day-of-month": "toDayOfMonth",
              "day-of-year": "toDayOfYear", "week-of-year": "toISOWeek", "month-of-year": "toMonth",
              "quarter-of-year": "toQuarter", "year": "toYear"}

    @classmethod
    def truncate_temporal(cls, expr, unit, week_start=SUNDAY):
        if unit == "week":
            # back to the week's first day: (Monday-based weekday - start) mod 7 days before the day's start
            weekday = exp.Sub(this=fn("toDayOfWeek", expr.copy()), expression=lit(1 + week_start - 7))
            back = exp.Mod(this=exp.Paren(this=weekday), expression=lit(7))
            return fn("toDateTime", exp.Sub(this=fn("toDate", expr), expression=back))
        if unit == "second":
            return fn("toStartOfSecond", fn("toDateTime64", expr, lit(0)))
        return fn(cls._STARTS[unit], expr)

    @classmethod
    def extract_temporal(cls, expr, unit, week_start=SUNDAY):
        if unit == "day-of-week":
            return numbered_from(cls.weekday_from_sunday(expr), week_start)
        return fn(cls._PARTS[unit], expr)

    @classmethod
    def weekday_from_sunday(cls, expr):
        return fn("toDayOfWeek", expr, lit(3))

    @classmethod
    def percentile(cls, expr, p):
        return exp.Anonymous(this=f"quantileExactInclusive({float(p)!r})", expressions=[expr])

    @classmethod
    def transform(cls, tree):
        for node in list(tree.find_all(exp.WithinGroup)):
            if isinstance(node.this, exp.PercentileCont):
                ordered = node.expression.expressions[0]
                node.replace(cls.percentile(ordered.this, float(node.this.this.name)))
        return tree
