"""The engine-dependent pieces of compiled MBQL, as sqlglot AST methods a driver may override.

core.driver.sql.SQLDriver inherits these defaults (standard SQL as PostgreSQL speaks it); a driver in
drivers/ overrides a method when sqlglot's rendering of the default is wrong for its engine. Every
method takes and returns sqlglot expressions: no SQL text is produced here, only by the driver's
`to_sql`. Units are Metabase's. Weeks start on the day `week_start` names (a Python weekday, 0 = Monday
.. 6 = Sunday, read from the start-of-week setting per query) and day-of-week counts that day as 1;
the default is Sunday, Metabase's default start-of-week.
"""
from __future__ import annotations

import datetime as dt
from typing import Callable, ClassVar

from sqlglot import exp

from core.driver import urls

EPOCH = dt.datetime(1970, 1, 1)
SUNDAY = 6  # Python's weekday number for Sunday, Metabase's default start-of-week


def lit(value) -> exp.Expression:
    """A literal from a Python value (never from text that could be parsed as SQL)."""
    return exp.convert(value)


LIKE_ESCAPE = "!"


def like_pattern(kind: str, value: str, escape: str = LIKE_ESCAPE) -> str:
    """A LIKE pattern matching `value` literally at the place `kind` (contains/starts-with/ends-with) says."""
    escaped = value.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")
    return {"contains": f"%{escaped}%", "starts-with": f"{escaped}%", "ends-with": f"%{escaped}"}[kind]


