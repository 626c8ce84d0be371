"""Native queries: the template-tag language of SQL cards, substituted with every value bound.

The SQL text is the user's own query (that is what a native query is), but no parameter VALUE ever
becomes SQL text: a small tokenizer splits the text into literal pieces, `{{tags}}` and
`[[optional clauses]]`; tags become bound parameters, field filters become sqlglot conditions on
the column read from synced metadata, snippets are spliced in (they may nest), card references
become parenthesised subqueries. The result is a `NativeSQL`: literal pieces and `Bound` values,
rendered for the DBAPI's paramstyle only at the end (`render`).
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from sqlglot import exp

from . import parameters as P
from .errors import QueryFailed

if TYPE_CHECKING:
    from core.driver.sql import SQLDriver

VARIABLE = re.compile(r"^[A-Za-z0-9_.]+$")
SNIPPET = re.compile(r"^snippet:\s*(.+?)\s*$", re.S)
CARD = re.compile(r"^#([0-9]*)(-[a-z0-9-]*)?$")
TOKEN = re.compile(r"\{\{|\}\}|\[\[|\]\]")
MARK = re.compile("\x00(\\d+)\x00")
TEXT_COLON = re.compile(r"(?<![:\w\\]):(?=\w)")


# --------------------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------------------


@dataclass
class Text:
    text: str


@dataclass
class Tag:
    name: str  # as it appears in template-tags: "x", "snippet: foo", "#12-orders"
    kind: str  # "variable" | "snippet" | "card"


@dataclass
class Optional:
    children: list


def _tag(content: str) -> Tag | None:
    name = content.strip()
    if VARIABLE.match(name):
        return Tag(name, "variable")
    match = SNIPPET.match(name)
    if match:
        return Tag(f"snippet: {match.group(1)}", "snippet")
    if CARD.match(name):
        return Tag(name, "card")
    return None


def parse(sql: str) -> list:
    """Literal text, tags and (possibly nested) optional clauses, in order."""
    stack: list[list] = [[]]
    position = 0
    while True:
        match = TOKEN.search(sql, position)
        if match is None:
            break
        token = match.group()
        if token == "{{":
            close = sql.find("}}", match.end())
            if close < 0:
                raise QueryFailed("Invalid query: found '{{' with no matching '}}'", "invalid-query")
            tag = _tag(sql[match.end():close])
            stack[-1].append(Text(sql[position:match.start()]))
            # A brace pair that names no tag is ordinary SQL text (e.g. a JSON literal).
            stack[-1].append(tag if tag is not None else Text(sql[match.start():close + 2]))
            position = close + 2
        elif token == "[[":
            stack[-1].append(Text(sql[position:match.start()]))
            stack.append([])
            position = match.end()
        elif token == "]]":
            if len(stack) == 1:
                # Outside an optional clause "]]" is plain SQL (array subscripts).
                stack[-1].append(Text(sql[position:match.end()]))
            else:
                stack[-1].append(Text(sql[position:match.start()]))
                children = stack.pop()
                stack[-1].append(Optional(children))
            position = match.end()
        else:  # a stray "}}"
            stack[-1].append(Text(sql[position:match.end()]))
            position = match.end()
    if len(stack) > 1:
        raise QueryFailed("Invalid query: found '[[' with no matching ']]'", "invalid-query")
    stack[0].append(Text(sql[position:]))
    return [node for node in stack[0] if not (isinstance(node, Text) and not node.text)]


def tag_names(sql: str) -> list[str]:
    """Every tag name in the text, in order of first appearance (what the editor turns into template-tags)."""
    seen: list[str] = []

    def walk(nodes):
        for node in nodes:
            if isinstance(node, Tag) and node.name not in seen:
                seen.append(node.name)
            elif isinstance(node, Optional):
                walk(node.children)

    walk(parse(sql))
    return seen


# --------------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bound:
    value: Any


@dataclass
class NativeSQL:
    """SQL as literal pieces and bound values; `render` writes it for one DBAPI paramstyle."""

    pieces: list = field(default_factory=list)

    def add(self, piece: str | Bound) -> None:
        self.pieces.append(piece)

    def extend(self, other: "NativeSQL") -> None:
        self.pieces.extend(other.pieces)

    @property
    def values(self) -> list:
        return [p.value for p in self.pieces if isinstance(p, Bound)]

    def render(self, paramstyle: str = "qmark") -> tuple[str, list | dict | None]:
        """(sql, params) for `paramstyle`; params is None when nothing is bound, so a literal "%"
        in the text stays as written."""
        binds = self.values
        if paramstyle == "sqlalchemy":
            return self._render_text_clause()
        if not binds:
            return "".join(self.pieces), None
        percent = paramstyle in ("format", "pyformat")
        out: list[str] = []
        named: dict[str, Any] = {}
        index = 0
        for piece in self.pieces:
            if isinstance(piece, str):
                out.append(piece.replace("%", "%%") if percent else piece)
                continue
            index += 1
            if paramstyle == "qmark":
                out.append("?")
            elif paramstyle == "format":
                out.append("%s")
            elif paramstyle == "numeric":
                out.append(f":{index}")
            elif paramstyle == "numeric_dollar":
                out.append(f"${index}")
            elif paramstyle == "named":
                out.append(f":p{index}")
                named[f"p{index}"] = piece.value
            elif paramstyle == "pyformat":
                out.append(f"%(p{index})s")
                named[f"p{index}"] = piece.value
            else:
                raise ValueError(f"unknown paramstyle {paramstyle}")
        params = named if paramstyle in ("named", "pyformat") else binds
        return "".join(out), params

    def _render_text_clause(self) -> tuple[str, dict]:
        """For SQLAlchemy text(): binds are `:pN`, and a colon the user wrote before a word is
        escaped so that text() does not take it for a bind."""
        out: list[str] = []
        params: dict[str, Any] = {}
        for piece in self.pieces:
            if isinstance(piece, str):
                out.append(TEXT_COLON.sub(r"\\:", piece))
            else:
                name = f"p{len(params) + 1}"
                params[name] = piece.value
                out.append(":" + name)
        return "".join(out), params

    def display(self) -> str:
        """The SQL as shown to people (native_form): values written as literals, for reading only."""
        out = []
        for piece in self.pieces:
            out.append(piece if isinstance(piece, str) else _literal(piece.value))
        return "".join(out)


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dt.datetime):
        return "'" + value.isoformat(sep=" ") + "'"
    if isinstance(value, dt.date):
        return "'" + value.isoformat() + "'"
    return "'" + str(value).replace("'", "''") + "'"


# --------------------------------------------------------------------------------------------------
# Substitution
# --------------------------------------------------------------------------------------------------


@dataclass
class FieldInfo:
    """What a field filter needs to know about its column."""

    column: exp.Expression
    base_type: str | None


@dataclass
class Resolvers:
    """How substitution reaches outside itself. Each raises QueryFailed when the thing is missing."""

    field: Callable[[Any], FieldInfo]
    snippet: Callable[[int | None, str], str]
    card: Callable[[int], "NativeSQL"]


@dataclass
class Context:
    tags: dict
    values: dict
    resolvers: Resolvers
    driver: "SQLDriver"  # its AST forms (core.driver.dialect) and to_sql write field filters
    now: dt.datetime | None
    week_start: int
    snippet_depth: int = 0


class _Missing(Exception):
    """Raised inside an optional clause when a tag in it has no value: the clause is dropped."""


def _tag_definition(ctx: Context, name: str) -> dict:
    return ctx.tags.get(name) or {"name": name, "display-name": name, "type": "text"}


def parameter_values(tags: dict, parameters: list[dict] | None) -> dict:
    """Tag name -> the parameter (with its value) aimed at it; targets name a tag or its id."""
    by_id = {str(t.get("id")): name for name, t in tags.items() if isinstance(t, dict) and t.get("id")}
    values: dict = {}
    for param in parameters or ():
        target = P.template_tag_target(param.get("target"))
        if target is None:
            continue
        _kind, ref = target
        name = by_id.get(str(ref.get("id"))) if isinstance(ref, dict) else ref
        if name is None:
            continue
        if P.is_empty(param.get("value")) and name in values:
            continue
        values[name] = param
    return values


def substitute(sql: str, template_tags: dict | None, parameters: list[dict] | None, resolvers: Resolvers, *,
               driver: "SQLDriver", now: dt.datetime | None = None, week_start: int = 6) -> NativeSQL:
    """The native query with every tag replaced; raises QueryFailed for a missing required value."""
    if not isinstance(template_tags or {}, dict):
        raise QueryFailed("Invalid query: template-tags must be a map of tag name to definition.", "invalid-query")
    bad = [name for name, tag in (template_tags or {}).items() if not isinstance(tag, dict)]
    if bad:
        raise QueryFailed(f"Invalid template tag {bad[0]!r}: a tag definition must be a map.", "invalid-query")
    tags = dict(template_tags or {})
    P.check_parameters(parameters)
    ctx = Context(tags, parameter_values(tags, parameters), resolvers, driver, now, week_start)
    missing_required = [
        name for name, tag in tags.items()
        if tag.get("required") and tag.get("type") not in ("snippet", "card")
        and P.is_empty(_value_of(ctx, name, tag)) and _referenced(sql, name)
    ]
    if missing_required:
        names = ", ".join(f'"{n}"' for n in missing_required)
        raise QueryFailed(f"Cannot run the query: missing required parameters: #{{{names}}}",
                          "missing-required-parameter")
    out = NativeSQL()
    _emit(parse(sql), ctx, out, optional=False)
    return out


def _referenced(sql: str, name: str) -> bool:
    try:
        return name in tag_names(sql)
    except QueryFailed:
        return True


def _value_of(ctx: Context, name: str, tag: dict) -> Any:
    param = ctx.values.get(name)
    if param is not None and not P.is_empty(param.get("value")):
        return param.get("value")
    return tag.get("default")


def _emit(nodes: list, ctx: Context, out: NativeSQL, *, optional: bool) -> None:
    for node in nodes:
        if isinstance(node, Text):
            out.add(node.text)
        elif isinstance(node, Optional):
            clause = NativeSQL()
            try:
                _emit(node.children, ctx, clause, optional=True)
            except _Missing:
                continue
            out.extend(clause)
        else:
            _emit_tag(node, ctx, out, optional=optional)


def _emit_tag(tag: Tag, ctx: Context, out: NativeSQL, *, optional: bool) -> None:
    if tag.kind == "snippet":
        _emit_snippet(tag, ctx, out, optional=optional)
        return
    if tag.kind == "card":
        definition = ctx.tags.get(tag.name) or {}
        card_id = definition.get("card-id") or CARD.match(tag.name).group(1)
        if not card_id:
            raise QueryFailed(f"Invalid card reference: {{{{{tag.name}}}}}", "invalid-query")
        out.add("(")
        out.extend(ctx.resolvers.card(int(card_id)))
        out.add(")")
        return
    definition = _tag_definition(ctx, tag.name)
    value = _value_of(ctx, tag.name, definition)
    kind = definition.get("type") or "text"
    if kind == "dimension":
        _emit_field_filter(tag.name, definition, value, ctx, out, optional=optional)
        return
    if P.is_empty(value):
        if optional:
            raise _Missing()
        display = definition.get("display-name") or definition.get("display_name") or tag.name
        raise QueryFailed(f"You'll need to pick a value for '{display}' before this query can run.",
                          "missing-required-parameter")
    for i, item in enumerate(_raw_values(kind, value)):
        if i:
            out.add(", ")
        out.add(Bound(item))


def _raw_values(kind: str, value: Any) -> list:
    values = [v for v in P.as_list(value) if not P.is_empty(v)]
    if kind == "number":
        numbers = []
        for v in values:
            # A number widget may send "1,2,3" meaning a list.
            parts = v.split(",") if isinstance(v, str) else [v]
            numbers.extend(P.number(p) for p in parts if str(p).strip())
        return numbers
    if kind == "date":
        return [_date_value(v) for v in values]
    if kind == "boolean":
        result = []
        for v in values:
            if isinstance(v, str) and v.lower() in ("true", "false"):
                v = v.lower() == "true"
            if not isinstance(v, bool):
                raise QueryFailed(f"Invalid boolean value: {v!r}", "invalid-parameter")
            result.append(v)
        return result
    return [v if isinstance(v, (int, float)) and not isinstance(v, bool) and kind != "text" else str(v)
            for v in values]


def _date_value(value: Any) -> dt.date | dt.datetime:
    if isinstance(value, (dt.date, dt.datetime)):
        return value
    text = str(value).strip()
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text)
        return dt.datetime.fromisoformat(text.replace(" ", "T").replace("Z", "+00:00"))
    except ValueError:
        raise QueryFailed(f"Don't know how to parse date string {text!r}", "invalid-parameter") from None


def _emit_field_filter(name: str, definition: dict, value: Any, ctx: Context, out: NativeSQL, *,
                       optional: bool) -> None:
    dimension = definition.get("dimension")
    if not dimension:
        raise QueryFailed(f"Field filter '{name}' has no field.", "invalid-query")
    widget = definition.get("widget-type") or "category"
    param = ctx.values.get(name)
    kind = (param or {}).get("type") or widget
    if kind in ("dimension", "category") and widget not in ("category", "none", None):
        kind = widget
    info = ctx.resolvers.field(dimension)
    options = {**(definition.get("options") or {}), **((param or {}).get("options") or {})}
    flt = P.read_filter(kind, value, base_type=info.base_type, options=options, now=ctx.now,
                        week_start=ctx.week_start)
    if flt is None:
        if optional:
            raise _Missing()
        out.add("1 = 1")
        return
    binds: list = []

    def bind(v: Any) -> exp.Expression:
        binds.append(v)
        return exp.Var(this=f"\x00{len(binds) - 1}\x00")

    condition = P.to_sql(flt, info.column, bind, ctx.driver, ctx.week_start)
    rendered = ctx.driver.to_sql(condition)
    position = 0
    for match in MARK.finditer(rendered):
        out.add(rendered[position:match.start()])
        out.add(Bound(binds[int(match.group(1))]))
        position = match.end()
    out.add(rendered[position:])


def _emit_snippet(tag: Tag, ctx: Context, out: NativeSQL, *, optional: bool) -> None:
    if ctx.snippet_depth > 20:
        raise QueryFailed("Snippets nest too deeply (is one including itself?)", "invalid-query")
    definition = ctx.tags.get(tag.name) or {}
    snippet_name = definition.get("snippet-name") or tag.name.split(":", 1)[1].strip()
    text = ctx.resolvers.snippet(definition.get("snippet-id"), snippet_name)
    ctx.snippet_depth += 1
    try:
        _emit(parse(text), ctx, out, optional=optional)
    finally:
        ctx.snippet_depth -= 1
