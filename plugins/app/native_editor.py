"""The SQL editor (issue 31, item 2): /question/native, where a person writes a native query, sets its
template tags (variables, field filters, snippets, card references, `[[optional clauses]]`), gives
their values and runs it. A native ad-hoc link (/question#<base64>, static/question.js) and "Open
editor" on a saved native question come here as `?q=<base64>` (Metabase's question format).

Everything is the API's, as its user: the databases they may write SQL for (GET /api/database,
`native_permissions`), the schema browser (GET /api/database/:id/metadata), the snippets (GET
/api/native-query-snippet), the run (POST /api/dataset with the tags' values as parameters, its
refusals and the database's error shown as they come) and a field filter's values (POST
/api/dataset/parameter/values). The parameters' widgets are a native question's (question_params.py,
filters.py, app/_filters.html); the tags come from the API's own parser (native_state.py).

The URL keeps the editor's state (native_state.py's fields and the values by slug), so a reload or a
link opens the same SQL, settings and values, and how the result is shown: a run draws the result as a
chart or a table with the question pages' display picker and settings panel (viz_settings.py), whose
change comes with the next run (`native-viz-change`) and is applied by viz_settings.changed. "Save" is
the question pages' save panel (save.py) over the editor's question, replacing the saved question the
editor was opened from (`native-card`) when its user may write it. Opening does not run the SQL: a run is a JSON POST
(the API's cross-site rule, `posted()`), so a link from another site cannot make its follower run a
query; the person presses Run (or Ctrl+Enter), and the run's answer sets the URL (HX-Replace-Url).
Cancelling aborts the request (static/native.js): the API cancels a query whose client has gone.
"""
from __future__ import annotations

import base64
from urllib.parse import parse_qsl, urlencode

import orjson
from flask import request
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import NotFound

from core.http.internal import call

from . import filters, native_state, question_params, results, viz_settings
from .native_state import DIR, PAGE, SORT, Editor
from .question import Shown, State, default_view, draw_result, failure_text
from .question_query import BadLink, decode_adhoc, is_mbql
from .render import go, page, signed_in_user
from .views import as_args, blueprint, fragment, posted

BASE = "/question/native"
NO_DATABASE = "Choose a database to run the SQL on."


def databases() -> list[dict]:
    """The databases this user may write SQL for, as the API lists them."""
    answer = call("GET", "/api/database")
    listed = answer.body.get("data", []) if answer.ok and isinstance(answer.body, dict) else []
    return [db for db in listed if isinstance(db, dict) and db.get("native_permissions") == "write"]


def snippets() -> list[dict]:
    answer = call("GET", "/api/native-query-snippet")
    return [s for s in answer.body if isinstance(s, dict) and s.get("name")] \
        if answer.ok and isinstance(answer.body, list) else []


def tables(database: int | None) -> list[dict]:
    """The database's tables with their columns, as the API shows them to this user (none if refused)."""
    if database is None:
        return []
    answer = call("GET", f"/api/database/{database}/metadata")
    found = answer.body.get("tables", []) if answer.ok and isinstance(answer.body, dict) else []
    return sorted((t for t in found if isinstance(t, dict)),
                  key=lambda t: (str(t.get("schema") or ""), str(t.get("name") or "")))


def card_of(editor: Editor) -> dict:
    """The question the editor holds, as question_params reads a card."""
    return {"dataset_query": editor.dataset_query(), "parameters": [], "display": "table"}


def editor_from(args: MultiDict, known_snippets: list[dict]) -> Editor:
    by_name = {str(s["name"]): s.get("id") for s in known_snippets}
    return native_state.from_fields(args, by_name)


def values_of(editor: Editor, args: MultiDict) -> list[filters.Filter]:
    return filters.from_url(question_params.parameters(card_of(editor)), args)


def url_of(editor: Editor, current: list[filters.Filter]) -> str:
    return BASE + "?" + urlencode(editor.fields() + filters.query_pairs(current))


@blueprint.app_template_filter("native_editor_url")
def native_editor_url(card: dict) -> str:
    """Where "Open editor" takes a saved native question: this editor, with the card's query."""
    question = {"dataset_query": card.get("dataset_query") or {}, "display": card.get("display") or "table",
                "visualization_settings": card.get("visualization_settings") or {}}
    if card.get("id") is not None:  # a save from the editor may replace it
        question["original_card_id"] = card["id"]
    encoded = base64.urlsafe_b64encode(orjson.dumps(question)).decode("ascii").rstrip("=")
    return BASE + "?" + urlencode({"q": encoded})


