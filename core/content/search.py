"""What a search source needs, for the search plugin's own kinds and those other plugins contribute
(ContentKind.search, core.content.kinds): the filters of a search, the context a source receives,
the result shape, the text prefilter and the personal-collection filter.

A source returns result dicts built with `result`, only for items the caller may read, with three
private keys the search plugin scores and removes: `_texts` (the texts matched against the query),
`_pinned` and `_updated`.
"""
from __future__ import annotations

import datetime as dt
import unicodedata
from dataclasses import dataclass, field

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from core.appdb.models import Collection, Revision, User

from .collections import Access, personal_names

RESULT_KEYS = (
    "model", "id", "name", "display_name", "description", "archived", "collection", "collection_position",
    "creator_id", "creator_common_name", "last_editor_id", "last_editor_common_name", "last_edited_at",
    "created_at", "updated_at", "dashboardcard_count", "moderated_status", "database_id", "database_name",
    "table_id", "table_name", "table_schema", "table_description", "display", "dataset_query", "query_type",
    "bookmark", "can_write", "effective_location", "location", "personal_owner_id", "authority_level",
    "initial_sync_status", "dashboard", "context",
)
ROOT_REF = {"id": None, "name": None, "authority_level": None, "type": None}


def normalize(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokenize(text: str) -> list[str]:
    return [t for t in text.split() if t]


@dataclass
class Filters:
    q: str | None = None
    models: list[str] | None = None
    archived: bool = False
    table_db_id: int | None = None
    created_by: set[int] = field(default_factory=set)
    last_edited_by: set[int] = field(default_factory=set)
    personal: str | None = None  # filter_items_in_personal_collection
    ids: set[int] = field(default_factory=set)
    search_native_query: bool = False

    @property
    def tokens(self) -> list[str]:
        return tokenize(normalize(self.q or ""))


@dataclass
class SearchContext:
    session: Session
    access: Access
    filters: Filters
    roots: dict[int, int]  # personal collection id -> owner (core.content.collections.personal_root_ids)
    # model -> ids whose indexed text holds a query token (core.appdb.search_index.candidates, read
    # once per search); None without tokens or without an index.
    candidates: dict[str, set[int]] | None = None


def result(model: str, id: int, name: str, **values) -> dict:
    out = dict.fromkeys(RESULT_KEYS)
    values.setdefault("bookmark", False)
    values.setdefault("dashboardcard_count", 0)
    out.update(model=model, id=id, name=name, **values)
    return out


def text_clause(ctx: SearchContext, model: str, id_column, *columns):
    """Metabase's prefilter: any query token inside any searchable column (lower case). Read from
    the search index (the ids of `model` it found) when the app DB keeps one, else from the columns."""
    tokens = ctx.filters.tokens
    if not tokens:
        return None
    if ctx.candidates is not None:
        return id_column.in_(sorted(ctx.candidates.get(model, ())))
    return or_(*(func.lower(column).contains(token, autoescape=True) for column in columns for token in tokens))


def nothing_matches(ctx: SearchContext, model: str) -> bool:
    """Does the search index say no `model` object matches the query? (A source then returns no
    results without a statement.)"""
    return ctx.candidates is not None and not ctx.candidates.get(model)


def personal_ok(ctx: SearchContext, owner: int | None) -> bool:
    """Does an item whose personal collection belongs to `owner` (None: not personal) pass the
    filter_items_in_personal_collection filter?"""
    mode = ctx.filters.personal
    me = ctx.access.user.id
    if mode in (None, "all"):
        return True
    if mode == "only":
        return owner is not None
    if mode == "only-mine":
        return owner == me
    if mode == "exclude":
        return owner is None
    if mode == "exclude-others":
        return owner in (None, me)
    return True


def common_names(session: Session, ids) -> dict[int, str]:
    ids = {i for i in ids if i is not None}
    if not ids:
        return {}
    return {user.id: user.common_name for user in session.scalars(select(User).where(User.id.in_(ids)))}


def last_editors(session: Session, model: str, ids: list[int]) -> dict[int, tuple[int | None, dt.datetime]]:
    """id -> (user id, time) of the latest revision of `model` ("Card", "Dashboard")."""
    if not ids:
        return {}
    query = select(Revision.model_id, Revision.user_id, Revision.timestamp).where(
        Revision.model == model, Revision.model_id.in_(ids), Revision.most_recent.is_(True))
    return {model_id: (user_id, ts) for model_id, user_id, ts in session.execute(query)}


def collection_refs(session: Session, collection_ids) -> dict[int, tuple[Collection, dict]]:
    """collection id -> (row, the `collection` a result shows: {id, name, authority_level, type});
    an item in the root shows ROOT_REF."""
    ids = {i for i in collection_ids if i is not None}
    rows = list(session.scalars(select(Collection).where(Collection.id.in_(ids)))) if ids else []
    names = personal_names(session, [c.personal_owner_id for c in rows])
    return {c.id: (c, {"id": c.id, "authority_level": c.authority_level, "type": c.type,
                       "name": names.get(c.personal_owner_id, c.name) if c.personal_owner_id else c.name})
            for c in rows}
