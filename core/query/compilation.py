"""A run's MBQL compiled: core.query.compiler called with the run's clock (the report time zone's),
week start and remapper (core.query.remaps, unless remapping is off for the run); a compile error
becomes QueryFailed.
"""
from __future__ import annotations

import datetime as dt

from core.http.errors import Invalid

from . import access
from .context import QueryContext, setting, week_start
from .errors import QueryFailed
from .result import error_message


def remap_dimensions(ctx: QueryContext):
    """The run's Dimension lookups (core.query.remaps), or None when remapping is off for it."""
    from .remaps import Dimensions

    if ctx.disable_remaps or ctx.is_native:
        return None
    if "dimensions" not in ctx.extras:
        ctx.extras["dimensions"] = Dimensions(
            ctx.session, lambda ids: access.readable_field_ids(ctx.session, ctx.viewer, ids))
    return ctx.extras["dimensions"]


def compile_mbql(ctx: QueryContext, limit: int | None, now: dt.datetime | None = None):
    from .compiler import compile_query
    from .dates import now_in
    from .remaps import ExternalRemaps

    dimensions = remap_dimensions(ctx)
    remapper = ExternalRemaps(dimensions, ctx.query.stages) if dimensions is not None else None
    # Relative filters ("today", "this week") count from the report time zone's clock, as parameters do.
    now = now or now_in(setting(ctx.session, "report-timezone") or None)
    try:
        return compile_query(ctx.session, ctx.query, ctx.driver, limit=limit, now=now,
                             week_start=week_start(ctx.session), remapper=remapper,
                             row_policy=ctx.row_policy)
    except Invalid as exc:
        raise QueryFailed(error_message(exc), "invalid-query") from None
