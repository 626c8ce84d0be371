"""/api/dataset: ad-hoc queries, downloads, the SQL of an MBQL query, durations, pivot tables and
parameter values. The running itself is core.query.processor's."""
from core import hookimpl

from .views import dataset_api


@hookimpl
def register_routes():
    return [dataset_api]
