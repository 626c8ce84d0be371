"""Request models of /api/database."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from core.http.api import Params
from core.http.types import (
    Bool,
    BoolStr,
    DescriptionStr,
    Enum,
    Map,
    MbType,
    NameStr,
    NonBlankStr,
    StoredPositiveInt,
    Str,
)

# A 32-bit column on every app-DB backend.
CacheTtl = Annotated[int, Field(strict=False, gt=0, le=2**31 - 1),
                     MbType("value must be an integer greater than zero.", ("should be a positive int",))]


class DatabaseId(Params):
    id: StoredPositiveInt


class SchemaPath(Params):
    id: StoredPositiveInt
    schema_name: Str


class ListQuery(Params):
    include: Enum("tables", nullable=True) = None
    saved: Bool | None = None
    include_editable_data_model: Bool | None = None
    exclude_uneditable_details: Bool | None = None
    include_only_uploadable: Bool | None = None
    include_analytics: Bool | None = None


class GetQuery(Params):
    include: Enum("tables", "tables.fields", nullable=True) = None
    include_editable_data_model: Bool | None = None
    exclude_uneditable_details: Bool | None = None


class MetadataQuery(Params):
    include_hidden: BoolStr | None = None
    include_editable_data_model: BoolStr | None = None
    remove_inactive: BoolStr | None = None
    skip_fields: BoolStr | None = None


class SchemaQuery(Params):
    include_hidden: Bool | None = None
    include_editable_data_model: Bool | None = None


class EditableQuery(Params):
    include_editable_data_model: Bool | None = None


class AutocompleteQuery(Params):
    prefix: NonBlankStr | None = None
    substring: NonBlankStr | None = None


class NewDatabase(Params):
    name: NameStr
    engine: NonBlankStr
    details: Map
    is_full_sync: Bool | None = None
    is_on_demand: Bool | None = None
    schedules: Map | None = None
    auto_run_queries: Bool | None = None
    cache_ttl: CacheTtl | None = None
    refingerprint: Bool | None = None
    description: DescriptionStr | None = None
    caveats: Str | None = None
    points_of_interest: Str | None = None
    settings: Map | None = None


class DatabaseUpdate(Params):
    engine: NonBlankStr | None = None
    schedules: Map | None = None
    refingerprint: Bool | None = None
    points_of_interest: Str | None = None
    description: DescriptionStr | None = None
    auto_run_queries: Bool | None = None
    name: NameStr | None = None
    settings: Map | None = None
    caveats: Str | None = None
    is_full_sync: Any = None
    is_on_demand: Any = None
    cache_ttl: CacheTtl | None = None
    details: Map | None = None


class Validate(Params):
    engine: NonBlankStr
    details: Map


class DeleteQuery(Params):
    include_editable_data_model: Bool | None = None
    include_hidden: Bool | None = None
