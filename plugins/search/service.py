"""Search: candidates of every searchable kind the caller may see, scored, filtered and paged.

Each kind is a function that returns result dicts (core.content.search.result, with private `_texts`,
`_pinned`, `_updated` keys for scoring). Permissions: cards and collections through the collections
they live in, databases and tables through data access (core.policy.permissions); nothing else is ever
a candidate. The built-in kinds are here; other plugins' kinds (dashboards) come from
core.content.kinds and follow the same rules.

The sources' results of a query, with their text scores, are kept between requests (core.appdb.memo)
per permission set (the user's groups, administrator or not), read in a deferred context
(core.content.search): what differs between users of the same groups (their own personal collection,
the personal filter, bookmarks) is decided per request, as is the recency part of the score. While a
plugin implements check_permission, which may answer per user and object, each search reads its own.
"""
from __future__ import annotations

import functools

from sqlalchemy import bindparam, or_, select
from sqlalchemy.orm import Session, aliased

from core.appdb import memo, search_index
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
    personal_name,
    personal_root_ids,
)
from core.content.search import (  # noqa: F401  (Filters: the views build it)
    PERSONAL_MODES,
    ROOT_REF,
    Filters,
    matched,
    nothing_matches,
    personal_ok,
    personal_owner_of,
    personal_passes,
    place,
    result,
    text_clause,
    text_shape,
    with_place,
)
from core.content.search import SearchContext as Context
from core.http.paging import Paging
from core.policy import permissions
from core.policy.audience import audience_key

from . import scoring

CARD_MODELS = {"card": "question", "dataset": "model", "metric": "metric"}
CARD_TYPE_MODEL = {card_type: model for model, card_type in CARD_MODELS.items()}
# The bookmark kind (core.content.bookmarks) of a result model; the others are their own.
BOOKMARK_KIND = {model: "card" for model in CARD_MODELS}
SEARCHABLE = ("dashboard", "card", "dataset", "metric", "collection", "database", "table", "segment", "action",
              "indexed-entity")
# About the memory a kept result takes (its dict of some 35 keys and their values), for the memo's budget.
HIT_BYTES = 2048
# What a card result shows: its large JSON columns (visualization, parameters, metadata) stay unloaded.
_OWNER = aliased(User, name="owner")
CARD_COLUMNS = (Card.id, Card.name, Card.description, Card.type, Card.archived, Card.collection_id,
                Card.collection_position, Card.creator_id, Card.created_at, Card.updated_at, Card.database_id,
                Card.table_id, Card.display, Card.dataset_query, Card.query_type)


# --------------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------------


@functools.cache
def _collection_statement(text: str | None, by_ids: bool, by_readable: bool):
    """Collections (default namespace) with their owner's names, built once per filter shape."""
    query = (select(Collection.id, Collection.name, Collection.description, Collection.archived,
                    Collection.created_at, Collection.location, Collection.personal_owner_id,
                    Collection.authority_level, Collection.type, _OWNER.first_name, _OWNER.last_name, _OWNER.email)
             .outerjoin(_OWNER, _OWNER.id == Collection.personal_owner_id)
             .where(namespace_clause(None), Collection.archived == bindparam("archived")))
    if text == "index":
        query = query.where(Collection.id.in_(bindparam("matched", expanding=True)))
    if by_ids:
        query = query.where(Collection.id.in_(bindparam("ids", expanding=True)))
    if by_readable:
        query = query.where(Collection.id.in_(bindparam("readable", expanding=True)))
    return query


