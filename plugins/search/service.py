"""Search: candidates of every searchable kind the caller may see, scored, filtered and paged.

Each kind is a function that returns result dicts (core.content.search.result, with private `_texts`,
`_pinned`, `_updated` keys for scoring). Permissions: cards and collections through the collections
they live in, databases and tables through data access (core.policy.permissions); nothing else is ever
a candidate. The built-in kinds are here; other plugins' kinds (dashboards) come from
core.content.kinds and follow the same rules.
"""
from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, aliased, load_only

from core.appdb import search_index
from core.appdb.models import (
    Card,
    Collection,
    Database,
    Segment,
    Table,
    User,
    utcnow,
)
from core.content import bookmarks, kinds
from core.content.collections import (
    Access,
    location_ids,
    namespace_clause,
    personal_names,
    personal_owner,
    personal_root_ids,
)
from core.content.search import (  # noqa: F401  (Filters: the views build it)
    ROOT_REF,
    Filters,
    common_names,
    last_editors,
    nothing_matches,
    personal_ok,
    result,
    text_clause,
)
from core.content.search import SearchContext as Context
from core.http.paging import Paging
from core.policy import permissions

from . import scoring

CARD_MODELS = {"card": "question", "dataset": "model", "metric": "metric"}
CARD_TYPE_MODEL = {card_type: model for model, card_type in CARD_MODELS.items()}
SEARCHABLE = ("dashboard", "card", "dataset", "metric", "collection", "database", "table", "segment", "action",
              "indexed-entity")
# What a card result shows: its large JSON columns (visualization, parameters, metadata) stay unloaded.
CARD_COLUMNS = (Card.id, Card.name, Card.description, Card.type, Card.archived, Card.collection_id,
                Card.collection_position, Card.creator_id, Card.created_at, Card.updated_at, Card.database_id,
                Card.table_id, Card.display, Card.dataset_query, Card.query_type)


# --------------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------------


def _collections(ctx: Context, _wanted: set[str]) -> list[dict]:
    f = ctx.filters
    if f.table_db_id is not None or f.created_by or f.last_edited_by or nothing_matches(ctx, "collection"):
        return []
    query = select(Collection).where(namespace_clause(None), Collection.archived.is_(f.archived))
    text = text_clause(ctx, "collection", Collection.id, Collection.name, Collection.description)
    if text is not None:
        query = query.where(text)
    if f.ids:
        query = query.where(Collection.id.in_(f.ids))
    readable = ctx.access.readable_ids()
    if readable is not None:
        query = query.where(Collection.id.in_(readable))
    rows = [c for c in ctx.session.scalars(query)
            if ctx.access.can_read(c.id) and personal_ok(ctx, personal_owner(c, ctx.roots))]
    names = personal_names(ctx.session, [c.personal_owner_id for c in rows])
    marked = bookmarks.bookmarked_ids(ctx.session, ctx.access.user, "collection")
    out = []
    for c in rows:
        name = names.get(c.personal_owner_id, c.name) if c.personal_owner_id else c.name
        effective = "/" + "".join(f"{i}/" for i in location_ids(c.location) if ctx.access.can_read(i))
        out.append(result(
            "collection", c.id, name, description=c.description, archived=c.archived, created_at=c.created_at,
            updated_at=c.created_at, collection={"id": c.id, "name": name, "authority_level": c.authority_level,
                                                 "type": c.type},
            can_write=ctx.access.can_write(c.id), effective_location=effective, location=c.location,
            personal_owner_id=c.personal_owner_id, authority_level=c.authority_level, bookmark=c.id in marked,
            _texts=[name, c.description], _pinned=False, _updated=c.created_at))
    return out


