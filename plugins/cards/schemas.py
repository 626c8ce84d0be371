"""Request models of /api/card."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, RootModel

from core.export.response import ExportFormat
from core.http import types as t
from core.http.api import Params, as_sent
from core.query.shapes import DatasetQuery

CardType = t.Enum("question", "model", "metric", nullable=True)
ListFilter = t.Enum("all", "mine", "bookmarked", "database", "table", "using_model", "using_segment", "archived",
                    nullable=True)
Parameters = list[dict[str, Any]] | None


def _keys_present(*keys: str):
    def check(value: list) -> list:
        for item in value:
            if any(k not in item for k in keys):
                raise ValueError(f"missing {', '.join(keys)}")
        return value
    return check


# The spec's card parameter shapes: maps with :id and :type; mappings with :parameter_id and :target.
CardParameters = Annotated[
    list[dict[str, Any]], AfterValidator(_keys_present("id", "type")),
    t.MbType("nullable sequence of parameter must be a map with :id and :type keys",
             ("should be a sequence of maps with :id and :type keys",)),
] | None
CardParameterMappings = Annotated[
    list[dict[str, Any]], AfterValidator(_keys_present("parameter_id", "target")),
    t.MbType("nullable sequence of parameter_mapping must be a map with :parameter_id and :target keys",
             ("should be a sequence of maps with :parameter_id and :target keys",)),
] | None


class CardId(Params):
    id: t.PositiveInt


class AdhocQuery(RootModel[as_sent(DatasetQuery)]):
    """POST /api/card/related: the body is a dataset_query."""


class ParamPath(Params):
    id: t.PositiveInt
    param_key: t.NonBlankStr


class ParamSearchPath(ParamPath):
    query: t.NonBlankStr


class ExportPath(Params):
    id: t.PositiveInt
    export_format: ExportFormat


class ListQuery(Params):
    f: ListFilter = None
    model_id: t.PositiveInt | None = None


class GetQuery(Params):
    ignore_view: t.Bool | None = None


class SeriesQuery(Params):
    last_cursor: t.PositiveInt | None = None
    query: t.NonBlankStr | None = None
    exclude_ids: list[t.PositiveInt] | None = None


class CardFields(Params):
    """The fields POST and PUT share; a GET body posted back carries read-only keys, which are ignored."""

    description: t.DescriptionStr | None = None
    type: CardType = None
    dataset: t.Bool | None = None
    parameters: CardParameters = None
    parameter_mappings: CardParameterMappings = None
    collection_id: t.PositiveInt | None = None
    collection_position: t.PositiveInt | None = None
    result_metadata: list[dict[str, Any]] | None = None
    cache_ttl: t.PositiveInt | None = None
    collection_preview: t.Bool | None = None


class CardCreate(CardFields):
    name: t.NameStr
    display: t.NonBlankStr
    dataset_query: as_sent(DatasetQuery)
    visualization_settings: t.Map


class CardUpdate(CardFields):
    name: t.NameStr | None = None
    display: t.NonBlankStr | None = None
    dataset_query: as_sent(DatasetQuery) | None = None
    visualization_settings: t.Map | None = None
    archived: t.Bool | None = None
    enable_embedding: t.Bool | None = None
    embedding_params: t.Map | None = None


class MoveCards(Params):
    card_ids: list[t.PositiveInt]
    collection_id: t.PositiveInt | None = None


class QueryBody(Params):
    parameters: Parameters = None
    ignore_cache: t.Bool | None = None
    dashboard_id: t.PositiveInt | None = None
    collection_preview: t.Bool | None = None


class ExportBody(Params):
    parameters: Parameters = None
    format_rows: t.Bool | None = None
    pivot_results: t.Bool | None = None


class SchemaPath(Params):
    schema_name: t.NonBlankStr = Field(alias="schema")


class FieldRefPath(Params):
    """A field reference spelled into the path, `field,<name>,<options JSON>`: Metabase ignores both parts."""

    field_name: str
    options: str


class AutocompleteQuery(Params):
    query: t.NonBlankStr


class UploadForm(Params):
    collection_id: t.PositiveInt | None = None
