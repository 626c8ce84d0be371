"""Default day bucketing of unbucketed date and date-time references (Metabase's auto-bucket-datetimes).

Metabase gives a breakout on a Date or DateTime column without a temporal unit the unit `day`, and
does the same to such a column compared (=, !=, <, <=, >, >=, between) only with `yyyy-MM-dd` strings
or `relative-datetime` clauses in a filter, so that grouping and "on this date" filters work per day
rather than per instant. This module owns that rewrite; `compile_query` runs it on every MBQL stage
(joined stages and card stages included) after macros and parameters, before anything is compiled,
so every engine sees the same bucketed query and the result columns report `unit: "day"`.

What is left alone, as in Metabase:
- order-by, fields, aggregations, expressions definitions and join conditions (only breakouts and
  filters are rewritten);
- references that already have a `temporal-unit` (`default` included, which means "raw") or `binning`;
- Time columns and anything not derived from type/Date or type/DateTime (checked on the base and the
  effective type, so a UNIX-seconds column coerced to a date-time counts);
- references inside `time-interval` and `datetime-diff`, inside other filters (`is-null`, `inside`,
  `in`, string filters, `relative-time-interval`, `during`...), and in comparisons where any value is
  not a bare date string or relative datetime (`"2024-01-05T10:00:00"`, numbers, fields);
- every filter and breakout of a stage whose filters shift a reference by a minute, hour or second
  interval (`["+", ref, ["interval", n, "minute"]]`: a "starting from" filter that needs the instant);
- `expression` references unless their options declare a Date/DateTime `base-type`/`effective-type`
  (Metabase reads the options, not the expression's definition);
- native stages, which have no breakouts or filters.
The rewrite is idempotent: a reference bucketed once is guarded from then on.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

from .model import Query, Stage

# Base types that derive from type/Date or type/DateTime in Metabase's hierarchy (Time ones do not).
DATE_OR_DATETIME = frozenset({
    "type/Date", "type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
    "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/Instant",
})
DEFAULT_UNIT = "day"

# Clauses that are filters (Boolean-valued) in MBQL; only the comparisons may be bucketed.
FILTER_CLAUSES = frozenset({
    "and", "or", "not", "=", "!=", "<", "<=", ">", ">=", "between", "inside", "is-null", "not-null", "is-empty",
    "not-empty", "contains", "does-not-contain", "starts-with", "ends-with", "time-interval",
    "relative-time-interval", "during", "segment", "in", "not-in",
})
COMPOUND = frozenset({"and", "or", "not"})
BUCKETABLE_COMPARISONS = frozenset({"=", "!=", "<", "<=", ">", ">=", "between"})
# They need the exact instant, or supply their own unit.
PRECISE = frozenset({"time-interval", "datetime-diff"})
SHIFT_UNITS = frozenset({"minute", "hour", "second"})

_DATE_STRING = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

# field id -> (base_type, effective_type), or None when the field is unknown.
TypeLookup = Callable[[int], "tuple[str | None, str | None] | None"]


def auto_bucket(query: Query, field_types: TypeLookup) -> Query:
    """Bucket the query's unbucketed date references by day, stage by stage (in place; also returned)."""
    auto_bucket_stages(query.stages, field_types)
    return query


def auto_bucket_stages(stages: Iterable[Stage], field_types: TypeLookup) -> None:
    for stage in stages:
        for join in stage.joins:
            auto_bucket_stages(join.stages, field_types)
        if stage.native is None and (stage.filters or stage.breakouts):
            _stage(stage, field_types)


def _stage(stage: Stage, field_types: TypeLookup) -> None:
    # Metabase looks for the shift anywhere in the stage's filters and breakouts, and then rewrites
    # nothing in the stage at all.
    if _has_precise_shift(stage.filters):
        return
    rewrite = _Rewriter(field_types)
    stage.breakouts = [rewrite(b) for b in stage.breakouts]
    stage.filters = [rewrite(f) for f in stage.filters]


def is_date_or_datetime(base_type: str | None, effective_type: str | None) -> bool:
    return base_type in DATE_OR_DATETIME or effective_type in DATE_OR_DATETIME


def _date_string(value) -> bool:
    return isinstance(value, str) and _DATE_STRING.fullmatch(value) is not None


def _bucketable_value(value) -> bool:
    return _date_string(value) or (isinstance(value, list) and bool(value) and value[0] == "relative-datetime")


def _is_ref(x) -> bool:
    return isinstance(x, list) and len(x) == 3 and x[0] in ("field", "expression") and isinstance(x[2], dict)


def _has_precise_shift(x) -> bool:
    """Whether `x` holds `["+"|"-", ref, ["interval", n, minute|hour|second]]` anywhere."""
    if isinstance(x, dict):
        return any(_has_precise_shift(v) for v in x.values())
    if not isinstance(x, list):
        return False
    if (len(x) == 3 and x[0] in ("+", "-") and _is_ref(x[1]) and isinstance(x[2], list) and len(x[2]) == 3
            and x[2][0] == "interval" and x[2][2] in SHIFT_UNITS):
        return True
    return any(_has_precise_shift(item) for item in x)


def _guarded(x) -> bool:
    """Whether `x`, and everything inside it, must keep its references as they are."""
    if not isinstance(x, list) or not x or not isinstance(x[0], str):
        return False
    op = x[0]
    if op in FILTER_CLAUSES and op not in COMPOUND:
        if op not in BUCKETABLE_COMPARISONS:
            return True
        return not all(_bucketable_value(v) for v in x[2:])
    if _has_precise_shift(x):
        return True
    if op in PRECISE:
        return True
    if _is_ref(x):
        return bool(x[2].get("temporal-unit") or x[2].get("binning"))
    return False


class _Rewriter:
    def __init__(self, field_types: TypeLookup):
        self.field_types = field_types

    def __call__(self, x):
        if _guarded(x):
            return x
        if _is_ref(x):
            return [x[0], x[1], {**x[2], "temporal-unit": DEFAULT_UNIT}] if self.date_like(x) else x
        if isinstance(x, list):
            return [self(item) for item in x]
        if isinstance(x, dict):
            return {k: self(v) for k, v in x.items()}
        return x

    def date_like(self, ref: list) -> bool:
        kind, ident, opts = ref
        if kind == "field" and isinstance(ident, int) and not isinstance(ident, bool):
            types = self.field_types(ident)
            # An unknown field is the compiler's 400 to give, not this step's.
            return types is not None and is_date_or_datetime(*types)
        # Field literals (by name) and expressions carry their types in their options.
        base = opts.get("base-type")
        return is_date_or_datetime(base, opts.get("effective-type") or base)
