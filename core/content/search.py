"""What a search source needs, for the search plugin's own kinds and those other plugins contribute
(ContentKind.search, core.content.kinds): the filters of a search, the context a source receives,
the result shape, the text prefilter, the personal-collection filter, and the columns every
collection-held kind (cards, dashboards) shows, read in its one statement (with_place, place).

A source returns result dicts built with `result`, only for items the caller may read, with private
keys the search plugin scores and removes: `_texts` (the texts matched against the query), `_pinned`,
`_updated`, and from `place` `_owner` (the owner of the personal collection holding the item).

A context may be `deferred`: it serves everyone with one set of permissions (their groups), not one
user, so that its results can be kept and shared (the search plugin keeps them per query and
permission set). Items in personal collections then pass as readable and writable (what their owner
and administrators have) with their `_owner`, and the filters that depend on who asks (the personal
filter, which personal collections are the caller's, bookmarks) are the search plugin's, per request.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from sqlalchemy import and_, func, or_
from sqlalchemy.orm import Session, aliased

from core.appdb.models import Collection, Revision, User

from .collections import Access, personal_name, personal_owner_of

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
    # personal collection id -> owner (core.content.collections.personal_root_ids); read only in a
    # deferred context or when the filter asks about personal collections (PERSONAL_MODES), else empty.
    roots: dict[int, int]
    # model -> ids whose indexed text holds a query token (core.appdb.search_index.candidates, read
    # once per search); None without tokens or without an index.
    candidates: dict[str, frozenset[int]] | None = None
    # Personal collections decided per user afterwards (see the module docstring).
    deferred: bool = False


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


# The filter_items_in_personal_collection values that look at who owns an item's personal collection.
PERSONAL_MODES = ("only", "only-mine", "exclude", "exclude-others")


def personal_ok(ctx: SearchContext, owner: int | None) -> bool:
    """Does an item whose personal collection belongs to `owner` (None: not personal) pass the
    filter_items_in_personal_collection filter? (Always, in a deferred context: asked per request.)"""
    return ctx.deferred or personal_passes(ctx.filters.personal, owner, ctx.access.user.id)


def personal_passes(mode: str | None, owner: int | None, me: int) -> bool:
    """personal_ok for the user `me` and the filter's `mode`."""
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


def common_name(first_name: str | None, last_name: str | None, email: str | None) -> str | None:
    """User.common_name from the three columns (None: no such user)."""
    if email is None:
        return None
    return " ".join(part for part in (first_name, last_name) if part).strip() or email


# Built once: an alias made per call costs milliseconds of SQLAlchemy column adaptation.
_IN = aliased(Collection, name="in_collection")
_OWNER = aliased(User, name="collection_owner")
_CREATOR = aliased(User, name="creator")
_EDITOR = aliased(User, name="last_editor")
_REVISION = aliased(Revision, name="last_revision")
PLACE_COLUMNS = 18


def with_place(query, revision_model: str, id_column, collection_column, creator_column):
    """`query` with PLACE_COLUMNS more columns, read by `place`: the item's collection (with its
    personal owner's names), its creator's names and its latest revision of `revision_model` ("Card",
    "Dashboard") with the editor's names. One statement gives a result everything it shows but the
    caller's bookmark (the search plugin's, per user), instead of one per concern and kind."""
    return (query.add_columns(_IN.id, _IN.name, _IN.namespace, _IN.location, _IN.personal_owner_id,
                              _IN.authority_level, _IN.type, _OWNER.first_name, _OWNER.last_name, _OWNER.email,
                              _CREATOR.first_name, _CREATOR.last_name, _CREATOR.email,
                              _REVISION.user_id, _REVISION.timestamp,
                              _EDITOR.first_name, _EDITOR.last_name, _EDITOR.email)
            .outerjoin(_IN, _IN.id == collection_column)
            .outerjoin(_OWNER, _OWNER.id == _IN.personal_owner_id)
            .outerjoin(_CREATOR, _CREATOR.id == creator_column)
            .outerjoin(_REVISION, and_(_REVISION.model == revision_model, _REVISION.model_id == id_column,
                                       _REVISION.most_recent.is_(True)))
            .outerjoin(_EDITOR, _EDITOR.id == _REVISION.user_id))


def place(ctx: SearchContext, collection_id: int | None, columns) -> dict | None:
    """The shared keys of a result read with `with_place` (`columns`: its PLACE_COLUMNS), or None when
    the caller may not see the item: its collection is in another namespace, unreadable, fails the
    personal filter, or its last editor fails last_edited_by. In a deferred context an item of a
    personal collection passes, writable, with its `_owner`."""
    (cid, name, namespace, location, owner_id, authority_level, kind, owner_first, owner_last, owner_email,
     creator_first, creator_last, creator_email, editor_id, edited_at, editor_first, editor_last, editor_email) = columns
    if collection_id is not None and (cid is None or namespace):
        return None
    owner = None if collection_id is None else personal_owner_of(owner_id, location, ctx.roots)
    personal = ctx.deferred and owner is not None
    if not personal and not ctx.access.can_read(collection_id):
        return None
    if collection_id is None:
        ref = ROOT_REF
    else:
        if owner_id is not None and owner_email is not None:
            name = personal_name(owner_first, owner_last, owner_email)
        ref = {"id": cid, "authority_level": authority_level, "type": kind, "name": name}
    if not personal_ok(ctx, owner):
        return None
    if ctx.filters.last_edited_by and editor_id not in ctx.filters.last_edited_by:
        return None
    return {"collection": ref, "creator_common_name": common_name(creator_first, creator_last, creator_email),
            "last_editor_id": editor_id, "last_editor_common_name": common_name(editor_first, editor_last, editor_email),
            "last_edited_at": edited_at, "can_write": personal or ctx.access.can_write(collection_id), "_owner": owner}


def text_shape(ctx: SearchContext) -> str | None:
    """How a source's statement filters by text: None (no query tokens), "index" (`id IN :matched`,
    the ids from `matched`, a prebuilt statement) or "columns" (no index: text_clause, added per request)."""
    if not ctx.filters.tokens:
        return None
    return "index" if ctx.candidates is not None else "columns"


def matched(ctx: SearchContext, model: str) -> list[int]:
    """The `model` ids the search index found (the `matched` parameter of an "index" shape)."""
    return sorted(ctx.candidates.get(model, ())) if ctx.candidates is not None else []