def _cards(ctx: Context, wanted: set[str]) -> list[dict]:
    f = ctx.filters
    types = [card_type for model, card_type in CARD_MODELS.items() if model in wanted]
    if not types or (nothing_matches(ctx, "card") and not f.search_native_query):
        return []
    query = select(Card).options(load_only(*CARD_COLUMNS)).where(Card.type.in_(types), Card.archived.is_(f.archived))
    columns = [Card.name, Card.description]
    text = text_clause(ctx, "card", Card.id, *columns)
    if text is not None:
        query = query.where(text)
    if f.table_db_id is not None:
        query = query.where(Card.database_id == f.table_db_id)
    if f.created_by:
        query = query.where(Card.creator_id.in_(f.created_by))
    if f.ids:
        query = query.where(Card.id.in_(f.ids))
    cards = list(ctx.session.scalars(query))
    if f.search_native_query and f.tokens:
        cards = _with_native_matches(ctx, cards, types)
    collections = {c.id: c for c in ctx.session.scalars(select(Collection).where(
        Collection.id.in_({c.collection_id for c in cards if c.collection_id is not None})))}
    visible = []
    for card in cards:
        collection = collections.get(card.collection_id)
        if collection is not None and collection.namespace:
            continue
        if not ctx.access.can_read(card.collection_id):
            continue
        owner = personal_owner(collection, ctx.roots) if collection is not None else None
        if personal_ok(ctx, owner):
            visible.append(card)
    edits = last_editors(ctx.session, "Card", [c.id for c in visible])
    if f.last_edited_by:
        visible = [c for c in visible if edits.get(c.id, (None, None))[0] in f.last_edited_by]
    users = common_names(ctx.session, [c.creator_id for c in visible] + [e[0] for e in edits.values()])
    databases = dict(ctx.session.execute(select(Database.id, Database.name).where(
        Database.id.in_({c.database_id for c in visible if c.database_id is not None}))).all())
    names = personal_names(ctx.session, [c.personal_owner_id for c in collections.values()])
    marked = bookmarks.bookmarked_ids(ctx.session, ctx.access.user, "card")
    out = []
    for card in visible:
        model = CARD_TYPE_MODEL.get(card.type, "card")
        collection = collections.get(card.collection_id)
        ref = ROOT_REF if collection is None else {
            "id": collection.id, "authority_level": collection.authority_level, "type": collection.type,
            "name": names.get(collection.personal_owner_id, collection.name) if collection.personal_owner_id
            else collection.name}
        editor_id, edited_at = edits.get(card.id, (None, None))
        native_text = _native_text(card) if f.search_native_query else None
        out.append(result(
            model, card.id, card.name, description=card.description, archived=card.archived, collection=ref,
            collection_position=card.collection_position, creator_id=card.creator_id,
            creator_common_name=users.get(card.creator_id), last_editor_id=editor_id,
            last_editor_common_name=users.get(editor_id), last_edited_at=edited_at, created_at=card.created_at,
            updated_at=card.updated_at, database_id=card.database_id, database_name=databases.get(card.database_id),
            table_id=card.table_id, display=card.display, dataset_query=card.dataset_query,
            query_type=card.query_type, can_write=ctx.access.can_write(card.collection_id), bookmark=card.id in marked,
            _texts=[card.name, card.description, native_text], _pinned=card.collection_position is not None,
            _updated=card.updated_at))
    return out


def _native_text(card: Card) -> str | None:
    query = card.dataset_query if isinstance(card.dataset_query, dict) else {}
    native = query.get("native")
    if isinstance(native, dict) and isinstance(native.get("query"), str):
        return native["query"]
    return None


def _with_native_matches(ctx: Context, cards: list[Card], types: list[str]) -> list[Card]:
    """With search_native_query, cards whose SQL text matches count too (matched in Python: the
    query lives in a JSON column)."""
    seen = {c.id for c in cards}
    query = select(Card).where(Card.type.in_(types), Card.archived.is_(ctx.filters.archived),
                               or_(Card.query_type == "native", Card.query_type.is_(None)))
    extra = []
    for card in ctx.session.scalars(query):
        text = _native_text(card)
        if card.id not in seen and text and any(t in scoring.normalize(text) for t in ctx.filters.tokens):
            if ctx.filters.table_db_id is not None and card.database_id != ctx.filters.table_db_id:
                continue
            if ctx.filters.created_by and card.creator_id not in ctx.filters.created_by:
                continue
            if ctx.filters.ids and card.id not in ctx.filters.ids:
                continue
            extra.append(card)
    return cards + extra


def _databases(ctx: Context, _wanted: set[str]) -> list[dict]:
    f = ctx.filters
    if (f.archived or f.table_db_id is not None or f.created_by or f.last_edited_by
            or f.personal in ("only", "only-mine") or nothing_matches(ctx, "database")):
        return []
    query = select(Database).where(Database.is_audit.is_(False))
    text = text_clause(ctx, "database", Database.id, Database.name, Database.description)
    if text is not None:
        query = query.where(text)
    if f.ids:
        query = query.where(Database.id.in_(f.ids))
    out = []
    for db in ctx.session.scalars(query):
        if not permissions.can_read_database(ctx.session, ctx.access.user, db.id):
            continue
        out.append(result("database", db.id, db.name, description=db.description, archived=False,
                           collection=ROOT_REF, database_id=db.id, created_at=db.created_at,
                           updated_at=db.updated_at, initial_sync_status=db.initial_sync_status,
                           _texts=[db.name, db.description], _pinned=False, _updated=db.updated_at))
    return out


