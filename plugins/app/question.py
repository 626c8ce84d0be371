"""The question pages (issue 30, item 7): a saved question or model at /question/:id-slug and
/model/:id-slug, and an ad-hoc question at /question#<base64> (what browsing and drill-through link
to). A hash never reaches the server, so /question is a shell that static/question.js fills from
/question/adhoc?q=<base64>, which is also a whole page of its own.

What a page shows is the API's answer to its user: the card (GET /api/card/:id), its result (POST
/api/card/:id/query, or /api/dataset for an ad-hoc query), its SQL (the native text when the card
says the user may run it ad hoc, else POST /api/dataset/native, which checks the same) and its
downloads (forms the browser posts straight to the API's export routes, which take form posts).

The URL holds the page's state: view (chart or table), sort and dir, page, and a native question's
parameter values by slug, so a sorted, filtered page can be sent to someone. The parameters are drawn
and read as a dashboard's filters are (filters.py, templates/app/_filters.html); a value list asks
<page>/values/<parameter id> for its values.

Sorting, decided: an MBQL question the user may run ad hoc is asked again with one more stage that
orders by the column (question_query.sorted_by), so the database sorts all its rows. A native
question (and an MBQL one its user may only view) is sorted here, over every row the API returned
(up to the row limit, 2,000 unaggregated rows), before the page of rows is cut: never one page's
rows alone; the page says so when the result stopped at the limit. Downloads are the question as
saved (its own order, its parameters), as Metabase's are.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

import orjson
from flask import Response, request
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import NotFound

from core.http.internal import Answer, call

from . import drill, filters, question_params, results, viz_settings
from .question_query import BadLink, decode_adhoc, encode_query, is_mbql, sorted_by, source_table
from .render import go, page, read, signed_in_user
from .views import blueprint, fragment, id_of, slug

PAGE_SIZE = 50
DOWNLOADS = ("csv", "xlsx", "json", "png")
NO_DATA = "You may see this question, but not the data it reads."
# A question not saved is a new query: refused when the person may not build queries on its database.
NO_QUERY = "You may not ask new questions of this data."
# The page's own keys in the query string; anything else is a parameter value (or, ad hoc, the query).
STATE_KEYS = ("view", "sort", "dir", "page")


class BadState(ValueError):
    """A page state the URL cannot mean (an unknown view, a page that is not a number)."""


@dataclass
class State:
    """What the URL asks of the page, and URLs for the same page with something changed."""

    base: str
    kept: list[tuple[str, str]]
    view: str | None = None
    sort: str | None = None
    descending: bool = False
    page: int = 1

    def url(self, **changes) -> str:
        values = {"view": self.view, "sort": self.sort, "dir": "desc" if self.descending else None,
                  "page": self.page if self.page > 1 else None}
        values.update(changes)
        pairs = [*self.kept, *((key, str(value)) for key, value in values.items() if value not in (None, ""))]
        return self.base + ("?" + urlencode(pairs) if pairs else "")


def state_from(args: MultiDict, base: str) -> State:
    view, direction, number = args.get("view") or None, args.get("dir") or "asc", args.get("page") or "1"
    if view not in (None, "chart", "table"):
        raise BadState("The view is either chart or table.")
    if direction not in ("asc", "desc"):
        raise BadState("The sort direction is either asc or desc.")
    if not number.isdigit() or not 0 < int(number) < 10**9:
        raise BadState("The page is a whole number, 1 or more.")
    kept = [(key, value) for key, value in args.items(multi=True) if key not in STATE_KEYS]
    return State(base, kept, view, args.get("sort") or None, direction == "desc", int(number))


@dataclass
class Shown:
    """What the result part of a question page draws."""

    view: str
    shape: str
    chart: object = None
    number: object = None
    table: dict | None = None
    failure: str | None = None
    sql: str | None = None
    downloads: dict | None = None
    xray: str | None = None
    filters: list = field(default_factory=list)
    drill: str | None = None      # the drill-through menu's route for this question (drill_menu.py)
    drill_rows: dict | None = None  # the shown page's rows as the API gave them, for a cell's menu


def htmx() -> bool:
    return bool(request.headers.get("HX-Request"))


# -- saved questions and models ----------------------------------------------------------------------

@blueprint.get("/question/<id_slug>")
def saved_question(id_slug: str):
    return saved(id_slug, "question")


@blueprint.get("/model/<id_slug>")
def saved_model(id_slug: str):
    return saved(id_slug, "model")


def saved(id_slug: str, kind: str) -> Response:
    user = signed_in_user()
    card_id = id_of(id_slug)
    # A swap of part of the page (sorting, paging) is not another view of the card.
    card = read(f"/api/card/{card_id}", ignore_view=True if htmx() else None)
    where = "model" if card.get("type") == "model" else "question"
    if where != kind:  # Metabase's frontend moves a model's /question URL to /model, and back
        query = request.query_string.decode()
        return go(f"/{where}/{card_id}-{slug(card.get('name'))}".rstrip("-") + ("?" + query if query else ""))
    try:
        state = state_from(request.args, request.path)
    except BadState as exc:
        return bad_state(str(exc), user)
    native = not is_mbql(card.get("dataset_query") or {})
    current = filters.from_url(question_params.parameters(card) if native else [], request.args)
    parameters = question_params.api_parameters(current)
    shown = Shown(view=state.view or default_view(card), shape=results.shape(card), filters=current)
    if shown.shape == "table":
        shown.view = "table"
    if drill.drillable(card.get("dataset_query") or {}) and card.get("can_run_adhoc_query"):  # drills are ad hoc
        shown.drill = f"/question/drill?card={card_id}"
    answer, presorted = run_saved(card, parameters, state, shown.view)
    draw_result(shown, card, answer, state, presorted)
    if answer.ok:
        shown.sql = saved_sql(card, native)
        shown.downloads = downloads_of(answer, f"/api/card/{card_id}/query", {
            "parameters": orjson.dumps(parameters).decode()})
        if not native:  # the x-ray of a SQL question has only its saved columns to go on: not offered
            shown.xray = f"/auto/dashboard/{where}/{card_id}"
    # A question that takes parameters keeps them: its ad-hoc view (what a settings change makes) has none.
    viz = None if current else viz_settings.panel(card, answer.body if answer.ok else None, card_id=card_id,
                                                  view=state.view)
    return page("app/question.html", name="question", title=card.get("name") or "Question", obj=card, user=user,
                card=card, state=state, shown=shown, kind=where, src=state.url(), viz=viz, **filters.widget_context())


@blueprint.get("/question/<id_slug>/values/<parameter_id>")
@blueprint.get("/model/<id_slug>/values/<parameter_id>")
def question_values(id_slug: str, parameter_id: str):
    """A native question's parameter's list of values (an htmx fragment): those chosen first, then the
    API's list for what was typed."""
    signed_in_user()
    card = read(f"/api/card/{id_of(id_slug)}", ignore_view=True)
    native = not is_mbql(card.get("dataset_query") or {})
    current = filters.from_url(question_params.parameters(card) if native else [], request.args)
    chosen = next((f for f in current if f.id == parameter_id and f.kind == "choice"), None)
    if chosen is None:
        raise NotFound()
    query = (request.args.get("q") or "").strip()
    answer = question_params.values(card, chosen.parameter, query or None)
    return fragment("app/_filter_values.html", **filters.offer(chosen, answer, query))


