"""Persisted models, the query side: where a model's persisted table lives and whether queries may
read it. (Writing and dropping the tables is the cards plugin's, plugins/cards/persistence.py.)

A model's table is `<prefix>model_<card id>` in Tessera's cache schema of the model's own database
(engines with schemas) or with the prefix in the default schema (SQLite). Queries read it only while
the row says persisted and active, and the card's query is the one that filled it (query_hash).
"""
from __future__ import annotations

import hashlib

import orjson
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Database, PersistedInfo

CACHE_SCHEMA_PREFIX = "tessera_cache_"
TABLE_PREFIX = "tessera_cache_"


def definition_hash(card: Card) -> str:
    return hashlib.sha256(orjson.dumps(card.dataset_query or {}, option=orjson.OPT_SORT_KEYS)).hexdigest()


def persisted_info(session: Session, card: Card) -> PersistedInfo | None:
    return session.scalar(select(PersistedInfo).where(PersistedInfo.card_id == card.id))


def is_fresh(info: PersistedInfo | None, card: Card) -> bool:
    return (info is not None and info.active and info.state == "persisted"
            and info.query_hash == definition_hash(card) and card.type == "model" and not card.archived)


def persisted_source(session: Session, card: Card) -> str | None:
    """`SELECT * FROM <persisted table>` when the model's persisted copy may be read, else None."""
    info = persisted_info(session, card)
    if not is_fresh(info, card):
        return None
    database = session.get(Database, card.database_id)
    if database is None or not (database.settings or {}).get("persist-models-enabled"):
        return None
    from sqlglot import exp

    from core.driver.connections import driver_for

    table = exp.Table(this=exp.to_identifier(info.table_name, quoted=True),
                      db=exp.to_identifier(info.schema_name, quoted=True) if info.schema_name else None)
    return driver_for(database).to_sql(exp.select(exp.Star()).from_(table))
