"""/api/embed: a card or dashboard opened by a signed token in the path (API-SPEC "Embedding").

Open to anyone: the token is the authorization (plugins.sharing.embedding checks it). Parameter values
come from the query string, `slug=value` (repeated for a list) or one `parameters=<json object>`.
"""
from __future__ import annotations

from flask import request

from core.appdb import db
from core.export.response import ChartQuery, ExportFormat, chart_options
from core.http import types as t
from core.http.api import Api, Params

from . import embed_params, embedding
from .embedding import Ref

embed_api = Api("embed", __name__, url_prefix="/embed", auth="public")


class TokenPath(Params):
    token: t.NonBlankStr


class DashcardPath(TokenPath):
    dashcard_id: t.PositiveInt
    card_id: t.PositiveInt


class CardExportPath(TokenPath):
    export_format: ExportFormat


class DashcardExportPath(DashcardPath):
    export_format: ExportFormat


class FieldPath(TokenPath):
    field_id: t.PositiveInt


class SearchPath(FieldPath):
    search_field_id: t.PositiveInt


class RemapPath(FieldPath):
    remapped_id: t.PositiveInt


class ParamPath(TokenPath):
    param_key: t.NonBlankStr


class ParamSearchPath(ParamPath):
    prefix: t.NonBlankStr


class ValuesQuery(Params):
    """Parameter values: any `slug=value` pair, or `parameters`, a JSON object of slug -> value."""

    parameters: t.Str | None = None


class ExportQuery(ValuesQuery, ChartQuery):
    format_rows: t.Bool = False
    pivot_results: t.Bool = False


class SearchQuery(Params):
    value: t.NonBlankStr
    limit: t.PositiveInt | None = None


class RemapQuery(Params):
    value: t.NonBlankStr


def url_params() -> dict:
    """The parameter values of this request's query string (embed_params.user_params)."""
    return embed_params.user_params(request.args.lists(), request.args.get("parameters"))


def options(query: ExportQuery) -> dict:
    return {"format_rows": query.format_rows, "pivot_results": query.pivot_results, **chart_options(query)}


# --------------------------------------------------------------------------------------------------
# Cards
# --------------------------------------------------------------------------------------------------


@embed_api.get("/card/<token>", path=TokenPath)
def card(path: TokenPath):
    """The embedded card, without the parameters its viewer cannot set."""
    return embedding.object_json(db.session(), Ref(path.token, "card"))


@embed_api.get("/card/<token>/query", path=TokenPath, query=ValuesQuery)
def card_query(path: TokenPath, query: ValuesQuery):
    """Run the embedded card with the token's and the URL's parameter values."""
    return embedding.run(db.session(), Ref(path.token, "card"), url_params())


@embed_api.get("/card/<token>/query/<export_format>", path=CardExportPath, query=ExportQuery)
def card_export(path: CardExportPath, query: ExportQuery):
    """The embedded card's results as a file (csv, json, xlsx, api) or its chart (png, svg, pdf)."""
    return embedding.export(db.session(), Ref(path.token, "card"), url_params(), path.export_format, options(query))


@embed_api.get("/card/<token>/field/<field_id>/values", path=FieldPath)
def card_field_values(path: FieldPath):
    """Values of a field the embedded card uses."""
    return embedding.field_values(db.session(), Ref(path.token, "card"), path.field_id)


@embed_api.get("/card/<token>/field/<field_id>/search/<search_field_id>", path=SearchPath, query=SearchQuery)
def card_field_search(path: SearchPath, query: SearchQuery):
    """Search the values of a field the embedded card uses."""
    return embedding.field_search(db.session(), Ref(path.token, "card"), path.field_id, path.search_field_id,
                                  query.value, query.limit)


@embed_api.get("/card/<token>/field/<field_id>/remapping/<remapped_id>", path=RemapPath, query=RemapQuery)
def card_field_remapping(path: RemapPath, query: RemapQuery):
    """The display value of a value of a field the embedded card uses."""
    return embedding.field_remapping(db.session(), Ref(path.token, "card"), path.field_id, path.remapped_id,
                                     query.value)


@embed_api.get("/card/<token>/params/<param_key>/values", path=ParamPath)
def card_param_values(path: ParamPath):
    """Values of an enabled parameter of the embedded card."""
    return embedding.param_values(db.session(), Ref(path.token, "card"), path.param_key, {})


@embed_api.get("/card/<token>/params/<param_key>/search/<prefix>", path=ParamSearchPath)
def card_param_search(path: ParamSearchPath):
    """Values of an enabled parameter of the embedded card matching `prefix`."""
    return embedding.param_values(db.session(), Ref(path.token, "card"), path.param_key, {}, path.prefix)