def default_view(card: dict) -> str:
    return "table" if results.shape(card) == "table" else "chart"


def run_saved(card: dict, parameters: list[dict], state: State, view: str) -> tuple[Answer, bool]:
    """The card's result, and whether the database already sorted it as the state asks."""
    query = card.get("dataset_query") or {}
    if view == "table" and state.sort and is_mbql(query) and card.get("can_run_adhoc_query"):
        column = next((c for c in card.get("result_metadata") or [] if c.get("name") == state.sort),
                      {"name": state.sort})
        return call("POST", "/api/dataset", json=sorted_by(query, column, state.descending)), True
    return call("POST", f"/api/card/{card['id']}/query", json={"parameters": parameters}), False


def saved_sql(card: dict, native: bool) -> str | None:
    """The card's SQL when its user may run it ad hoc (the card's own answer, can_run_adhoc_query):
    a native card's text, or what POST /api/dataset/native compiles an MBQL card to."""
    if not card.get("can_run_adhoc_query"):
        return None
    query = card.get("dataset_query") or {}
    if native:
        text = (query.get("native") or {}).get("query")
        return text if isinstance(text, str) else None
    compiled = call("POST", "/api/dataset/native", json=query)
    return compiled.body.get("query") if compiled.ok and isinstance(compiled.body, dict) else None


# -- ad-hoc questions --------------------------------------------------------------------------------

@blueprint.get("/question")
def adhoc_shell():
    user = signed_in_user()
    return page("app/question.html", name="question", title="Question", user=user, shell=True)


