"""/api/dataset endpoints."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, WithJsonSchema

from core.appdb import db
from core.export.response import ChartQuery, ExportFormat, chart_options
from core.http import auth, jsontext
from core.http.api import Api, Params
from core.http.types import Bool, Int, MbType, NonBlankStr, PositiveInt
from core.query.shapes import DatasetQuery

from . import service

dataset_api = Api("dataset", __name__, url_prefix="/dataset")


def _json_or_map(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return value
    if not isinstance(value, str):
        raise ValueError("not a JSON string")
    try:
        return jsontext.loads(value)
    except jsontext.JsonTextError as exc:
        raise ValueError("not valid JSON") from exc


JsonOrMap = Annotated[
    Any, BeforeValidator(_json_or_map), WithJsonSchema({"type": "string", "contentMediaType": "application/json"}),
    MbType("value must be a valid JSON string.", ("should be a valid JSON string",)),
]


class QueryBody(Params):
    """A whole dataset query: database, type, query or native, parameters, constraints, ...

    As Metabase, the endpoint checks the database and leaves the rest to the query reader, whose refusal
    is a failed query (status "failed"). The document still describes the body as the dataset_query it
    is (core.query.shapes.DatasetQuery), so that the fuzzer sends queries and reaches the reader."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    database: Int | None = None

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema, handler):
        schema = handler.resolve_ref_schema(handler(core_schema))
        shape = handler.resolve_ref_schema(handler(DatasetQuery.__pydantic_core_schema__))
        return {**schema, "properties": {**shape["properties"], **schema.get("properties", {})}}

    def dataset_query(self) -> dict:
        return {**(self.model_extra or {}), "database": self.database}


class NativeBody(QueryBody):
    database: PositiveInt
    pretty: Bool | None = None


class PivotBody(QueryBody):
    pivot_rows: list[Int] | None = None
    pivot_cols: list[Int] | None = None


class ExportPath(Params):
    export_format: ExportFormat


class ExportBody(Params):
    query: JsonOrMap
    visualization_settings: JsonOrMap | None = None
    format_rows: Bool | None = None
    pivot_results: Bool | None = None
    csv_include_bom: Bool | None = None
    # The chart a png/svg/pdf download draws (a card's display); a table when absent.
    display: NonBlankStr | None = None


class ParameterValuesBody(Params):
    parameter: dict[str, Any]
    field_ids: list[PositiveInt] | None = None


class SearchPath(Params):
    query: NonBlankStr


@dataset_api.post("/", body=QueryBody, status=202)
def run(body: QueryBody):
    """Run a query (not cached) and return its results; 202, or 400 with status "failed"."""
    return service.run(db.session(), auth.require_user(), body.dataset_query())


@dataset_api.post("/native", body=NativeBody)
def native(body: NativeBody):
    """The native SQL (and parameters) an MBQL query runs as; pretty-printed unless pretty=false."""
    return service.native(db.session(), auth.require_user(), body.dataset_query(), body.pretty is not False)


@dataset_api.post("/duration", body=QueryBody)
def duration(body: QueryBody):
    """The average running time of this query, in milliseconds (0 when it never ran)."""
    return service.duration(db.session(), body.dataset_query())


@dataset_api.post("/pivot", body=PivotBody, status=202)
def pivot(body: PivotBody):
    """Run an aggregated query as a pivot table: rows for every grouping, tagged pivot-grouping."""
    query = body.dataset_query()
    return service.pivot(db.session(), auth.require_user(), query, body.pivot_rows, body.pivot_cols)


@dataset_api.post("/parameter/values", body=ParameterValuesBody)
def parameter_values(body: ParameterValuesBody):
    """The values a parameter can take, from the fields it is wired to."""
    return service.parameter_values(db.session(), auth.require_user(), body.parameter, body.field_ids or [])


@dataset_api.post("/parameter/search/<query>", path=SearchPath, body=ParameterValuesBody)
def parameter_search(path: SearchPath, body: ParameterValuesBody):
    """The values of a parameter's fields that contain the search text (case-insensitive)."""
    return service.parameter_values(db.session(), auth.require_user(), body.parameter, body.field_ids or [],
                                    search=path.query)


@dataset_api.post("/<export_format>", path=ExportPath, query=ChartQuery, body=ExportBody, form_posts=True)
def export(path: ExportPath, query: ChartQuery, body: ExportBody):
    """Download all the rows of a query as csv, json or xlsx (or the api result), streamed; or its chart
    as png/svg/pdf, drawn as the `display` field says (a table by default) with its visualization_settings."""
    options = {"visualization_settings": body.visualization_settings if isinstance(body.visualization_settings, dict)
               else {}, "format_rows": bool(body.format_rows), "pivot_results": bool(body.pivot_results),
               "csv_include_bom": bool(body.csv_include_bom), "display": body.display or "table",
               **chart_options(query)}
    return service.export(db.session(), auth.require_user(), auth.tessera().exporters, path.export_format,
                          body.query, options)
