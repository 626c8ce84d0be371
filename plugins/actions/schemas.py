"""Request models of /api/action and the dashcard execute routes: Metabase's action schema (a closed
HTTP template, jq handles checked when the action is saved, implicit kinds and action types as enums)."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field

from core.http import types as t
from core.http.api import Params, as_sent
from core.query.shapes import DatasetQuery

from . import jq_handles

JSON_QUERY_TEXT = "value must be a valid json-query, something like '.item.title'"
JsonQuery = Annotated[str, Field(strict=True), AfterValidator(jq_handles.check),
                      t.MbType(JSON_QUERY_TEXT, ("must be a valid json-query, something like '.item.title'",))] | None
ActionType = Annotated[t.Enum("http", "query", "implicit"),
                       t.MbType("Unsupported action type", ("Unsupported action type",))] | None
ImplicitKind = Annotated[t.Enum("row/create", "row/update", "row/delete", "bulk/create", "bulk/update", "bulk/delete"),
                         t.MbType("Unsupported implicit action kind", ("Unsupported implicit action kind",))] | None
Method = t.Enum("GET", "POST", "PUT", "DELETE", "PATCH")


class Template(Params):
    """An HTTP action's request: a closed map, as Metabase's schema (no other keys are allowed)."""

    model_config = ConfigDict(extra="forbid")

    method: Method
    url: t.NonBlankStr
    body: t.Str | None = None
    headers: t.Str | None = None
    parameters: list[t.Map] | None = None
    parameter_mappings: t.Map | None = None


class ActionId(Params):
    id: t.PositiveInt


class ListQuery(Params):
    model_id: t.PositiveInt | None = Field(None, alias="model-id")


class PrefillQuery(Params):
    parameters: t.JsonStr


class ActionFields(Params):
    """Every field an action may be saved with (POST requires name and model_id)."""

    description: t.DescriptionStr | None = None
    type: ActionType = None
    database_id: t.PositiveInt | None = None
    dataset_query: as_sent(DatasetQuery) | None = None
    parameters: list[t.Map] | None = None
    parameter_mappings: t.Map | None = None
    visualization_settings: t.Map | None = None
    kind: ImplicitKind = None
    template: Template | None = None
    response_handle: JsonQuery = None
    error_handle: JsonQuery = None
    archived: t.Bool | None = None


class ActionCreate(ActionFields):
    name: t.NameStr
    model_id: t.PositiveInt


class ActionUpdate(ActionFields):
    name: t.NameStr | None = None
    model_id: t.PositiveInt | None = None


class Execute(Params):
    parameters: t.Map | None = None


class DashcardPath(Params):
    dashboard_id: t.PositiveInt
    dashcard_id: t.PositiveInt


class DashcardExecute(Params):
    parameters: t.Map | None = None
    extra_parameters: Any = None


def fields_sent(body: Params) -> dict[str, Any]:
    """The keys the client sent, with the template as a plain map."""
    out = {}
    for key in body.model_fields_set:
        value = getattr(body, key)
        out[key] = value.model_dump(exclude_unset=True) if isinstance(value, Template) else value
    return out
