"""The SQL forms Trino needs differently from core.driver.dialect's defaults (sqlglot ASTs), each
reviewed against Trino's function documentation (README.md lists them); no server runs in the tests.

- date_trunc('week') starts weeks on Monday (as the default assumes); day_of_week() is ISO
  (Monday 1 .. Sunday 7), not PostgreSQL's DOW, so weekdays are renumbered from it.
- Date arithmetic is date_add(unit, n, x) / date_diff(unit, a, b); there is no EXTRACT(EPOCH).
- regexp_extract answers NULL when nothing matches; split_part answers NULL past the last field, where
  Metabase answers ''.
- Plain TIMESTAMPs have no zone: with_timezone() gives one, AT TIME ZONE moves it, CAST drops it.
- There is no exact PERCENTILE_CONT (only approx_percentile), so percentiles are not declared.
"""
from __future__ import annotations

import re

from sqlglot import exp

from core.driver.dialect import SUNDAY, QueryDialect, lit, numbered_from, position_guard


def fn(name: str, *args) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def timestamp(expr: exp.Expression) -> exp.Expression:
    return exp.Cast(this=expr, to=exp.DataType.build("timestamp"))


class TrinoDialect(QueryDialect):
    _UNITS = ("millisecond", "second", "minute", "hour", "day", "week", "month", "quarter", "year")

    @classmethod
    def truncate_temporal(cls, expr, unit, week_start=SUNDAY):
        if unit == "week":
            shift = (7 - week_start) % 7  # date_trunc weeks start on Monday
            if not shift:
                return fn("date_trunc", lit("week"), expr)
            shifted = cls.date_add(expr, lit(shift), "day")
            return cls.date_add(fn("date_trunc", lit("week"), shifted), lit(-shift), "day")
        return fn("date_trunc", lit(unit), expr)

    _PARTS = {"second": "second", "minute-of-hour": "minute", "hour-of-day": "hour", "day-of-month": "day_of_month",
              "day-of-year": "day_of_year", "week-of-year": "week_of_year", "month-of-year": "month",
              "quarter-of-year": "quarter", "year": "year"}

    @classmethod
    def extract_temporal(cls, expr, unit, week_start=SUNDAY):
        if unit == "day-of-week":
            return numbered_from(cls.weekday_from_sunday(expr), week_start)
        return fn(cls._PARTS[unit], expr)

    @classmethod
    def weekday_from_sunday(cls, expr):
        # day_of_week is ISO (Monday 1 .. Sunday 7): Sunday becomes 1, Saturday 7.
        return exp.Add(this=exp.Mod(this=fn("day_of_week", expr), expression=lit(7)), expression=lit(1))

    @classmethod
    def date_add(cls, expr, amount, unit):
        return fn("date_add", lit(unit), amount, expr)

    @classmethod
    def days_between(cls, start, end):
        return fn("date_diff", lit("day"), cls.cast_date(start), cls.cast_date(end))

    @classmethod
    def seconds_between(cls, start, end):
        return exp.Sub(this=fn("to_unixtime", end), expression=fn("to_unixtime", start))

    @classmethod
    def temporal_literal(cls, value):
        import datetime as dt

        if isinstance(value, dt.datetime):
            return timestamp(lit(value.isoformat(sep=" ")))
        return exp.Cast(this=lit(value.isoformat()), to=exp.DataType.build("date"))

    @classmethod
    def now(cls):
        return timestamp(exp.AtTimeZone(this=exp.CurrentTimestamp(), zone=lit("UTC")))

    @classmethod
    def from_unix(cls, expr, divisor):
        # date_add takes a BIGINT amount: count milliseconds so unix-milliseconds keep theirs.
        millis = exp.Cast(this=exp.Mul(this=cls.to_float(expr), expression=lit(1000 / divisor)),
                          to=exp.DataType.build("bigint"))
        return fn("date_add", lit("millisecond"), millis, timestamp(lit("1970-01-01 00:00:00")))

    @classmethod
    def parse_datetime(cls, expr):
        return timestamp(fn("replace", expr, lit("T"), lit(" ")))

    @classmethod
    def zoned_to_utc(cls, expr):
        return timestamp(exp.AtTimeZone(this=expr, zone=lit("UTC")))

    @classmethod
    def zone_to_utc(cls, expr, zone):
        return timestamp(exp.AtTimeZone(this=fn("with_timezone", expr, lit(zone)), zone=lit("UTC")))

    @classmethod
    def utc_to_zone(cls, expr, zone):
        return timestamp(exp.AtTimeZone(this=fn("with_timezone", expr, lit("UTC")), zone=lit(zone)))

    @classmethod
    def regex_match_first(cls, expr, pattern):
        group = [lit(1)] if re.compile(pattern).groups else []
        return fn("regexp_extract", expr, lit(pattern), *group)

    @classmethod
    def split_part(cls, expr, delimiter, position):
        part = exp.Case(ifs=[exp.If(this=exp.Is(this=expr.copy(), expression=exp.Null()), true=exp.Null())],
                        default=exp.Coalesce(this=fn("split_part", expr, lit(delimiter), position.copy()),
                                             expressions=[lit("")]))
        return position_guard(part, position)

    @classmethod
    def cast_text(cls, expr, base_type):
        text = super().cast_text(expr, base_type)
        for node in text.find_all(exp.DataType):
            if node.this == exp.DataType.Type.TEXT:
                node.replace(exp.DataType.build("varchar"))
        return text
