"""The question builder's custom expressions (issue 31, item 1): a stage's custom columns (`expressions`),
custom aggregations (`["aggregation-options", clause, {"name", "display-name"}]`, as Metabase's notebook
writes a named one) and custom filters, written in the expression language (plugins/app/expressions.py)
with its editor widget.

A form sends the editor's text (`<field>_text`); the text is parsed here again, against the columns the API
offers this user for the stage (`columns_of`), and the clause compiled by the API (POST
/api/dataset/native), so what the builder writes is what it was shown to take, with or without the
widget's scripts. The hidden MBQL input the widget keeps is not read: it is the widget's word for the
person, not the server's. Editing one opens the editor with the clause printed back (`format`).
"""
from __future__ import annotations

from werkzeug.datastructures import MultiDict

from .expressions import ColumnsError, ExpressionError, Unprintable, columns_of, format, parse
from .expressions_parser import lookup
from .expressions_views import compile_check
from .notebook_query import (
    BadQuery,
    added,
    encode,
    expression_removed,
    expressions_of,
    filters_of,
    replaced,
    stage_query,
    stages,
    with_expression,
)

MAX_NAME = 100
# The field names the editors' hidden inputs carry (and so `<field>_text`, the text the form sends).
FIELDS = {"expression": "expression", "aggregation": "aggregation", "filter": "condition"}


def _columns(query: dict, index: int, kind: str, exclude: str | None = None):
    try:
        return columns_of(stage_query(query, index), kind, exclude=exclude)
    except ColumnsError as exc:
        raise BadQuery(exc.message) from None


def _parsed(query: dict, index: int, kind: str, text: str, exclude: str | None = None, name: str = ""):
    """The clause the text means in stage `index`, compiled by the API; BadQuery with the editor's message."""
    if not text.strip():
        raise BadQuery("Write the expression.")
    columns = _columns(query, index, kind, exclude)
    try:
        clause = parse(text, kind, columns)
    except ExpressionError as exc:
        raise BadQuery(exc.message) from None
    refusal = compile_check(stage_query(query, index), kind, name, clause)
    if refusal:
        raise BadQuery(refusal)
    return clause, columns


def custom_column(query: dict, index: int, args: MultiDict) -> dict:
    """op=expression: add (or, given `original`, change and perhaps rename) a custom column."""
    name = " ".join((args.get("column_name") or "").split())
    original = args.get("original") or None
    given = expressions_of(stages(query)[index])
    if original is not None and original not in given:
        raise BadQuery("There is no such custom column in this stage.")
    if not name:
        raise BadQuery("Give the custom column a name.")
    if len(name) > MAX_NAME or "[" in name or "]" in name:
        raise BadQuery(f"A custom column's name is at most {MAX_NAME} characters, without [ or ].")
    clause, columns = _parsed(query, index, "expression", args.get("expression_text") or "", exclude=original,
                              name=original or "")
    clash = lookup(name, columns)
    if clash is not None and clash.lower() == name.lower():
        raise BadQuery(f"This stage already has a column named “{clash}”: give the custom column another name.")
    return with_expression(query, index, name, clause, original)


def custom_aggregation(query: dict, index: int, args: MultiDict) -> dict:
    """op=custom-aggregate: a named aggregation written as an expression; with `position`, an edited one."""
    name = " ".join((args.get("aggregation_name") or "").split())
    if not name:
        raise BadQuery("Give the custom aggregation a name (its column's name).")
    if len(name) > MAX_NAME:
        raise BadQuery(f"An aggregation's name is at most {MAX_NAME} characters.")
    clause, _ = _parsed(query, index, "aggregation", args.get("aggregation_text") or "")
    named = ["aggregation-options", clause, {"name": name, "display-name": name}]
    position = _position(args, len(stages(query)[index].get("aggregation") or []))
    return added(query, index, "aggregation", named) if position is None else \
        replaced(query, index, "aggregation", position, named)


def custom_filter(query: dict, index: int, args: MultiDict) -> dict:
    """op=custom-filter: a condition written as an expression; with `position`, an edited filter."""
    clause, _ = _parsed(query, index, "filter", args.get("condition_text") or "")
    position = _position(args, len(filters_of(stages(query)[index])))
    return added(query, index, "filter", clause) if position is None else replaced(query, index, "filter", position, clause)


