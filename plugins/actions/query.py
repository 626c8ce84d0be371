"""Query actions: the action's native write statement, its template tags substituted by the native-query
machinery (core.query.native: `{{tag}}` values bound as parameters, `[[ ]]` clauses dropped when a value
is missing, field filters written by the driver), run once in one writable transaction on the action's
database (writes.py), stopped after the database's query timeout. Each action parameter feeds the tag its target names
(`["variable", ["template-tag", name]]`); a parameter stored without a target feeds the tag of its id.

A query action may not read other questions (`{{#12}}`): its SQL writes, so a card's rows could be
copied into a table the card's readers do not control. Snippets are text and are allowed, as the action
authorises them (as a saved card does). The answer is Metabase's `{"rows-affected": n}`."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.appdb.models import Database
from core.driver.connections import driver_for
from core.http.errors import Invalid, check_404
from core.query import native as N
from core.query import tags
from core.query.context import PARAMSTYLE, timeout_seconds, week_start
from core.query.errors import QueryFailed
from core.query.mbql import normalize

from . import writes


def _parameters(action, values: dict) -> list[dict]:
    out = []
    for param in action.parameters or []:
        if not isinstance(param, dict) or values.get(param.get("id")) is None:
            continue
        target = param.get("target") or ["variable", ["template-tag", param.get("id")]]
        out.append({**param, "target": target, "value": values[param["id"]]})
    return out


def _no_cards(card_id):
    raise QueryFailed("Query actions cannot use other questions ({{#...}}).", "invalid-query")


def statement(session: Session, action, detail, values: dict) -> tuple[Database, str, dict]:
    database = check_404(session.get(Database, detail.database_id))
    driver = driver_for(database)
    try:
        query = normalize({**(detail.dataset_query or {}), "database": database.id})
        stage = query.stages[0]
        if stage.native is None or len(query.stages) != 1:
            raise Invalid("A query action runs a native query.")
        resolvers = N.Resolvers(
            field=lambda dimension, alias=None: tags.field_info(session, driver, dimension, alias),
            snippet=lambda snippet_id, name: tags.snippet_text(session, None, snippet_id, name, True),
            card=_no_cards)
        text = N.substitute(stage.native["query"], stage.native.get("template-tags"), _parameters(action, values),
                            resolvers, driver=driver, week_start=week_start(session))
    except QueryFailed as exc:
        raise Invalid(f"Error executing Action: {exc.message}") from None
    sql, params = text.render(PARAMSTYLE)
    return database, sql, params or {}


def run(session: Session, action, detail, values: dict) -> dict:
    database, sql, params = statement(session, action, detail, values)
    with writes.transaction(database, timeout_seconds(session, database)) as conn:
        result = conn.execute(sa.text(sql), params)
        affected = result.rowcount
    return {"rows-affected": max(affected, 0) if isinstance(affected, int) else 0}
