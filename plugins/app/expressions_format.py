"""MBQL back to custom expression text (plugins/app/expressions.py is the interface): what the editor
shows for a clause the query already holds, in the form `parse` reads back to the same clause.

Columns are written by the name `columns` gives their reference (the one the editor offers), strings
in double quotes, and parentheses only where precedence needs them.
"""
from __future__ import annotations

import json
import math

from .expressions_grammar import BY_OP, STRING_OPTIONS

# Precedence levels, loosest first (the parser's tiers).
OR, AND, NOT, COMPARE, ADD, MUL, UNARY, ATOM = range(1, 9)
LEVELS = {"or": OR, "and": AND, "+": ADD, "-": ADD, "*": MUL, "/": MUL,
          **{op: COMPARE for op in ("=", "!=", "<", "<=", ">", ">=")}}
ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v"}


class Unprintable(ValueError):
    """A clause the expression language cannot write (or a column the query does not offer)."""


def ref_key(ref) -> str:
    """One spelling of a reference whatever its options' form (None and {} are the same; key order)."""
    if isinstance(ref, list) and len(ref) >= 2 and ref[0] in ("field", "expression"):
        opts = ref[2] if len(ref) > 2 and isinstance(ref[2], dict) else {}
        opts = {k: v for k, v in opts.items() if v is not None and k not in ("base-type", "effective-type")}
        return json.dumps([ref[0], ref[1], opts], sort_keys=True)
    return json.dumps(ref, sort_keys=True)


def quote(text: str) -> str:
    return '"' + "".join(ESCAPES.get(ch, ch) for ch in text) + '"'


def bracket(name: str) -> str:
    return "[" + name.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]") + "]"


def number(value) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Unprintable(f"{value} is not a number an expression can hold.")
        return repr(value)
    return str(value)


class Printer:
    def __init__(self, columns: dict):
        self.names = {ref_key(ref): name for name, ref in columns.items()}

    def text(self, x, level: int = 0) -> str:
        out, own = self.node(x)
        return f"({out})" if own < level else out

    def node(self, x) -> tuple[str, int]:
        if isinstance(x, bool):
            return ("True" if x else "False"), ATOM
        if isinstance(x, (int, float)):
            return number(x), (UNARY if x < 0 else ATOM)
        if isinstance(x, str):
            return quote(x), ATOM
        if not isinstance(x, list) or not x or not isinstance(x[0], str):
            raise Unprintable(f"{x!r} is not an expression.")
        op, args = x[0], x[1:]
        if op in ("field", "expression", "segment", "metric"):
            name = self.names.get(ref_key(x))
            if name is None:
                raise Unprintable(f"The query offers no column {x!r}.")
            return bracket(name), ATOM
        if op == "value":
            return self.node(args[0])
        if op == "aggregation-options":
            return self.node(args[0])
        if op == "-" and len(args) == 2 and args[0] == 0 and not isinstance(args[0], bool):
            return "-" + self.text(args[1], UNARY), UNARY
        if op in LEVELS:
            level = LEVELS[op]
            word = f" {op.upper()} " if op in ("and", "or") else f" {op} "
            if op in ("=", "!=") and len(args) > 2:  # Metabase's "one of these values"
                return self.call("in" if op == "=" else "not-in", args)
            parts = [self.text(args[0], level)] + [self.text(a, level + 1) for a in args[1:]]
            return word.join(parts), level
        if op == "not":
            return "NOT " + self.text(args[0], NOT), NOT
        return self.call(op, args)

    def call(self, op: str, args: list) -> tuple[str, int]:
        function = BY_OP.get(op)
        if function is None:
            raise Unprintable(f"The expression language has no function for {op!r}.")
        if op == "case":
            pairs = args[0] if args and isinstance(args[0], list) else []
            flat = [part for pair in pairs for part in pair]
            opts = args[1] if len(args) > 1 and isinstance(args[1], dict) else {}
            if "default" in opts:
                flat.append(opts["default"])
            return f"case({', '.join(self.text(a) for a in flat)})", ATOM
        if op == "offset" and args and not isinstance(args[0], dict):
            args = [{}, *args]  # the normalised form, options left out
        if op in ("count", "cum-count") and not args:
            return function.name, ATOM
        shown = []
        for position, arg in enumerate(args):
            if isinstance(arg, dict):
                shown.extend(self.options(op, arg))
            else:
                shown.append(self.text(arg))
        return f"{function.name}({', '.join(shown)})", ATOM

    def options(self, op: str, opts: dict) -> list[str]:
        if op in STRING_OPTIONS:
            return [quote("case-insensitive")] if opts.get("case-sensitive") is False else []
        if op == "time-interval":
            return [quote("include-current")] if opts.get("include-current") else []
        if op == "datetime":
            return [quote(str(opts["mode"]))] if opts.get("mode") else []
        if opts:
            raise Unprintable(f"The options {opts!r} of {op} cannot be written as an expression.")
        return []


def format_expression(clause, columns: dict) -> str:
    return Printer(columns).text(clause)
