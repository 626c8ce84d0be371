"""/api/public: what a public link serves to anyone, without an account. Parse, call one service
function (plugins.sharing.public), return what it gives."""
import orjson
from flask import request

from core import SharedQuery
from core.appdb import db
from core.export.response import chart_options
from core.http.api import Api, json_response

from . import public
from . import schemas as s

public_api = Api("public", __name__, url_prefix="/public", auth="public")


def _run(model: str, path, query, **ask):
    body, status = public.run(db.session(), model, path.uuid,
                              SharedQuery(public.parameters(query.parameters), **ask))
    return json_response(orjson.Fragment(body), status)


def _export(model: str, path, query, **ask):
    options = {"format_rows": bool(query.format_rows), "pivot_results": bool(query.pivot_results),
               "csv_include_bom": False, **chart_options(query)}
    return public.export(db.session(), model, path.uuid,
                         SharedQuery(public.parameters(query.parameters), options=options, **ask), path.export_format)


def _constraints(param_key: str) -> dict[str, list[str]]:
    """Other filters' values for linked filters: `<parameter id>=<value>` pairs, repeated for lists."""
    return {key: request.args.getlist(key) for key in request.args if key != param_key}


# --------------------------------------------------------------------------------------------------
# Cards
# --------------------------------------------------------------------------------------------------


@public_api.get("/card/<uuid>", path=s.UuidPath)
def card(path):
    """A public card: id, name, description, display, visualization settings, parameters and
    param_fields only (no query text, no database, no creator)."""
    return public.public_json(db.session(), "card", path.uuid)


@public_api.get("/card/<uuid>/query", path=s.UuidPath, query=s.ParametersQuery, status=202)
def card_query(path, query):
    """Run a public card with parameter values (`parameters`: a JSON list of {id | slug, value})."""
    return _run("card", path, query)


@public_api.get("/card/<uuid>/query/<export_format>", path=s.ExportPath, query=s.ExportQuery)
def card_export(path, query):
    """Download a public card's results (csv, json, xlsx, api) or its chart (png, svg, pdf)."""
    return _export("card", path, query)


@public_api.get("/pivot/card/<uuid>/query", path=s.UuidPath, query=s.ParametersQuery, status=202)
def card_pivot(path, query):
    """Run a public pivot-table card: results with the pivot's subtotal rows."""
    return _run("card", path, query, pivot=True)


@public_api.get("/card/<uuid>/field/<field_id>/values", path=s.FieldPath)
def card_field_values(path):
    """The values of a field the card uses (any other field: 404)."""
    return public.field_values(db.session(), "card", path.uuid, path.field_id)


@public_api.get("/card/<uuid>/field/<field_id>/search/<search_field_id>", path=s.SearchPath, query=s.SearchQuery)
def card_field_search(path, query):
    """Values of a field the card uses whose search field starts with `value`."""
    return public.field_search(db.session(), "card", path.uuid, path.field_id, path.search_field_id, query.value,
                               query.limit)


@public_api.get("/card/<uuid>/field/<field_id>/remapping/<remapped_id>", path=s.RemappingPath, query=s.ValueQuery)
def card_field_remapping(path, query):
    """A value of a field the card uses and its remapped display value."""
    return public.field_remapping(db.session(), "card", path.uuid, path.field_id, path.remapped_id, query.value)


@public_api.get("/card/<uuid>/params/<param_key>/values", path=s.ParamPath)
def card_param_values(path):
    """The values a public card's filter can take."""
    return public.param_values(db.session(), "card", path.uuid, path.param_key, {})


@public_api.get("/card/<uuid>/params/<param_key>/search/<query>", path=s.ParamSearchPath)
def card_param_search(path):
    """The values of a public card's filter containing the text."""
    return public.param_values(db.session(), "card", path.uuid, path.param_key, {}, path.query)


# --------------------------------------------------------------------------------------------------
# Dashboards
# --------------------------------------------------------------------------------------------------


