"""The SQL forms ClickHouse needs differently from core.driver.dialect's defaults (sqlglot ASTs).

Temporal buckets use ClickHouse's own toStartOf*/to* functions (DATE_TRUNC's week starts on Monday
and its result types vary by unit); weekdays come from toDayOfWeek in mode 3 (Sunday 1 .. Saturday 7).
Percentiles are exact and interpolated (quantileExactInclusive, PERCENTILE_CONT's definition):
ClickHouse's plain `quantile`, which sqlglot writes, samples.
"""
from __future__ import annotations

import datetime as dt
import re

from sqlglot import exp

from core.driver.dialect import SUNDAY, QueryDialect, lit, numbered_from, position_guard


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
            return fn("toDateTime64", exp.Sub(this=fn("toDate32", expr), expression=back), lit(0))
        if unit == "second":
            return fn("toStartOfSecond", fn("toDateTime64", expr, lit(0)))
        if unit == "millisecond":
            return fn("toStartOfMillisecond", fn("toDateTime64", expr, lit(3)))
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
    def cast_date(cls, expr):
        return fn("toDate32", expr)  # CAST(... AS DATE) is ClickHouse's 1970-2149 Date

    @classmethod
    def days_between(cls, start, end):
        return fn("dateDiff", lit("day"), cls.cast_date(start), cls.cast_date(end))  # Date32 - Date32 is refused

    @classmethod
    def temporal_literal(cls, value):
        if isinstance(value, dt.datetime):
            return fn("toDateTime64", lit(value.isoformat(sep=" ")), lit(6))
        return fn("toDate32", lit(value.isoformat()))

    # ---- zones: a DateTime64 carries a zone that only changes how it is shown; Tessera's rows are
    # naive wall-clock times, so a converted value is re-read as UTC text (toString keeps the wall clock).

    @classmethod
    def _offset(cls, zone: str) -> int | None:
        match = re.fullmatch(r"([+-])(\d\d):(\d\d)", zone)
        if not match:
            return None
        minutes = int(match.group(2)) * 60 + int(match.group(3))
        return -minutes if match.group(1) == "-" else minutes

    @classmethod
    def _wall_as_utc(cls, expr):
        return fn("toDateTime64", fn("toString", expr), lit(6), lit("UTC"))

    @classmethod
    def zoned_to_utc(cls, expr):
        return fn("toTimeZone", expr, lit("UTC"))

    @classmethod
    def zone_to_utc(cls, expr, zone):
        offset = cls._offset(zone)
        if offset is not None:
            return cls.date_add(expr, lit(-offset), "minute")
        return fn("toTimeZone", fn("toDateTime64", fn("toString", expr), lit(6), lit(zone)), lit("UTC"))

    @classmethod
    def utc_to_zone(cls, expr, zone):
        offset = cls._offset(zone)
        if offset is not None:
            return cls.date_add(expr, lit(offset), "minute")
        return cls._wall_as_utc(fn("toTimeZone", fn("toDateTime64", expr, lit(6), lit("UTC")), lit(zone)))

    @classmethod
    def percentile(cls, expr, p):
        return exp.Anonymous(this=f"quantileExactInclusive({float(p)!r})", expressions=[expr])

    @classmethod
    def regex_match_first(cls, expr, pattern):
        # extract() gives the first group (or the whole match) and '' when nothing matches: NULL then.
        return exp.If(this=fn("match", expr.copy(), lit(pattern)), true=fn("extract", expr, lit(pattern)),
                      false=exp.Null())

    @classmethod
    def split_part(cls, expr, delimiter, position):
        # Past the last piece arrayElement gives '' (Metabase's answer); splitByString takes no NULL.
        pieces = fn("splitByString", lit(delimiter), fn("assumeNotNull", expr.copy()))
        part = exp.If(this=exp.Is(this=expr, expression=exp.Null()), true=exp.Null(),
                      false=fn("arrayElement", pieces, position.copy()))
        return position_guard(part, position)

    @classmethod
    def transform(cls, tree):
        # ClickHouse's lag/lead default to the type's zero past the partition's edge; a Nullable
        # argument makes that default NULL, as in standard SQL.
        for node in list(tree.find_all(exp.Lag, exp.Lead)):
            if not node.args.get("default"):
                node.this.replace(fn("toNullable", node.this.copy()))
        for node in list(tree.find_all(exp.WithinGroup)):
            if isinstance(node.this, exp.PercentileCont):
                ordered = node.expression.expressions[0]
                node.replace(cls.percentile(ordered.this, float(node.this.this.name)))
        return tree
