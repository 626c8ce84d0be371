"""The query processor: the one way any part of Tessera runs a query against a registered database.

    run_json(session, user, dataset_query, *, context=..., ...)   -> the response body (bytes), encoded once
    (`user` may be a core.query.access.SharedGrant: the anonymous viewer of a public link or embed)
    run_query(session, user, dataset_query, *, context=..., ...)  -> the same envelope as a dict
    open_query(session, user, dataset_query, *, ...)               -> a streaming Result (exports)
    compile_native(session, user, dataset_query, ...)              -> {"query": sql, "params": [...]}

The runs share one pipeline: core.query.preparation.prepare (normalise with core.query.mbql, check
permission, apply parameters), then the `execute_query` hook with a QueryContext. The core's
implementation (trylast, core.query.execution) compiles (core.query.compilation) or renders the SQL
and executes it through the driver; limits (core.query.limits) and the cache and audit plugins are
hookwrappers around it, the cache also a tryfirst implementation that answers from stored results.
A Result streams rows from the cursor and runs its close callbacks (audit, cache fill) once the rows
are consumed or abandoned. This module holds the entry points and the envelopes they answer with.
"""
from __future__ import annotations

import datetime as dt
import re
import time
from typing import Any

import orjson
from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import Query as QueryStats
from core.appdb.models import User
from core.http.errors import Invalid

from . import results as R
from .context import QueryContext
from .errors import QueryFailed
from .execution import statement
from .preparation import prepare
from .result import Result


def _hook():
    from core.http.auth import tessera

    return tessera().pm.hook


_STATS = select(QueryStats.average_execution_time).where(QueryStats.query_hash == bindparam("hash"))


def read_stats(ctx: QueryContext) -> None:
    """The query's average running time, which the result cache's time to live is computed from."""
    # The average only: the row also keeps the whole query text, which every run would load.
    # Alone: it depends on the query table only, which every fresh run's average moves; answers kept later
    # in the request must not inherit that dependency.
    query_hash = ctx.query_hash
    ctx.average_execution_time = memo.get_or_compute(ctx.session, ("query stats", query_hash),
                                                      lambda: ctx.session.scalar(_STATS, {"hash": query_hash}),
                                                      alone=True)


def open_query(session: Session, user: User | None, dataset_query: Any, **options) -> Result:
    """A streaming Result (iterate its rows, then it closes; or use it as a context manager).
    Raises QueryFailed when the query cannot start."""
    ctx = prepare(session, user, dataset_query, **options)
    read_stats(ctx)
    return execute(ctx)


def execute(ctx: QueryContext) -> Result:
    """Run a prepared context through the `execute_query` hook (cache, log, limits, then the driver)."""
    return _hook().execute_query(context=ctx)


def run_query(session: Session, user: User | None, dataset_query: Any, *, context: str = "ad-hoc",
              **options) -> tuple[dict, int]:
    """(envelope, HTTP status) as a dict, for callers that read the result; endpoints send run_json's bytes."""
    body, status = run_json(session, user, dataset_query, context=context, **options)
    return _decode(body), status


def run_json(session: Session, user: User | None, dataset_query: Any, *, context: str = "ad-hoc",
             **options) -> tuple[bytes, int]:
    """(body, HTTP status): the whole result as Metabase's JSON body, or its failed-query body, encoded
    once (a cached result's stored `data` is sent as it is, core.query.results.completed_body)."""
    started_at = dt.datetime.now(dt.timezone.utc)
    started = time.monotonic()
    ctx: QueryContext | None = None
    try:
        from . import plans

        ctx = plans.prepared(session, user, dataset_query, context, options, prepare)
        read_stats(ctx)
        result = execute(ctx)
        if result.encoded is not None:
            result.close()
            return R.completed_body(ctx, result, result.encoded, result.row_count), R.SUCCESS_STATUS
        result.read_iso_text(R.temporal_text_columns(result.cols))
        data = R.data_body(ctx, result, *R.rows_json(ctx, result))
        result.body_built(data)
        return R.completed_body(ctx, result, data, result.row_count), R.SUCCESS_STATUS
    except QueryFailed as exc:
        from core.http.api import dumps

        return dumps(failed(dataset_query, exc, context, ctx, started_at, started)), R.FAILED_STATUS


def _decode(body: bytes) -> Any:
    if re.search(rb"\d{20,}", body):  # orjson reads integers beyond 64 bits as floats
        import json

        return json.loads(body)
    return orjson.loads(body)


def completed(ctx: QueryContext, result: Result, rows: list[tuple]) -> dict:
    """The completed envelope of rows already read (pivot tables), as a dict."""
    encoded = R.encode_rows(result.cols, rows, ctx.js_int_to_string, result.iso_columns)
    return _decode(R.completed_body(ctx, result, R.data_body(ctx, result, encoded, rows), len(rows)))


def failed(dataset_query: Any, error: QueryFailed, context: str, ctx: QueryContext | None,
           started_at: dt.datetime, started: float) -> dict:
    body = {
        "status": "failed",
        "error": error.message,
        "error_type": error.error_type,
        "class": error.extra.get("class") or "QueryFailed",
        "stacktrace": [],
        "via": [{"status": "failed", "error": error.message, "error_type": error.error_type}],
        "json_query": R.json_query(dataset_query),
        "database_id": ctx.database.id if ctx else (dataset_query.get("database") if isinstance(dataset_query, dict)
                                                     else None),
        "context": context,
        "row_count": 0,
        "running_time": int((time.monotonic() - started) * 1000),
        "started_at": R.iso(started_at),
        "data": {"rows": [], "cols": []},
    }
    if ctx is not None and "statement" in ctx.extras:
        body["native"] = ctx.extras["statement"].native_form
    return body


def failed_now(dataset_query: Any, error: QueryFailed, context: str) -> dict:
    """The failed-query body for a query that could not even start."""
    return failed(dataset_query, error, context, None, dt.datetime.now(dt.timezone.utc), time.monotonic())


def compile_native(session: Session, user: User | None, dataset_query: Any, *, pretty: bool = True) -> dict:
    """POST /api/dataset/native: the SQL a query runs as, and its parameters."""
    ctx = prepare(session, user, dataset_query)
    stmt = statement(ctx)
    sql = stmt.native_form["query"]
    if pretty:
        import sqlglot

        try:
            sql = sqlglot.transpile(sql, read=ctx.driver.sqlglot_dialect, write=ctx.driver.sqlglot_dialect,
                                    pretty=True)[0] if ctx.native is None else sql
        except sqlglot.errors.SqlglotError:
            pass
    return {"query": sql, "params": stmt.native_form["params"]}


# Rows read to type the columns of engines that report no column types (SQLite).
METADATA_SAMPLE_ROWS = 100


def result_metadata(session: Session, user: User | None, dataset_query: dict) -> list[dict]:
    """The query's result columns in SELECT order, as Metabase's results_metadata.columns (what a card
    is saved with).

    The query runs with a small row cap: the columns are known from the cursor, and the first rows
    type the columns an engine leaves untyped. Invalid when the query cannot run."""
    try:
        result = open_query(session, user, dataset_query, context="question", max_rows=METADATA_SAMPLE_ROWS)
        with result:
            rows = [row for _, row in zip(range(METADATA_SAMPLE_ROWS), result)]
    except QueryFailed as exc:
        raise Invalid(exc.message) from None
    cols = [dict(c) for c in result.cols]
    R.infer_base_types(cols, rows)
    return R.results_metadata(cols)["columns"]
