"""What other plugins reach through core: the ActionRunner a dashcard's button uses (action_runner hook)
and the Shareable "action" that plugins.sharing serves at /api/public/action/:uuid (register_shareables).

A public execution is rate-limited per action, as Metabase's (10 a second, then 429 with Retry-After),
with core.http.throttle's counter in the app DB, so the limit holds across workers and instances."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Database, User
from core.assembly.records import ActionRunner, Shareable
from core.http.auth import tessera
from core.http.throttle import Throttler
from core.policy import permissions as perms

from . import enabled, execution
from .models import Action
from .service import action_json, load, model_of

THROTTLER = "public-action-execute"


def _execute(session: Session, user: User, action_id: int, values: dict | None, mappings: list | None) -> Any:
    action = load(session, action_id)
    shown = action_json(session, action)
    return execution.execute(session, user, action, execution.mapped_values(values, mappings, shown))


def _prefill(session: Session, user: User, action_id: int, values: Any) -> dict:
    return execution.prefill_by_id(session, user, action_id, values)


def _describe(session: Session, user: User, action_ids) -> dict[int, dict]:
    ids = [i for i in dict.fromkeys(action_ids) if isinstance(i, int)]
    if not ids:
        return {}
    out = {}
    for action in session.scalars(select(Action).where(Action.id.in_(ids), Action.archived.is_(False))):
        model = model_of(session, action)
        if not perms.can_read_item(session, user, model.collection_id):
            continue
        database = session.get(Database, model.database_id) if model.database_id else None
        out[action.id] = {**action_json(session, action),
                          "database_enabled_actions": bool(database and enabled.actions_enabled(database))}
    return out


RUNNER = ActionRunner(execute=_execute, prefill=_prefill, describe=_describe)


def _public_json(session: Session, action: Action, hide=frozenset()) -> dict:
    return action_json(session, action, public=True)


def _public_execute(session: Session, action: Action, values: dict | None) -> Any:
    state = tessera()
    # On the app state, as the login throttlers are, so that tests can give it their clock.
    throttler = state.throttlers.setdefault(THROTTLER, Throttler(THROTTLER, threshold=10, ttl=1.0))
    throttler.limit(state.db.engine, f"action:{action.id}")
    return execution.execute(session, None, action, values)


SHAREABLE = Shareable(model="action", table=Action, public_json=_public_json, execute=_public_execute)
