"""Parameters: the card and dashboard parameter forms, applied to MBQL and native queries alike.

A parameter is `{"type", "target", "value", "id"?, "options"?}`. Its value is first read into a
`Filter` (an operator and typed values, dates already resolved to ranges by core.query.dates).
A filter then becomes either an MBQL clause added to the query's filter (`to_mbql`) or, for a
native field filter, a sqlglot condition on the column whose values are all bound parameters
(`to_sql`). Both paths read values the same way, so a dashboard filter means the same thing on a
question and on a SQL card.
"""
from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass, field
from typing import Any, Callable

from sqlglot import exp

from core.driver.dialect import QueryDialect

from . import dates
from .errors import QueryFailed

NUMERIC_TYPES = ("type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Number")
TEMPORAL_TYPES = ("type/Date", "type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
                  "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/Time", "type/Instant")

# Operator parameter types, by how many values they take.
STRING_OPS = {"string/contains": "contains", "string/does-not-contain": "does-not-contain",
              "string/starts-with": "starts-with", "string/ends-with": "ends-with"}
EQUALITY = {"string/=": "=", "string/!=": "!=", "number/=": "=", "number/!=": "!=", "boolean/=": "=",
            "category": "=", "id": "=", "text": "=", "number": "=", "boolean": "=", "none": "=",
            "location/city": "=", "location/state": "=", "location/zip_code": "=", "location/country": "="}
COMPARISON = {"number/>=": ">=", "number/<=": "<="}


@dataclass(frozen=True)
class Filter:
    """What a parameter value asks for. op: "=", "!=", ">=", "<=", "between", "contains",
    "does-not-contain", "starts-with", "ends-with", "range" (a DateRange) or "exclude" (an Exclusion)."""

    op: str
    values: tuple = ()
    options: dict = field(default_factory=dict)


def is_empty(value: Any) -> bool:
    """Metabase treats null, "" and [] (and a list of nulls) as "no value"."""
    if value is None or value == "":
        return True
    if isinstance(value, (list, tuple)):
        return all(is_empty(v) for v in value)
    return False


SCALARS = (str, int, float, bool, decimal.Decimal, type(None))


def check_parameters(parameters: Any) -> None:
    """Each parameter is a map whose value is a scalar or a list of scalars."""
    if parameters is None:
        return
    if not isinstance(parameters, list):
        raise QueryFailed("Invalid query: parameters must be a list.", "invalid-parameter")
    for param in parameters:
        if not isinstance(param, dict):
            raise QueryFailed(f"Invalid parameter {param!r}: a parameter must be a map.", "invalid-parameter")
        value = param.get("value")
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, SCALARS) for v in values):
            raise QueryFailed(f"Invalid value for parameter {param.get('id') or param.get('name') or ''}: "
                              f"{value!r}", "invalid-parameter")


def as_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def coerce(value: Any, base_type: str | None) -> Any:
    """A widget sends strings; compare them as the column's type so "7" finds the integer 7."""
    if base_type in NUMERIC_TYPES or (base_type and base_type.startswith("type/") and base_type in NUMERIC_TYPES):
        return number(value)
    if base_type == "type/Boolean" and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def number(value: Any) -> int | float | decimal.Decimal:
    if isinstance(value, bool):
        raise QueryFailed(f"Invalid number value: {value!r}", "invalid-parameter")
    if isinstance(value, (int, float, decimal.Decimal)):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                pass
    raise QueryFailed(f"Invalid number value: {value!r}", "invalid-parameter")


