"""A saved dashboard's action buttons (Metabase's action dashcards): pressing one opens a form of the
action's parameters, and submitting it runs the action through POST
/api/dashboard/:id/dashcard/:dcid/execute, the result or the API's refusal shown in the form.

A parameter the dashcard maps to a dashboard filter takes that filter's current value and is not asked
for (one whose filter is empty is asked, as in Metabase); hidden ones are the API's to fill. An implicit
update whose primary key a filter gives is prefilled with the row's current values (GET .../execute),
as Metabase's form is. Values are keyed by the action's parameter ids and typed by the parameter's type.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import orjson
from flask import make_response, request
from werkzeug.exceptions import NotFound

from core.http.internal import call

from . import boards, filters
from .render import signed_in_user
from .views import blueprint, fragment, id_of, posted

FIELD_PREFIX = "param:"
# Metabase's input types this form draws; any other one is a text box.
INPUT_TYPES = {"string": "text", "number": "number", "date": "date", "datetime": "datetime-local", "time": "time"}
SUBMIT_LABELS = {"row/create": "Save", "row/update": "Update", "row/delete": "Delete"}


def label(dashcard: dict) -> str:
    """The button's label: the dashcard's `button.label`, else the action's name (Metabase's order)."""
    viz = dashcard.get("visualization_settings") or {}
    action = dashcard.get("action") if isinstance(dashcard.get("action"), dict) else {}
    return str(viz.get("button.label") or action.get("name") or "Click me")


@dataclass(frozen=True)
class Field:
    """One input of an action's form."""

    id: str
    name: str         # the input's name: FIELD_PREFIX + the parameter id
    title: str
    input: str        # "text", "textarea", "number", "date", "datetime-local", "time", "boolean" or "select"
    required: bool
    placeholder: str
    options: tuple[str, ...]
    value: str


def _settings(action: dict) -> dict:
    fields = (action.get("visualization_settings") or {}).get("fields")
    return fields if isinstance(fields, dict) else {}


def _parameters(action: dict) -> list[dict]:
    return [p for p in action.get("parameters") or [] if isinstance(p, dict) and p.get("id") is not None]


def mapped_values(dashcard: dict, action: dict, current: list[filters.Filter]) -> dict[str, Any]:
    """The action's parameter values the page's filters give through the dashcard's mappings, keyed by
    the action's parameter id (a one-value list is sent as its value, as Metabase's buttons send it)."""
    by_filter = {f.id: f.value for f in current if f.value is not None}
    by_target = {repr(p.get("target")): str(p["id"]) for p in _parameters(action)}
    values = {}
    for mapping in dashcard.get("parameter_mappings") or []:
        if not isinstance(mapping, dict):
            continue
        target = by_target.get(repr(mapping.get("target")))
        value = by_filter.get(str(mapping.get("parameter_id")))
        if target is None or value is None:
            continue
        values[target] = value[0] if isinstance(value, list) and len(value) == 1 else value
    return values


def form_fields(action: dict, given: dict[str, Any], prefill: dict[str, Any]) -> list[Field]:
    """The inputs of the parameters neither hidden nor given by a filter, in the action's order."""
    settings = _settings(action)
    out = []
    for position, parameter in enumerate(_parameters(action)):
        pid = str(parameter["id"])
        setting = settings.get(pid) if isinstance(settings.get(pid), dict) else {}
        if setting.get("hidden") or pid in given:
            continue
        kind = str(setting.get("inputType") or "")
        ptype = str(parameter.get("type") or "")
        if kind in ("select", "radio") and isinstance(setting.get("valueOptions"), list):
            widget = "select"
        elif kind == "boolean" or ptype == "boolean":
            widget = "boolean"
        elif kind == "text":
            widget = "textarea"
        elif kind in INPUT_TYPES:
            widget = INPUT_TYPES[kind]
        else:
            widget = "number" if ptype.startswith("number") else "date" if ptype.startswith("date") else "text"
        value = prefill.get(pid)
        if value is None and "defaultValue" in setting:
            value = setting["defaultValue"]
        out.append((setting.get("order", position) if isinstance(setting.get("order"), int) else position, Field(
            pid, FIELD_PREFIX + pid,
            str(setting.get("title") or parameter.get("display-name") or parameter.get("name") or pid),
            widget, bool(setting.get("required", parameter.get("required"))),
            str(setting.get("placeholder") or ""),
            tuple(str(o) for o in setting.get("valueOptions") or ()) if widget == "select" else (),
            _shown(value, widget))))
    return [f for _, f in sorted(out, key=lambda pair: pair[0])]