def _collections(ctx: Context, _wanted: set[str]) -> list[dict]:
    f = ctx.filters
    if f.table_db_id is not None or f.created_by or f.last_edited_by or nothing_matches(ctx, "collection"):
        return []
    shape = text_shape(ctx)
    # A deferred context reads every collection: its personal ones are decided per request.
    readable = None if ctx.deferred else ctx.access.readable_ids()
    statement = _collection_statement(shape, bool(f.ids), readable is not None)
    if shape == "columns":
        statement = statement.where(text_clause(ctx, "collection", Collection.id, Collection.name,
                                                Collection.description))
    params = {"archived": f.archived, "matched": matched(ctx, "collection"), "ids": list(f.ids),
              "readable": list(readable or ())}
    out = []
    for (cid, name, description, archived, created_at, location, owner_id, authority_level, kind,
         first_name, last_name, email) in ctx.session.execute(statement, params):
        owner = personal_owner_of(owner_id, location, ctx.roots)
        personal = ctx.deferred and owner is not None  # readable, as are its parents, by whoever sees it
        if not personal and not ctx.access.can_read(cid):
            continue
        parents = location_ids(location)
        if not personal_ok(ctx, owner):
            continue
        if owner_id is not None and email is not None:
            name = personal_name(first_name, last_name, email)
        effective = "/" + "".join(f"{i}/" for i in parents if personal or ctx.access.can_read(i))
        out.append(result(
            "collection", cid, name, description=description, archived=archived, created_at=created_at,
            updated_at=created_at, collection={"id": cid, "name": name, "authority_level": authority_level,
                                               "type": kind},
            can_write=personal or ctx.access.can_write(cid), effective_location=effective, location=location,
            personal_owner_id=owner_id, authority_level=authority_level,
            _texts=[name, description], _pinned=False, _updated=created_at, _owner=owner))
    return out


@functools.cache
def _card_statement(text: str | None, by_database: bool, by_creator: bool, by_ids: bool):
    """Cards of the bound types with everything a result shows, built once per filter shape."""
    query = with_place(select(*CARD_COLUMNS, Database.name), "Card", Card.id, Card.collection_id, Card.creator_id)
    query = query.outerjoin(Database, Database.id == Card.database_id).where(
        Card.type.in_(bindparam("types", expanding=True)), Card.archived == bindparam("archived"))
    if text == "index":
        query = query.where(Card.id.in_(bindparam("matched", expanding=True)))
    if by_database:
        query = query.where(Card.database_id == bindparam("database_id"))
    if by_creator:
        query = query.where(Card.creator_id.in_(bindparam("creators", expanding=True)))
    if by_ids:
        query = query.where(Card.id.in_(bindparam("ids", expanding=True)))
    return query


_NATIVE_TEXTS = select(Card.id, Card.dataset_query).where(
    Card.type.in_(bindparam("types", expanding=True)), Card.archived == bindparam("archived"),
    or_(Card.query_type == "native", Card.query_type.is_(None)))


def _cards(ctx: Context, wanted: set[str]) -> list[dict]:
    f = ctx.filters
    types = [card_type for model, card_type in CARD_MODELS.items() if model in wanted]
    if not types or (nothing_matches(ctx, "card") and not f.search_native_query):
        return []
    shape = text_shape(ctx)
    statement = _card_statement(None if f.search_native_query else shape, f.table_db_id is not None, bool(f.created_by), bool(f.ids))
    params = {"types": types, "archived": f.archived, "matched": matched(ctx, "card"), "database_id": f.table_db_id, "creators": list(f.created_by), "ids": list(f.ids)}
    if shape == "columns" or (shape is not None and f.search_native_query):
        # Per request: without an index the text filter is one LIKE per token and column; with
        # search_native_query the cards whose SQL text matches count too (their query is JSON).
        text = text_clause(ctx, "card", Card.id, Card.name, Card.description)
        if f.search_native_query:
            text = or_(text, Card.id.in_(_native_matches(ctx, types)))
        statement = statement.where(text)
    native = f.search_native_query
    out = []
    for row in ctx.session.execute(statement, params):
        (card_id, name, description, card_type, archived, collection_id, collection_position, creator_id,
         created_at, updated_at, database_id, table_id, display, dataset_query, query_type, database_name) = row[:16]
        shown = place(ctx, collection_id, row[16:])
        if shown is None:
            continue
        native_text = _native_text(dataset_query) if native else None
        out.append(result(
            CARD_TYPE_MODEL.get(card_type, "card"), card_id, name, description=description, archived=archived,
            collection_position=collection_position, creator_id=creator_id, created_at=created_at,
            updated_at=updated_at, database_id=database_id, database_name=database_name, table_id=table_id,
            display=display, dataset_query=dataset_query, query_type=query_type, **shown,
            _texts=[name, description, native_text], _pinned=collection_position is not None, _updated=updated_at))
    return out


