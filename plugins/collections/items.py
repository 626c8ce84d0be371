"""The items of a collection (or of the root): child collections, cards, models, metrics, snippets,
timelines and the kinds other plugins contribute (dashboards), in one sorted, paged listing.

Each kind of item is a core.content.items.ItemSource: it lists the sort keys of its rows in a
collection (cheap columns only) and turns the rows of the requested page into JSON. The listing merges
the keys of every requested source, sorts them as Metabase does, pages, then hydrates only that page.
The built-in sources are here; contributed ones come from core.content.kinds, so a kind whose plugin is
disabled is simply not listed. plugins.collections.listing keeps listings per permission set (in parts,
see Context.part, each hydrated whole); list_items is the listing of one caller, page only.
"""
from __future__ import annotations

import datetime as dt
import functools

from sqlalchemy import bindparam, or_, select, update
from sqlalchemy.orm import Session

from core.appdb.models import (
    Card,
    Collection,
    NativeQuerySnippet,
    Timeline,
)
from core.content import kinds
from core.content.collections import (
    SNIPPETS,
    children_location,
    location_ids,
    normalize_namespace,
    personal_names,
)
from core.content.items import (  # noqa: F401  (Context, Key, Options: the listing's types, used by the service)
    ALL,
    PERSONAL,
    SHARED,
    Context,
    Key,
    Options,
    edit_key,
    pinned_clause,
    with_last_edit,
)
from core.content.timelines import shown_icon
from core.http.paging import Paging

from .previews import fully_parameterized

# Metabase's ranks for sort_column=model.
MODEL_RANKING = {"dashboard": 1, "pulse": 2, "dataset": 3, "metric": 4, "card": 5, "snippet": 6,
                 "collection": 7, "timeline": 8}
CARD_TYPE_MODEL = {"question": "card", "model": "dataset", "metric": "metric"}
MODEL_CARD_TYPE = {model: card_type for card_type, model in CARD_TYPE_MODEL.items()}


# --------------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------------


@functools.cache
def _card_keys(root: bool, pinned_state: str | None):
    """Every card type's sort keys in one collection (or the root), built once per shape."""
    query = with_last_edit(select(Card.id, Card.name, Card.type), "Card", Card.id).where(
        Card.archived == bindparam("archived"),
        Card.collection_id.is_(None) if root else Card.collection_id == bindparam("collection_id"))
    pinned = pinned_clause(Card.collection_position, pinned_state)
    return query if pinned is None else query.where(pinned)


# What a card item shows: the large JSON columns but the query stay unread.
_CARD_ROWS = select(Card.id, Card.name, Card.description, Card.entity_id, Card.collection_position, Card.display,
                    Card.collection_preview, Card.last_used_at, Card.archived, Card.archived_directly,
                    Card.database_id, Card.dataset_query).where(Card.id.in_(bindparam("ids", expanding=True)))
_CARD_HOLDS = {
    False: select(Card.collection_id, Card.type).distinct().where(
        Card.archived.is_(False), Card.collection_id.in_(bindparam("ids", expanding=True))),
    True: select(Card.collection_id, Card.type).distinct().where(
        Card.archived.is_(False), Card.collection_id.is_not(None)),
}