@embed_api.get("/pivot/card/<token>/query", path=TokenPath, query=ValuesQuery)
def pivot_card_query(path: TokenPath, query: ValuesQuery):
    """Run the embedded card as a pivot table."""
    return embedding.run(db.session(), Ref(path.token, "card"), url_params(), pivot=True)


# --------------------------------------------------------------------------------------------------
# Dashboards
# --------------------------------------------------------------------------------------------------


@embed_api.get("/dashboard/<token>", path=TokenPath)
def dashboard(path: TokenPath):
    """The embedded dashboard, without the parameters its viewer cannot set."""
    return embedding.object_json(db.session(), Ref(path.token, "dashboard"))


@embed_api.get("/dashboard/<token>/dashcard/<dashcard_id>/card/<card_id>", path=DashcardPath, query=ValuesQuery)
def dashcard_query(path: DashcardPath, query: ValuesQuery):
    """Run one card of the embedded dashboard."""
    return embedding.run(db.session(), Ref(path.token, "dashboard"), url_params(),
                         dashcard_id=path.dashcard_id, card_id=path.card_id)


@embed_api.get("/dashboard/<token>/dashcard/<dashcard_id>/card/<card_id>/<export_format>", path=DashcardExportPath,
               query=ExportQuery)
def dashcard_export(path: DashcardExportPath, query: ExportQuery):
    """One card of the embedded dashboard's results as a file, or its chart (png, svg, pdf)."""
    return embedding.export(db.session(), Ref(path.token, "dashboard"), url_params(), path.export_format,
                            options(query), dashcard_id=path.dashcard_id, card_id=path.card_id)


@embed_api.get("/dashboard/<token>/field/<field_id>/values", path=FieldPath)
def dashboard_field_values(path: FieldPath):
    """Values of a field a filter of the embedded dashboard uses."""
    return embedding.field_values(db.session(), Ref(path.token, "dashboard"), path.field_id)


@embed_api.get("/dashboard/<token>/field/<field_id>/search/<search_field_id>", path=SearchPath, query=SearchQuery)
def dashboard_field_search(path: SearchPath, query: SearchQuery):
    """Search the values of a field the embedded dashboard uses."""
    return embedding.field_search(db.session(), Ref(path.token, "dashboard"), path.field_id, path.search_field_id,
                                  query.value, query.limit)


@embed_api.get("/dashboard/<token>/field/<field_id>/remapping/<remapped_id>", path=RemapPath, query=RemapQuery)
def dashboard_field_remapping(path: RemapPath, query: RemapQuery):
    """The display value of a value of a field the embedded dashboard uses."""
    return embedding.field_remapping(db.session(), Ref(path.token, "dashboard"), path.field_id, path.remapped_id,
                                     query.value)


@embed_api.get("/dashboard/<token>/params/<param_key>/values", path=ParamPath, query=ValuesQuery)
def dashboard_param_values(path: ParamPath, query: ValuesQuery):
    """Values of an enabled filter of the embedded dashboard, narrowed by the other filters' values
    (query string keyed by parameter id)."""
    return embedding.param_values(db.session(), Ref(path.token, "dashboard"), path.param_key, url_params())


@embed_api.get("/dashboard/<token>/params/<param_key>/search/<prefix>", path=ParamSearchPath, query=ValuesQuery)
def dashboard_param_search(path: ParamSearchPath, query: ValuesQuery):
    """Values of an enabled filter of the embedded dashboard matching `prefix`."""
    return embedding.param_values(db.session(), Ref(path.token, "dashboard"), path.param_key, url_params(),
                                  path.prefix)


@embed_api.get("/dashboard/<token>/params/<param_key>/remapping", path=ParamPath, query=RemapQuery)
def dashboard_param_remapping(path: ParamPath, query: RemapQuery):
    """The display value of a value of an enabled filter of the embedded dashboard."""
    return embedding.param_remapping(db.session(), Ref(path.token, "dashboard"), path.param_key, query.value)


@embed_api.get("/pivot/dashboard/<token>/dashcard/<dashcard_id>/card/<card_id>", path=DashcardPath,
               query=ValuesQuery)
def pivot_dashcard_query(path: DashcardPath, query: ValuesQuery):
    """Run one card of the embedded dashboard as a pivot table."""
    return embedding.run(db.session(), Ref(path.token, "dashboard"), url_params(),
                         dashcard_id=path.dashcard_id, card_id=path.card_id, pivot=True)