def _native_text(dataset_query) -> str | None:
    query = dataset_query if isinstance(dataset_query, dict) else {}
    native = query.get("native")
    if isinstance(native, dict) and isinstance(native.get("query"), str):
        return native["query"]
    return None


def _native_matches(ctx: Context, types: list[str]) -> list[int]:
    """Ids of the cards whose SQL text holds a query token (matched in Python: the query lives in a
    JSON column); the card statement applies the other filters to them."""
    tokens = ctx.filters.tokens
    rows = ctx.session.execute(_NATIVE_TEXTS, {"types": types, "archived": ctx.filters.archived})
    out = []
    for card_id, dataset_query in rows:
        text = _native_text(dataset_query)
        if text and any(t in scoring.normalize(text) for t in tokens):
            out.append(card_id)
    return out


def _filtered(query, text: str | None, id_column, by_ids: bool):
    """`query` with the index text filter and the ids filter, as bound parameters."""
    if text == "index":
        query = query.where(id_column.in_(bindparam("matched", expanding=True)))
    if by_ids:
        query = query.where(id_column.in_(bindparam("ids", expanding=True)))
    return query


@functools.cache
def _database_statement(text: str | None, by_ids: bool):
    query = select(Database.id, Database.name, Database.description, Database.created_at, Database.updated_at,
                   Database.initial_sync_status).where(Database.is_audit.is_(False))
    return _filtered(query, text, Database.id, by_ids)


def _databases(ctx: Context, _wanted: set[str]) -> list[dict]:
    f = ctx.filters
    if (f.archived or f.table_db_id is not None or f.created_by or f.last_edited_by
            or f.personal in ("only", "only-mine") or nothing_matches(ctx, "database")):
        return []
    shape = text_shape(ctx)
    statement = _database_statement(shape, bool(f.ids))
    if shape == "columns":
        statement = statement.where(text_clause(ctx, "database", Database.id, Database.name, Database.description))
    out = []
    for db_id, name, description, created_at, updated_at, sync_status in ctx.session.execute(
            statement, {"matched": matched(ctx, "database"), "ids": list(f.ids)}):
        if not permissions.can_read_database(ctx.session, ctx.access.user, db_id):
            continue
        out.append(result("database", db_id, name, description=description, archived=False,
                           collection=ROOT_REF, database_id=db_id, created_at=created_at,
                           updated_at=updated_at, initial_sync_status=sync_status,
                           _texts=[name, description], _pinned=False, _updated=updated_at))
    return out


_TABLE_DB = aliased(Database, name="table_db")
TABLE_COLUMNS = (Table.id, Table.db_id, Table.name, Table.display_name, Table.description, Table.schema,
                 Table.created_at, Table.updated_at)


@functools.cache
def _table_statement(text: str | None, by_database: bool, by_ids: bool):
    query = (select(*TABLE_COLUMNS, Table.initial_sync_status, _TABLE_DB.name)
             .join(_TABLE_DB, _TABLE_DB.id == Table.db_id)
             .where(Table.active.is_(True), Table.visibility_type.is_(None), _TABLE_DB.is_audit.is_(False)))
    if by_database:
        query = query.where(Table.db_id == bindparam("database_id"))
    return _filtered(query, text, Table.id, by_ids)