@public_api.get("/dashboard/<uuid>", path=s.UuidPath)
def dashboard(path):
    """A public dashboard: its filters, tabs and dashcards with their cards as a public card shows them."""
    return public.public_json(db.session(), "dashboard", path.uuid)


@public_api.get("/dashboard/<uuid>/dashcard/<dashcard_id>/card/<card_id>", path=s.DashcardPath,
                query=s.ParametersQuery, status=202)
def dashcard_query(path, query):
    """Run a card of a public dashboard (a dashcard of another dashboard, or a card not on it: 404)."""
    return _run("dashboard", path, query, dashcard_id=path.dashcard_id, card_id=path.card_id)


@public_api.get("/dashboard/<uuid>/dashcard/<dashcard_id>/card/<card_id>/<export_format>",
                path=s.DashcardExportPath, query=s.ExportQuery)
def dashcard_export(path, query):
    """Download a public dashboard card's results (csv, json, xlsx, api) or its chart (png, svg, pdf)."""
    return _export("dashboard", path, query, dashcard_id=path.dashcard_id, card_id=path.card_id)


@public_api.get("/pivot/dashboard/<uuid>/dashcard/<dashcard_id>/card/<card_id>", path=s.DashcardPath,
                query=s.ParametersQuery, status=202)
def dashcard_pivot(path, query):
    """Run a pivot-table card of a public dashboard."""
    return _run("dashboard", path, query, dashcard_id=path.dashcard_id, card_id=path.card_id, pivot=True)


@public_api.get("/dashboard/<uuid>/field/<field_id>/values", path=s.FieldPath)
def dashboard_field_values(path):
    """The values of a field a dashboard filter is wired to (any other field: 404)."""
    return public.field_values(db.session(), "dashboard", path.uuid, path.field_id)


@public_api.get("/dashboard/<uuid>/field/<field_id>/search/<search_field_id>", path=s.SearchPath,
                query=s.SearchQuery)
def dashboard_field_search(path, query):
    """Values of a filter's field whose search field starts with `value`."""
    return public.field_search(db.session(), "dashboard", path.uuid, path.field_id, path.search_field_id,
                               query.value, query.limit)


@public_api.get("/dashboard/<uuid>/field/<field_id>/remapping/<remapped_id>", path=s.RemappingPath,
                query=s.ValueQuery)
def dashboard_field_remapping(path, query):
    """A value of a filter's field and its remapped display value."""
    return public.field_remapping(db.session(), "dashboard", path.uuid, path.field_id, path.remapped_id,
                                  query.value)


@public_api.get("/dashboard/<uuid>/params/<param_key>/values", path=s.ParamPath)
def dashboard_param_values(path):
    """The values a public dashboard's filter can take, restricted by other filters' values."""
    return public.param_values(db.session(), "dashboard", path.uuid, path.param_key, _constraints(path.param_key))


@public_api.get("/dashboard/<uuid>/params/<param_key>/search/<query>", path=s.ParamSearchPath)
def dashboard_param_search(path):
    """The values of a public dashboard's filter containing the text."""
    return public.param_values(db.session(), "dashboard", path.uuid, path.param_key, _constraints(path.param_key),
                               path.query)


@public_api.get("/dashboard/<uuid>/params/<param_key>/remapping", path=s.ParamPath, query=s.ValueQuery)
def dashboard_param_remapping(path, query):
    """A public dashboard filter's value and its label."""
    return public.param_remapping(db.session(), "dashboard", path.uuid, path.param_key, query.value)


# --------------------------------------------------------------------------------------------------
# oEmbed
# --------------------------------------------------------------------------------------------------


@public_api.get("/oembed", query=s.OembedQuery)
def oembed(query):
    """oEmbed for a public question or dashboard URL: an iframe of the page (format json only)."""
    return public.oembed(db.session(), query.url, query.maxheight, query.maxwidth)
