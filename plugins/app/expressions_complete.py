"""Suggestions for the word at the cursor of a custom expression (plugins/app/expressions.py is the
interface): functions, with their signature and a line saying what they do, and columns.

Inside an open `[` only columns are offered; after a bare word both (functions first, aggregations only
in a summary); inside a string literal, nothing. Each suggestion says which characters it replaces.
"""
from __future__ import annotations

from dataclasses import dataclass

from .expressions_format import bracket
from .expressions_grammar import FUNCTIONS, tokenize

LIMIT = 40


@dataclass(frozen=True)
class Suggestion:
    kind: str          # "function" or "column"
    label: str         # what the list shows
    insert: str        # the text that replaces text[start:end]
    start: int
    end: int
    signature: str = ""
    description: str = ""


def _matches(prefix: str, name: str) -> int | None:
    """How well `name` matches what was typed: 0 starts with it, 1 a word of it does, 2 contains it."""
    p, n = prefix.lower(), name.lower()
    if n.startswith(p):
        return 0
    if any(word.startswith(p) for word in n.replace("→", " ").split()):
        return 1
    return 2 if p in n else None


def _columns(prefix: str, columns: dict, start: int, end: int) -> list[Suggestion]:
    ranked = []
    for name in columns:
        rank = _matches(prefix, name) if prefix else 0
        if rank is not None:
            ranked.append((rank, name))
    ranked.sort(key=lambda item: (item[0], "→" in item[1]))
    return [Suggestion("column", name, bracket(name), start, end) for _, name in ranked]


def _functions(prefix: str, kind: str, start: int, end: int) -> list[Suggestion]:
    ranked = []
    for function in FUNCTIONS:
        if function.summary_only and kind != "aggregation":
            continue
        rank = _matches(prefix, function.name)
        if rank is not None and rank < 2:
            ranked.append((rank, function))
    ranked.sort(key=lambda item: (item[0], not item[1].aggregation, item[1].name.lower()))
    out = []
    for _, function in ranked:
        bare = function.arity[0] == 0 and function.op in ("count", "cum-count")
        insert = function.name if bare else function.name + "("
        out.append(Suggestion("function", function.name, insert, start, end, function.signature,
                              function.description))
    return out


def complete(text: str, cursor: int, kind: str, columns: dict) -> list[Suggestion]:
    cursor = max(0, min(cursor, len(text)))
    tokens = tokenize(text[:cursor], lenient=True)
    last = tokens[-2] if len(tokens) > 1 else None
    if last is None or last.end != cursor:
        return []
    if last.kind == "open-column":
        # Replace up to a closing bracket already there: choosing fixes the whole reference.
        rest = text[cursor:]
        close = rest.find("]")
        end = cursor + close + 1 if close >= 0 and "[" not in rest[:close] else cursor
        return _columns(str(last.value), columns, last.start, end)[:LIMIT]
    if last.kind == "column":
        return []
    if last.kind == "name":
        prefix = last.text
        follows = text[cursor:cursor + 1]
        end = cursor
        while end < len(text) and (text[end].isalnum() or text[end] == "_"):
            end += 1
        found = _functions(prefix, kind, last.start, end) + _columns(prefix, columns, last.start, end)
        if follows == "(":  # completing a function's name that already has its parenthesis
            found = [s for s in found if s.kind == "function"]
            found = [Suggestion(s.kind, s.label, s.insert.rstrip("("), s.start, s.end, s.signature, s.description)
                     for s in found]
        return found[:LIMIT]
    return []