@blueprint.get(BASE)
def native_editor():
    user = signed_in_user()
    args = request.args
    if "q" in args and native_state.SQL not in args:
        try:
            question = decode_adhoc(args.get("q", ""))
        except BadLink as exc:
            return page("app/native.html", name="native", title="This question cannot be opened", user=user,
                        status=400, bad=str(exc))
        if is_mbql(question["dataset_query"]):
            return go("/question/adhoc?" + urlencode({"q": args["q"]}))
        values = [(k, v) for k, v in args.items(multi=True) if k != "q"]
        shown = Editor(None, "", display=question["display"], settings=question["visualization_settings"],
                       card=question.get("original_card_id"))
        args = MultiDict(list(native_state.from_question(question["dataset_query"]).items(multi=True))
                         + shown.view_fields() + values)
    allowed = databases()
    known = snippets()
    editor = editor_from(args, known)
    notice = None
    if allowed and editor.database not in {db.get("id") for db in allowed}:
        if editor.database is not None:  # a link's database this user may not write SQL for: said, not run
            notice = f"You may not write SQL for database {editor.database}: choose one you may."
        editor.database = allowed[0]["id"]
    schema = tables(editor.database)
    current = values_of(editor, args)
    return page("app/native.html", name="native", title="New SQL query", user=user, editor=editor,
                allowed=allowed, schema=schema, snippets=known, current=current,
                variable_types=native_state.VARIABLE_TYPES, widget_types=native_state.WIDGET_TYPES,
                key=native_state.key, base=BASE, notice=notice, **filters.widget_context())


def posted_args() -> MultiDict:
    """The editor's form as json-enc posts it (a repeated field arrives as a list)."""
    return as_args(posted())


@blueprint.post(BASE + "/run")
def native_run():
    signed_in_user()
    args = posted_args()
    editor = editor_from(args, snippets())
    if editor.problem:
        return fragment("app/_form_error.html", status=400, message=editor.problem)
    if editor.database is None:
        return fragment("app/_form_error.html", status=400, message=NO_DATABASE)
    if not editor.sql.strip():
        return fragment("app/_form_error.html", status=400, message="Write the SQL to run.")
    try:
        apply_change(editor, args.get(native_state.CHANGE))
    except ValueError as exc:  # viz_settings.BadSettings, or more fields than a panel has
        return fragment("app/_form_error.html", status=400, message=str(exc))
    current = values_of(editor, args)
    query = {**editor.dataset_query(), "parameters": question_params.api_parameters(current)}
    answer = call("POST", "/api/dataset", json=query)
    if not answer.ok:
        status = answer.status if 400 <= answer.status < 500 else 400
        return fragment("app/_form_error.html", status=status, message=failure_text(answer))
    page_text = args.get(PAGE) or "1"
    state = State(BASE, [], "table", args.get(SORT) or None, args.get(DIR) == "desc",
                  int(page_text) if page_text.isdigit() and 0 < int(page_text) < 10**9 else 1)
    card = {"name": "SQL query", "display": editor.display, "visualization_settings": editor.settings}
    shown = Shown(view=editor.view or default_view(card), shape=results.shape(card))
    if shown.shape == "table":
        shown.view = "table"
    draw_result(shown, card, answer, state, presorted=False)
    viz = viz_settings.panel(card, answer.body, q=viz_settings.encode(editor.question()), view=editor.view,
                             editor=True)
    response = fragment("app/_native_result.html", shown=shown, viz=viz, editor=editor, oob=True)
    response.headers["HX-Replace-Url"] = url_of(editor, current)
    return response


def apply_change(editor: Editor, change: str | None) -> None:
    """The display picker's or settings panel's change (their fields, URL-encoded) applied to the editor
    by the question pages' own rules; a new display is shown as such (chart or table)."""
    if not change:
        return
    fields = MultiDict(parse_qsl(change, keep_blank_values=True, max_num_fields=2000))
    question = viz_settings.changed(editor.question(), fields)
    editor.display, editor.settings = question["display"], question["visualization_settings"]
    if fields.get("display"):
        editor.view = None


@blueprint.get(BASE + "/values/<parameter_id>")
def native_values(parameter_id: str):
    """A field filter's (or listed variable's) values, as on a saved question's page."""
    signed_in_user()
    editor = editor_from(request.args, snippets())
    card = card_of(editor)
    chosen = next((f for f in values_of(editor, request.args) if f.id == parameter_id and f.kind == "choice"), None)
    if chosen is None:
        raise NotFound()
    query = (request.args.get("q") or "").strip()
    answer = question_params.values(card, chosen.parameter, query or None)
    return fragment("app/_filter_values.html", **filters.offer(chosen, answer, query))
