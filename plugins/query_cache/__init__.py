"""The result cache: a tryfirst execute_query that answers from stored results while they are fresh,
and a hookwrapper that stores a completed result's encoded body once the processor has built it.

Metabase's legacy rules: caching is on when `enable-query-caching` is; the time to live is the
card's or the database's cache_ttl (hours) when set, else the query's average running time times
`query-caching-ttl-ratio`, and only queries averaging at least `query-caching-min-ttl` seconds are
cached. Ad-hoc queries (POST /api/dataset) and downloads are never cached; ignore_cache skips it.
"""
from core import SettingDef, hookimpl

from . import service


@hookimpl
def register_settings():
    return [
        SettingDef("enable-query-caching", default=False, type="boolean", visibility="authenticated",
                   description="Cache the results of slow queries."),
        SettingDef("query-caching-ttl-ratio", default=10, type="integer", visibility="admin",
                   description="Results are kept this many times as long as the query takes to run."),
        SettingDef("query-caching-min-ttl", default=60, type="double", visibility="admin",
                   description="Only queries taking at least this many seconds on average are cached."),
        SettingDef("query-caching-max-kb", default=2000, type="integer", visibility="admin",
                   description="Results larger than this many kilobytes are not cached."),
    ]


@hookimpl(tryfirst=True, specname="execute_query")
def answer_from_cache(context):
    return service.cached_result(context)


@hookimpl(wrapper=True, specname="execute_query")
def fill_cache(context):
    result = yield
    service.fill_on_body(context, result)
    return result