class CardSource:
    """Saved questions ("card"), models ("dataset") and metrics ("metric")."""

    models = ("card", "dataset", "metric")
    namespaces = (None,)
    last_use = (Card, "last_used_at")

    def keys(self, ctx: Context, model: str) -> list[Key]:
        by_model = ctx.once("card keys", lambda: self._all_keys(ctx))
        return by_model.get(model, [])

    def _all_keys(self, ctx: Context) -> dict[str, list[Key]]:
        statement = _card_keys(ctx.collection is None, ctx.options.pinned_state)
        by_model: dict[str, list[Key]] = {}
        for cid, name, card_type, *edit in ctx.session.execute(
                statement, {"archived": ctx.options.archived, "collection_id": ctx.collection_id}):
            model = CARD_TYPE_MODEL.get(card_type)
            if model is not None:
                by_model.setdefault(model, []).append(edit_key(model, cid, name, *edit))
        return by_model

    def hydrate(self, ctx: Context, keys: list[Key]) -> dict[tuple[str, int], dict]:
        ids = [k.id for k in keys]
        cards = {c.id: c for c in ctx.session.execute(_CARD_ROWS, {"ids": ids})}
        placed = kinds.card_counts(ctx.session, "dashboard", ids)
        can_write = ctx.access.can_write(ctx.collection_id)
        parent_archived = ctx.parent_archived
        out = {}
        for key in keys:
            card = cards[key.id]
            item = {
                "id": card.id,
                "name": card.name,
                "description": card.description,
                "entity_id": card.entity_id,
                "collection_position": card.collection_position,
                "display": card.display,
                "collection_preview": card.collection_preview,
                "dashboard_id": None,
                "dashboard": None,
                "dashboard_count": placed.get(card.id, 0),
                "last_used_at": card.last_used_at,
                "collection_id": ctx.collection_id,
                "archived": card.archived,
                "model": key.model,
                "moderated_status": None,
                "can_write": can_write,
                "can_restore": bool(card.archived and card.archived_directly and can_write and not parent_archived),
                "can_delete": bool(card.archived and can_write),
                "fully_parameterized": fully_parameterized(card.dataset_query),
            }
            if key.model != "metric":
                item["database_id"] = card.database_id
            if key.last_edit is not None:
                item["last-edit-info"] = key.last_edit
            out[(key.model, card.id)] = item
        return out

    def holds(self, session: Session, collection_ids: list[int] | None):
        rows = session.execute(_CARD_HOLDS[collection_ids is None], {"ids": list(collection_ids or ())})
        return [(cid, CARD_TYPE_MODEL.get(card_type, "card")) for cid, card_type in rows]

    def archive(self, session: Session, collection_ids: list[int], archived: bool) -> None:
        # Cards archived on their own (archived_directly) keep their state.
        session.execute(update(Card).where(Card.collection_id.in_(collection_ids), Card.archived_directly.is_(False))
                        .values(archived=archived), execution_options={"synchronize_session": False})


class CollectionSource:
    """Child collections: those whose nearest readable ancestor is the listed collection, so that a
    user sees a collection even when the ones between are hidden from them."""

    models = ("collection",)
    namespaces = None  # every namespace

    def keys(self, ctx: Context, model: str) -> list[Key]:
        if ctx.options.pinned_state == "is_pinned":  # collections are never pinned
            return []
        children = effective_children(ctx)
        return [Key("collection", c.id, c.name, authority_level=c.authority_level, collection_type=c.type, ref=c)
                for c in children if c.archived == ctx.options.archived]

    def hydrate(self, ctx: Context, keys: list[Key]) -> dict[tuple[str, int], dict]:
        collections = [k.ref for k in keys]
        names = personal_names(ctx.session, [c.personal_owner_id for c in collections])
        annotations = annotate(ctx, collections)
        out = {}
        for c in collections:
            can_write = ctx.access.can_write(c.id)
            item = {
                "id": c.id,
                "name": names.get(c.personal_owner_id, c.name) if c.personal_owner_id else c.name,
                "description": c.description,
                "entity_id": c.entity_id,
                "archived": c.archived,
                "location": c.location,
                "authority_level": c.authority_level,
                "model": "collection",
                "collection_id": ctx.collection_id,
                "can_write": can_write,
                "effective_location": effective_location(ctx, c),
                "can_restore": bool(c.archived and c.archived_directly and can_write
                                    and not (ctx.collection is not None and ctx.collection.archived)),
                "can_delete": False,
                **annotations.get(c.id, {}),
            }
            if c.personal_owner_id is not None:
                item["personal_owner_id"] = c.personal_owner_id
            out[("collection", c.id)] = item
        return out

    def holds(self, session: Session, collection_ids: list[int] | None):
        return ()  # child collections are annotated from the locations, which the access filter needs

    def archive(self, session: Session, collection_ids: list[int], archived: bool) -> None:
        pass  # the collections service archives descendant collections itself


