"""/api/segment and /api/metric: named MBQL definitions on one table. Segments are saved filters (the
MBQL `segment` clause expands them, core.query.macros); legacy metrics (an aggregation with an optional
filter) are kept for old clients' CRUD and revisions, the MBQL `metric` clause naming metric cards
instead. Both share one lifecycle (logic.py) and one set of request shapes (schemas.py).

Before this package they were the plugins `plugins.segments` and `plugins.metrics`; those names still
disable it (core.assembly.plugins.PLUGIN_ALIASES).
"""
from core import Revisable, hookimpl

from . import metrics, segments
from .metric_views import metric_api
from .segment_views import segment_api


@hookimpl
def register_routes():
    return [segment_api, metric_api]


@hookimpl
def register_revisables():
    # "metric" is the legacy metric (Metabase before 0.50); metric cards are "card".
    return [Revisable("segment", segments.revisions, segments.revert),
            Revisable("metric", metrics.revisions, metrics.revert)]
