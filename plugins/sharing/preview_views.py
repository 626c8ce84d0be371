"""/api/preview-embed: how an embed will look, for an administrator deciding on it (API-SPEC "Embedding
preview"). The same token and shapes as /api/embed, except that the object's enable_embedding is ignored,
the parameter rules come from the token's `_embedding_params`, every result is capped at 2,000 rows,
and downloads also come as pdf and png (the chart, drawn by core.charts through the registered exporters).
"""
from __future__ import annotations

from typing import Any

from core.appdb import db
from core.http import types as t
from core.http.api import Api, Params

from . import embedding
from . import preview as posted
from .embed_views import DashcardPath, ParamPath, RemapQuery, TokenPath, ValuesQuery, url_params
from .embedding import Ref

preview_api = Api("preview_embed", __name__, url_prefix="/preview-embed", auth="superuser")

EXPORT_FORMATS = ("csv", "json", "xlsx", "pdf", "png")


class CardExportPath(TokenPath):
    export_format: t.Enum(*EXPORT_FORMATS)


class DashcardExportPath(Params):
    dashboard_id: t.PositiveInt
    dashcard_id: t.PositiveInt
    card_id: t.PositiveInt
    export_format: t.Enum(*EXPORT_FORMATS)


class ExportBody(Params):
    """`parameters`: slug -> value (a JSON object, or its text from a form), or a list of {slug | id, value}."""

    parameters: Any = None
    format_rows: t.BoolStr = False
    pivot_results: t.BoolStr = False


class DashcardExportBody(ExportBody):
    token: t.NonBlankStr


def options(body: ExportBody) -> dict:
    return {"format_rows": body.format_rows, "pivot_results": body.pivot_results}


def preview(token: str, model: str) -> Ref:
    return Ref(token, model, preview=True)


@preview_api.get("/card/<token>", path=TokenPath)
def card(path: TokenPath):
    """The card as its embed would show it, with the token's parameter rules."""
    return embedding.object_json(db.session(), preview(path.token, "card"))


@preview_api.get("/card/<token>/query", path=TokenPath, query=ValuesQuery)
def card_query(path: TokenPath, query: ValuesQuery):
    """Run the card as its embed would (at most 2,000 rows)."""
    return embedding.run(db.session(), preview(path.token, "card"), url_params())


@preview_api.post("/card/<token>/query/export/<export_format>", path=CardExportPath, body=ExportBody,
                  form_posts=True)
def card_export(path: CardExportPath, body: ExportBody):
    """The previewed card's results (at most 2,000 rows) as csv, json, xlsx, or its chart as pdf or png."""
    return posted.export(db.session(), preview(path.token, "card"), body.parameters, path.export_format,
                                    options(body))


@preview_api.get("/dashboard/<token>", path=TokenPath)
def dashboard(path: TokenPath):
    """The dashboard as its embed would show it, with the token's parameter rules."""
    return embedding.object_json(db.session(), preview(path.token, "dashboard"))


@preview_api.get("/dashboard/<token>/dashcard/<dashcard_id>/card/<card_id>", path=DashcardPath, query=ValuesQuery)
def dashcard_query(path: DashcardPath, query: ValuesQuery):
    """Run one card of the previewed dashboard (at most 2,000 rows)."""
    return embedding.run(db.session(), preview(path.token, "dashboard"), url_params(),
                         dashcard_id=path.dashcard_id, card_id=path.card_id)


@preview_api.post("/dashboard/<dashboard_id>/dashcard/<dashcard_id>/card/<card_id>/export/<export_format>",
                  path=DashcardExportPath, body=DashcardExportBody, form_posts=True)
def dashcard_export(path: DashcardExportPath, body: DashcardExportBody):
    """One card of the previewed dashboard as a file; the body's token must name this dashboard."""
    return posted.export(db.session(), preview(body.token, "dashboard"), body.parameters,
                                    path.export_format, options(body), dashboard_id=path.dashboard_id,
                                    dashcard_id=path.dashcard_id, card_id=path.card_id)


@preview_api.get("/dashboard/<token>/params/<param_key>/values", path=ParamPath, query=ValuesQuery)
def dashboard_param_values(path: ParamPath, query: ValuesQuery):
    """Values of an enabled filter of the previewed dashboard."""
    return embedding.param_values(db.session(), preview(path.token, "dashboard"), path.param_key, url_params())


@preview_api.get("/dashboard/<token>/params/<param_key>/remapping", path=ParamPath, query=RemapQuery)
def dashboard_param_remapping(path: ParamPath, query: RemapQuery):
    """The display value of a value of an enabled filter of the previewed dashboard."""
    return embedding.param_remapping(db.session(), preview(path.token, "dashboard"), path.param_key, query.value)


@preview_api.get("/pivot/card/<token>/query", path=TokenPath, query=ValuesQuery)
def pivot_card_query(path: TokenPath, query: ValuesQuery):
    """Run the previewed card as a pivot table."""
    return embedding.run(db.session(), preview(path.token, "card"), url_params(), pivot=True)


@preview_api.get("/pivot/dashboard/<token>/dashcard/<dashcard_id>/card/<card_id>", path=DashcardPath,
                 query=ValuesQuery)
def pivot_dashcard_query(path: DashcardPath, query: ValuesQuery):
    """Run one card of the previewed dashboard as a pivot table."""
    return embedding.run(db.session(), preview(path.token, "dashboard"), url_params(),
                         dashcard_id=path.dashcard_id, card_id=path.card_id, pivot=True)


class PivotBody(Params):
    """`parameters` as for a download; when absent, the query string's values are used."""

    parameters: Any = None


@preview_api.post("/pivot/card/<token>/query", path=TokenPath, query=ValuesQuery, body=PivotBody)
def pivot_card_query_post(path: TokenPath, query: ValuesQuery, body: PivotBody):
    """Run the previewed card as a pivot table (POST, as newer clients send it)."""
    return posted.run_posted(db.session(), preview(path.token, "card"), body.parameters, url_params(), pivot=True)


@preview_api.post("/pivot/dashboard/<token>/dashcard/<dashcard_id>/card/<card_id>", path=DashcardPath,
                  query=ValuesQuery, body=PivotBody)
def pivot_dashcard_query_post(path: DashcardPath, query: ValuesQuery, body: PivotBody):
    """Run one card of the previewed dashboard as a pivot table (POST)."""
    return posted.run_posted(db.session(), preview(path.token, "dashboard"), body.parameters, url_params(),
                                dashcard_id=path.dashcard_id, card_id=path.card_id, pivot=True)
