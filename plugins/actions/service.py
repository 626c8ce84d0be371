"""Actions as stored objects: their JSON, who may see and change them, create/update/delete, public links.

An action belongs to its model (a card of type "model"): it is read as the model's collection is read and
written as it is written (compat content.md 7). Creating or changing one also needs actions enabled on
every database it runs against (`enabled.check_database`), and a query action's author needs native query
permission on its database, because the SQL is theirs. Executing is execution.py's.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import delete as sa_delete
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Database, User
from core.appdb.models.base import new_entity_id
from core.assembly.events import emit
from core.http.errors import Forbidden, Invalid, NotFound, check_404
from core.identity.users import creator_json
from core.policy import permissions as perms
from core.policy import sharing

from . import enabled, http_action, implicit_params
from .models import DETAIL_TABLES, Action, HttpAction, ImplicitAction, QueryAction

COMMON = ("name", "description", "type", "model_id", "parameters", "parameter_mappings",
          "visualization_settings", "archived")
DETAIL_KEYS = {"query": ("database_id", "dataset_query"), "http": ("template", "response_handle", "error_handle"),
               "implicit": ("kind",)}


# ---- reading ---------------------------------------------------------------------------------------


def load(session: Session, action_id: int, *, archived: bool | None = False) -> Action:
    action = session.get(Action, action_id)
    if action is None or (archived is not None and action.archived != archived):
        raise NotFound()
    return action


def model_of(session: Session, action: Action) -> Card:
    return check_404(session.get(Card, action.model_id))


def readable(session: Session, user: User, action_id: int) -> Action:
    action = load(session, action_id)
    if not perms.can_read_item(session, user, model_of(session, action).collection_id):
        raise Forbidden()
    return action


def details(session: Session, action: Action):
    return session.get(DETAIL_TABLES[action.type], action.id)


def action_json(session: Session, action: Action, *, creator: bool = False, public: bool = False) -> dict:
    """Metabase's action JSON; `public` keeps only what an anonymous viewer of a public link sees."""
    model = session.get(Card, action.model_id)
    out: dict[str, Any] = {
        "id": action.id, "name": action.name, "description": action.description, "type": action.type,
        "model_id": action.model_id, "parameters": action.parameters or [],
        "parameter_mappings": action.parameter_mappings, "visualization_settings": action.visualization_settings or {},
    }
    detail = details(session, action)
    if action.type == "implicit":
        out["kind"] = detail.kind if detail else None
        out["database_id"] = model.database_id if model else None
        implicit_params.enrich(session, model, out)
    if public:
        return {key: out[key] for key in ("id", "name", "type", "parameters", "visualization_settings")}
    if action.type == "query" and detail is not None:
        out.update(database_id=detail.database_id, dataset_query=detail.dataset_query)
    elif action.type == "http" and detail is not None:
        out.update(template=detail.template, response_handle=detail.response_handle, error_handle=detail.error_handle)
    out.update(archived=action.archived, public_uuid=action.public_uuid, made_public_by_id=action.made_public_by_id,
               creator_id=action.creator_id, entity_id=action.entity_id, created_at=action.created_at,
               updated_at=action.updated_at)
    if creator:
        out["creator"] = creator_json(session.get(User, action.creator_id)) if action.creator_id else None
    return out


def get(session: Session, user: User, action_id: int) -> dict:
    return action_json(session, readable(session, user, action_id), creator=True)


def list_actions(session: Session, user: User, model_id: int | None) -> list[dict]:
    """The unarchived actions of the readable models (of one model when `model_id` is given)."""
    if model_id is not None:
        model = check_404(session.get(Card, model_id))
        if not perms.can_read_item(session, user, model.collection_id):
            raise Forbidden()
        models = [model]
    else:
        models = list(session.scalars(select(Card).where(Card.type == "model", Card.archived.is_(False))))
        ids = perms.readable_collection_ids(session, user)
        if ids is not None:
            root = perms.can_read_collection(session, user, None)
            models = [m for m in models if (m.collection_id in ids if m.collection_id is not None else root)]
    if not models:
        return []
    actions = session.scalars(select(Action).where(Action.model_id.in_([m.id for m in models]),
                                                   Action.archived.is_(False)).order_by(Action.updated_at, Action.id))
    return [action_json(session, a, creator=True) for a in actions]


# ---- writing ---------------------------------------------------------------------------------------


def _writable_model(session: Session, user: User, model_id: int) -> Card:
    model = check_404(session.get(Card, model_id))
    if not perms.can_write_item(session, user, model.collection_id):
        raise Forbidden()
    return model


