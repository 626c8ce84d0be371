"""Saving from a question page (issue 31 item 5): the "Save" panel (name, description, a collection the
user may write, or replacing the question it came from), turning a question into a model, and adding a
saved question to a dashboard. Model metadata editing is save_metadata.py.

Each panel is a fragment the page loads into `#save-panel` (static/save.js moves focus into it and
closes it); each write is one API call as the signed-in user (POST /api/card, PUT /api/card/:id, PUT
/api/dashboard/:id), and its refusal is shown in the panel with the API's message and status
(`_form_error.html`). What a question is comes from the page's own source: an ad-hoc `q` (the display
and visualization_settings its link carries are stored as they are) or a saved card's id; the SQL
editor asks for the panel with its form's fields, read as the editor reads them (native_state.py) into
the `q` the panel then posts, its saved question (`native-card`) the original a save may replace.
"""
from __future__ import annotations

import functools

from flask import request

from core.http.internal import Answer, call

from . import native_editor, native_state, question_params
from .question import adhoc_name
from .question_query import BadLink, decode_adhoc
from .render import go, signed_in_user
from .views import blueprint, fragment, id_of, posted, slug
from .viz_settings import encode as encode_question

GRID_WIDTH = 24
# Metabase's default sizes of a new dashcard (width, height) by how the card is shown.
SIZES = {"table": (12, 9), "pivot": (12, 9), "object": (12, 9), "scalar": (6, 3), "smartscalar": (6, 3),
         "gauge": (6, 4), "progress": (6, 4)}
CHART_SIZE = (12, 6)


class Refused(ValueError):
    """What the panel says instead (a missing name, a question that cannot be read), with its status."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def refusals(view):
    """The view, with a Refused drawn as the panel's error fragment (never a whole error page in a panel)."""

    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        try:
            return view(*args, **kwargs)
        except Refused as exc:
            return fragment("app/_form_error.html", status=exc.status, message=str(exc))

    return wrapped


def read_card(card_id) -> dict:
    """GET /api/card/:id for this user (no view counted), or its refusal."""
    answer = call("GET", f"/api/card/{card_id}", query={"ignore_view": True})
    if not answer.ok or not isinstance(answer.body, dict):
        status = answer.status if 400 <= answer.status < 500 else 400
        raise Refused(api_message(answer) or "That question could not be read.", status)
    return answer.body


def card_path(card: dict) -> str:
    base = "/model" if card.get("type") == "model" else "/question"
    return f"{base}/{card['id']}-{slug(card.get('name'))}".rstrip("-")


def refusal(answer: Answer, fallback: str):
    status = answer.status if 400 <= answer.status < 500 else 400
    return fragment("app/_form_error.html", status=status, message=api_message(answer) or fallback)


def api_message(answer: Answer) -> str | None:
    body = answer.body
    if isinstance(body, dict):
        errors = body.get("errors")
        if isinstance(errors, dict) and errors:
            return "; ".join(f"{key}: {value}" for key, value in errors.items())
        if isinstance(body.get("message"), str):
            return body["message"]
    if isinstance(body, str) and body.strip():
        return body.strip()
    return answer.message


# -- the question being saved ---------------------------------------------------------------------------

def question_from(values) -> tuple[dict, dict | None]:
    """The question a panel saves ({dataset_query, display, visualization_settings, name}) and the saved
    card it came from (read through the API), from `card=<id>` or `q=<base64>`."""
    card_id = str(values.get("card") or "")
    if card_id:
        if not card_id.isdigit() or len(card_id) > 15:
            raise Refused("The question is named by its id, a whole number.")
        card = read_card(card_id)
        question = {key: card.get(key) for key in ("dataset_query", "display", "visualization_settings", "name")}
        return question, card
    try:
        question = decode_adhoc(str(values.get("q") or ""))
    except BadLink as exc:
        raise Refused(str(exc)) from None
    original = question.get("original_card_id")
    card = None
    if original is not None:
        answer = call("GET", f"/api/card/{original}", query={"ignore_view": True})
        card = answer.body if answer.ok and isinstance(answer.body, dict) else None
    return question, card


def suggested_name(question: dict) -> str:
    """An unsaved question's name to start from: its table's, as the ad-hoc page titles it."""
    query = question.get("dataset_query") or {}
    return "" if query.get("type") != "query" else adhoc_name(query)


