"""What the rest of Tessera needs to know about cards: reading a saved dataset_query without
normalising it (the derived columns database_id, table_id, query_type, source_card_id) and which
other cards it references (`card__N` sources, MBQL 5 `source-card`, native `{{#N-slug}}` tags).

dataset_query is kept in the shape the client posted; everything here reads legacy MBQL, MBQL 5
and native queries alike. `base_json` is a card's stored columns as the API shows them,
`revision_object` what a card's revision records, and `duplicate` the one way a card is copied (the
cards plugin's POST /api/card/:id/copy, the dashboards plugin's deep copy).
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from sqlalchemy.orm import Session

from core.query.model import CARD_TABLE  # one spelling of "card__N", shared with the MBQL reader

CARD_TAG = re.compile(r"^#([1-9]\d*)")


def _get(mapping: Any, *names: str) -> Any:
    """The value under the first of `names` present (clients send kebab-case or snake_case keys)."""
    if not isinstance(mapping, dict):
        return None
    for name in names:
        if name in mapping:
            return mapping[name]
    return None


def is_mbql5(dataset_query: dict) -> bool:
    return dataset_query.get("lib/type") == "mbql/query" or "stages" in dataset_query


def is_native(dataset_query: dict) -> bool:
    if is_mbql5(dataset_query):
        stages = dataset_query.get("stages") or [{}]
        first = stages[0] if isinstance(stages[0], dict) else {}
        return first.get("lib/type") == "mbql.stage/native" or "native" in first
    return str(dataset_query.get("type", "")).lstrip(":") == "native"


def _innermost_legacy(inner: Any) -> dict:
    while isinstance(inner, dict) and isinstance(_get(inner, "source-query", "source_query"), dict):
        inner = _get(inner, "source-query", "source_query")
    return inner if isinstance(inner, dict) else {}


def query_fields(dataset_query: dict) -> dict:
    """The columns Metabase derives from a card's query: database_id, table_id, query_type, source_card_id."""
    database = dataset_query.get("database")
    fields = {"database_id": database if isinstance(database, int) and not isinstance(database, bool) else None,
              "table_id": None, "source_card_id": None,
              "query_type": "native" if is_native(dataset_query) else "query"}
    if fields["query_type"] == "native":
        return fields
    if is_mbql5(dataset_query):
        stages = dataset_query.get("stages") or [{}]
        first = stages[0] if isinstance(stages[0], dict) else {}
        source_table, source_card = _get(first, "source-table"), _get(first, "source-card")
    else:
        first = _innermost_legacy(_get(dataset_query, "query"))
        source_table, source_card = _get(first, "source-table", "source_table"), None
    if isinstance(source_table, int) and not isinstance(source_table, bool):
        fields["table_id"] = source_table
    elif isinstance(source_table, str) and CARD_TABLE.match(source_table):
        fields["source_card_id"] = int(CARD_TABLE.match(source_table).group(1))
    if isinstance(source_card, int) and not isinstance(source_card, bool):
        fields["source_card_id"] = source_card
    return fields


