"""/api/metric: Metabase's legacy metrics (an aggregation with an optional filter on one table), kept for
old clients' CRUD and revisions. The MBQL `metric` clause names metric cards instead (core.query.macros)."""
from core import hookimpl

from .views import metric_api


@hookimpl
def register_routes():
    return [metric_api]
