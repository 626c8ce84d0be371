"""The core's implementation of the execute_query hook (trylast; core.assembly.plugins registers this
module): a prepared run's statement (its native SQL rendered, or its MBQL compiled, kept by
core.query.plans, with native sources spliced in) executed through the driver as a streaming Result,
internal remaps added to the rows.
"""
from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import dataclass

from core.assembly.hookspecs import hookimpl
from core.http.errors import ApiError, Invalid

from . import results as R
from .cards import apply_model_metadata
from .compilation import compile_mbql, remap_dimensions
from .context import PARAMSTYLE, QueryContext
from .preparation import mbql_native
from .result import Result, as_failure


@dataclass
class Statement:
    sql: str
    params: dict | None
    native_form: dict
    columns: list[dict] | None


def statement(ctx: QueryContext, now: dt.datetime | None = None) -> Statement:
    """The SQL to send, its bound values, what native_form shows and (for MBQL) the result columns.
    `now`: the clock of relative filters (the report time zone's current time when not given)."""
    if ctx.native is not None:
        sql, params = ctx.native.render(PARAMSTYLE)
        shown, shown_params = ctx.native.render("qmark")
        return Statement(sql, params, {"query": shown, "params": shown_params}, None)
    limit = None if ctx.aggregated and not ctx.download else ctx.max_rows
    compiled = compile_mbql(ctx, limit, now)
    if compiled.natives:
        spliced = mbql_native(ctx, compiled, now)
        sql, params = spliced.render(PARAMSTYLE)
        shown, shown_params = spliced.render("qmark")
        return Statement(sql, params, {"query": shown, "params": shown_params},
                         [R.normalise_column(c) for c in compiled.columns])
    params = compiled.params or None
    shown = list(params.values()) if isinstance(params, dict) else params
    return Statement(compiled.sql, params, {"query": compiled.sql, "params": shown or None},
                     [R.normalise_column(c) for c in compiled.columns])


@hookimpl(trylast=True)
def execute_query(context: QueryContext) -> Result:
    from core.driver.connections import engine_for

    from . import plans

    stmt = plans.statement(context, statement)
    context.extras["statement"] = stmt
    stack = contextlib.ExitStack()
    try:
        engine = engine_for(context.database)
        fetch = None if context.max_rows is None else context.max_rows + 1
        raw = stack.enter_context(context.driver.execute(engine, stmt.sql, stmt.params, timeout=context.timeout,
                                                         max_rows=fetch))
    except BaseException as exc:
        stack.close()
        if isinstance(exc, ApiError) and not isinstance(exc, Invalid):
            raise
        raise as_failure(context, exc) from exc
    cols = stmt.columns if stmt.columns is not None and len(stmt.columns) == len(raw.columns) \
        else R.native_columns(raw.columns)
    if context.native is not None and context.query.last.model_metadata:
        # A native model's own run: its columns are the cursor's, not the compiler's (core.query.compiler
        # overlays those at the model's boundary).
        apply_model_metadata(cols, context.query.last.model_metadata, native=True)
    rows, csv, iso_text, json = raw.rows, raw.csv, raw.iso_text, raw.json
    dimensions = remap_dimensions(context)
    if dimensions is not None:
        from . import remaps

        def internal():
            return remaps.internal_remaps(context.session, dimensions, cols)

        # Kept with the statement only when the columns are the statement's own.
        internals = plans.internal_remaps(context, internal) if cols is stmt.columns else internal()
        if internals:
            # The driver's own CSV or JSON text would lack the added columns: rows go through Python.
            cols = remaps.with_internal_columns(cols, internals)
            rows, csv, iso_text, json = remaps.with_internal_values(rows, internals), None, None, None
    return Result(context, cols, rows, stmt.native_form, stack.close, csv=csv, iso_text=iso_text, json=json)
