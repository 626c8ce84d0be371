"""How a card is shown: the columns of report_card plus the hydrated keys Metabase's GET adds."""
from __future__ import annotations

from sqlalchemy import bindparam, false, func, select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Database, PersistedInfo, QueryExecution, Table, User
from core.content import kinds, revisions
from core.content.cards import base_json
from core.content.collections import Access
from core.content.collections import collection_json as hydrated_collection
from core.identity.users import creator_json
from core.policy import permissions as perms
from core.query.persistence import is_fresh


def collection_json(session: Session, user: User, collection_id: int | None, access=None) -> dict | None:
    return hydrated_collection(session, access or Access(session, user), collection_id)


def persisted_json(info: PersistedInfo | None, card: Card) -> dict | None:
    if info is None:
        return None
    return {"id": info.id, "card_id": info.card_id, "database_id": info.database_id, "state": info.state,
            "active": info.active, "error": info.error, "refresh_begin": info.refresh_begin,
            "refresh_end": info.refresh_end, "table_name": info.table_name, "schema_name": info.schema_name,
            "query_hash": info.query_hash, "card_name": card.name, "creator_id": info.creator_id}


def dashboard_counts(session: Session, cards: list[Card]) -> dict[int, int]:
    """How many dashboard cards show each card (Metabase's `dashboard_count`: placements, not distinct
    dashboards); all 0 while the dashboards plugin is disabled."""
    return kinds.card_counts(session, "dashboard", [c.id for c in cards])


def list_json(session: Session, user: User, cards: list[Card]) -> list[dict]:
    """GET /api/card: each card's summary, permissions and dashboard counts read once for the list."""
    access = Access(session, user)
    counts = dashboard_counts(session, cards)
    return [summary_json(session, user, c, access, counts.get(c.id, 0)) for c in cards]


def summary_json(session: Session, user: User, card: Card, access=None, dashboard_count: int | None = None) -> dict:
    """A card in lists: the columns with its creator, collection and last-edit-info (pass one
    core.content.collections.Access for a whole list so that permissions are read once)."""
    out = base_json(card)
    if dashboard_count is None:
        dashboard_count = dashboard_counts(session, [card]).get(card.id, 0)
    out["dashboard_count"] = dashboard_count
    out["creator"] = creator_json(session.get(User, card.creator_id))
    out["collection"] = collection_json(session, user, card.collection_id, access)
    info = revisions.last_edit_info(session, "Card", card.id)
    if info is not None:
        out["last-edit-info"] = info
    return out


NO_RUN_STATS = {"average_query_time": None, "last_query_start": None}


def card_json(session: Session, user: User, card: Card, run_stats: bool = True) -> dict:
    """GET /api/card/:id: the card hydrated with what the user may do with it; without `run_stats`,
    the run statistics are left None (laid over by the caller: they change with every logged run)."""
    out = summary_json(session, user, card)
    can_write = perms.can_write_item(session, user, card.collection_id)
    runnable = card.database_id is not None and perms.can_query(
        session, user, card.database_id, native=card.query_type == "native", table_id=card.table_id)
    out.update({
        "can_write": can_write,
        "can_run_adhoc_query": runnable,
        "can_restore": can_write and card.archived,
        "can_delete": can_write and card.archived,
        "can_manage_db": card.database_id is not None and perms.can_manage_database(session, user, card.database_id),
        "parameter_usage_count": 0,
        "dashboard": None,
        "based_on_upload": _based_on_upload(session, card),
        **(query_stats(session, card.id) if run_stats else NO_RUN_STATS),
    })
    if card.type == "model":
        info = session.scalar(select(PersistedInfo).where(PersistedInfo.card_id == card.id))
        out["persisted"] = is_fresh(info, card)
        out["persisted_info"] = persisted_json(info, card)
    return out


# As Metabase: runs that were not answered from the result cache, failed ones included; read from the
# index ix_query_execution_card_runs alone (a card may have been served from the cache a million times).
_QUERY_STATS = (select(func.avg(QueryExecution.running_time), func.max(QueryExecution.started_at))
                .where(QueryExecution.card_id == bindparam("card_id"), QueryExecution.cache_hit == false(),
                       QueryExecution.running_time.is_not(None)))


def query_stats(session: Session, card_id: int) -> dict:
    """When the card last ran and how long its runs take on average (the processor's audit rows)."""
    average, last = session.execute(_QUERY_STATS, {"card_id": card_id}).one()
    return {"average_query_time": None if average is None else float(average), "last_query_start": last}


def _based_on_upload(session: Session, card: Card) -> int | None:
    """The uploaded table a model reads directly (so the client offers to append to it)."""
    if card.type != "model" or card.table_id is None or card.query_type != "query":
        return None
    table = session.get(Table, card.table_id)
    if table is None or not table.is_upload:
        return None
    database = session.get(Database, table.db_id)
    return table.id if database is not None and database.uploads_enabled else None
