"""The query log: a hookwrapper around execute_query that records every run (query_execution) and
keeps each query hash's average running time (query), which /api/dataset/duration and cached-result
decisions read. Failed runs are logged with their error."""
from core import hookimpl

from . import service


@hookimpl(wrapper=True)
def execute_query(context):
    try:
        result = yield
    except Exception as exc:
        service.record(context, None, error=exc)
        raise
    result.on_close(lambda done: service.record(context, done))
    return result
