"""Collection items: what a kind of content must provide to appear in /api/collection/:id/items and
the collection tree, and to follow its collection into and out of the archive.

The collections plugin lists its own kinds (collections, cards, snippets, timelines) and the
ItemSources that other plugins contribute through register_content_kinds (core.content.kinds), all
through this one protocol: a source lists cheap sort keys of its rows in a collection, the listing
sorts and pages the keys of every source together, then each source hydrates only its rows of the page.

A listing runs each statement once per concern: a source serving several models reads them in one
statement (keeping the rows in `Context.shared`), the keys carry the last-edit info the page shows, and
the statements are built once per shape (module-level selects with bound parameters, or a cached
builder per variant) so that a request does not rebuild SQLAlchemy expressions.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol

from sqlalchemy import and_
from sqlalchemy.orm import Session, aliased

from core.appdb.models import Collection, Revision, User

from .collections import Access


@dataclass
class Options:
    archived: bool = False
    pinned_state: str | None = None
    sort_column: str = "name"
    sort_direction: str = "asc"
    official_collections_first: bool = True
    show_dashboard_questions: bool = False


ALL, SHARED, PERSONAL = "all", "shared", "personal"


@dataclass
class Context:
    session: Session
    access: Access
    collection: Collection | None  # None: the root
    namespace: str | None
    options: Options
    # Which collections below the listed one the listing shows: ALL (what the caller sees), SHARED (none
    # in a personal collection: what every caller of the same groups sees alike) or PERSONAL (only the
    # caller's own personal collection and what lies in it).
    part: str = ALL
    # What several sources or steps of one listing need, computed once (e.g. the readable collections
    # below the listed one, or the rows of every card type): key -> value, for this listing only.
    shared: dict = field(default_factory=dict)

    def once(self, key, compute):
        if key not in self.shared:
            self.shared[key] = compute()
        return self.shared[key]

    @property
    def collection_id(self) -> int | None:
        return self.collection.id if self.collection is not None else None

    @property
    def parent_archived(self) -> bool:
        return bool(self.collection is not None and self.collection.archived)


@dataclass
class Key:
    """One item's sort keys; `ref` is whatever the source needs to hydrate it."""

    model: str
    id: int
    name: str
    authority_level: str | None = None
    collection_type: str | None = None
    last_edit_at: dt.datetime | None = None
    last_edit_first_name: str | None = None
    last_edit_last_name: str | None = None
    # The item's `last-edit-info` ({id, first_name, last_name, email, timestamp}) when it has a revision
    # by a known user: read with the keys (with_last_edit), shown by hydrate.
    last_edit: dict | None = field(default=None, repr=False)
    ref: Any = field(default=None, repr=False)


class ItemSource(Protocol):
    """One or more item models ("card", "dataset", "metric"; "dashboard") listed in collections.

    `namespaces`: the collection namespaces holding them (None in the tuple is the default one; the
    attribute None means every namespace)."""

    models: tuple[str, ...]
    namespaces: tuple[str | None, ...] | None
    # Optional: (model class, column) where the write-behind stores the items' last use (their
    # `last_used_at`), laid over a kept listing from the stored counts (core.content.viewing).
    last_use: tuple[Any, str] | None

    def keys(self, ctx: Context, model: str) -> list[Key]:
        """The sort keys of the `model` rows directly in ctx.collection, in ctx.options' archived and
        pinned state, that the caller may see (the collection itself is already readable)."""

    def hydrate(self, ctx: Context, keys: list[Key]) -> dict[tuple[str, int], dict]:
        """The item JSON of these keys (one page), by (model, id)."""

    def holds(self, session: Session, collection_ids: list[int] | None) -> Iterable[tuple[int, str]]:
        """(collection_id, model) for the kinds of non-archived items inside these collections
        (None: any collection), for the `here`/`below` annotations of collections."""

    def archive(self, session: Session, collection_ids: list[int], archived: bool) -> None:
        """Archive (or unarchive) the items inside these collections along with them; items archived
        on their own (`archived_directly`) keep their state. Same transaction, no commit."""


def pinned_clause(column, pinned_state: str | None):
    """The condition on an item's collection_position for `pinned_state`, None for "all"."""
    if pinned_state == "is_pinned":
        return column.is_not(None)
    if pinned_state == "is_not_pinned":
        return column.is_(None)
    return None


def in_collection(column, ctx: Context):
    return column.is_(None) if ctx.collection is None else column == ctx.collection.id


# Built once: an alias made per call costs a listing milliseconds of SQLAlchemy column adaptation.
_EDITOR = aliased(User, name="last_editor")
_REVISION = aliased(Revision, name="last_revision")


def with_last_edit(query, model: str, id_column):
    """`query` with five more columns: the time of the latest revision of `model` (revision.model, e.g.
    "Card", "Dashboard") and its editor's id, first and last name and email, for sort keys and the
    `last-edit-info` (edit_key reads them)."""
    editor, revision = _EDITOR, _REVISION
    return (query.add_columns(revision.timestamp, editor.id, editor.first_name, editor.last_name, editor.email)
            .outerjoin(revision, and_(revision.model == model, revision.model_id == id_column,
                                      revision.most_recent.is_(True)))
            .outerjoin(editor, editor.id == revision.user_id))


def edit_key(model: str, id: int, name: str, timestamp, editor_id, first_name, last_name, email, **values) -> Key:
    """The Key of a row read with with_last_edit's five columns."""
    last_edit = None if editor_id is None else {
        "id": editor_id, "first_name": first_name, "last_name": last_name, "email": email, "timestamp": timestamp}
    return Key(model, id, name, last_edit_at=timestamp, last_edit_first_name=first_name,
               last_edit_last_name=last_name, last_edit=last_edit, **values)
