"""What kind of value each part of a custom expression is, as far as the text and the columns' base types
tell (plugins/app/expressions.py is the interface), so that arithmetic on text, a sum of names or AND
between numbers is an error at its place rather than a failed query. A part whose kind is not known
(a column without a base type, case, coalesce, min) is "any" and passes; the API's compile check
(expressions_views.compile_check) sees the rest.
"""
from __future__ import annotations

from .expressions_grammar import ExpressionError, Function

NUMERIC = ("type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Number", "type/Currency")
# Aggregations whose (first) argument is a number.
NUMERIC_AGGREGATIONS = {"sum", "cum-sum", "avg", "median", "percentile", "stddev", "var", "sum-where"}
WORDS = {"number": "a number", "string": "text", "boolean": "a condition (true or false)", "datetime": "a date"}


def kind_of_type(base_type: str | None) -> str:
    if not base_type:
        return "any"
    if base_type in NUMERIC or base_type.startswith(("type/Integer", "type/Float", "type/Decimal")):
        return "number"
    if base_type.startswith(("type/Text", "type/UUID")):
        return "string"
    if base_type.startswith(("type/Date", "type/Time", "type/Instant")):
        return "datetime"
    if base_type == "type/Boolean":
        return "boolean"
    return "any"


class Types:
    def __init__(self, types: dict):
        self.types = types

    def of(self, node) -> str:
        """The kind of value `node` is, checking its parts on the way."""
        kind = node.kind
        if kind == "number":
            return "number"
        if kind == "string":
            return "string"
        if kind == "boolean":
            return "boolean"
        if kind == "column":
            ref = node.ref
            if isinstance(ref, list) and ref and ref[0] == "segment":
                return "boolean"
            if isinstance(ref, list) and ref and ref[0] == "metric":
                return "number"
            return kind_of_type(self.types.get(node.value))
        if kind == "neg":
            self.expect(node.children[0], ("number",), "-")
            return "number"
        if kind == "not":
            self.expect(node.children[0], ("boolean",), "NOT")
            return "boolean"
        if kind == "op":
            return self.operator(node)
        return self.call(node)

    def expect(self, node, wanted: tuple[str, ...], where: str) -> str:
        found = self.of(node)
        if found != "any" and found not in wanted:
            expected = " or ".join(WORDS[w] for w in wanted)
            raise ExpressionError(f"{where} expects {expected}, but this is {WORDS[found]}.", node.start, node.end)
        return found

    def operator(self, node) -> str:
        op = node.value
        if op in ("and", "or"):
            for child in node.children:
                self.expect(child, ("boolean",), op.upper())
            return "boolean"
        if op in ("+", "-", "*", "/"):
            # Dates take + and - of a time span (timeSpan(1, "day")): its kind is "any".
            allowed = ("number", "datetime") if op in ("+", "-") else ("number",)
            kinds = [self.expect(child, allowed, op) for child in node.children]
            return "datetime" if "datetime" in kinds else "number"
        for child in node.children:  # comparisons: each side checked inside, any kinds compared
            self.of(child)
        return "boolean"

    def call(self, node) -> str:
        function: Function = node.value
        args = node.children
        for position, arg in enumerate(args):
            if function.op in NUMERIC_AGGREGATIONS and position == 0:
                self.expect(arg, ("number",), function.name)
            elif function.op in ("share", "count-where") or (function.op in ("sum-where", "distinct-where")
                                                            and position == 1):
                self.expect(arg, ("boolean",), function.name)
            elif function.op in ("case", "if") and position % 2 == 0 and position < len(args) - 1:
                self.expect(arg, ("boolean",), function.name)
            else:
                self.of(arg)
        return function.returns
