"""Custom expression text to MBQL (plugins/app/expressions.py is the interface): a recursive-descent
parser over expressions_grammar's tokens into a small tree that keeps every node's place in the text,
then the MBQL clause, checked for what the place it goes (a column, a summary, a filter) allows.

Precedence is Metabase's (its expression parser's tiers), loosest first: OR, AND, NOT, comparisons
(= != < <= > >=, which do not chain), + and -, * and /, unary minus, then calls, columns and literals.
Chains of one operator become one clause (`a + b + c` is ["+", a, b, c]), as the compiler folds them
left to right; parentheses keep their grouping.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from core.query.temporal import INTERVAL_UNITS

from .expressions_grammar import (
    BOOLEAN_OPS,
    BY_NAME,
    KEYWORDS,
    STRING_OPTIONS,
    ExpressionError,
    Function,
    Token,
    tokenize,
)
from .expressions_types import Types

KINDS = ("expression", "aggregation", "filter")
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
DIFF_UNITS = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")
# Argument positions that must be a unit name, and the units each accepts.
UNIT_ARGS = {"datetime-add": {2: INTERVAL_UNITS}, "datetime-subtract": {2: INTERVAL_UNITS},
             "datetime-diff": {2: DIFF_UNITS}, "time-interval": {2: INTERVAL_UNITS},
             "relative-time-interval": {2: INTERVAL_UNITS, 4: INTERVAL_UNITS},
             "relative-datetime": {1: INTERVAL_UNITS}, "interval": {1: INTERVAL_UNITS}}
WEEK_MODES = {"get-week": ("iso", "us", "instance"), "get-day-of-week": ("iso",)}


@dataclass
class Node:
    kind: str                 # number, string, boolean, column, call, op, not, neg
    start: int
    end: int
    value: object = None      # a literal, the column's name, the Function, the operator
    children: list = field(default_factory=list)
    ref: object = None        # a column's MBQL reference
    paren: bool = False       # written in parentheses (its grouping is kept)


def lookup(name: str, columns: dict) -> str | None:
    """The column key `name` means: exact, then ignoring case, then with "." or "->" for " → "."""
    if name in columns:
        return name
    folded = {key.lower(): key for key in columns}
    for candidate in (name, name.replace(".", " → ", 1), re.sub(r"\s*->\s*", " → ", name)):
        if candidate.lower() in folded:
            return folded[candidate.lower()]
    return None


class Parser:
    def __init__(self, text: str, columns: dict):
        self.text, self.columns = text, columns
        self.tokens = tokenize(text)
        self.i = 0

    @property
    def token(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def keyword(self, word: str) -> bool:
        return self.token.kind == "name" and self.token.text.lower() == word

    def parse(self) -> Node:
        if self.token.kind == "end":
            raise ExpressionError("The expression is empty.", 0, len(self.text))
        node = self.disjunction()
        token = self.token
        if token.kind == ")":
            raise ExpressionError("This ) closes no (.", token.start, token.end)
        if token.kind != "end":
            raise ExpressionError(f"Expected an operator or the end of the expression, found “{token.text}”. "
                                  "A comma or an operator may be missing.", token.start, token.end)
        return node

    def binary(self, operand, is_op) -> Node:
        node = operand()
        while is_op(self.token):
            token = self.take()
            op = token.text.lower()
            if self.token.kind in ("end", ")", ","):
                raise ExpressionError(f"Something is missing after “{token.text}”.", token.start, token.end)
            right = operand()
            if node.kind == "op" and node.value == op and not node.paren:
                node.children.append(right)
                node.end = right.end
            else:
                node = Node("op", node.start, right.end, op, [node, right])
        return node

    def disjunction(self) -> Node:
        return self.binary(self.conjunction, lambda t: t.kind == "name" and t.text.lower() == "or")

    def conjunction(self) -> Node:
        return self.binary(self.negation, lambda t: t.kind == "name" and t.text.lower() == "and")

    def negation(self) -> Node:
        if self.keyword("not"):
            token = self.take()
            if self.token.kind in ("end", ")", ","):
                raise ExpressionError("NOT needs a condition after it.", token.start, token.end)
            operand = self.negation()
            return Node("not", token.start, operand.end, "not", [operand])
        return self.comparison()

    def comparison(self) -> Node:
        left = self.additive()
        if self.token.kind == "op" and self.token.text in COMPARISONS:
            token = self.take()
            if self.token.kind in ("end", ")", ","):
                raise ExpressionError(f"Something is missing after “{token.text}”.", token.start, token.end)
            right = self.additive()
            if self.token.kind == "op" and self.token.text in COMPARISONS:
                extra = self.token
                raise ExpressionError("Comparisons do not chain: join two comparisons with AND.",
                                      extra.start, extra.end)
            return Node("op", left.start, right.end, token.text, [left, right])
        return left

    def additive(self) -> Node:
        return self.binary(self.multiplicative, lambda t: t.kind == "op" and t.text in ("+", "-"))

    def multiplicative(self) -> Node:
        return self.binary(self.unary, lambda t: t.kind == "op" and t.text in ("*", "/"))

    def unary(self) -> Node:
        if self.token.kind == "op" and self.token.text == "-":
            token = self.take()
            if self.token.kind in ("end", ")", ","):
                raise ExpressionError("Something is missing after “-”.", token.start, token.end)
            operand = self.unary()
            return Node("neg", token.start, operand.end, "-", [operand])
        return self.primary()

    def primary(self) -> Node:
        token = self.token
        if token.kind == "number":
            self.take()
            return Node("number", token.start, token.end, token.value)
        if token.kind == "string":
            self.take()
            return Node("string", token.start, token.end, token.value)
        if token.kind == "column":
            self.take()
            return self.column(str(token.value), token.start, token.end)
        if token.kind == "(":
            self.take()
            if self.token.kind == ")":
                raise ExpressionError("Empty parentheses: an expression is missing.", token.start, self.token.end)
            inner = self.disjunction()
            if self.token.kind != ")":
                if self.token.kind == "end":
                    raise ExpressionError("Missing a closing parenthesis ) for this (.", token.start, token.end)
                raise ExpressionError(f"Expected ) but found “{self.token.text}”.", self.token.start, self.token.end)
            close = self.take()
            inner.paren = True
            inner.start, inner.end = token.start, close.end
            return inner
        if token.kind == "name":
            return self.name()
        if token.kind == "end":
            raise ExpressionError("The expression ends too early: something is missing at the end.",
                                  token.start, token.end)
        raise ExpressionError(f"Expected a value, a column or a function, found “{token.text}”.",
                              token.start, token.end)

    def column(self, name: str, start: int, end: int) -> Node:
        key = lookup(name, self.columns)
        if key is None:
            close = difflib.get_close_matches(name, list(self.columns), n=1, cutoff=0.6)
            hint = f" Did you mean [{close[0]}]?" if close else ""
            raise ExpressionError(f"Unknown column [{name}].{hint}", start, end)
        return Node("column", start, end, key, ref=self.columns[key])

    def name(self) -> Node:
        token = self.take()
        lower = token.text.lower()
        if self.token.kind == "(":
            function = BY_NAME.get(lower)
            if function is None:
                close = difflib.get_close_matches(lower, list(BY_NAME), n=1, cutoff=0.6)
                hint = f" Did you mean {BY_NAME[close[0]].name}?" if close else ""
                raise ExpressionError(f"Unknown function {token.text}.{hint}", token.start, token.end)
            return self.call(function, token)
        if lower in ("true", "false"):
            return Node("boolean", token.start, token.end, lower == "true")
        if lower in KEYWORDS:
            raise ExpressionError(f"{token.text.upper()} needs something on its left.", token.start, token.end)
        # A bare word is a function that takes no argument (Count, now) before it is a column: a column
        # of the same name is still reachable in brackets, the function would not be.
        function = BY_NAME.get(lower)
        if function is not None and function.arity[0] == 0 and function.op not in ("case", "if"):
            return Node("call", token.start, token.end, function, [])
        key = lookup(token.text, self.columns)
        if key is not None:
            return Node("column", token.start, token.end, key, ref=self.columns[key])
        if function is not None:
            raise ExpressionError(f"{function.name} needs its arguments in parentheses: {function.signature}.",
                                  token.start, token.end)
        raise ExpressionError(f"Unknown column or function “{token.text}” (column names go in brackets, "
                              f"like [{token.text}]).", token.start, token.end)

    def call(self, function: Function, name: Token) -> Node:
        opening = self.take()
        args = []
        if self.token.kind != ")":
            while True:
                if self.token.kind in (",", ")"):
                    raise ExpressionError("An argument is missing here.", self.token.start, self.token.end)
                args.append(self.disjunction())
                if self.token.kind == ",":
                    self.take()
                    continue
                if self.token.kind == ")":
                    break
                if self.token.kind == "end":
                    raise ExpressionError(f"Missing a closing parenthesis ) for {function.name}(.",
                                          name.start, opening.end)
                raise ExpressionError(f"Expected a comma or ) in {function.name}(…), found “{self.token.text}”.",
                                      self.token.start, self.token.end)
        close = self.take()
        node = Node("call", name.start, close.end, function, args)
        check_count(node)
        return node


def check_count(node: Node) -> None:
    function: Function = node.value
    count = len(node.children)
    if function.op in ("case", "if"):
        if count < 2:
            raise ExpressionError(f"{function.name} needs at least a condition and a value: {function.signature}.",
                                  node.start, node.end)
        return
    fewest, most = function.arity
    if fewest <= count <= most:
        return
    if fewest == most:
        wanted = f"{fewest} argument{'s' if fewest != 1 else ''}"
    elif count < fewest:
        wanted = f"at least {fewest} argument{'s' if fewest != 1 else ''}"
    else:
        wanted = f"at most {most} argument{'s' if most != 1 else ''}"
    raise ExpressionError(f"{function.name} takes {wanted}, got {count}: {function.signature}.", node.start, node.end)


# -- the tree to MBQL ----------------------------------------------------------------------------------

class Builder:
    def __init__(self, kind: str):
        self.kind = kind
        self.aggregated = False  # whether an aggregation was built (a summary needs one)

    def build(self, node: Node, inside: Function | None = None):
        """`inside`: the aggregation this node is an argument of, if any."""
        kind = node.kind
        if kind in ("number", "string", "boolean"):
            return node.value
        if kind == "column":
            ref = node.ref
            op = ref[0] if isinstance(ref, list) and ref else None
            if op == "metric":
                self.aggregation_allowed(node, inside, f"[{node.value}]")
                self.aggregated = True
            elif self.kind == "aggregation" and inside is None and op != "segment":
                raise ExpressionError(f"[{node.value}] is a column: in a summary it goes inside an aggregation, "
                                      f"like Sum([{node.value}]).", node.start, node.end)
            return ref
        if kind == "neg":
            operand = node.children[0]
            if operand.kind == "number" and not operand.paren:
                return -operand.value
            return ["-", 0, self.build(operand, inside)]
        if kind == "not":
            return ["not", self.build(node.children[0], inside)]
        if kind == "op":
            return [node.value, *(self.build(child, inside) for child in node.children)]
        return self.call(node, inside)

    def aggregation_allowed(self, node: Node, inside: Function | None, what: str) -> None:
        if self.kind != "aggregation":
            place = "a filter" if self.kind == "filter" else "a custom column"
            raise ExpressionError(f"{what} can only be used in a summary (a custom aggregation), not in {place}.",
                                  node.start, node.end)
        if inside is not None:
            raise ExpressionError(f"{what} cannot be used inside {inside.name}(…): aggregations do not nest.",
                                  node.start, node.end)

    def call(self, node: Node, inside: Function | None):
        function: Function = node.value
        op, args = function.op, node.children
        if function.aggregation:
            self.aggregation_allowed(node, inside, function.name)
            self.aggregated = True
            inside = function
        if function.window:
            self.aggregation_allowed(node, inside, function.name)
            rows = self.build(args[1], inside)
            if isinstance(rows, bool) or not isinstance(rows, int) or rows == 0:
                raise ExpressionError("Offset's rows is a whole number other than 0 (-1 is the row before).",
                                      args[1].start, args[1].end)
            # Legacy MBQL's offset takes its options first.
            return ["offset", {}, self.build(args[0], None), rows]
        if op in ("case", "if"):
            built = [self.build(a, inside) for a in args]
            pairs = [[built[i], built[i + 1]] for i in range(0, len(built) - 1, 2)]
            return ["case", pairs, {"default": built[-1]}] if len(built) % 2 else ["case", pairs]
        units = UNIT_ARGS.get(op, {})
        out = [op]
        for position, arg in enumerate(args):
            if position in units:
                out.append(unit(function, arg, units[position]))
            elif op in STRING_OPTIONS and position == 2:
                out.append(option(function, arg, {"case-insensitive": {"case-sensitive": False}}))
            elif op == "time-interval" and position == 3:
                out.append(option(function, arg, {"include-current": {"include-current": True}}))
            elif op == "time-interval" and position == 1 and arg.kind == "string":
                if arg.value not in ("current", "last", "next"):
                    raise ExpressionError(f"{function.name}'s amount is a number, or \"current\".", arg.start, arg.end)
                out.append(arg.value)
            elif op == "datetime" and position == 1:
                if arg.kind != "string":
                    raise ExpressionError("datetime's mode is a text like \"iso\" or \"unixSeconds\".",
                                          arg.start, arg.end)
                out.append({"mode": arg.value})
            elif op in WEEK_MODES and position == 1:
                if arg.kind != "string" or arg.value.lower() not in WEEK_MODES[op]:
                    modes = " or ".join(f'"{m}"' for m in WEEK_MODES[op])
                    raise ExpressionError(f"{function.name}'s mode is {modes}.", arg.start, arg.end)
                out.append(arg.value.lower())
            else:
                out.append(self.build(arg, inside))
        return out


def unit(function: Function, arg: Node, allowed) -> str:
    if arg.kind != "string" or arg.value.lower() not in allowed:
        raise ExpressionError(f"{function.name} needs a unit in quotes, one of " + ", ".join(f'"{u}"' for u in allowed)
                              + ".", arg.start, arg.end)
    return arg.value.lower()


def option(function: Function, arg: Node, known: dict) -> dict:
    if arg.kind != "string" or arg.value.lower() not in known:
        names = " or ".join(f'"{k}"' for k in known)
        raise ExpressionError(f"{function.name}'s last argument can only be {names}.", arg.start, arg.end)
    return dict(known[arg.value.lower()])


def is_condition(node: Node) -> bool:
    if node.kind in ("boolean", "not", "column"):
        return True
    if node.kind == "op":
        return node.value in BOOLEAN_OPS
    if node.kind == "call":
        function: Function = node.value
        return function.op in BOOLEAN_OPS or function.op in ("case", "if", "coalesce")
    return False


def parse(text: str, kind: str, columns: dict):
    if kind not in KINDS:
        raise ValueError(f"kind is one of {', '.join(KINDS)}, not {kind!r}")
    tree = Parser(text, columns).parse()
    Types(getattr(columns, "types", None) or {}).of(tree)
    builder = Builder(kind)
    clause = builder.build(tree)
    if kind == "filter" and not is_condition(tree):
        raise ExpressionError("A filter must be a condition, true or false for each row (like [Total] > 50).",
                              tree.start, tree.end)
    if kind == "filter" and tree.kind == "column":
        op = tree.ref[0] if isinstance(tree.ref, list) and tree.ref else None
        if op not in ("segment", "field", "expression"):
            raise ExpressionError(f"[{tree.value}] is not a condition.", tree.start, tree.end)
    if kind == "aggregation" and not builder.aggregated:
        raise ExpressionError("A custom aggregation needs an aggregation, like Sum([Total]) or Count.",
                              tree.start, tree.end)
    return clause


__all__ = ["KINDS", "parse"]