def read_filter(kind: str, value: Any, *, base_type: str | None = None, options: dict | None = None,
                now: dt.datetime | None = None, week_start: int = 6) -> Filter | None:
    """The filter a parameter of type `kind` with `value` stands for; None when it has no value."""
    if is_empty(value):
        return None
    options = dict(options or {})
    if kind.startswith("date") and kind != "date":
        return _date_filter(kind, value, now, week_start)
    if kind == "date":
        if base_type in TEMPORAL_TYPES or base_type is None:
            return _date_filter("date/all-options", value, now, week_start)
    values = [v for v in as_list(value) if not is_empty(v)]
    if kind in STRING_OPS:
        return Filter(STRING_OPS[kind], tuple(str(v) for v in values), options)
    if kind == "number/between":
        padded = (as_list(value) + [None, None])[:2]
        low, high = (None if is_empty(v) else number(v) for v in padded)
        if low is not None and high is not None:
            return Filter("between", (low, high), options)
        if low is not None:
            return Filter(">=", (low,), options)
        return Filter("<=", (high,), options)
    if kind in COMPARISON:
        return Filter(COMPARISON[kind], (number(values[0]),), options)
    op = EQUALITY.get(kind)
    if op is None and kind.startswith(("location/", "string/", "number/")):
        op = "="
    if op is None:
        raise QueryFailed(f"Unknown parameter type: {kind}", "invalid-parameter")
    if kind.startswith("number"):
        typed = tuple(number(v) for v in values)
    else:
        typed = tuple(coerce(v, base_type) for v in values)
    return Filter(op, typed, options)


def _date_filter(kind: str, value: Any, now: dt.datetime | None, week_start: int) -> Filter:
    if isinstance(value, (list, tuple)):
        value = next(v for v in value if not is_empty(v))
    try:
        parsed = dates.parse(kind, value, now or dates.now_in(None), week_start)
    except dates.DateValueError as exc:
        raise QueryFailed(str(exc), "invalid-parameter") from None
    if isinstance(parsed, dates.Exclusion):
        return Filter("exclude", (parsed,))
    return Filter("range", (parsed,))


# --------------------------------------------------------------------------------------------------
# MBQL
# --------------------------------------------------------------------------------------------------


def _iso(bound: dt.date | dt.datetime) -> str:
    return bound.isoformat() if not isinstance(bound, dt.datetime) else bound.isoformat(sep="T", timespec="seconds")


def to_mbql(flt: Filter, ref: list) -> list:
    """The legacy-MBQL filter clause for `flt` on the field `ref`."""
    op = flt.op
    if op in ("=", "!="):
        return [op, ref, *flt.values]
    if op in (">=", "<="):
        return [op, ref, flt.values[0]]
    if op == "between":
        return ["between", ref, flt.values[0], flt.values[1]]
    if op in ("contains", "does-not-contain", "starts-with", "ends-with"):
        clauses = [[op, ref, v, flt.options] if flt.options else [op, ref, v] for v in flt.values]
        if len(clauses) == 1:
            return clauses[0]
        return ["and" if op == "does-not-contain" else "or", *clauses]
    if op == "range":
        rng: dates.DateRange = flt.values[0]
        parts = []
        if rng.start is not None:
            parts.append([">=", ref, _iso(rng.start)])
        if rng.end is not None:
            parts.append(["<", ref, _iso(rng.end)])
        return parts[0] if len(parts) == 1 else ["and", *parts]
    if op == "exclude":
        excl: dates.Exclusion = flt.values[0]
        unit_ref = _with_unit(ref, excl.unit)
        return ["!=", unit_ref, *excl.values]
    raise QueryFailed(f"Unknown filter operator: {op}", "invalid-parameter")


def _with_unit(ref: list, unit: str) -> list:
    opts = dict(ref[2] or {}) if len(ref) > 2 and isinstance(ref[2], dict) else {}
    opts["temporal-unit"] = unit
    return [ref[0], ref[1], opts]


# --------------------------------------------------------------------------------------------------
# SQL (native field filters)
# --------------------------------------------------------------------------------------------------

Bind = Callable[[Any], exp.Expression]


def _string_match(op: str, column: exp.Expression, value: str, options: dict, bind: Bind,
                  dialect: type[QueryDialect]) -> exp.Expression:
    case_sensitive = options.get("case-sensitive", options.get("case_sensitive", True))
    kind = "contains" if op == "does-not-contain" else op
    match = dialect.string_match(column, kind, value, bool(case_sensitive), bind)
    if op == "does-not-contain":
        return exp.Or(this=exp.Not(this=exp.Paren(this=match)), expression=exp.Is(this=column.copy(), expression=exp.Null()))
    return match