def _check(session: Session, user: User, model: Card, kind: str, fields: dict, *, sql_sent: bool = True) -> None:
    """What Metabase checks before saving: a model, the kind's own requirements, actions enabled. Native
    query permission is asked only when the SQL or its database is being written (`sql_sent`)."""
    if model.type != "model":
        raise Invalid("Actions must be made with models, not cards.")
    databases = [model.database_id]
    if kind == "query":
        if fields.get("database_id") is None:
            raise Invalid("Must provide a database_id for query actions")
        databases.append(fields["database_id"])
        if sql_sent and not perms.can_query(session, user, fields["database_id"], native=True):
            raise Forbidden()
    elif kind == "implicit":
        if not implicit_params.supported(model):
            raise Invalid("Implicit actions are not supported for models with clauses.")
        if fields.get("kind") is None:
            raise Invalid({"kind": "value must be an implicit action kind."})
        if fields["kind"].startswith("bulk/"):
            raise Invalid("Bulk implicit actions are not supported.")
    elif kind == "http":
        if fields.get("template") is None:
            raise Invalid({"template": "value must be an HTTP action template."})
        http_action.check_template(fields["template"])
    for database_id in dict.fromkeys(d for d in databases if d is not None):
        enabled.check_database(check_404(session.get(Database, database_id)))


def _write_detail(session: Session, action: Action, fields: dict, previous: str | None) -> None:
    table = DETAIL_TABLES[action.type]
    if previous is not None and previous != action.type:
        old = session.get(DETAIL_TABLES[previous], action.id)
        if old is not None:
            session.delete(old)
            session.flush()
    row = session.get(table, action.id) or table(action_id=action.id)
    for key in DETAIL_KEYS[action.type]:
        if key in fields:
            setattr(row, key, fields[key])
    if action.type == "query" and row.dataset_query is None:
        row.dataset_query = {}
    if action.type == "query" and isinstance(row.dataset_query, dict) and row.dataset_query.get("database"):
        row.database_id = row.dataset_query["database"]
    session.add(row)


def create(session: Session, user: User, fields: dict) -> dict:
    kind = fields.get("type") or "query"
    model = _writable_model(session, user, fields["model_id"])
    _check(session, user, model, kind, fields)
    action = Action(type=kind, creator_id=user.id, entity_id=new_entity_id(), parameters=[],
                    visualization_settings={}, archived=False)
    for key in COMMON:
        if fields.get(key) is not None:
            setattr(action, key, fields[key])
    action.type = kind
    session.add(action)
    session.flush()
    _write_detail(session, action, fields, None)
    session.commit()
    emit("action-create", user.id, action)
    return action_json(session, action, creator=True)


def update(session: Session, user: User, action_id: int, fields: dict) -> dict:
    action = load(session, action_id, archived=None)
    _writable_model(session, user, action.model_id)
    enabled.check_action(session, action)
    previous = action.type
    kind = fields.get("type") or action.type
    target = _writable_model(session, user, fields["model_id"]) if fields.get("model_id") else model_of(session, action)
    merged = {**_current_detail(session, action), **fields} if kind == previous else fields
    _check(session, user, target, kind, merged,
           sql_sent=kind != previous or bool({"dataset_query", "database_id"} & set(fields)))
    for key in COMMON:
        if key in fields and (fields[key] is not None or key == "description"):
            setattr(action, key, fields[key])
    action.type = kind
    _write_detail(session, action, fields, previous)
    session.commit()
    emit("action-update", user.id, action)
    return action_json(session, action, creator=True)


def _current_detail(session: Session, action: Action) -> dict:
    row = details(session, action)
    return {key: getattr(row, key) for key in DETAIL_KEYS[action.type]} if row is not None else {}


def delete(session: Session, user: User, action_id: int) -> None:
    action = load(session, action_id, archived=None)
    _writable_model(session, user, action.model_id)
    for table in (QueryAction, HttpAction, ImplicitAction):
        session.execute(sa_delete(table).where(table.action_id == action.id))
    session.delete(action)
    session.commit()
    emit("action-delete", user.id, None, id=action_id)


# ---- public links ----------------------------------------------------------------------------------


def publish(session: Session, user: User, action_id: int) -> dict:
    def found() -> Action:
        action = load(session, action_id)
        enabled.check_action(session, action)
        return action

    return sharing.publish(session, user, found)


def unpublish(session: Session, user: User, action_id: int) -> None:
    sharing.unpublish(session, user, lambda: load(session, action_id))


def public_actions(session: Session, user: User) -> list[dict]:
    sharing.require_superuser(user)
    sharing.check_public_sharing(session)
    rows = session.scalars(select(Action).where(Action.public_uuid.is_not(None), Action.archived.is_(False))
                           .order_by(Action.id))
    return [{"id": a.id, "name": a.name, "public_uuid": a.public_uuid, "model_id": a.model_id} for a in rows]