class QueryDialect:
    """Default AST forms; the standard SQL of PostgreSQL, which DuckDB mostly shares."""

    sqlglot_dialect: ClassVar[str]
    # Whether url_part has its own implementation, so host/domain/subdomain/path need no `regex` feature.
    url_parts_without_regex: ClassVar[bool] = False

    # ---- temporal ---------------------------------------------------------------------------------

    @classmethod
    def truncate_temporal(cls, expr: exp.Expression, unit: str, week_start: int = SUNDAY) -> exp.Expression:
        """The start of the `unit` bucket holding expr (minute, hour, day, week, month, quarter, year)."""
        if unit == "week":
            # DATE_TRUNC weeks start on Monday: shift the week's first day onto a Monday, truncate, shift back.
            shift = (7 - week_start) % 7
            if not shift:
                return exp.TimestampTrunc(this=expr, unit=exp.var("WEEK"))
            shifted = cls.date_add(expr, lit(shift), "day")
            return cls.date_add(exp.TimestampTrunc(this=shifted, unit=exp.var("WEEK")), lit(-shift), "day")
        return exp.TimestampTrunc(this=expr, unit=exp.var(unit.upper()))

    _EXTRACT: ClassVar[dict[str, str]] = {
        "second": "SECOND", "minute-of-hour": "MINUTE", "hour-of-day": "HOUR", "day-of-month": "DAY",
        "day-of-year": "DOY", "week-of-year": "WEEK", "month-of-year": "MONTH",
        "quarter-of-year": "QUARTER", "year": "YEAR",
    }

    @classmethod
    def extract_temporal(cls, expr: exp.Expression, unit: str, week_start: int = SUNDAY) -> exp.Expression:
        """An integer part of expr; week-of-year is the ISO week, day-of-week 1 (the week's first day) .. 7."""
        if unit == "day-of-week":
            return numbered_from(cls.weekday_from_sunday(expr), week_start)
        return exp.Cast(this=exp.Extract(this=exp.var(cls._EXTRACT[unit]), expression=expr),
                        to=exp.DataType.build("int"))

    @classmethod
    def weekday_from_sunday(cls, expr: exp.Expression) -> exp.Expression:
        """The engine's day of the week as an integer, Sunday 1 .. Saturday 7."""
        part = exp.Add(this=exp.Extract(this=exp.var("DOW"), expression=expr), expression=lit(1))
        return exp.Cast(this=part, to=exp.DataType.build("int"))

    @classmethod
    def date_add(cls, expr: exp.Expression, amount: exp.Expression, unit: str) -> exp.Expression:
        """expr shifted by amount units (second .. year)."""
        if unit == "quarter":
            amount, unit = exp.Paren(this=exp.Mul(this=amount, expression=lit(3))), "month"
        return exp.DateAdd(this=expr, expression=amount, unit=exp.var(unit.upper()))

    @classmethod
    def days_between(cls, start: exp.Expression, end: exp.Expression) -> exp.Expression:
        """Whole calendar days from start's date to end's date (negative when end is earlier)."""
        return exp.Sub(this=cls.cast_date(end), expression=cls.cast_date(start))

    @classmethod
    def seconds_between(cls, start: exp.Expression, end: exp.Expression) -> exp.Expression:
        return exp.Sub(this=exp.Extract(this=exp.var("EPOCH"), expression=end),
                       expression=exp.Extract(this=exp.var("EPOCH"), expression=start))

    @classmethod
    def cast_date(cls, expr: exp.Expression) -> exp.Expression:
        return exp.Cast(this=expr, to=exp.DataType.build("date"))

    @classmethod
    def temporal_column(cls, expr: exp.Expression, base_type: str) -> exp.Expression:
        """A temporal column as compared with temporal literals (engines storing text normalise it)."""
        return expr

    @classmethod
    def temporal_literal(cls, value: dt.date | dt.datetime) -> exp.Expression:
        if isinstance(value, dt.datetime):
            return exp.Cast(this=lit(value.isoformat(sep=" ")), to=exp.DataType.build("timestamp"))
        return exp.Cast(this=lit(value.isoformat()), to=exp.DataType.build("date"))

    @classmethod
    def now(cls) -> exp.Expression:
        return exp.CurrentTimestamp()

    # ---- strings ----------------------------------------------------------------------------------

    @classmethod
    def string_match(cls, expr: exp.Expression, kind: str, value: str, case_sensitive: bool,
                     bind: Callable[[str], exp.Expression] = lit) -> exp.Expression:
        """contains / starts-with / ends-with as a LIKE with the value escaped. `bind` makes the
        finished pattern an expression: a literal by default, a bound parameter for native field filters."""
        if case_sensitive:
            like = exp.Like(this=expr, expression=cls.exact_text(bind(like_pattern(kind, value))))
        else:
            like = exp.Like(this=exp.Lower(this=expr), expression=bind(like_pattern(kind, value.lower())))
        return exp.Escape(this=like, expression=lit(LIKE_ESCAPE))

    @classmethod
    def exact_text(cls, value: exp.Expression) -> exp.Expression:
        """A text value that compares (=, LIKE) with a column exactly, case included, whatever the
        column's collation; engines whose default collations ignore case override this."""
        return value

    @classmethod
    def regex_match_first(cls, expr: exp.Expression, pattern: str) -> exp.Expression:
        """The first match of a POSIX regex (its first group when it has one), NULL when none."""
        match = exp.Anonymous(this="REGEXP_MATCH", expressions=[expr, lit(pattern)])
        # The index is written 1-based (offset=1) so sqlglot keeps it as PostgreSQL counts.
        return exp.Bracket(this=exp.Paren(this=match), expressions=[lit(1)], offset=1)

    @classmethod
    def url_part(cls, expr: exp.Expression, part: str) -> exp.Expression:
        """host, domain, subdomain or path of a URL or email (core.driver.urls), NULL when there is none.
        Called only for drivers with the `regex` feature or `url_parts_without_regex`."""
        return cls.regex_match_first(expr, urls.GROUPED[part])

    @classmethod
    def split_part(cls, expr: exp.Expression, delimiter: str, position: exp.Expression) -> exp.Expression:
        """The 1-based `position`th piece of expr split on `delimiter`; '' when there is no such piece."""
        return position_guard(exp.Anonymous(this="SPLIT_PART", expressions=[expr, lit(delimiter), position]),
                              position)

    # ---- conversions ------------------------------------------------------------------------------

    @classmethod
    def cast_text(cls, expr: exp.Expression, base_type: str) -> exp.Expression:
        """Text of a value: date-times as 'YYYY-MM-DD HH:MM:SS', whole floats without a fraction (as
        PostgreSQL writes them); other floats as the engine writes them."""
        text = exp.DataType.build("text")
        if base_type in ("type/Float", "type/Double"):
            whole = exp.and_(exp.EQ(this=expr.copy(), expression=exp.Floor(this=expr.copy())),
                             exp.LT(this=exp.Abs(this=expr.copy()), expression=lit(1e15)))
            as_int = exp.Cast(this=exp.Cast(this=expr.copy(), to=exp.DataType.build("bigint")), to=text.copy())
            return exp.Case(ifs=[exp.If(this=whole, true=as_int)], default=exp.Cast(this=expr, to=text))
        return exp.Cast(this=expr, to=text)

    @classmethod
    def parse_date(cls, expr: exp.Expression) -> exp.Expression:
        """An ISO date or date-time text as a date."""
        return cls.cast_date(cls.parse_datetime(expr))

    @classmethod
    def parse_datetime(cls, expr: exp.Expression) -> exp.Expression:
        """An ISO date or date-time text ('T' or space) as a timestamp."""
        return exp.Cast(this=expr, to=exp.DataType.build("timestamp"))

    @classmethod
    def parse_time(cls, expr: exp.Expression) -> exp.Expression:
        """An ISO time-of-day text ('HH:MM:SS') as a time."""
        return exp.Cast(this=expr, to=exp.DataType.build("time"))

    @classmethod
    def from_unix(cls, expr: exp.Expression, divisor: int) -> exp.Expression:
        """A count of seconds (divisor 1), milliseconds (1000), ... since 1970-01-01 UTC as a timestamp."""
        seconds = expr if divisor == 1 else exp.Div(this=cls.to_float(expr), expression=lit(float(divisor)))
        return cls.date_add(cls.temporal_literal(EPOCH), seconds, "second")

    @classmethod
    def zoned_to_utc(cls, expr: exp.Expression) -> exp.Expression:
        """A zoned date-time as UTC wall-clock time."""
        return exp.AtTimeZone(this=expr, zone=lit("UTC"))

    @classmethod
    def zone_to_utc(cls, expr: exp.Expression, zone: str) -> exp.Expression:
        """Wall-clock time in the named zone as UTC wall-clock time."""
        return exp.AtTimeZone(this=exp.Paren(this=exp.AtTimeZone(this=expr, zone=lit(zone))), zone=lit("UTC"))

    @classmethod
    def utc_to_zone(cls, expr: exp.Expression, zone: str) -> exp.Expression:
        """UTC wall-clock time as wall-clock time in the named zone."""
        return exp.AtTimeZone(this=exp.Paren(this=exp.AtTimeZone(this=expr, zone=lit("UTC"))), zone=lit(zone))

    # ---- numbers and aggregates -------------------------------------------------------------------

    @classmethod
    def to_float(cls, expr: exp.Expression) -> exp.Expression:
        return exp.Cast(this=expr, to=exp.DataType.build("double"))

    @classmethod
    def to_integer(cls, expr: exp.Expression) -> exp.Expression:
        """A whole number as the engine's 64-bit integer: ceil, floor and round are type/Integer, while
        engines answer them in their argument's type (a double gives 27.0)."""
        return exp.Cast(this=expr, to=exp.DataType.build("bigint"))

    @classmethod
    def average(cls, expr: exp.Expression) -> exp.Expression:
        return exp.Avg(this=expr)

    @classmethod
    def stddev(cls, expr: exp.Expression) -> exp.Expression:
        return exp.StddevPop(this=expr)

    @classmethod
    def variance(cls, expr: exp.Expression) -> exp.Expression:
        return exp.VariancePop(this=expr)

    @classmethod
    def percentile(cls, expr: exp.Expression, p: float) -> exp.Expression:
        return exp.WithinGroup(this=exp.PercentileCont(this=lit(p)),
                               expression=exp.Order(expressions=[exp.Ordered(this=expr)]))

    @classmethod
    def log10(cls, expr: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this="LOG10", expressions=[expr])


def numbered_from(sunday_based: exp.Expression, week_start: int) -> exp.Expression:
    """A Sunday 1 .. Saturday 7 weekday renumbered so that `week_start` (a Python weekday) is 1."""
    first = (week_start + 1) % 7  # the start day counted from Sunday = 0
    if not first:
        return sunday_based
    # (d - 1 - first) mod 7 + 1, kept non-negative for engines whose % follows the dividend's sign.
    shifted = exp.Add(this=sunday_based, expression=lit(6 - first))
    return exp.Paren(this=exp.Add(this=exp.Mod(this=exp.Paren(this=shifted), expression=lit(7)), expression=lit(1)))


def position_guard(part: exp.Expression, position: exp.Expression) -> exp.Expression:
    """'' for a computed position below 1 (a literal one is refused before compiling), else `part`."""
    if isinstance(position, exp.Literal) and not position.is_string:
        return part
    return exp.Case(ifs=[exp.If(this=exp.LT(this=position.copy(), expression=lit(1)), true=lit(""))], default=part)