def _readable_tables(ctx: Context, tables) -> set[int]:
    """Of (table id, database id) pairs, the ids of the tables the caller reads."""
    by_database: dict[int, set[int]] = {}
    for table_id, database_id in tables:
        by_database.setdefault(database_id, set()).add(table_id)
    allowed: set[int] = set()
    for database_id, ids in by_database.items():
        allowed |= permissions.readable_table_ids(ctx.session, ctx.access.user, database_id, ids)
    return allowed


def _tables(ctx: Context, _wanted: set[str]) -> list[dict]:
    f = ctx.filters
    if f.archived or f.created_by or f.last_edited_by or f.personal in ("only", "only-mine") \
            or nothing_matches(ctx, "table"):
        return []
    shape = text_shape(ctx)
    statement = _table_statement(shape, f.table_db_id is not None, bool(f.ids))
    if shape == "columns":
        statement = statement.where(text_clause(ctx, "table", Table.id, Table.name, Table.display_name,
                                                Table.description))
    rows = list(ctx.session.execute(statement, {"matched": matched(ctx, "table"), "ids": list(f.ids),
                                                "database_id": f.table_db_id}))
    allowed = _readable_tables(ctx, ((row[0], row[1]) for row in rows))
    out = []
    for (table_id, db_id, name, display_name, description, schema, created_at, updated_at, sync_status,
         database_name) in rows:
        if table_id not in allowed:
            continue
        display = display_name or name
        out.append(result(
            "table", table_id, display, display_name=display, description=description, archived=False,
            collection=ROOT_REF, database_id=db_id, database_name=database_name, table_id=table_id,
            table_name=name, table_schema=schema, table_description=description,
            created_at=created_at, updated_at=updated_at, initial_sync_status=sync_status,
            _texts=[name, display_name, description], _pinned=False, _updated=updated_at))
    return out


@functools.cache
def _segment_statement(text: str | None, by_database: bool, by_ids: bool):
    query = (select(Segment.id, Segment.name, Segment.description, Segment.archived, Segment.created_at,
                    Segment.updated_at, Table.id, Table.db_id, Table.name, Table.schema, Table.description)
             .join(Table, Table.id == Segment.table_id).where(Segment.archived == bindparam("archived")))
    if by_database:
        query = query.where(Table.db_id == bindparam("database_id"))
    return _filtered(query, text, Segment.id, by_ids)


def _segments(ctx: Context, _wanted: set[str]) -> list[dict]:
    """Segments by name and description, with their table, where the caller reads the table
    (Metabase's segment search spec: no collection, no creator filter)."""
    f = ctx.filters
    if f.created_by or f.last_edited_by or f.personal in ("only", "only-mine") or nothing_matches(ctx, "segment"):
        return []
    shape = text_shape(ctx)
    statement = _segment_statement(shape, f.table_db_id is not None, bool(f.ids))
    if shape == "columns":
        statement = statement.where(text_clause(ctx, "segment", Segment.id, Segment.name, Segment.description))
    rows = list(ctx.session.execute(statement, {"matched": matched(ctx, "segment"), "ids": list(f.ids),
                                                "database_id": f.table_db_id, "archived": f.archived}))
    allowed = _readable_tables(ctx, ((row[6], row[7]) for row in rows))
    out = []
    for (segment_id, name, description, archived, created_at, updated_at, table_id, db_id, table_name, schema,
         table_description) in rows:
        if table_id not in allowed:
            continue
        out.append(result(
            "segment", segment_id, name, description=description, archived=archived,
            collection=ROOT_REF, database_id=db_id, table_id=table_id, table_name=table_name,
            table_schema=schema, table_description=table_description, created_at=created_at,
            updated_at=updated_at, _texts=[name, description], _pinned=False, _updated=updated_at))
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
    if permissions.permission_hooks_active():  # a hook may decide per user and object: nothing is shared
        hits, deferred = _hits(session, user, filters, deferred=False), False
    else:
        hits, deferred = _shared_hits(session, user, filters), True
    me, admin, mode = user.id, permissions.is_admin(user), filters.personal
    now = utcnow()
    scored = []
    for (model, text, pinned, updated, owner), hit in hits:
        if deferred and ((owner is not None and owner != me and not admin) or not personal_passes(mode, owner, me)):
            continue
        value = scoring.combine(tokens, text, model=model, pinned=pinned, updated_at=updated, now=now)
        if value > 0 or not tokens:
            scored.append((value, hit))
    available = sorted({r["model"] for _, r in scored}, key=SEARCHABLE.index)
    if filters.models:
        scored = [(v, r) for v, r in scored if r["model"] in filters.models]
    scored.sort(key=lambda vr: (-vr[0], SEARCHABLE.index(vr[1]["model"]), (vr[1]["name"] or "").lower(),
                                vr[1]["id"]))
    data = _with_bookmarks(session, user, [r for _, r in paging.apply(scored)])
    return {"data": data, "total": len(scored), "limit": paging.limit, "offset": paging.offset,
            "models": filters.models or None, "available_models": available,
            "table_db_id": filters.table_db_id, "engine": "in-place"}


