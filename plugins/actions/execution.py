"""Running an action: POST /api/action/:id/execute, a dashcard's button, a public link; and the values that
prefill an implicit update or delete form (GET .../execute).

Every path comes here with `values` ({parameter id: value}) and who asks (a user, or None for a public
link, whose UUID the sharing side checked). Metabase's execute-action!: a value for an unknown or hidden
parameter is a 400 naming both sets, hidden parameters' default values are filled in, the database
gate (`enabled`) is checked, then the kind runs: implicit rows (implicit.py), a native write query
(query.py) or an HTTP request (http_action.py). Failures are 400s with `{"message": ...}` as Metabase's.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.http.errors import Forbidden, Invalid
from core.policy import permissions as perms

from . import enabled, http_action, implicit, query
from .errors import check_no_extra
from .service import action_json, details, load, model_of


def _prepared(shown: dict, values: dict) -> dict:
    """The request values checked against the action's parameters, hidden ones' defaults filled in."""
    fields = (shown.get("visualization_settings") or {}).get("fields") or {}
    fields = fields if isinstance(fields, dict) else {}
    hidden = {f.get("id") for f in fields.values() if isinstance(f, dict) and f.get("hidden")}
    ids = [p.get("id") for p in shown.get("parameters") or [] if isinstance(p, dict)]
    check_no_extra(values, [i for i in ids if i not in hidden])
    defaults = {i: fields[i]["defaultValue"] for i in ids
                if i not in values and isinstance(fields.get(i), dict) and "defaultValue" in fields[i]}
    return {**defaults, **values}


def check_can_run(session: Session, user: User | None, action) -> Card:
    """A user needs the model's collection readable (a public link's viewer was checked by its UUID)."""
    model = model_of(session, action)
    if user is not None and not perms.can_read_item(session, user, model.collection_id):
        raise Forbidden()
    return model


def execute(session: Session, user: User | None, action, values: dict | None) -> Any:
    model = check_can_run(session, user, action)
    values = {str(k): v for k, v in (values or {}).items()}
    shown = action_json(session, action)
    values = _prepared(shown, values)
    enabled.check_action(session, action)
    if action.type == "implicit":
        return implicit.run(session, model, shown, values, user)
    detail = details(session, action)
    if detail is None:
        raise Invalid(f"Unknown action type {action.type}.")
    if action.type == "query":
        return query.run(session, action, detail, values)
    return http_action.run(session, action, detail, values)


def execute_by_id(session: Session, user: User, action_id: int, values: dict | None) -> Any:
    return execute(session, user, load(session, action_id), values)


def prefill(session: Session, user: User | None, action, values: dict | None) -> dict:
    """Metabase's fetch-values: the row's current values for an implicit update/delete, {} otherwise."""
    model = check_can_run(session, user, action)
    enabled.check_action(session, action)
    if action.type != "implicit":
        return {}
    shown = action_json(session, action)
    if shown.get("kind") not in ("row/update", "row/delete"):
        raise Invalid("Values can only be fetched for actions that require a Primary Key.")
    values = {str(k): v for k, v in (values or {}).items()}
    return implicit.current_values(session, user, model, shown, values)


def prefill_by_id(session: Session, user: User, action_id: int, values: Any) -> dict:
    if not isinstance(values, dict):
        raise Invalid({"parameters": "value must be a valid JSON string."})
    return prefill(session, user, load(session, action_id), values)


def mapped_values(values: dict | None, mappings: list | None, shown: dict) -> dict:
    """A dashcard's values: one sent under a dashboard parameter id its mappings aim at an action
    parameter (by that parameter's target) arrives under the action parameter's id."""
    values = dict(values or {})
    by_target = {repr(p.get("target")): p.get("id") for p in shown.get("parameters") or [] if isinstance(p, dict)}
    ids = {p.get("id") for p in shown.get("parameters") or [] if isinstance(p, dict)}
    for mapping in mappings or []:
        if not isinstance(mapping, dict):
            continue
        source = mapping.get("parameter_id")
        destination = by_target.get(repr(mapping.get("target")))
        if source in values and source not in ids and destination is not None:
            values.setdefault(destination, values.pop(source))
    return values
