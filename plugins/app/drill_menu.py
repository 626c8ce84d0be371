"""The drill-through menu of a question page (issue 31 item 4): GET /question/drill answers the menu
fragment (app/_drill_menu.html) for one click, which static/drill.js shows next to the clicked bar,
point or cell. `card=<id>` or `q=<base64>` names the question as the page does; `at` is what was
clicked, as the chart's marks carry it (core.charts.drill) or the table's row: {"dims": [[column
index, value], ...], "col": column index, "value": value, "cell": true for a table cell}.

Every offer is an ad-hoc question link (/question#<base64>) built by drill.py from the question's
query and the result columns the API gives this user (the card's result_metadata, else its run), so
the menu offers nothing the API would not describe; running what a link holds is the API's decision.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import orjson
from flask import request

from core.http.internal import call

from . import drill
from .question_query import BadLink, decode_adhoc, encode_query
from .render import signed_in_user
from .save import Refused, read_card
from .views import blueprint, fragment

SYMBOLS = {"=": "=", "!=": "≠", "<": "<", ">": ">"}
NOT_DRILLABLE = "There is nothing to drill into here."


class BadClick(ValueError):
    """The `at` of a drill request is not a click this question's result can mean."""


@dataclass
class Offer:
    label: str
    href: str
    group: str = ""


def question_link(dataset_query: dict, display: str, settings: dict | None = None, original: int | None = None) -> str:
    """/question#<base64>, carrying the saved question it came from as Metabase's links do (so saving can
    offer to replace it)."""
    card = {"dataset_query": dataset_query, "display": display, "visualization_settings": settings or {}}
    if original is not None:
        card["original_card_id"] = original
    return "/question#" + base64.b64encode(orjson.dumps(card)).decode("ascii")


@blueprint.get("/question/drill")
def drill_through():
    signed_in_user()
    try:
        question, cols = source()
        if cols is not None:
            cols = drill.with_sources(question.get("dataset_query") or {}, cols)
        clicked = click(request.args.get("at", ""), cols)
    except (BadLink, BadClick) as exc:
        return fragment("app/_form_error.html", status=400, message=str(exc))
    except Refused as exc:
        return fragment("app/_form_error.html", status=exc.status, message=str(exc))
    if cols is None:
        return fragment("app/_drill_menu.html", offers=[], note="The question's result could not be read.")
    offers = offers_for(question, *clicked)
    return fragment("app/_drill_menu.html", offers=offers, note=None if offers else NOT_DRILLABLE)


def source() -> tuple[dict, list[dict] | None]:
    """The question clicked ({dataset_query, display, visualization_settings}) and its result columns."""
    if request.args.get("card"):
        card_id = request.args["card"]
        if not card_id.isdigit() or len(card_id) > 15:
            raise BadClick("The card is named by its id, a whole number.")
        card = read_card(card_id)
        question = {key: card.get(key) for key in ("dataset_query", "display", "visualization_settings")}
        question["original_card_id"] = card.get("id")
        cols = card.get("result_metadata")
        if not cols or not all(isinstance(c, dict) and c.get("field_ref") for c in cols):
            cols = result_cols(call("POST", f"/api/card/{card_id}/query", json={}))
        return question, cols
    question = decode_adhoc(request.args.get("q", ""))
    return question, result_cols(call("POST", "/api/dataset", json=question["dataset_query"]))


def result_cols(answer) -> list[dict] | None:
    data = answer.body.get("data") if answer.ok and isinstance(answer.body, dict) else None
    cols = data.get("cols") if isinstance(data, dict) else None
    return cols if isinstance(cols, list) else None


def click(text: str, cols: list[dict] | None) -> tuple[list[tuple[dict, Any]], dict | None, Any, bool]:
    """(dimension columns with their values, the clicked column or None, its value, whether a cell)."""
    try:
        at = orjson.loads(text or "null")
    except orjson.JSONDecodeError:
        at = None
    if not isinstance(at, dict) or not isinstance(at.get("dims", []), list):
        raise BadClick("The click is JSON: {\"dims\": [[column, value], ...], \"col\": column, \"value\": value}.")
    cols = cols or []

    def column(index) -> dict:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(cols):
            raise BadClick("The click names a column the question's result does not have.")
        return cols[index]

    def value(found):
        if found is not None and not isinstance(found, (str, int, float, bool)):
            raise BadClick("A clicked value is a text, a number, true, false or null.")
        return found

    dims = []
    for pair in at.get("dims") or []:
        if not isinstance(pair, list) or len(pair) != 2:
            raise BadClick("Each clicked dimension is a [column, value] pair.")
        dims.append((column(pair[0]), value(pair[1])))
    col = column(at["col"]) if at.get("col") is not None else None
    return dims, col, value(at.get("value")), at.get("cell") is True


def offers_for(question: dict, dims: list, col: dict | None, value: Any, cell: bool) -> list[Offer]:
    query = question.get("dataset_query") or {}
    if not drill.drillable(query):
        return []
    display = str(question.get("display") or "table")
    settings = question.get("visualization_settings") or {}
    original = question.get("original_card_id")

    def link(dataset_query: dict, shown: str, kept: dict | None = None) -> str:
        return question_link(dataset_query, shown, kept, original)

    offers: list[Offer] = []
    summary = drill.aggregated(query) and (not cell or (col or {}).get("source") == "aggregation")
    xrayed = query
    if summary:
        rows = drill.view_rows(query, dims)
        xrayed = rows
        offers.append(Offer("View these rows", link(rows, "table")))
        if drill.temporal_dimension(dims):
            offers.append(Offer("Zoom in", link(drill.zoom_in(query, dims), display)))
        offers.extend(breakouts(query, dims, link))
    if cell and col is not None:
        for operator in drill.OPERATORS:
            try:
                filtered = drill.filter_cell(query, col, value, operator)
            except drill.NotDrillable:
                continue
            offers.append(Offer(f"{SYMBOLS[operator]} this value", link(filtered, display, settings),
                                "Filter by this value"))
    offers.append(Offer("X-ray this", f"/auto/dashboard/adhoc/{encode_query(xrayed)}"))
    return offers


def breakouts(query: dict, dims: list, link) -> list[Offer]:
    if not (query.get("query") or {}).get("aggregation"):
        return []
    table = query["query"].get("source-table")
    if not isinstance(table, int) or isinstance(table, bool):
        return []
    answer = call("GET", f"/api/table/{table}/query_metadata")
    fields = answer.body.get("fields") if answer.ok and isinstance(answer.body, dict) else None
    choices = drill.breakout_choices(fields or [], query["query"].get("breakout") or [])
    offers = []
    for group, refs in choices.items():
        for name, ref in refs:
            display = "line" if group == "Time" else "bar"
            offers.append(Offer(name, link(drill.break_out(query, dims, ref), display),
                                f"Break out by {group.lower()}"))
    return offers