def to_sql(flt: Filter, column: exp.Expression, bind: Bind, dialect: type[QueryDialect],
           week_start: int = 6) -> exp.Expression:
    """A condition on `column` for `flt` in the AST forms of `dialect` (a driver); every value goes
    through `bind` (a bound parameter). Excluded days of the week are numbered from `week_start`, as
    read_filter numbered them."""
    op = flt.op
    col = column
    if op in ("=", "!="):
        def value(v: Any) -> exp.Expression:
            # As for LIKE: string equality is exact on every engine, whatever the collation.
            return dialect.exact_text(bind(v)) if isinstance(v, str) else bind(v)

        if len(flt.values) == 1:
            cond: exp.Expression = exp.EQ(this=col.copy(), expression=value(flt.values[0]))
        else:
            cond = exp.In(this=col.copy(), expressions=[value(v) for v in flt.values])
        if op == "!=":
            return exp.Or(this=exp.Not(this=exp.Paren(this=cond)), expression=exp.Is(this=col.copy(), expression=exp.Null()))
        return cond
    if op == ">=":
        return exp.GTE(this=col.copy(), expression=bind(flt.values[0]))
    if op == "<=":
        return exp.LTE(this=col.copy(), expression=bind(flt.values[0]))
    if op == "between":
        return exp.Between(this=col.copy(), low=bind(flt.values[0]), high=bind(flt.values[1]))
    if op in ("contains", "does-not-contain", "starts-with", "ends-with"):
        parts = [_string_match(op, col.copy(), v, flt.options, bind, dialect) for v in flt.values]
        joiner = exp.and_ if op == "does-not-contain" else exp.or_
        return parts[0] if len(parts) == 1 else exp.Paren(this=joiner(*parts))
    if op == "range":
        rng: dates.DateRange = flt.values[0]
        parts = []
        if rng.start is not None:
            parts.append(exp.GTE(this=col.copy(), expression=bind(rng.start)))
        if rng.end is not None:
            parts.append(exp.LT(this=col.copy(), expression=bind(rng.end)))
        return parts[0] if len(parts) == 1 else exp.and_(*parts)
    if op == "exclude":
        excl: dates.Exclusion = flt.values[0]
        part = dialect.extract_temporal(col.copy(), excl.unit, week_start)
        return exp.Or(this=exp.Not(this=exp.Paren(this=exp.In(this=part, expressions=[bind(v) for v in excl.values]))),
                      expression=exp.Is(this=col.copy(), expression=exp.Null()))
    raise QueryFailed(f"Unknown filter operator: {op}", "invalid-parameter")


# --------------------------------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------------------------------


def template_tag_target(target: Any) -> tuple[str, str | dict] | None:
    """("variable"|"dimension", tag name or {"id": ...}) for a template-tag target, else None."""
    if not isinstance(target, list) or len(target) < 2:
        return None
    kind, inner = target[0], target[1]
    if kind not in ("variable", "dimension") or not isinstance(inner, list) or len(inner) < 2:
        return None
    if inner[0] != "template-tag":
        return None
    ref = inner[1]
    if isinstance(ref, dict):
        return kind, ref
    return kind, str(ref)


def field_target(target: Any) -> list | None:
    """The legacy field ref a dimension target points at, or None."""
    if not isinstance(target, list) or not target:
        return None
    if target[0] == "dimension" and len(target) >= 2 and isinstance(target[1], list):
        inner = target[1]
    elif target[0] in ("field", "expression"):
        inner = target
    else:
        return None
    if inner and inner[0] == "field" and len(inner) >= 2:
        ref = list(inner) + [None] * (3 - len(inner))
        # MBQL 5 refs put the options second: ["field", {opts}, id].
        if isinstance(ref[1], dict):
            opts = {k: v for k, v in ref[1].items() if not k.startswith("lib/")}
            return ["field", ref[2], opts or None]
        return ["field", ref[1], ref[2]]
    if inner and inner[0] == "expression":
        return list(inner)
    return None