def _shown(value: Any, widget: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if widget == "date":
        return text[:10]
    if widget == "datetime-local":
        return text[:19]
    return text


def typed(action: dict, body: dict) -> dict[str, Any]:
    """The form's values as the API takes them: numbers as numbers, booleans as booleans; an empty input
    is left out (an update keeps that column; the API names a required one missing)."""
    settings = _settings(action)
    out = {}
    for parameter in _parameters(action):
        pid = str(parameter["id"])
        raw = body.get(FIELD_PREFIX + pid)
        if isinstance(raw, list):
            raw = raw[0] if raw else None
        if raw is None or str(raw).strip() == "":
            continue
        text = str(raw).strip()
        setting = settings.get(pid) if isinstance(settings.get(pid), dict) else {}
        ptype = str(parameter.get("type") or "")
        if setting.get("inputType") == "boolean" or ptype == "boolean":
            out[pid] = text == "true"
        elif setting.get("fieldType") == "number" or setting.get("inputType") == "number" or ptype.startswith("number"):
            out[pid] = _number(text)
        else:
            out[pid] = text
    return out


def _number(text: str) -> int | float | str:
    """A number, or the text as typed when it is none (the API's refusal is what the form shows)."""
    try:
        value = float(text)
    except ValueError:
        return text
    if not math.isfinite(value):
        return text
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def done_message(action: dict, result: Any) -> str:
    """What the form says when the action ran: its own success message, else its name and what changed."""
    settings = action.get("visualization_settings") or {}
    if settings.get("successMessage"):
        return str(settings["successMessage"])
    message = f"{action.get('name') or 'The action'} ran successfully."
    if isinstance(result, dict):
        for key, noun in (("rows-affected", "row affected"), ("rows-updated", "row updated"),
                          ("rows-deleted", "row deleted")):
            count = result.get(key)
            if isinstance(count, list):
                count = count[0] if count and isinstance(count[0], int) else None
            if isinstance(count, int):
                message += f" {count} {noun if count == 1 else noun.replace('row', 'rows', 1)}."
                break
    return message


def _button(id_slug: str, dashcard_id: str) -> tuple[boards.SavedBoard, dict, dict, list[filters.Filter]]:
    board = boards.saved(id_of(id_slug), count_view=False)
    if not dashcard_id.isdigit() or len(dashcard_id) > 15:
        raise NotFound()
    dashcard = board.dashcard(int(dashcard_id))
    action = dashcard.get("action")
    if dashcard.get("action_id") is None or not isinstance(action, dict):
        raise NotFound()  # no button here, or one whose action this user may not see
    return board, dashcard, action, filters.from_url(board.parameters, request.args)


@blueprint.get("/dashboard/<id_slug>/action/<dashcard_id>")
def action_form(id_slug: str, dashcard_id: str):
    """The button's form (an htmx fragment): the parameters the filters do not give, prefilled for an
    implicit update whose row a filter names."""
    signed_in_user()
    board, dashcard, action, current = _button(id_slug, dashcard_id)
    given = mapped_values(dashcard, action, current)
    prefill, problem = {}, None
    if action.get("type") == "implicit" and action.get("kind") == "row/update" and given:
        answer = call("GET", f"/api/dashboard/{board.id}/dashcard/{dashcard['id']}/execute",
                      query={"parameters": orjson.dumps(given).decode()})
        if answer.ok and isinstance(answer.body, dict):
            prefill = answer.body
        else:
            problem = answer.message or "The row's current values could not be read."
    fields = form_fields(action, given, prefill)
    submit = str((action.get("visualization_settings") or {}).get("submitButtonLabel")
                 or SUBMIT_LABELS.get(str(action.get("kind")), "Run"))
    query = filters.query_string(current)
    return fragment("app/_action_form.html", title=label(dashcard), action=action, fields=fields, submit=submit,
                    problem=problem, given=bool(given), enabled=action.get("database_enabled_actions", True),
                    post=f"{board.path}/action/{dashcard['id']}" + (f"?{query}" if query else ""),
                    dashcard_id=dashcard["id"])


@blueprint.post("/dashboard/<id_slug>/action/<dashcard_id>")
def action_run(id_slug: str, dashcard_id: str):
    """Run the button's action with the form's values and the filters' mapped ones; the cards reload."""
    signed_in_user()
    body = posted()
    board, dashcard, action, current = _button(id_slug, dashcard_id)
    values = {**typed(action, body), **mapped_values(dashcard, action, current)}
    answer = call("POST", f"/api/dashboard/{board.id}/dashcard/{dashcard['id']}/execute",
                  json={"parameters": values})
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status if answer.status >= 400 else 500,
                        message=answer.message or "The action could not be run.")
    response = make_response(fragment("app/_form_done.html", message=done_message(action, answer.body)))
    response.headers["HX-Trigger"] = "refresh"  # the dashboard's cards reload, as after Metabase's actions
    return response