def writable_collections() -> list[dict]:
    """The collections this user may save into (GET /api/collection, the root first), with their depth."""
    answer = call("GET", "/api/collection", query={"exclude-archived": True})
    found = answer.body if answer.ok and isinstance(answer.body, list) else []
    out = []
    for one in found:
        if not isinstance(one, dict) or not one.get("can_write") or one.get("archived"):
            continue
        if one.get("namespace") not in (None, ""):
            continue
        depth = len([part for part in str(one.get("location") or "/").split("/") if part])
        out.append({"id": one.get("id"), "name": one.get("name"), "depth": depth})
    return out


# -- save as new, or replace ------------------------------------------------------------------------------

def editor_link(args) -> str:
    """The SQL editor's question (its form's fields) as an ad-hoc link's `q`, or what keeps it from saving."""
    editor = native_editor.editor_from(args, native_editor.snippets())
    if editor.problem:
        raise Refused(editor.problem)
    if editor.database is None:
        raise Refused(native_editor.NO_DATABASE)
    if not editor.sql.strip():
        raise Refused("Write the SQL to save.")
    return encode_question(editor.question())


@blueprint.get("/question/save")
@refusals
def save_panel():
    signed_in_user()
    args = {"q": editor_link(request.args)} if native_state.SQL in request.args else request.args
    question, original = question_from(args)
    # Only a question changed from a saved one (a drill's link, the editor) may replace it; a saved page
    # saves a copy.
    replaceable = original if (args.get("q") and original and original.get("can_write")
                               and not original.get("archived")) else None
    current = (original or {}).get("collection_id") if original else None
    return fragment("app/_save_dialog.html", question=question, original=replaceable,
                    source={"card": args.get("card") or "", "q": args.get("q") or ""},
                    collections=writable_collections(), current=current,
                    name=question.get("name") or suggested_name(question) or (original or {}).get("name") or "")


@blueprint.post("/question/save")
@refusals
def save_question():
    signed_in_user()
    body = posted()
    question, original = question_from(body)
    if body.get("replace") == "replace" and not body.get("card"):
        return replace(question, original)
    card = new_card(question, body)
    answer = call("POST", "/api/card", json=card)
    if not answer.ok or not isinstance(answer.body, dict):
        return refusal(answer, "The question could not be saved.")
    return go(card_path(answer.body))


def new_card(question: dict, body: dict) -> dict:
    name = str(body.get("name") or "").strip()
    if not name:
        raise Refused("A question needs a name.")
    if len(name) > 254:
        raise Refused("A name is at most 254 characters.")
    collection = str(body.get("collection_id") or "root")
    if collection != "root" and (not collection.isdigit() or len(collection) > 15):
        raise Refused("Pick a collection from the list.")
    description = str(body.get("description") or "").strip()
    card = {"name": name, "description": description or None, "type": "question",
            "collection_id": None if collection == "root" else int(collection),
            "dataset_query": question["dataset_query"], "display": question.get("display") or "table",
            "visualization_settings": question.get("visualization_settings") or {}}
    native = question["dataset_query"].get("native") if question["dataset_query"].get("type") == "native" else None
    if isinstance(native, dict) and isinstance(native.get("template-tags"), dict):
        card["parameters"] = question_params.tag_parameters(native["template-tags"])  # as Metabase's editor saves
    return card


def replace(question: dict, original: dict | None):
    """The original card with this question's query and view (its name and collection stay)."""
    if original is None:
        raise Refused("This question did not come from a saved question to replace.")
    change = {"dataset_query": question["dataset_query"], "display": question.get("display") or "table",
              "visualization_settings": question.get("visualization_settings") or {}}
    kept = kept_parameters(original, question["dataset_query"])
    if kept is not None:
        change["parameters"] = kept
    answer = call("PUT", f"/api/card/{original['id']}", json=change)
    if not answer.ok or not isinstance(answer.body, dict):
        return refusal(answer, "The question could not be replaced.")
    return go(card_path(answer.body))


def kept_parameters(original: dict, dataset_query: dict) -> list | None:
    """The original's parameters without those whose template tag the new SQL no longer has (Metabase's
    editor drops a tag's parameter with the tag), or None when none is dropped or the query is not SQL."""
    native = dataset_query.get("native")
    if dataset_query.get("type") != "native" or not isinstance(native, dict):
        return None
    tags = native.get("template-tags") if isinstance(native.get("template-tags"), dict) else {}
    parameters = [one for one in original.get("parameters") or [] if isinstance(one, dict)]

    def gone(parameter: dict) -> bool:
        target = parameter.get("target")
        ref = target[1] if isinstance(target, list) and len(target) >= 2 else None
        return isinstance(ref, list) and len(ref) >= 2 and ref[0] == "template-tag" and ref[1] not in tags

    kept = [one for one in parameters if not gone(one)]
    return kept if len(kept) < len(parameters) else None


