"""The question builder's filters: the MBQL clause for what a column's widget was given, and each clause
said in words.

A date is given in Metabase's date parameter syntax, the one the dashboards' date widget writes
(filters.py, app/_filters.html, static/filters.js): "past30days" is `["time-interval", f, -30, "day"]`,
"2024-01-01~2024-03-31" a `between`, "2024-03" the month, "Q1-2024" the quarter, as Metabase's notebook
writes the same choices. Strings match ignoring case, as Metabase's notebook's default is.
"""
from __future__ import annotations

import math
import re

from .filters import date_parts
from .notebook_columns import Column

OPERATORS = {
    "number": (("=", "Equal to"), ("!=", "Not equal to"), (">", "Greater than"), ("<", "Less than"),
               (">=", "Greater than or equal to"), ("<=", "Less than or equal to"), ("between", "Between"),
               ("is-null", "Is empty"), ("not-null", "Not empty")),
    "text": (("=", "Is"), ("!=", "Is not"), ("contains", "Contains"), ("does-not-contain", "Does not contain"),
             ("starts-with", "Starts with"), ("ends-with", "Ends with"), ("is-empty", "Is empty"),
             ("not-empty", "Not empty")),
    "date": (("date", "In a time span"), ("is-null", "Is empty"), ("not-null", "Not empty")),
    "boolean": (("true", "Is true"), ("false", "Is false"), ("is-null", "Is empty"), ("not-null", "Not empty")),
}
# A column with a list of values compares as text does; its list is the widget of "is" and "is not".
OPERATORS["category"] = OPERATORS["text"]
NO_VALUE = ("is-null", "not-null", "is-empty", "not-empty")
STRING_MATCH = ("contains", "does-not-contain", "starts-with", "ends-with")
WORDS = {"=": "is", "!=": "is not", ">": "is greater than", "<": "is less than", ">=": "is at least",
         "<=": "is at most", "contains": "contains", "does-not-contain": "does not contain",
         "starts-with": "starts with", "ends-with": "ends with", "is-null": "is empty", "not-null": "is not empty",
         "is-empty": "is empty", "not-empty": "is not empty"}
_UNIT = {"minute", "hour", "day", "week", "month", "quarter", "year"}


class BadFilter(ValueError):
    """What a filter's widget was given does not make a filter."""


def number(text: str):
    try:
        value = float(text)
    except ValueError:
        raise BadFilter(f"“{text}” is not a number.") from None
    if not math.isfinite(value):
        raise BadFilter(f"“{text}” is not a number.")
    return int(value) if value.is_integer() and re.fullmatch(r"\s*-?\d+\s*", text) else value


def clause(column: Column, operator: str, values: list[str]) -> list:
    """The filter clause for a column, an operator of its kind and the values its widget sent."""
    if operator not in dict(OPERATORS[column.kind]):
        raise BadFilter("That comparison does not apply to this column.")
    ref = column.ref
    if operator in NO_VALUE:
        return [operator, ref]
    if operator in ("true", "false"):
        return ["=", ref, operator == "true"]
    values = [v.strip() for v in values if v and v.strip()]
    if column.kind == "date":
        if not values:
            raise BadFilter("Choose a time span for the date.")
        return date_clause(ref, values[0])
    if not values:
        raise BadFilter("Give a value to compare with.")
    if column.kind == "number":
        numbers = [number(v) for v in values]
        if operator == "between":
            if len(numbers) != 2:
                raise BadFilter("Between takes two numbers, the lowest and the highest.")
            return ["between", ref, min(numbers), max(numbers)]
        if operator in ("=", "!="):
            return [operator, ref, *numbers]
        return [operator, ref, numbers[0]]
    if operator in STRING_MATCH:
        return [operator, ref, values[0], {"case-sensitive": False}]
    return [operator, ref, *values]


def date_clause(ref: list, text: str) -> list:
    """A date filter from Metabase's date syntax (what the date widget writes)."""
    parts = date_parts(text)
    mode = parts["mode"]

    def bucketed(unit):  # a field or a custom column (["expression", name]), on a unit
        return [ref[0], ref[1], {**((ref[2] if len(ref) > 2 else None) or {}), "temporal-unit": unit}]

    if mode in ("past", "next") and parts.get("unit") in _UNIT:
        amount = parts["amount"] if mode == "next" else -parts["amount"]
        out = ["time-interval", ref, amount, parts["unit"]]
        return out + [{"include-current": True}] if parts.get("current") else out
    if mode == "this" and parts.get("unit") in _UNIT:
        return ["time-interval", ref, "current", parts["unit"]]
    if mode == "on":
        return ["=", bucketed("day"), parts["start"]]
    if mode == "between":
        return ["between", bucketed("day"), parts["start"], parts["end"]]
    if mode == "before":
        return ["<", bucketed("day"), parts["end"]]
    if mode == "after":
        return [">", bucketed("day"), parts["start"]]
    if mode == "month":
        return ["=", bucketed("month"), parts["month"] + "-01"]
    if mode == "quarter":
        return ["=", bucketed("quarter"), f"{parts['year']:04d}-{(parts['quarter'] - 1) * 3 + 1:02d}-01"]
    raise BadFilter(f"“{text}” is not a time span the builder knows.")


def words(clause_: list, label) -> str:
    """A filter clause in words, its columns named by `label(ref)`."""
    if not isinstance(clause_, list) or not clause_:
        return str(clause_)
    op, args = clause_[0], clause_[1:]
    if op in ("and", "or"):
        return f" {op} ".join(f"({words(c, label)})" for c in args)
    if op == "not" and args:
        return f"not ({words(args[0], label)})"
    if not args:
        return str(op)
    name = label(args[0])
    rest = [a for a in args[1:] if not isinstance(a, dict)]
    if op == "time-interval" and len(rest) >= 2:
        amount, unit = rest[0], rest[1]
        if amount == "current":
            return f"{name} is this {unit}"
        if isinstance(amount, int):
            span = f"{abs(amount)} {unit}{'s' if abs(amount) != 1 else ''}"
            current = " or this one" if any(isinstance(a, dict) and a.get("include-current") for a in args) else ""
            return f"{name} is in the {'previous' if amount < 0 else 'next'} {span}{current}"
    unit = args[0][2].get("temporal-unit") if isinstance(args[0], list) and len(args[0]) == 3 and \
        isinstance(args[0][2], dict) else None
    shown = [label(v) if isinstance(v, list) and v[:1] == ["field"] else str(v) for v in rest]
    if unit in ("month", "quarter") and op == "=" and rest:
        return f"{name} is in the {unit} of {rest[0]}"
    if op == "between" and len(rest) == 2:
        return f"{name} is between {shown[0]} and {shown[1]}"
    return f"{name} {WORDS.get(op, op)}" + (f" {', '.join(shown)}" if shown else "")