@functools.cache
def _in_collection_keys(model, root: bool):
    """(id, name) of a snippet's or timeline's rows in one collection (or the root), built once."""
    return select(model.id, model.name).where(
        model.archived == bindparam("archived"),
        model.collection_id.is_(None) if root else model.collection_id == bindparam("collection_id"))


class SnippetSource:
    """SQL snippets, which live in collections of the snippets namespace."""

    models = ("snippet",)
    namespaces = (SNIPPETS,)

    def keys(self, ctx: Context, model: str) -> list[Key]:
        if ctx.options.pinned_state == "is_pinned":  # snippets cannot be pinned
            return []
        rows = ctx.session.execute(_in_collection_keys(NativeQuerySnippet, ctx.collection is None),
                                   {"archived": ctx.options.archived, "collection_id": ctx.collection_id})
        return [Key("snippet", sid, name) for sid, name in rows]

    def hydrate(self, ctx: Context, keys: list[Key]) -> dict[tuple[str, int], dict]:
        ids = [k.id for k in keys]
        rows = ctx.session.scalars(select(NativeQuerySnippet).where(NativeQuerySnippet.id.in_(ids)))
        return {("snippet", s.id): {"id": s.id, "name": s.name, "entity_id": s.entity_id, "model": "snippet",
                                    "archived": s.archived, "collection_id": ctx.collection_id}
                for s in rows}

    def holds(self, session: Session, collection_ids: list[int] | None):
        return ()  # Metabase's here/below name only cards, dashboards and collections

    def archive(self, session: Session, collection_ids: list[int], archived: bool) -> None:
        _follow_collection(session, NativeQuerySnippet, collection_ids, archived)


class TimelineSource:
    """Timelines: Metabase lists them with their icon, never pinned."""

    models = ("timeline",)
    namespaces = (None,)

    def keys(self, ctx: Context, model: str) -> list[Key]:
        if ctx.options.pinned_state == "is_pinned":
            return []
        rows = ctx.session.execute(_in_collection_keys(Timeline, ctx.collection is None),
                                   {"archived": ctx.options.archived, "collection_id": ctx.collection_id})
        return [Key("timeline", tid, name) for tid, name in rows]

    def hydrate(self, ctx: Context, keys: list[Key]) -> dict[tuple[str, int], dict]:
        rows = ctx.session.scalars(select(Timeline).where(Timeline.id.in_([k.id for k in keys])))
        return {("timeline", t.id): {"id": t.id, "collection_id": ctx.collection_id, "name": t.name,
                                     "model": "timeline", "entity_id": t.entity_id,
                                     "icon": shown_icon(t.icon)}
                for t in rows}

    def holds(self, session: Session, collection_ids: list[int] | None):
        return ()

    def archive(self, session: Session, collection_ids: list[int], archived: bool) -> None:
        _follow_collection(session, Timeline, collection_ids, archived)  # its events keep their own state


def _follow_collection(session: Session, model, collection_ids: list[int], archived: bool) -> None:
    """Snippets and timelines have no archived_directly: they follow their collection, as in Metabase."""
    session.execute(update(model).where(model.collection_id.in_(collection_ids)).values(archived=archived),
                    execution_options={"synchronize_session": False})


BUILTIN_SOURCES: tuple = (CollectionSource(), CardSource(), SnippetSource(), TimelineSource())


def sources() -> list:
    """The built-in sources, then those the enabled plugins contribute."""
    return [*BUILTIN_SOURCES, *kinds.item_sources()]


def _source_for(model: str):
    return next((s for s in sources() if model in s.models), None)


def available_models(namespace: str | None) -> list[str]:
    """The item models a collection of `namespace` can hold (collections go everywhere)."""
    namespace = normalize_namespace(namespace)
    out = []
    for source in sources():
        if source.namespaces is None or namespace in source.namespaces:
            out.extend(source.models)
    return out