def _walk(value: Any) -> Iterator[tuple[str, Any, dict]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item, value
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def referenced_card_ids(dataset_query: Any) -> set[int]:
    """Every card the query reads: MBQL sources and joins (`card__N`, `source-card`) and native card tags."""
    found: set[int] = set()
    for key, value, parent in _walk(dataset_query):
        if key in ("source-table", "source_table") and isinstance(value, str) and CARD_TABLE.match(value):
            found.add(int(CARD_TABLE.match(value).group(1)))
        elif key in ("source-card", "source_card") and isinstance(value, int) and not isinstance(value, bool):
            found.add(value)
        elif key in ("card-id", "card_id") and isinstance(value, int) and str(parent.get("type", "")).lstrip(":") == "card":
            found.add(value)
    return found


def with_template_tags(dataset_query: dict) -> dict:
    """The query as stored, with `template-tags: {}` filled in on native queries that lack it (clients
    index it directly)."""
    if not isinstance(dataset_query, dict) or not is_native(dataset_query):
        return dataset_query
    if is_mbql5(dataset_query):
        stages = dataset_query.get("stages")
        if isinstance(stages, list) and stages and isinstance(stages[0], dict) and "template-tags" not in stages[0]:
            return {**dataset_query, "stages": [{**stages[0], "template-tags": {}}, *stages[1:]]}
        return dataset_query
    native = dataset_query.get("native")
    if isinstance(native, dict) and "template-tags" not in native and "template_tags" not in native:
        return {**dataset_query, "native": {**native, "template-tags": {}}}
    return dataset_query


def native_sql(dataset_query: dict) -> str | None:
    if not is_native(dataset_query):
        return None
    if is_mbql5(dataset_query):
        return (dataset_query.get("stages") or [{}])[0].get("native")
    native = dataset_query.get("native")
    return native.get("query") if isinstance(native, dict) else None


# Columns a card's revision leaves out: its bookkeeping, not its content.
REVISION_SKIP = ("id", "created_at", "updated_at", "last_used_at", "view_count", "dataset", "dashboard_count",
                 "average_query_time", "last_query_start", "moderation_reviews", "card_schema",
                 "metabase_version", "cache_invalidated_at")


def revision_object(card) -> dict:
    """What a card's revision keeps (JSON-ready: timestamps as text)."""
    import orjson

    from core.http.api import dumps

    return orjson.loads(dumps({k: v for k, v in base_json(card).items() if k not in REVISION_SKIP}))


def insert_card(session, creator_id: int, dataset_query: dict, database_id: int, **columns):
    """Add a card row for a query the caller has checked (permissions, `database_id` resolved from a
    -1337 query), with the columns derived from its query, an entity id and its creation revision.
    Used where cards are made outside the cards plugin (a saved automatic dashboard); the caller commits."""
    from core.appdb.models import Card
    from core.appdb.models.base import new_entity_id
    from core.content import revisions

    derived = {**query_fields(dataset_query), "database_id": database_id}
    card = Card(dataset_query=dataset_query, creator_id=creator_id, entity_id=new_entity_id(),
                **{"type": "question", "collection_preview": True, "parameters": [], "parameter_mappings": [],
                   **columns, **derived})
    session.add(card)
    session.flush()
    revisions.record(session, "Card", card.id, creator_id, revision_object(card), is_creation=True)
    return card


def base_json(card) -> dict:
    """The stored columns, with `dataset` derived from `type` for clients older than 0.49."""
    return {
        "id": card.id, "name": card.name, "description": card.description, "display": card.display,
        "dataset_query": with_template_tags(card.dataset_query or {}),
        "visualization_settings": card.visualization_settings or {},
        "parameters": card.parameters or [], "parameter_mappings": card.parameter_mappings or [],
        "result_metadata": card.result_metadata, "type": card.type, "dataset": card.type == "model",
        "collection_id": card.collection_id, "collection_position": card.collection_position,
        "collection_preview": card.collection_preview, "cache_ttl": card.cache_ttl, "archived": card.archived,
        "archived_directly": card.archived_directly, "enable_embedding": card.enable_embedding,
        "embedding_params": card.embedding_params, "public_uuid": card.public_uuid,
        "made_public_by_id": card.made_public_by_id, "initially_published_at": card.initially_published_at,
        "creator_id": card.creator_id, "database_id": card.database_id, "table_id": card.table_id,
        "source_card_id": card.source_card_id, "query_type": card.query_type, "entity_id": card.entity_id,
        "view_count": card.view_count, "last_used_at": card.last_used_at,
        "cache_invalidated_at": card.cache_invalidated_at, "created_at": card.created_at,
        "updated_at": card.updated_at, "dashboard_id": None, "dashboard_count": 0,
        "average_query_time": None, "last_query_start": None, "moderation_reviews": [],
        "card_schema": 20, "metabase_version": None,
    }


def duplicate(session: Session, original, user_id: int, *, name: str, collection_id: int | None):
    """A new card with `original`'s query and settings, created by `user_id` in `collection_id`, with
    its creation revision (`insert_card`); flushed, not committed. The caller has checked who may read
    the original and write the collection."""
    return insert_card(
        session, user_id, original.dataset_query, original.database_id, name=name[:254],
        description=original.description, display=original.display,
        visualization_settings=original.visualization_settings, parameters=original.parameters or [],
        parameter_mappings=original.parameter_mappings or [], result_metadata=original.result_metadata,
        type=original.type, collection_id=collection_id, cache_ttl=original.cache_ttl,
        collection_preview=original.collection_preview)


def pivot_column_split(card) -> dict | None:
    """The card's pivot_table.column_split (names or refs of its columns), or None for the default."""
    settings = card.visualization_settings if isinstance(card.visualization_settings, dict) else {}
    split = settings.get("pivot_table.column_split")
    return split if isinstance(split, dict) else None