def _tables(ctx: Context, _wanted: set[str]) -> list[dict]:
    f = ctx.filters
    if f.archived or f.created_by or f.last_edited_by or f.personal in ("only", "only-mine") \
            or nothing_matches(ctx, "table"):
        return []
    db = aliased(Database)
    query = (select(Table, db.name).join(db, db.id == Table.db_id)
             .where(Table.active.is_(True), Table.visibility_type.is_(None), db.is_audit.is_(False)))
    text = text_clause(ctx, "table", Table.id, Table.name, Table.display_name, Table.description)
    if text is not None:
        query = query.where(text)
    if f.table_db_id is not None:
        query = query.where(Table.db_id == f.table_db_id)
    if f.ids:
        query = query.where(Table.id.in_(f.ids))
    rows = list(ctx.session.execute(query))
    allowed: set[int] = set()
    by_database: dict[int, list[int]] = {}
    for table, _name in rows:
        by_database.setdefault(table.db_id, []).append(table.id)
    for database_id, ids in by_database.items():
        allowed |= permissions.readable_table_ids(ctx.session, ctx.access.user, database_id, ids)
    out = []
    for table, database_name in rows:
        if table.id not in allowed:
            continue
        display = table.display_name or table.name
        out.append(result(
            "table", table.id, display, display_name=display, description=table.description, archived=False,
            collection=ROOT_REF, database_id=table.db_id, database_name=database_name, table_id=table.id,
            table_name=table.name, table_schema=table.schema, table_description=table.description,
            created_at=table.created_at, updated_at=table.updated_at,
            initial_sync_status=table.initial_sync_status,
            _texts=[table.name, table.display_name, table.description], _pinned=False, _updated=table.updated_at))
    return out


def _segments(ctx: Context, _wanted: set[str]) -> list[dict]:
    """Segments by name and description, with their table, where the caller reads the table
    (Metabase's segment search spec: no collection, no creator filter)."""
    f = ctx.filters
    if f.created_by or f.last_edited_by or f.personal in ("only", "only-mine") or nothing_matches(ctx, "segment"):
        return []
    query = (select(Segment, Table).join(Table, Table.id == Segment.table_id)
             .where(Segment.archived.is_(f.archived)))
    text = text_clause(ctx, "segment", Segment.id, Segment.name, Segment.description)
    if text is not None:
        query = query.where(text)
    if f.table_db_id is not None:
        query = query.where(Table.db_id == f.table_db_id)
    if f.ids:
        query = query.where(Segment.id.in_(f.ids))
    rows = list(ctx.session.execute(query))
    by_database: dict[int, set[int]] = {}
    for _segment, table in rows:
        by_database.setdefault(table.db_id, set()).add(table.id)
    allowed: set[int] = set()
    for database_id, ids in by_database.items():
        allowed |= permissions.readable_table_ids(ctx.session, ctx.access.user, database_id, ids)
    out = []
    for segment, table in rows:
        if table.id not in allowed:
            continue
        out.append(result(
            "segment", segment.id, segment.name, description=segment.description, archived=segment.archived,
            collection=ROOT_REF, database_id=table.db_id, table_id=table.id, table_name=table.name,
            table_schema=table.schema, table_description=table.description, created_at=segment.created_at,
            updated_at=segment.updated_at, _texts=[segment.name, segment.description], _pinned=False,
            _updated=segment.updated_at))
    return out


# model -> the source that yields it
SOURCES = {
    "collection": _collections,
    "card": _cards,
    "dataset": _cards,
    "metric": _cards,
    "database": _databases,
    "table": _tables,
    "segment": _segments,
}


# --------------------------------------------------------------------------------------------------
# The search
# --------------------------------------------------------------------------------------------------


def search(session: Session, user: User, filters: Filters, paging: Paging) -> dict:
    tokens = filters.tokens
    ctx = Context(session, Access(session, user), filters, personal_root_ids(session),
                  search_index.candidates(session, tokens) if tokens else None)
    now = utcnow()
    results: list[dict] = []
    # Every kind is searched, whatever `models` asks for, because available_models reports them all.
    for source in dict.fromkeys(SOURCES.values()):
        results.extend(source(ctx, {m for m, s in SOURCES.items() if s is source}))
    for model, source in kinds.search_sources().items():
        if model in SEARCHABLE:
            results.extend(source(ctx))
    scored = []
    for hit in results:
        value = scoring.score(tokens, hit.pop("_texts"), model=hit["model"], pinned=hit.pop("_pinned"),
                              updated_at=hit.pop("_updated"), now=now)
        if value > 0 or not tokens:
            scored.append((value, hit))
    available = sorted({r["model"] for _, r in scored}, key=SEARCHABLE.index)
    if filters.models:
        scored = [(v, r) for v, r in scored if r["model"] in filters.models]
    scored.sort(key=lambda vr: (-vr[0], SEARCHABLE.index(vr[1]["model"]), (vr[1]["name"] or "").lower(),
                                vr[1]["id"]))
    data = [r for _, r in paging.apply(scored)]
    return {"data": data, "total": len(scored), "limit": paging.limit, "offset": paging.offset,
            "models": filters.models or None, "available_models": available,
            "table_db_id": filters.table_db_id, "engine": "in-place"}