# -- a question becomes a model ---------------------------------------------------------------------------

@blueprint.post("/question/<id_slug>/model")
@refusals
def turn_into_model(id_slug: str):
    signed_in_user()
    posted()
    answer = call("PUT", f"/api/card/{id_of(id_slug)}", json={"type": "model"})
    if not answer.ok or not isinstance(answer.body, dict):
        return refusal(answer, "The question could not be turned into a model.")
    return go(card_path(answer.body))


# -- add to a dashboard -----------------------------------------------------------------------------------

@blueprint.get("/question/<id_slug>/dashboards")
@blueprint.get("/model/<id_slug>/dashboards")
@refusals
def dashboard_panel(id_slug: str):
    signed_in_user()
    card = read_card(id_of(id_slug))
    return fragment("app/_save_dashboard.html", card=card, dashboards=writable_dashboards())


def writable_dashboards() -> list[dict]:
    """The dashboards this user may change (GET /api/search's can_write), by name."""
    answer = call("GET", "/api/search", query={"models": "dashboard"})
    found = answer.body.get("data") if answer.ok and isinstance(answer.body, dict) else None
    dashboards = [{"id": one["id"], "name": one.get("name") or f"Dashboard {one['id']}",
                   "collection": (one.get("collection") or {}).get("name")}
                  for one in found or [] if isinstance(one, dict) and one.get("can_write") and not one.get("archived")]
    return sorted(dashboards, key=lambda one: (str(one["name"]).casefold(), one["id"]))


@blueprint.post("/question/<id_slug>/dashboards")
@blueprint.post("/model/<id_slug>/dashboards")
@refusals
def add_to_dashboard(id_slug: str):
    signed_in_user()
    body = posted()
    card = read_card(id_of(id_slug))
    chosen = str(body.get("dashboard_id") or "")
    if not chosen.isdigit() or len(chosen) > 15:
        return fragment("app/_form_error.html", status=400, message="Pick a dashboard from the list.")
    answer = call("GET", f"/api/dashboard/{chosen}", query={"ignore_view": True})
    if not answer.ok or not isinstance(answer.body, dict):
        return refusal(answer, "That dashboard could not be read.")
    dashboard = answer.body
    change = with_card(dashboard, card)
    written = call("PUT", f"/api/dashboard/{chosen}", json=change)
    if not written.ok:
        return refusal(written, "The question could not be added to the dashboard.")
    # Opened in the editor, where the person places the card and wires it to the filters.
    return go(f"/dashboard/{dashboard['id']}-{slug(dashboard.get('name'))}".rstrip("-") + "/edit")


def with_card(dashboard: dict, card: dict) -> dict:
    """PUT /api/dashboard/:id's body: the dashboard's dashcards as they are plus the card, on the first
    tab, at the first place of the grid where it fits (top to bottom, left to right)."""
    tabs = dashboard.get("tabs") or []
    tab = tabs[0]["id"] if tabs else None
    dashcards = [one for one in dashboard.get("dashcards") or [] if isinstance(one, dict)]
    width, height = SIZES.get(str(card.get("display")), CHART_SIZE)
    taken = [one for one in dashcards if tab is None or one.get("dashboard_tab_id") == tab]
    row, col = free_spot(taken, width, height)
    new = {"id": -1, "card_id": card["id"], "row": row, "col": col, "size_x": width, "size_y": height,
           "series": [], "parameter_mappings": [], "visualization_settings": {}}
    if tab is not None:
        new["dashboard_tab_id"] = tab
    # An existing dashcard is sent with its place (required); what is not sent is kept as it is.
    kept = [{key: one[key] for key in ("id", "row", "col", "size_x", "size_y", "dashboard_tab_id") if key in one}
            for one in dashcards]
    return {"dashcards": kept + [new]}


def free_spot(dashcards: list[dict], width: int, height: int) -> tuple[int, int]:
    """The first (row, col) where a width x height card overlaps none of `dashcards`."""

    def overlaps(row: int, col: int, other: dict) -> bool:
        r, c = int(other.get("row") or 0), int(other.get("col") or 0)
        w, h = int(other.get("size_x") or 1), int(other.get("size_y") or 1)
        return row < r + h and r < row + height and col < c + w and c < col + width

    bottom = max((int(one.get("row") or 0) + int(one.get("size_y") or 1) for one in dashcards), default=0)
    for row in range(bottom + 1):
        for col in range(GRID_WIDTH - width + 1):
            if not any(overlaps(row, col, other) for other in dashcards):
                return row, col
    return bottom, 0
