"""/api/dashboard endpoints that read data: dashcard queries, downloads and pivots, filter values,
linked-filter fields and query metadata. Parse, call one service function, return what it gives."""
from flask import request

from core.appdb import db
from core.export.response import ChartQuery, chart_options
from core.http import auth

from . import links, metadata, params, queries
from . import query_schemas as s
from .blueprint import dashboard_api as api


def _ids(path) -> tuple[int, int, int]:
    return path.dashboard_id, path.dashcard_id, path.card_id


@api.post("/<dashboard_id>/dashcard/<dashcard_id>/card/<card_id>/query", path=s.DashcardPath,
          body=s.DashcardQuery, status=202)
def dashcard_query(path, body):
    """Run a dashboard's card with the dashboard's filter values: 202 with results, as a card query."""
    return queries.run(db.session(), auth.require_user(), _ids(path), body.parameters, bool(body.ignore_cache))


@api.post("/<dashboard_id>/dashcard/<dashcard_id>/card/<card_id>/query/<export_format>",
          path=s.DashcardExportPath, query=ChartQuery, body=s.DashcardExport, form_posts=True)
def dashcard_export(path, query, body):
    """Download a dashboard card's results with the dashboard's filter values, or its chart as
    png/svg/pdf (parameters may come as a form field holding JSON; width, height, theme and scale in the
    query string size and colour a chart)."""
    options = {"format_rows": bool(body.format_rows), "pivot_results": bool(body.pivot_results),
               "csv_include_bom": False, **chart_options(query)}
    return queries.export(db.session(), auth.require_user(), auth.tessera().exporters, _ids(path),
                          path.export_format, body.parameters, options)


@api.post("/pivot/<dashboard_id>/dashcard/<dashcard_id>/card/<card_id>/query", path=s.DashcardPath,
          body=s.DashcardQuery, status=202)
def dashcard_pivot(path, body):
    """Run a dashboard's card as a pivot table with the dashboard's filter values."""
    return queries.pivot(db.session(), auth.require_user(), _ids(path), body.parameters)


def _constraints(param_key: str) -> dict[str, list[str]]:
    """The other filters' values: `<parameter id>=<value>` pairs of the query string, repeated for lists."""
    return {key: request.args.getlist(key) for key in request.args if key != param_key}


@api.get("/<id>/params/<param_key>/values", path=s.ParamPath)
def param_values(path):
    """The values a dashboard filter can take (at most 1000), restricted by other filters' values."""
    return params.values(db.session(), auth.require_user(), path.id, path.param_key, _constraints(path.param_key))


@api.get("/<id>/params/<param_key>/search/<query>", path=s.ParamSearchPath)
def param_search(path):
    """The values of a dashboard filter containing the text (at most 1000)."""
    return params.values(db.session(), auth.require_user(), path.id, path.param_key, _constraints(path.param_key),
                         path.query)


@api.get("/<id>/params/<param_key>/remapping", path=s.ParamPath, query=s.RemappingQuery)
def param_remapping(path, query):
    """A filter value and its label: [value, label], or [value] when it has none."""
    return params.remapping(db.session(), auth.require_user(), path.id, path.param_key, query.value)


@api.get("/params/valid-filter-fields", query=s.ValidFilterFields)
def valid_filter_fields(query):
    """For each filtered field, the filtering fields a linked filter can use (same table or joined
    through foreign keys)."""
    return links.valid_filter_fields(db.session(), auth.require_user(), query.filtered, query.filtering or [])


@api.get("/<id>/query_metadata", path=s.DashboardId, query=s.MetadataQuery)
def query_metadata(path, query):
    """The databases, tables and fields the dashboard's cards need, in one answer."""
    return metadata.query_metadata(db.session(), auth.require_user(), path.id)