def removed_column(query: dict, index: int, args: MultiDict) -> dict:
    return expression_removed(query, index, args.get("name") or "")


def _position(args: MultiDict, count: int) -> int | None:
    text = args.get("position") or ""
    if not text:
        return None
    if not text.isdigit() or int(text) >= count:
        raise BadQuery("There is no such clause in this step.")
    return int(text)


def aggregation_name(agg) -> str | None:
    """A named aggregation's name (what the page calls it), or None."""
    if isinstance(agg, list) and len(agg) == 3 and agg[0] == "aggregation-options" and isinstance(agg[2], dict):
        return str(agg[2].get("display-name") or agg[2].get("name") or "") or None
    return None


def is_ref(x) -> bool:
    return isinstance(x, list) and len(x) >= 2 and x[0] in ("field", "expression")


def plain(clause) -> bool:
    """Whether the builder's filter words can say a clause: a column compared with values (or such
    clauses combined); anything else is said in the expression language."""
    if not isinstance(clause, list) or not clause:
        return False
    if clause[0] in ("and", "or", "not"):
        return all(plain(c) for c in clause[1:])
    return len(clause) >= 2 and is_ref(clause[1]) and all(
        is_ref(a) or not isinstance(a, list) for a in clause[2:])


def sayer(query: dict, index: int, words):
    """A filter in words (`words`, the builder's) or, when those cannot say it, as its expression text."""
    columns = {}

    def say(clause) -> str:
        if plain(clause):
            return words(clause)
        try:
            if "c" not in columns:
                columns["c"] = _columns(query, index, "filter")
            return format(clause, columns["c"])
        except (BadQuery, Unprintable):
            return words(clause)
    return say


def _printed(clause, query: dict, index: int, kind: str, exclude: str | None = None) -> dict:
    """{"text": the clause as the editor shows it}, or {"problem": why it cannot be shown as text}."""
    try:
        return {"text": format(clause, _columns(query, index, kind, exclude))}
    except (BadQuery, Unprintable) as exc:
        return {"problem": f"This cannot be edited as an expression: {exc}"}


def editors(query: dict, index: int, args: MultiDict, error: bool) -> dict:
    """What the stage's three editors show: the query they are written against (`q`), and for each kind
    the text, name and position being edited — an existing clause printed back (`edit_column`,
    `edit_aggregation`, `edit_filter`), or after a refused change the text the person sent."""
    stage = stages(query)[index]
    mine = args.get("stage", "0") == str(index)
    out = {"q": encode(stage_query(query, index)), "column": {}, "aggregation": {}, "filter": {}}
    if not mine:
        return out
    op = args.get("op")
    if error and op == "expression":
        out["column"] = {"open": True, "name": args.get("column_name") or "", "text": args.get("expression_text") or "",
                         "original": args.get("original") or ""}
    elif error and op == "custom-aggregate":
        out["aggregation"] = {"open": True, "name": args.get("aggregation_name") or "",
                              "text": args.get("aggregation_text") or "", "position": args.get("position") or ""}
    elif error and op == "custom-filter":
        out["filter"] = {"open": True, "text": args.get("condition_text") or "", "position": args.get("position") or ""}
    aggs, filters = stage.get("aggregation") or [], filters_of(stage)
    name, position, condition = args.get("edit_column"), args.get("edit_aggregation") or "", args.get("edit_filter") or ""
    if name in expressions_of(stage):
        out["column"] = {"open": True, "name": name, "original": name}
        out["column"].update(_printed(expressions_of(stage)[name], query, index, "expression", exclude=name))
    if position.isdigit() and int(position) < len(aggs):
        agg = aggs[int(position)]
        out["aggregation"] = {"open": True, "name": aggregation_name(agg) or "", "position": position}
        out["aggregation"].update(_printed(agg[1] if aggregation_name(agg) else agg, query, index, "aggregation"))
    if condition.isdigit() and int(condition) < len(filters):
        out["filter"] = {"open": True, "position": condition}
        out["filter"].update(_printed(filters[int(condition)], query, index, "filter"))
    return out
