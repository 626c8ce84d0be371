"""Request models of /api/collection, with Metabase's parameter names (some kebab-case)."""
from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from core.content.collections import COLOR
from core.http.api import Params
from core.http.paging import PagingParams
from core.http.types import (
    BoolStr,
    Enum,
    MbType,
    NameStr,
    NonBlankDescriptionStr,
    NonBlankStr,
    PositiveInt,
)


def _color(value: str) -> str:
    if not COLOR.match(value):
        raise ValueError("not a hex color")
    return value


Color = Annotated[
    str, Field(strict=True), AfterValidator(_color),
    MbType("value must be a string that matches the regex `^#[0-9A-Fa-f]{6}$`.",
           ("should be a string matching the regex ^#[0-9A-Fa-f]{6}$",)),
]

Model = Enum("card", "dataset", "metric", "collection", "dashboard", "pulse", "snippet", "timeline", "document",
             "no_models")
PinnedState = Enum("all", "is_pinned", "is_not_pinned")
SortColumn = Enum("name", "last_edited_at", "last_edited_by", "model")
SortDirection = Enum("asc", "desc")
AuthorityLevel = Enum("official")


class CollectionId(Params):
    id: PositiveInt


class ListQuery(Params):
    archived: BoolStr | None = None
    exclude_other_user_collections: BoolStr | None = Field(None, alias="exclude-other-user-collections")
    namespace: NonBlankStr | None = None
    personal_only: BoolStr | None = Field(None, alias="personal-only")


class TreeQuery(Params):
    exclude_archived: BoolStr | None = Field(None, alias="exclude-archived")
    exclude_other_user_collections: BoolStr | None = Field(None, alias="exclude-other-user-collections")
    namespace: NonBlankStr | None = None
    shallow: BoolStr | None = None
    collection_id: PositiveInt | None = Field(None, alias="collection-id")


class NamespaceQuery(Params):
    namespace: NonBlankStr | None = None


class ItemsQuery(PagingParams):
    models: list[Model] | None = None
    archived: BoolStr | None = None
    pinned_state: PinnedState | None = None
    sort_column: SortColumn | None = None
    sort_direction: SortDirection | None = None
    official_collections_first: BoolStr | None = None
    show_dashboard_questions: BoolStr | None = None


class RootItemsQuery(ItemsQuery):
    namespace: NonBlankStr | None = None


class CreateBody(Params):
    name: NameStr
    description: NonBlankDescriptionStr | None = None
    parent_id: PositiveInt | None = None
    namespace: NonBlankStr | None = None
    authority_level: AuthorityLevel | None = None
    color: Color | None = None


class UpdateBody(Params):
    name: NameStr | None = None
    description: NonBlankDescriptionStr | None = None
    archived: BoolStr | None = None
    parent_id: PositiveInt | None = None
    authority_level: AuthorityLevel | None = None
    color: Color | None = None