# --------------------------------------------------------------------------------------------------
# The listing
# --------------------------------------------------------------------------------------------------


def wanted_models(namespace: str | None, models: set[str]) -> list[str]:
    """The models a listing shows, sorted: `models` empty means every model of the namespace."""
    return sorted(m for m in available_models(namespace) if not models or m in models)


def listed_keys(ctx: Context, wanted: list[str]) -> list[Key]:
    """The sort keys of every item of the `wanted` models, in the listing's order."""
    keys: list[Key] = []
    for model in wanted:
        keys.extend(_source_for(model).keys(ctx, model))
    sort_keys(keys, ctx.options)
    return keys


def hydrate(ctx: Context, keys: list[Key]) -> dict[tuple[str, int], dict]:
    """The item JSON of `keys`, by (model, id): each source hydrates its own."""
    hydrated: dict[tuple[str, int], dict] = {}
    by_source: dict[int, list[Key]] = {}
    for key in keys:
        by_source.setdefault(id(_source_for(key.model)), []).append(key)
    for source in sources():
        if id(source) in by_source:
            hydrated.update(source.hydrate(ctx, by_source[id(source)]))
    return hydrated


def listing_json(namespace: str | None, wanted: list[str], total: int, data: list[dict], paging: Paging) -> dict:
    result = {"total": total, "data": data, "models": wanted}
    if normalize_namespace(namespace) != SNIPPETS:
        result["limit"] = paging.limit
        result["offset"] = paging.offset
    return result


def list_items(ctx: Context, models: set[str], paging: Paging) -> dict:
    """{total, data, models, limit, offset}: `models` empty means every model. Only the page is hydrated."""
    wanted = wanted_models(ctx.namespace, models)
    keys = listed_keys(ctx, wanted)
    page = paging.apply(keys)
    hydrated = hydrate(ctx, page)
    return listing_json(ctx.namespace, wanted, len(keys), [hydrated[(k.model, k.id)] for k in page], paging)


def sort_keys(keys: list[Key], options: Options) -> None:
    """Metabase's order, applied as stable sorts from the least significant key up: official
    collections first, normal collections before special ones, the chosen column, then id."""
    keys.sort(key=lambda k: k.id)
    by_name = lambda k: (k.name or "").lower()  # noqa: E731
    column, descending = options.sort_column, options.sort_direction == "desc"
    if column == "name":
        keys.sort(key=by_name, reverse=descending)
    elif column == "last_edited_at":
        keys.sort(key=by_name)
        keys.sort(key=lambda k: k.last_edit_at or dt.datetime.min.replace(tzinfo=dt.timezone.utc),
                  reverse=descending)
        keys.sort(key=lambda k: k.last_edit_at is None)
    elif column == "last_edited_by":
        keys.sort(key=by_name)
        for attribute in ("last_edit_first_name", "last_edit_last_name"):
            keys.sort(key=lambda k, a=attribute: (getattr(k, a) or "").lower(), reverse=descending)
            keys.sort(key=lambda k, a=attribute: getattr(k, a) is None)
    elif column == "model":
        keys.sort(key=by_name)
        keys.sort(key=lambda k: MODEL_RANKING.get(k.model, 100), reverse=descending)
    keys.sort(key=lambda k: k.collection_type is not None)
    if options.official_collections_first:
        keys.sort(key=lambda k: k.authority_level != "official")


# --------------------------------------------------------------------------------------------------
# Collections below a collection: effective children, effective locations, here and below
# --------------------------------------------------------------------------------------------------


@functools.cache
def _below(default_namespace: bool, top: bool, filtered: bool):
    """Collections of a namespace below a location, among some ids, built once per shape."""
    query = select(Collection).where(
        or_(Collection.namespace.is_(None), Collection.namespace == "") if default_namespace
        else Collection.namespace == bindparam("namespace"))
    if not top:
        query = query.where(Collection.location.like(bindparam("prefix")))
    if filtered:
        query = query.where(Collection.id.in_(bindparam("ids", expanding=True)))
    return query


