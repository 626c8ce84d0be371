"""The expression editor's routes (the component is described in plugins/app/expressions.py): the editor
as a fragment, the check of its text as it is typed, and the suggestions for the word at the cursor.
Each reads the query's columns through the API as the signed-in user (expressions_columns).

The check and the suggestions are POSTs with JSON bodies although they change nothing: they carry the
whole query, which a URL could not hold past a server's request-line limit (gunicorn's is 4 KB), and
they pass the API's cross-site rule like any other htmx request of the app."""
from __future__ import annotations

import re

import orjson
from flask import request
from markupsafe import Markup

from core.http.internal import call

from .expressions_columns import ColumnsError, columns_of
from .expressions_complete import complete
from .expressions_format import Unprintable, format_expression
from .expressions_grammar import ExpressionError
from .expressions_parser import KINDS, parse
from .question_query import BadLink, decode_adhoc
from .render import signed_in_user
from .views import blueprint, fragment, posted

BASE = "/question/notebook/expression"
MAX_TEXT = 10_000
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_LABEL = 200


class BadRequest(ValueError):
    pass


def _params() -> dict[str, str]:
    """The request's parameters: the query string of a GET, the JSON body of a POST (text values only)."""
    if request.method == "GET":
        return request.args.to_dict()
    return {key: value for key, value in posted().items() if isinstance(key, str) and isinstance(value, str)}


def _request(params: dict) -> tuple[dict, str, str, str]:
    """The dataset query, kind, field name and expression name a request carries; BadRequest otherwise."""
    try:
        query = decode_adhoc(params.get("q", ""))["dataset_query"]
    except BadLink as exc:
        raise BadRequest(str(exc)) from None
    kind = params.get("kind") or "expression"
    if kind not in KINDS:
        raise BadRequest("The kind of expression is one of: " + ", ".join(KINDS) + ".")
    field = params.get("field") or "expression"
    if not _NAME.fullmatch(field):
        raise BadRequest("The field name is letters, digits, - and _, starting with a letter.")
    return query, kind, field, (params.get("name") or "")[:_LABEL]


def _text(params: dict, field: str) -> str:
    """The text, sent as `text` or (by the editor's input) as `<field>_text`."""
    text = params.get("text")
    if text is None:
        text = params.get(f"{field}_text", "")
    if len(text) > MAX_TEXT:
        raise BadRequest(f"An expression is at most {MAX_TEXT:,} characters.")
    return text


def _refused(message: str, status: int = 400):
    return fragment("app/_form_error.html", status=status, message=message)


@blueprint.get(f"{BASE}/editor")
def expression_editor_fragment():
    signed_in_user()
    params = _params()
    try:
        query, kind, field, name = _request(params)
        text = _text(params, field)
    except BadRequest as exc:
        return _refused(str(exc))
    element_id = request.args.get("id") or f"{field}-editor"
    if not _NAME.fullmatch(element_id):
        return _refused("The editor's id is letters, digits, - and _, starting with a letter.")
    label = (request.args.get("label") or "Expression")[:_LABEL]
    if request.args.get("clause"):  # an existing clause, shown as its text
        try:
            clause = orjson.loads(request.args["clause"])
            text = format_expression(clause, columns_of(query, kind, exclude=name or None))
        except orjson.JSONDecodeError:
            return _refused("The clause is MBQL as JSON.")
        except (ColumnsError, Unprintable) as exc:
            status = getattr(exc, "status", 400)
            return _refused(str(exc), status if 400 <= status < 500 else 400)
    return fragment("app/_expression_editor_fragment.html", id=element_id, label=label, kind=kind,
                    query=request.args.get("q", ""), field=field, text=text, name=name)


@blueprint.post(f"{BASE}/validate")
def expression_validate():
    signed_in_user()
    params = _params()
    try:
        query, kind, field, name = _request(params)
        text = _text(params, field)
    except BadRequest as exc:
        return _refused(str(exc))
    if not text.strip():
        return fragment("app/_expression_result.html", text=text)
    try:
        columns = columns_of(query, kind, exclude=name or None)
    except ColumnsError as exc:
        return _refused(exc.message, exc.status if 400 <= exc.status < 500 else 400)
    try:
        clause = parse(text, kind, columns)
    except ExpressionError as exc:
        return fragment("app/_expression_result.html", text=text, error=exc, before=text[:exc.start],
                        bad=text[exc.start:exc.end], after=text[exc.end:])
    refusal = compile_check(query, kind, name, clause)
    if refusal:
        return fragment("app/_expression_result.html", text=text, error=ExpressionError(refusal, 0, len(text)),
                        before="", bad=text, after="")
    return fragment("app/_expression_result.html", text=text, field=field,
                    mbql=Markup.escape(orjson.dumps(clause).decode()))


def with_clause(query: dict, kind: str, name: str, clause) -> dict:
    """The query with the clause where its kind goes: a custom column, one more filter or aggregation."""
    inner = dict(query["query"])  # its expressions and joins were checked by columns_of
    if kind == "expression":
        inner["expressions"] = {**(inner.get("expressions") or {}), name or "Expression": clause}
    elif kind == "filter":
        inner["filter"] = ["and", inner["filter"], clause] if inner.get("filter") else clause
    else:
        given = inner.get("aggregation") or []
        inner["aggregation"] = [*(given if isinstance(given, list) else [given]), clause]
    return {**query, "query": inner}


def compile_check(query: dict, kind: str, name: str, clause) -> str | None:
    """The API's refusal of the query with the clause in it (compiled, not run), or None. Only a 400 is
    about the expression; a user who may not see the SQL (403) is told nothing more than the parser said."""
    answer = call("POST", "/api/dataset/native", json=with_clause(query, kind, name, clause))
    if answer.status == 400:
        body = answer.body if isinstance(answer.body, dict) else {}
        message = str(body.get("message") or body.get("error") or answer.message or "")
        return message.removeprefix("Invalid MBQL: ") or "The database cannot compute this expression."
    return None


@blueprint.post(f"{BASE}/complete")
def expression_complete():
    signed_in_user()
    params = _params()
    try:
        query, kind, field, name = _request(params)
        text = _text(params, field)
        cursor = int(params.get("cursor") or len(text))
    except BadRequest as exc:
        return _refused(str(exc))
    except ValueError:
        return _refused("The cursor is a whole number: where in the text to complete.")
    try:
        columns = columns_of(query, kind, exclude=name or None)
    except ColumnsError as exc:
        return _refused(exc.message, exc.status if 400 <= exc.status < 500 else 400)
    element_id = params.get("id") or "expression"
    if not _NAME.fullmatch(element_id):
        element_id = "expression"
    return fragment("app/_expression_complete.html", suggestions=complete(text, cursor, kind, columns),
                    id=element_id)
