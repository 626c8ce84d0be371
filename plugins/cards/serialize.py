"""How a card is shown: the columns of report_card plus the hydrated keys Metabase's GET adds."""
from __future__ import annotations

from sqlalchemy import bindparam, false, func, select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Database, PersistedInfo, QueryExecution, Table, User
from core.content import kinds, revisions
from core.content.cards import base_json
from core.content.collections import Access, collection_facts, with_can_write
from core.identity.users import creator_json
from core.policy import audience
from core.policy import permissions as perms
from core.query.persistence import is_fresh


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
    """GET /api/card: each card's summary; permissions, dashboard counts and last edits read once for
    the list."""
    access = Access(session, user)
    counts = dashboard_counts(session, cards)
    edits = revisions.last_edit_infos(session, "Card", (c.id for c in cards))
    return [summary_json(session, access, c, counts.get(c.id, 0), edits.get(c.id)) for c in cards]


def summary_json(session: Session, access: Access, card: Card, dashboard_count: int, last_edit: dict | None) -> dict:
    """A card in lists: the columns with its creator, collection and last-edit-info (one
    core.content.collections.Access for a whole list, so that permissions are read once)."""
    out = summary_facts(session, card, dashboard_count, last_edit)
    out["collection"] = with_can_write(access, out["collection"])
    return out


def summary_facts(session: Session, card: Card, dashboard_count: int, last_edit: dict | None) -> dict:
    """summary_json as every user is shown it: all but the caller's can_write on the collection. The
    dashboard count and last edit come from the caller, which reads them for a whole list at once."""
    out = base_json(card)
    out["dashboard_count"] = dashboard_count
    out["creator"] = creator_json(session.get(User, card.creator_id))
    out["collection"] = collection_facts(session, card.collection_id)
    if last_edit is not None:
        out["last-edit-info"] = last_edit
    return out


NO_RUN_STATS = {"average_query_time": None, "last_query_start": None}


def card_json(session: Session, user: User, card: Card, run_stats: bool = True) -> dict:
    """GET /api/card/:id: the card hydrated with what the user may do with it."""
    return with_rights(session, user, card_facts(session, card, run_stats))


def card_facts(session: Session, card: Card, run_stats: bool = True) -> dict:
    """The hydrated card as every user is shown it (what depends on the caller is laid over by
    with_rights); without `run_stats` they are left None (laid over by the caller: they change with
    every logged run)."""
    out = summary_facts(session, card, dashboard_counts(session, [card]).get(card.id, 0),
                        revisions.last_edit_info(session, "Card", card.id))
    out.update({
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


def with_rights(session: Session, user: User, facts: dict) -> dict:
    """A card's facts (card_facts) with what `user` may do with it: its own and its collection's
    can_write, whether they may run it as an ad-hoc query and manage its database."""
    return lay_rights(facts, card_rights(session, user, facts))


def lay_rights(facts: dict, rights: dict) -> dict:
    """A card's facts with the rights card_rights answered."""
    can_write = rights["can_write"]
    collection = facts["collection"]
    return {
        **facts,
        "collection": None if collection is None else {**collection, "can_write": rights["collection_can_write"]},
        "can_write": can_write,
        "can_run_adhoc_query": rights["can_run_adhoc_query"],
        "can_restore": can_write and facts["archived"],
        "can_delete": can_write and facts["archived"],
        "can_manage_db": rights["can_manage_db"],
    }


def card_rights(session: Session, user: User, facts: dict) -> dict:
    """What `user` may do with a card (whether they may read it too), asked of core.policy.permissions
    and kept per audience (core.policy.audience.kept_answers): it follows from the card's collection,
    database, table and kind of query, which the key names, so cards alike share one answer."""
    collection_id, database_id, table_id = facts["collection_id"], facts["database_id"], facts["table_id"]
    native = facts["query_type"] == "native"
    summary = facts["collection"]
    summary_id = None if summary is None else summary["id"] if isinstance(summary["id"], int) else "root"

    def compute() -> dict:
        access = Access(session, user)
        can_write = access.can_write(collection_id)
        return {
            "readable": perms.can_read_item(session, user, collection_id),
            "can_write": can_write,
            "collection_can_write": None if summary is None else with_can_write(access, summary)["can_write"],
            "can_run_adhoc_query": database_id is not None and perms.can_query(
                session, user, database_id, native=native, table_id=table_id),
            "can_manage_db": database_id is not None and perms.can_manage_database(session, user, database_id),
        }

    key = ("card rights", collection_id, summary_id, database_id, table_id, native)
    collections = (collection_id, summary_id if isinstance(summary_id, int) else None)
    return audience.kept_answers(session, user, key, compute, collections)


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
