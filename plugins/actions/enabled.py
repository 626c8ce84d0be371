"""The `database-enable-actions` gate (a database's own setting, in its `settings` map, as Metabase keeps
database-local settings): creating, changing, publishing and executing an action need it on every
database the action runs against, and the database's driver must declare the `actions` feature (its
`writable` transaction is what runs them). Metabase's messages."""
from __future__ import annotations

import orjson
from sqlalchemy.orm import Session

from core.appdb.models import Card, Database
from core.driver.connections import driver_for
from core.http.errors import Invalid, NotFound, check_404

SETTING = "database-enable-actions"
FEATURE = "actions"


def supports_actions(database: Database) -> bool:
    try:
        return FEATURE in driver_for(database).features
    except Exception:
        return False


def actions_enabled(database: Database) -> bool:
    return bool((database.settings or {}).get(SETTING)) and supports_actions(database)


def check_database(database: Database) -> None:
    if not supports_actions(database):
        name = orjson.dumps(database.name).decode()
        raise Invalid(f"{database.engine} Database {database.id} {name} does not support actions.")
    if not (database.settings or {}).get(SETTING):
        raise Invalid("Actions are not enabled.")


def check_action(session: Session, action) -> None:
    """The gate for the database of the action's model (and, for a query action, its own database)."""
    model = session.get(Card, action.model_id)
    if model is None or model.database_id is None:
        raise NotFound()
    databases = [model.database_id]
    if action.type == "query":
        from .models import QueryAction

        row = session.get(QueryAction, action.id)
        if row is not None:
            databases.append(row.database_id)
    for database_id in dict.fromkeys(databases):
        check_database(check_404(session.get(Database, database_id)))