def _readable_below(ctx: Context) -> list[Collection]:
    """Every readable collection below the listed one (any archived state), in its namespace,
    without other users' personal collections; read once per listing."""
    return ctx.once("readable below", lambda: _read_below(ctx))


def _read_below(ctx: Context) -> list[Collection]:
    prefix = children_location(ctx.collection)  # digits and slashes: nothing for LIKE to escape
    ids = ctx.access.readable_ids()
    namespace = normalize_namespace(ctx.namespace)
    statement = _below(namespace is None, prefix == "/", ids is not None)
    rows = ctx.session.scalars(statement, {"namespace": namespace, "prefix": prefix + "%", "ids": list(ids or ())})
    return in_part(ctx, [c for c in rows if ctx.access.can_read(c.id)])


def in_part(ctx: Context, below: list[Collection]) -> list[Collection]:
    """The collections of `below` (every readable one below the listed collection) in ctx.part. Other
    users' personal collections, and what lies in them, are never listed (an administrator reads them
    by opening them). Below a collection that is not the root, no personal collection starts: the
    owner of each one is then None, and the listing of a personal collection's inside is ALL."""
    personal_roots = {c.id: c.personal_owner_id for c in below if c.personal_owner_id is not None}

    def owner(c: Collection) -> int | None:
        if c.personal_owner_id is not None:
            return c.personal_owner_id
        top = location_ids(c.location)[:1]
        return personal_roots.get(top[0]) if top else None

    user_id = ctx.access.user.id
    if ctx.part == SHARED:
        return [c for c in below if owner(c) is None]
    if ctx.part == PERSONAL:
        return [c for c in below if owner(c) == user_id]
    return [c for c in below if owner(c) in (None, user_id)]


def effective_children(ctx: Context) -> list[Collection]:
    depth = len(location_ids(children_location(ctx.collection)))
    below = _readable_below(ctx)
    visible = {c.id for c in below}
    return [c for c in below if not any(a in visible for a in location_ids(c.location)[depth:])]


def effective_location(ctx: Context, collection: Collection) -> str:
    readable = [i for i in location_ids(collection.location) if ctx.access.can_read(i)]
    return "/" + "".join(f"{i}/" for i in readable)


def annotate(ctx: Context, collections: list[Collection]) -> dict[int, dict]:
    """`here` (kinds of items directly inside) and `below` (kinds anywhere deeper) per collection."""
    if not collections:
        return {}
    below = _readable_below(ctx)
    ids = [c.id for c in below]
    holds = kinds_held(ctx.session, ids) if ids else {}
    visible = set(ids)
    for c in below:
        parents = [a for a in location_ids(c.location) if a in visible]
        if parents:
            holds.setdefault(parents[-1], set()).add("collection")
    deeper: dict[int, set[str]] = {}
    for c in below:
        kinds = holds.get(c.id)
        if kinds:
            for ancestor in location_ids(c.location):
                deeper.setdefault(ancestor, set()).update(kinds)
    out = {}
    for c in collections:
        entry = {}
        if holds.get(c.id):
            entry["here"] = sorted(holds[c.id])
        if deeper.get(c.id):
            entry["below"] = sorted(deeper[c.id])
        out[c.id] = entry
    return out


# --------------------------------------------------------------------------------------------------
# What collections hold, and archiving with them
# --------------------------------------------------------------------------------------------------


def kinds_held(session: Session, collection_ids: list[int] | None) -> dict[int, set[str]]:
    """collection id -> the models of the non-archived items directly inside (every source's holds)."""
    held: dict[int, set[str]] = {}
    for source in sources():
        for collection_id, model in source.holds(session, collection_ids):
            held.setdefault(collection_id, set()).add(model)
    return held


def archive_items(session: Session, collection_ids: list[int], archived: bool) -> None:
    """Archive (or unarchive) what lies in these collections along with them: each source decides
    which of its items follow (cards and dashboards archived on their own keep their state)."""
    if not collection_ids:
        return
    for source in sources():
        source.archive(session, collection_ids, archived)