def _shared_hits(session: Session, user: User, filters: Filters) -> list[tuple]:
    """_hits of a deferred context, kept per query and permission set (core.appdb.memo): every user
    of the same groups shares them, the personal and per-user parts being decided per request."""
    key = ("search", tuple(filters.tokens), filters.archived, filters.table_db_id, tuple(sorted(filters.created_by)),
           tuple(sorted(filters.last_edited_by)), filters.personal, tuple(sorted(filters.ids)),
           filters.search_native_query, audience_key(session, user))

    def compute() -> list[tuple]:
        # Answers the permission cache of this transaction holds were read before the memo was
        # told what this answer reads: asked again, they say which tables they come from.
        permissions.clear_cache(session)
        return _hits(session, user, filters, deferred=True)

    return memo.get_or_compute(session, key, compute, weigh=lambda hits: len(hits) * HIT_BYTES, alone=True)


def _hits(session: Session, user: User, filters: Filters, deferred: bool) -> list[tuple]:
    """((model, text score, pinned, updated_at, personal owner), result) of every source's results
    that match the query (all of them without one), the private keys taken out."""
    tokens = filters.tokens
    roots = personal_root_ids(session) if deferred or filters.personal in PERSONAL_MODES else {}
    ctx = Context(session, Access(session, user), filters, roots,
                  search_index.candidates(session, tokens) if tokens else None, deferred)
    results: list[dict] = []
    # Every kind is searched, whatever `models` asks for, because available_models reports them all.
    for source in dict.fromkeys(SOURCES.values()):
        results.extend(source(ctx, {m for m, s in SOURCES.items() if s is source}))
    for model, source in kinds.search_sources().items():
        if model in SEARCHABLE:
            results.extend(source(ctx))
    out = []
    for hit in results:
        text = scoring.texts_score(tokens, hit.pop("_texts"))
        meta = (hit["model"], text, hit.pop("_pinned"), hit.pop("_updated"), hit.pop("_owner", None))
        if text > 0 or not tokens:
            out.append((meta, hit))
    return out


def _with_bookmarks(session: Session, user: User, data: list[dict]) -> list[dict]:
    """`data` with the caller's bookmark flags (a flagged result is a copy: the others may be shared)."""
    kinds_shown = {BOOKMARK_KIND.get(r["model"], r["model"]) for r in data}
    marked = {kind: bookmarks.kept_bookmarked_ids(session, user, kind) for kind in kinds_shown
              if kind in bookmarks.TYPES}
    return [{**r, "bookmark": True} if r["id"] in marked.get(BOOKMARK_KIND.get(r["model"], r["model"]), ()) else r
            for r in data]
