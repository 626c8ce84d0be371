"""Row limits: the hookwrapper that sets how many rows a query may return, and its settings.

Metabase's rules (compat/core.md section 4): userland queries get 2,000 rows unaggregated and 10,000
aggregated (settings unaggregated-query-row-limit / aggregated-query-row-limit, or the query's own
`constraints`); an MBQL `limit` is honoured up to those; every query, downloads included, stops at
the absolute cap of 1,048,575 rows (the Excel sheet size less a header), which download-row-limit
may raise for csv and json but never for xlsx.
"""
from __future__ import annotations

from core.assembly.hookspecs import hookimpl
from core.assembly.records import SettingDef

DEFAULT_UNAGGREGATED = 2000
DEFAULT_AGGREGATED = 10000
ABSOLUTE_MAX = 1048575


def _positive(value):
    if value is not None and int(value) < 1:
        from core.http.errors import Invalid

        raise Invalid({"value": "value must be an integer greater than zero."})
    return value


@hookimpl
def register_settings():
    return [
        SettingDef("unaggregated-query-row-limit", default=DEFAULT_UNAGGREGATED, type="integer", visibility="authenticated",
                   validate=_positive, description="Maximum number of rows to return for unaggregated queries."),
        SettingDef("aggregated-query-row-limit", default=DEFAULT_AGGREGATED, type="integer", visibility="authenticated",
                   validate=_positive, description="Maximum number of rows to return for aggregated queries."),
        SettingDef("download-row-limit", type="integer", visibility="authenticated", validate=_positive,
                   description="Maximum rows in a csv or json download (never below 1,048,575; xlsx is capped there)."),
        SettingDef("db-query-timeout-minutes", default=20, type="integer", visibility="admin", validate=_positive,
                   description="Minutes a query may run before the database is told to stop it."),
    ]


def _explicit_limit(query) -> int | None:
    stage = query.last
    limits = [v for v in (stage.limit, (stage.page or {}).get("items")) if isinstance(v, int)]
    return min(limits) if limits else None


def row_limit(context) -> tuple[int, bool]:
    """(max rows, whether the cap came from the userland constraints rather than the query)."""
    from .context import setting

    session = context.session
    if context.download:
        cap = ABSOLUTE_MAX
        raised = setting(session, "download-row-limit")
        if context.export_format != "xlsx" and isinstance(raised, int) and raised > cap:
            cap = raised
        if context.download_cap is not None:
            cap = min(cap, context.download_cap)
        explicit = None if context.is_native else _explicit_limit(context.query)
        return (min(cap, explicit) if explicit is not None else cap), False
    constraints = context.constraints or {}
    max_results = constraints.get("max-results") or setting(session, "aggregated-query-row-limit", DEFAULT_AGGREGATED)
    bare = constraints.get("max-results-bare-rows") or setting(session, "unaggregated-query-row-limit",
                                                                DEFAULT_UNAGGREGATED)
    bare = min(bare, max_results)
    cap = min(max_results if context.aggregated else bare, ABSOLUTE_MAX)
    explicit = None if context.is_native else _explicit_limit(context.query)
    if explicit is not None and explicit <= cap:
        return explicit, False
    return cap, True


@hookimpl(wrapper=True)
def execute_query(context):
    context.max_rows, context.limit_from_constraints = row_limit(context)
    return (yield)
