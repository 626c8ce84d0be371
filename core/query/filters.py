"""Filters for the compiler: comparisons, null and emptiness checks, string matches and relative dates.

Relative and bucketed date filters become `col >= lo AND col < hi` with bounds computed in Python from
the context's clock (core.query.temporal) and rendered by the driver's `temporal_literal`. Week bounds
start on the context's week_start (the start-of-week setting), as Metabase's do.
"""
from __future__ import annotations

import datetime as dt

from sqlglot import exp

from core.driver.dialect import lit
from core.http.errors import Invalid

from . import temporal
from .arity import check_clause
from .refs import is_date, is_temporal

COMPARISONS = {"=": exp.EQ, "!=": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}
STRING_TYPES = ("type/Text", "type/TextLike")


def _paren(e: exp.Expression) -> exp.Expression:
    return exp.Paren(this=e) if isinstance(e, (exp.Connector, exp.Not)) else e


class FilterCompiler:
    """Mixed into the stage compiler: needs `value`, `ref_with_info`, `infer_type`, `context`, `driver`."""

    def filter(self, x) -> exp.Expression:
        if not isinstance(x, list) or not x:
            if isinstance(x, bool):
                return exp.Boolean(this=x)
            raise Invalid(f"Invalid MBQL: malformed filter {x!r}.")
        check_clause(x)
        op, args = x[0], x[1:]
        if op in ("and", "or"):
            if not args:
                raise Invalid(f"Invalid MBQL: {op!r} needs at least one clause.")
            parts = [_paren(self.filter(a)) for a in args]
            return exp.Paren(this=(exp.and_ if op == "and" else exp.or_)(*parts)) if len(parts) > 1 else parts[0]
        if op == "not":
            negated = exp.Not(this=exp.Paren(this=self.filter(args[0])))
            inner = args[0]
            if isinstance(inner, list) and inner and inner[0] in ("contains", "starts-with", "ends-with"):
                # As Metabase: rows whose value is NULL match a negated string filter.
                column = self.value(inner[1])
                return exp.Paren(this=exp.or_(negated, exp.Is(this=column, expression=exp.Null())))
            return negated
        if op in ("in", "not-in"):
            return self.compare("=" if op == "in" else "!=", args)
        if op in COMPARISONS or op == "between":
            return self.compare(op, args)
        if op in ("is-null", "not-null", "is-empty", "not-empty"):
            return self.nullness(op, args[0])
        if op in ("contains", "does-not-contain", "starts-with", "ends-with"):
            return self.string_filter(op, args)
        if op == "time-interval":
            return self.time_interval(args)
        if op == "relative-time-interval":
            return self.relative_time_interval(args)
        if op == "during":
            return self.during(args)
        if op == "inside":
            if len(args) != 6:
                raise Invalid("Invalid MBQL: inside takes a latitude, a longitude and four bounds.")
            lat, lon, lat_max, lon_min, lat_min, lon_max = args
            return exp.and_(exp.Between(this=self.value(lat), low=lit(lat_min), high=lit(lat_max)),
                            exp.Between(this=self.value(lon), low=lit(lon_min), high=lit(lon_max)))
        if op == "segment":
            # core.query.macros replaces segments before compiling; one left here was never expanded.
            raise Invalid(f"Invalid MBQL: segment {args[0]!r} was not expanded before compiling.")
        if op in ("field", "expression"):
            return exp.EQ(this=self.value(x), expression=exp.Boolean(this=True))
        return self.value(x)

    def nullness(self, op: str, ref) -> exp.Expression:
        value = self.value(ref)
        base_type = self.infer_type(ref)
        is_null = exp.Is(this=value, expression=exp.Null())
        if op == "is-null":
            return is_null
        if op == "not-null":
            return exp.Not(this=is_null)
        if base_type in STRING_TYPES:
            empty = exp.EQ(this=value.copy(), expression=lit(""))
            if op == "is-empty":
                return exp.Paren(this=exp.or_(is_null, empty))
            return exp.Paren(this=exp.and_(exp.Not(this=is_null), exp.NEQ(this=value.copy(), expression=lit(""))))
        return is_null if op == "is-empty" else exp.Not(this=is_null)

    def string_filter(self, op: str, args: list) -> exp.Expression:
        opts = args[2] if len(args) > 2 and isinstance(args[2], dict) else {}
        needle = args[1]
        if isinstance(needle, list) and needle and needle[0] == "value":
            needle = needle[1]
        if not isinstance(needle, str):
            raise Invalid(f"Invalid MBQL: {op} needs a string to look for.")
        value = self.value(args[0])
        case_sensitive = opts.get("case-sensitive", True) is not False
        kind = "contains" if op == "does-not-contain" else op
        match = self.driver.string_match(value, kind, needle, case_sensitive)
        if op == "does-not-contain":
            return exp.Paren(this=exp.or_(exp.Not(this=_paren(match)), exp.Is(this=value.copy(), expression=exp.Null())))
        return match

    def temporal_value(self, v, unit_hint: str | None):
        """A filter value as (Python date/datetime, its natural unit) or None when it is not temporal."""
        if isinstance(v, list) and v and v[0] == "value":
            v = v[1]
        if isinstance(v, str):
            parsed = temporal.parse(v)
            if parsed is None:
                return None
            return parsed, ("day" if not isinstance(parsed, dt.datetime) else None)
        if isinstance(v, list) and v and v[0] == "relative-datetime":
            return self.relative(v[1:]), (v[2] if len(v) > 2 else None)
        return None

    def relative(self, args: list) -> dt.datetime:
        """`relative-datetime`'s moment. Metabase truncates it to its own unit (sql.qp's
        relative-datetime), so "= day-bucketed field, one month ago" means the first day of last
        month, not today's date last month; "current" is now."""
        value = self._shifted_now(args)
        unit = args[1] if len(args) > 1 else None
        return temporal.truncate(value, unit, self.context.week_start) if unit in temporal.TRUNCATION_UNITS else value

    def _shifted_now(self, args: list) -> dt.datetime:
        amount = args[0]
        unit = args[1] if len(args) > 1 else None
        now = self.context.now
        if amount == "current" or amount == 0:
            return now
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise Invalid(f"Invalid MBQL: relative-datetime needs an integer or \"current\", got {amount!r}.")
        if unit not in temporal.INTERVAL_UNITS:
            raise Invalid(f"Invalid MBQL: relative-datetime needs a unit, got {unit!r}.")
        return temporal.add(now, amount, unit)

    def bound(self, value, base_type: str) -> exp.Expression:
        value = temporal.as_datetime(value)
        if is_date(base_type) and value == temporal.truncate(value, "day"):
            return self.driver.temporal_literal(value.date())
        return self.driver.temporal_literal(value)

    def compare(self, op: str, args: list) -> exp.Expression:
        ref, values = args[0], list(args[1:])
        if not values:
            raise Invalid(f"Invalid MBQL: {op!r} needs a value to compare with.")
        if op == "between" and len(values) != 2:
            raise Invalid("Invalid MBQL: between takes a minimum and a maximum.")
        if op not in ("=", "!=", "between") and len(values) != 1:
            raise Invalid(f"Invalid MBQL: {op!r} compares with exactly one value.")
        if isinstance(ref, list) and ref and ref[0] in ("field", "expression"):
            raw, bucketed, base_type, unit = self.ref_with_info(ref)
            if is_temporal(base_type) and unit not in temporal.EXTRACTION_UNITS:
                parsed = [self.temporal_value(v, unit) for v in values]
                if all(p is not None for p in parsed):
                    return self.temporal_compare(op, raw, base_type, unit, parsed)
            left = bucketed
        else:
            left = self.value(ref)
        rights = [self.value(v) for v in values]
        if op == "between":
            return exp.Between(this=left, low=rights[0], high=rights[1])
        if op in ("=", "!="):
            nulls = [r for r in rights if isinstance(r, exp.Null)]
            rights = [r for r in rights if not isinstance(r, exp.Null)]
            parts = []
            if rights:
                parts.append(exp.EQ(this=left, expression=rights[0]) if len(rights) == 1
                             else exp.In(this=left, expressions=rights))
            if nulls:
                parts.append(exp.Is(this=left.copy(), expression=exp.Null()))
            positive = parts[0] if len(parts) == 1 else exp.Paren(this=exp.or_(*parts))
            if op == "=":
                return positive
            if nulls:
                return exp.Not(this=exp.Paren(this=positive))
            if len(rights) == 1:
                negative = exp.NEQ(this=left.copy(), expression=rights[0].copy())
                return exp.Paren(this=exp.or_(negative, exp.Is(this=left.copy(), expression=exp.Null())))
            # Metabase keeps rows whose value is NULL when filtering with !=.
            return exp.Paren(this=exp.or_(exp.Not(this=exp.Paren(this=positive)),
                                          exp.Is(this=left.copy(), expression=exp.Null())))
        return COMPARISONS[op](this=left, expression=rights[0])

    def temporal_compare(self, op: str, raw, base_type: str, unit: str | None, parsed: list) -> exp.Expression:
        column = self.driver.temporal_column(raw, base_type)
        ranges = []
        for value, natural_unit in parsed:
            bucket_unit = unit if unit in temporal.TRUNCATION_UNITS else natural_unit
            if bucket_unit:
                ranges.append(temporal.bucket(value, bucket_unit, self.context.week_start))
            else:
                exact = temporal.as_datetime(value)
                ranges.append((exact, None))

        def ge(v):
            return exp.GTE(this=column.copy(), expression=self.bound(v, base_type))

        def lt(v):
            return exp.LT(this=column.copy(), expression=self.bound(v, base_type))

        def within(lo, hi):
            if hi is None:
                return exp.EQ(this=column.copy(), expression=self.bound(lo, base_type))
            return exp.Paren(this=exp.and_(ge(lo), lt(hi)))

        if op == "between":
            (lo, _), (lo2, hi2) = ranges
            upper = lt(hi2) if hi2 is not None else exp.LTE(this=column.copy(), expression=self.bound(lo2, base_type))
            return exp.Paren(this=exp.and_(ge(lo), upper))
        lo, hi = ranges[0]
        if op in ("=", "!="):
            parts = [within(a, b) for a, b in ranges]
            positive = parts[0] if len(parts) == 1 else exp.Paren(this=exp.or_(*parts))
            if op == "=":
                return positive
            return exp.Paren(this=exp.or_(exp.Not(this=_paren(positive)),
                                          exp.Is(this=column.copy(), expression=exp.Null())))
        if hi is None:
            return COMPARISONS[op](this=column, expression=self.bound(lo, base_type))
        return {"<": lambda: lt(lo), "<=": lambda: lt(hi), ">": lambda: ge(hi), ">=": lambda: ge(lo)}[op]()

    def range_filter(self, ref, lo: dt.datetime, hi: dt.datetime) -> exp.Expression:
        raw, _, base_type, _ = self.ref_with_info(ref)
        if not is_temporal(base_type):
            raise Invalid("Invalid MBQL: a relative date filter needs a date or time column.")
        column = self.driver.temporal_column(raw, base_type)
        return exp.Paren(this=exp.and_(exp.GTE(this=column, expression=self.bound(lo, base_type)),
                                       exp.LT(this=column.copy(), expression=self.bound(hi, base_type))))

    def interval_bounds(self, anchor: dt.datetime, amount, unit: str, include_current: bool) -> tuple:
        if unit not in temporal.TRUNCATION_UNITS and unit != "second":
            raise Invalid(f"Invalid MBQL: {unit!r} is not a unit for a relative date filter.")
        week_start = self.context.week_start
        if amount in ("current", 0):
            return temporal.bucket(anchor, unit, week_start)
        amount = {"last": -1, "next": 1}.get(amount, amount)
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise Invalid(f"Invalid MBQL: time-interval needs an integer, \"current\", \"last\" or \"next\", got {amount!r}.")
        start = temporal.truncate(anchor, unit, week_start)
        if amount < 0:
            lo = temporal.add(start, amount, unit)
            hi = temporal.add(start, 1, unit) if include_current else start
        else:
            lo = start if include_current else temporal.add(start, 1, unit)
            hi = temporal.add(start, amount + 1, unit)
        return lo, hi

    def time_interval(self, args: list) -> exp.Expression:
        ref, amount, unit = args[0], args[1], args[2]
        opts = args[3] if len(args) > 3 and isinstance(args[3], dict) else {}
        lo, hi = self.interval_bounds(self.context.now, amount, unit, bool(opts.get("include-current")))
        return self.range_filter(ref, lo, hi)

    def relative_time_interval(self, args: list) -> exp.Expression:
        if len(args) != 5:
            raise Invalid("Invalid MBQL: relative-time-interval takes a column, an amount, a unit, an offset and its unit.")
        ref, amount, unit, offset, offset_unit = args
        if offset_unit not in temporal.INTERVAL_UNITS or not isinstance(offset, int):
            raise Invalid("Invalid MBQL: relative-time-interval needs an integer offset and its unit.")
        # Metabase buckets the clock by the interval's unit first, then shifts both bounds by the offset.
        lo, hi = self.interval_bounds(self.context.now, amount, unit, False)
        return self.range_filter(ref, temporal.add(lo, offset, offset_unit), temporal.add(hi, offset, offset_unit))

    def during(self, args: list) -> exp.Expression:
        if len(args) != 3:
            raise Invalid("Invalid MBQL: during takes a column, a date and a unit.")
        ref, value, unit = args
        parsed = temporal.parse(value) if isinstance(value, str) else None
        if parsed is None or unit not in temporal.TRUNCATION_UNITS:
            raise Invalid("Invalid MBQL: during needs an ISO date and a unit from minute to year.")
        lo, hi = temporal.bucket(parsed, unit, self.context.week_start)
        return self.range_filter(ref, lo, hi)
