"""Request models of /api/table."""
from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, RootModel

from core.http.api import Params
from core.http.types import (
    Bool,
    BoolStr,
    DescriptionStr,
    Enum,
    MbType,
    NameStr,
    StoredPositiveInt,
    Str,
)


def _entity_type(value):
    # Metabase accepts the keyword form (":entity/GenericTable") as well as the string.
    if isinstance(value, str) and value.startswith(":"):
        value = value[1:]
    if value is not None and (not isinstance(value, str) or not value.startswith("entity/") or len(value) <= 7):
        raise ValueError("not an entity type")
    return value


EntityType = Annotated[
    str | None, BeforeValidator(_entity_type),
    MbType("value must be a valid entity type (keyword or string).", ("should be a valid entity type",)),
]
VisibilityType = Enum("technical", "hidden", "cruft", nullable=True)
FieldOrder = Enum("alphabetical", "custom", "database", "smart", nullable=True)


class TableId(Params):
    id: StoredPositiveInt


class QueryMetadataQuery(Params):
    include_sensitive_fields: BoolStr | None = None
    include_hidden_fields: BoolStr | None = None
    include_editable_data_model: BoolStr | None = None


class EditableQuery(Params):
    include_editable_data_model: Bool | None = None


class TableUpdate(Params):
    display_name: NameStr | None = None
    entity_type: EntityType = None
    visibility_type: VisibilityType = None
    field_order: FieldOrder = None
    description: DescriptionStr | None = None
    caveats: Str | None = None
    points_of_interest: Str | None = None
    show_in_getting_started: Bool | None = None


class TablesUpdate(Params):
    ids: list[StoredPositiveInt]
    display_name: NameStr | None = None
    entity_type: EntityType = None
    visibility_type: VisibilityType = None
    description: DescriptionStr | None = None
    caveats: Str | None = None
    points_of_interest: Str | None = None
    show_in_getting_started: Bool | None = None


class FieldOrderBody(RootModel[list[StoredPositiveInt]]):
    pass
