"""AST fix-ups for temporal SQL, where sqlglot's output differs per engine or is simply wrong.

`canonical_temporal` (applied by every SQLDriver.to_sql) rewrites sqlglot's many date-part nodes
(YEAR(x), DayOfWeek, DateTrunc, ...) into two canonical forms, `EXTRACT(unit FROM x)` and
`TimestampTrunc(x, unit)`, with PostgreSQL's meaning: weeks start on Monday (ISO), `DOW` is 0 for
Sunday, `DOY` counts from 1. PostgreSQL and DuckDB render those natively; `sqlite_temporal` and
`mysql_temporal` rewrite them for engines without DATE_TRUNC (sqlglot emits TIMESTAMP_TRUNC for
SQLite, which does not exist, and DATE(x) for a MySQL minute truncation). The conformance suite
checks every unit on every engine.
"""
from __future__ import annotations

from sqlglot import exp

PART_NODES = {
    "Year": "YEAR", "Month": "MONTH", "Day": "DAY", "DayOfMonth": "DAY", "Quarter": "QUARTER",
    "DayOfWeek": "DOW", "DayOfYear": "DOY", "Hour": "HOUR", "Minute": "MINUTE", "Second": "SECOND",
    "WeekOfYear": "WEEK",
}
TRUNC_UNITS = ("MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR")
EXTRACT_UNITS = ("YEAR", "QUARTER", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "DOW", "DOY")


def _unit(node: exp.Expression, key: str = "unit") -> str:
    return node.text(key).upper()


def _canonical(node: exp.Expression) -> exp.Expression:
    unit = PART_NODES.get(type(node).__name__)
    if unit and isinstance(node, exp.Func) and node.args.get("this") is not None:
        return exp.Extract(this=exp.var(unit), expression=node.this)
    if isinstance(node, exp.DateTrunc):
        return exp.TimestampTrunc(this=node.this, unit=exp.var(_unit(node)))
    return node


def canonical_temporal(tree: exp.Expression) -> exp.Expression:
    return tree.transform(_canonical, copy=False)


def _call(name: str, *args) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=[a if isinstance(a, exp.Expression) else exp.Literal.string(a)
                                                  for a in args])


def _int(value: exp.Expression) -> exp.Expression:
    return exp.Cast(this=value, to=exp.DataType.build("INTEGER"))


# ---- SQLite: strftime() and datetime() modifiers ----------------------------------------------

SQLITE_PARTS = {"YEAR": "%Y", "MONTH": "%m", "DAY": "%d", "HOUR": "%H", "MINUTE": "%M", "SECOND": "%S",
                "DOW": "%w", "DOY": "%j"}


def _sqlite(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Extract):
        unit, value = _unit(node, "this"), node.expression
        if unit in SQLITE_PARTS:
            return _int(_call("strftime", SQLITE_PARTS[unit], value))
        if unit == "QUARTER":
            return exp.Div(this=exp.Paren(this=exp.Add(this=_int(_call("strftime", "%m", value)),
                                                       expression=exp.Literal.number(2))),
                           expression=exp.Literal.number(3), typed=True)
    if isinstance(node, exp.TimestampTrunc):
        unit, value = _unit(node), node.this
        if unit == "MINUTE":
            return _call("strftime", "%Y-%m-%d %H:%M:00", value)
        if unit == "HOUR":
            return _call("strftime", "%Y-%m-%d %H:00:00", value)
        if unit == "DAY":
            return _call("datetime", value, "start of day")
        if unit == "WEEK":  # back six days, then forward to a Monday: the Monday on or before
            return _call("datetime", value, "start of day", "-6 days", "weekday 1")
        if unit == "MONTH":
            return _call("datetime", value, "start of month")
        if unit == "QUARTER":
            months_in = exp.Mod(this=exp.Paren(this=exp.Sub(this=_int(_call("strftime", "%m", value)),
                                                            expression=exp.Literal.number(1))),
                                expression=exp.Literal.number(3))
            return _call("datetime", value, "start of month", _call("printf", "-%d months", months_in))
        if unit == "YEAR":
            return _call("datetime", value, "start of year")
    return node


def sqlite_temporal(tree: exp.Expression) -> exp.Expression:
    return tree.transform(_sqlite, copy=False)


# ---- MySQL / MariaDB: DATE_FORMAT and date arithmetic ------------------------------------------


def _datetime(value: exp.Expression) -> exp.Expression:
    return exp.Cast(this=value, to=exp.DataType.build("DATETIME"))


def _mysql(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Extract):
        unit, value = _unit(node, "this"), node.expression
        if unit == "DOW":
            return exp.Sub(this=_call("DAYOFWEEK", value), expression=exp.Literal.number(1))
        if unit == "DOY":
            return _call("DAYOFYEAR", value)
        if unit == "WEEK":
            return _call("WEEK", value, exp.Literal.number(3))  # mode 3 is the ISO week
    if isinstance(node, exp.TimestampTrunc):
        unit, value = _unit(node), node.this
        formats = {"MINUTE": "%Y-%m-%d %H:%i:00", "HOUR": "%Y-%m-%d %H:00:00", "MONTH": "%Y-%m-01",
                   "YEAR": "%Y-01-01"}
        if unit in formats:
            return _datetime(_call("DATE_FORMAT", value, formats[unit]))
        if unit == "DAY":
            return _datetime(_call("DATE", value))
        if unit == "WEEK":  # WEEKDAY() is 0 on Monday
            return _datetime(exp.DateSub(this=_call("DATE", value), expression=_call("WEEKDAY", value),
                                         unit=exp.var("DAY")))
        if unit == "QUARTER":
            return _datetime(exp.DateAdd(this=_call("MAKEDATE", _call("YEAR", value), exp.Literal.number(1)),
                                         expression=exp.Sub(this=_call("QUARTER", value), expression=exp.Literal.number(1)),
                                         unit=exp.var("QUARTER")))
    return node


def mysql_temporal(tree: exp.Expression) -> exp.Expression:
    return tree.transform(_mysql, copy=False)