@blueprint.get("/question/adhoc")
def adhoc():
    user = signed_in_user()
    try:
        question = decode_adhoc(request.args.get("q", ""))
        state = state_from(request.args, request.path)
    except (BadLink, BadState) as exc:
        return bad_state(str(exc), user)
    query = question["dataset_query"]
    mbql = is_mbql(query)
    if not mbql:  # SQL a link carries is shown in the editor, never run by following the link
        return go("/question/native?" + urlencode({"q": request.args["q"]}))
    card = {"name": question["name"] or adhoc_name(query), "display": question["display"],
            "visualization_settings": question["visualization_settings"]}
    shown = Shown(view=state.view or default_view(card), shape=results.shape(card))
    if shown.shape == "table":
        shown.view = "table"
    if drill.drillable(query):
        shown.drill = "/question/drill?" + urlencode({"q": request.args.get("q", "")})
    presorted = shown.view == "table" and bool(state.sort) and mbql
    run = sorted_by(query, {"name": state.sort}, state.descending) if presorted else query
    answer = call("POST", "/api/dataset", json=run)
    draw_result(shown, card, answer, state, presorted)
    if answer.ok:
        shown.sql = adhoc_sql(query, mbql)
        shown.downloads = downloads_of(answer, "/api/dataset", {
            "query": orjson.dumps(query).decode(), "display": question["display"],
            "visualization_settings": orjson.dumps(question["visualization_settings"]).decode()})
        source = source_table(query)
        if isinstance(source, int) or (isinstance(source, str) and source.startswith("card__")):
            shown.xray = f"/auto/dashboard/adhoc/{encode_query(query)}"
    viz = viz_settings.panel(card, answer.body if answer.ok else None, q=request.args.get("q"), view=state.view)
    return page("app/question.html", name="question", title=card["name"], user=user, card=card, state=state,
                shown=shown, kind="adhoc", src=state.url(), viz=viz)


def adhoc_name(query: dict) -> str:
    """An unsaved question is named after its table, as the API shows the table to this user."""
    source = source_table(query)
    if isinstance(source, int) and not isinstance(source, bool):
        answer = call("GET", f"/api/table/{source}")
        if answer.ok and isinstance(answer.body, dict) and answer.body.get("display_name"):
            return str(answer.body["display_name"])
    return "New question"


def adhoc_sql(query: dict, mbql: bool) -> str | None:
    """An ad-hoc query's SQL: its own text (it ran, so the API let this user run native SQL), or the
    compiled SQL of an MBQL query when POST /api/dataset/native gives it."""
    if not mbql:
        text = (query.get("native") or {}).get("query")
        return text if isinstance(text, str) else None
    compiled = call("POST", "/api/dataset/native", json=query)
    return compiled.body.get("query") if compiled.ok and isinstance(compiled.body, dict) else None


# -- the result, common to both ------------------------------------------------------------------------

def draw_result(shown: Shown, card: dict, answer: Answer, state: State, presorted: bool) -> None:
    if not answer.ok:
        if answer.status == 403:
            shown.failure = NO_DATA if card.get("id") else NO_QUERY
        else:
            shown.failure = failure_text(answer)
        return
    result = answer.body
    if shown.view == "chart":
        if shown.shape == "number":
            shown.number = results.cell(results.number(result))
        else:
            shown.chart = results.chart_svg(card, result, width=960, height=420, drill=bool(shown.drill))
        return
    cols, rows = results.columns(result), results.rows(result)
    if state.sort and not presorted:
        index = next((i for i, col in enumerate(cols) if col.get("name") == state.sort), None)
        if index is None:
            shown.failure = f"This question has no column named “{state.sort}” to sort by."
            return
        rows = results.sort_rows(rows, index, state.descending)
    shown.table = table_of(cols, rows, state, (result.get("data") or {}).get("rows_truncated"),
                           card.get("visualization_settings"))
    shown.table["sorted_here"] = bool(state.sort) and not presorted
    if shown.drill:  # the shown page's raw rows, and which result column each shown column is
        names = [col.get("name") for col in cols]
        shown.drill_rows = {"rows": results.page_rows(rows, shown.table["page"], PAGE_SIZE),
                            "cols": [names.index(col["name"]) for col in shown.table["columns"]]}


def failure_text(answer: Answer) -> str:
    body = answer.body if isinstance(answer.body, dict) else {}
    return str(body.get("error") or answer.message or "The question could not run.")


def table_of(cols: list[dict], rows: list[list], state: State, truncated, viz: dict | None) -> dict:
    return results.table_of(cols, rows, sort=state.sort, descending=state.descending, page=state.page,
                            size=PAGE_SIZE, url=lambda **change: state.url(view="table", **change),
                            truncated=truncated, viz=viz if isinstance(viz, dict) else None)


def downloads_of(answer: Answer, base: str, fields: dict) -> dict | None:
    """The download form's routes and fields, unless the API says this user may not download."""
    data = answer.body.get("data") if isinstance(answer.body, dict) else None
    if isinstance(data, dict) and data.get("download_perms") == "none":
        return None
    # A picture is drawn in the page's theme, as the chart on the page is.
    actions = {fmt: f"{base}/{fmt}" + (f"?theme={results.theme()}" if fmt == "png" else "") for fmt in DOWNLOADS}
    return {"actions": actions, "fields": fields}


def bad_state(message: str, user) -> Response:
    return page("app/question.html", name="question", title="This question cannot be shown", user=user,
                status=400, bad=message)
