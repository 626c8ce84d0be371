"""The query processor: the one way any part of Tessera runs a query against a registered database.

    run_json(session, user, dataset_query, *, context=..., ...)   -> the response body (bytes), encoded once
    (`user` may be a core.query.access.SharedGrant: the anonymous viewer of a public link or embed)
    run_query(session, user, dataset_query, *, context=..., ...)  -> the same envelope as a dict
    open_query(session, user, dataset_query, *, ...)               -> a streaming Result (exports)
    compile_native(session, user, dataset_query, ...)              -> {"query": sql, "params": [...]}

Both run the same pipeline: normalise (core.query.mbql), check permission, apply parameters
(core.query.parameters / native), then call the `execute_query` hook with a QueryContext. The core's
implementation (trylast, here) compiles and executes through the driver; limits (core.query.limits)
and the cache and audit plugins are hookwrappers around it, the cache also a tryfirst implementation
that answers from stored results. A Result streams rows from the cursor and runs its close callbacks
(audit, cache fill) once the rows are consumed or abandoned.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from core.appdb import memo, rows
from core.appdb.models import Database, User
from core.appdb.models import Query as QueryStats
from core.assembly.hookspecs import hookimpl
from core.http.errors import ApiError, Invalid

from . import access
from . import native as N
from . import parameters as P
from . import results as R
from .cards import expand as expand_cards
from .cards import resolving as card_resolution
from .compilation import compile_mbql, remap_dimensions
from .context import PARAMSTYLE, SETTINGS_MEMO, QueryContext, query_hash, setting, timeout_seconds, week_start
from .errors import QueryFailed
from .natives import splice as splice_natives
from .parameter_filters import apply_mbql_parameters
from .result import Result, as_failure, error_message
from .tags import field_info, snippet_text

log = logging.getLogger("tessera.query")

# --------------------------------------------------------------------------------------------------
# Preparation: normalise, permissions, parameters
# --------------------------------------------------------------------------------------------------


def _driver_for(database: Database):
    from core.driver.connections import driver_for

    return driver_for(database)


def card_native(session: Session, user: User | None, card_id: int, driver, database: Database,
                saved: bool) -> N.NativeSQL:
    """A referenced card's compiled SQL (its own parameters bound), for `{{#123}}` tags; the card
    passes the data-access gate first (core.query.access.card_source)."""
    from .persistence import persisted_source

    try:
        card = access.card_source(session, user, card_id, database.id, saved=saved)
    except Invalid as exc:
        raise QueryFailed(error_message(exc), "invalid-query") from None
    query = card.dataset_query if isinstance(card.dataset_query, dict) else orjson.loads(card.dataset_query)
    persisted = persisted_source(session, card)
    if persisted is not None:
        return N.NativeSQL([persisted])
    try:
        with card_resolution(card_id):
            # The card authorises what it reads itself: it runs as a saved question.
            prepared = prepare(session, user, query, card_id=card_id)
            if prepared.native is not None:
                return _strip_semicolon(prepared.native)
            return _strip_semicolon(mbql_native(prepared, compile_mbql(prepared, limit=None)))
    except Invalid as exc:
        raise QueryFailed(error_message(exc), "invalid-query") from None


def mbql_native(ctx: QueryContext, compiled, now: dt.datetime | None = None) -> N.NativeSQL:
    """Compiled MBQL as NativeSQL, with the SQL of native sources (native cards, persisted models)
    spliced in where the compiler left their placeholders."""
    base = N.NativeSQL([compiled.sql]) if not compiled.params else _text_with_params(compiled.sql, compiled.params)
    if not compiled.natives:
        return base
    # Native stages inside MBQL come only from cards (and their persisted tables), which authorise them.
    resolvers = _resolvers(ctx.session, ctx.viewer, ctx.driver, ctx.database, saved=True)
    from .dates import now_in

    now = now or now_in(setting(ctx.session, "report-timezone") or None)

    def render(stage: dict) -> N.NativeSQL:
        return N.substitute(stage["query"], stage.get("template-tags"), None, resolvers,
                            driver=ctx.driver, now=now, week_start=week_start(ctx.session))

    return splice_natives(base, compiled.natives, ctx.driver, render)


def _strip_semicolon(sql: N.NativeSQL) -> N.NativeSQL:
    pieces = list(sql.pieces)
    if pieces and isinstance(pieces[-1], str):
        pieces[-1] = pieces[-1].rstrip().rstrip(";")
    return N.NativeSQL(pieces)


def _text_with_params(sql: str, params: dict) -> N.NativeSQL:
    """Compiled SQL with `:name` binds as NativeSQL pieces (so it can be spliced into a native query)."""
    import re

    out = N.NativeSQL()
    position = 0
    for match in re.finditer(r"(?<![:\w\\]):(\w+)", sql):
        if match.group(1) in params:
            out.add(sql[position:match.start()])
            out.add(N.Bound(params[match.group(1)]))
            position = match.end()
    out.add(sql[position:])
    return out


def prepare(session: Session, user: User | None, dataset_query: Any, *, parameters: list | None = None,
            context: str = "ad-hoc", now: dt.datetime | None = None, **options) -> QueryContext:
    """Normalise, check permission and apply parameters; QueryFailed or an ApiError when it cannot run.
    `now`: the clock of date parameters (the report time zone's current time when not given)."""
    from .mbql import normalize

    session.info.pop(SETTINGS_MEMO, None)
    if not isinstance(dataset_query, dict):
        raise QueryFailed("Invalid query: the query must be a map.", "invalid-query")
    dataset_query = dict(dataset_query)
    if parameters is not None:
        dataset_query["parameters"] = parameters
    try:
        query = normalize(dataset_query)
    except Invalid as exc:
        raise QueryFailed(error_message(exc), "invalid-query") from None
    saved = options.get("card_id") is not None
    try:
        database_id = access.resolve_database(session, query)
    except Invalid as exc:
        raise QueryFailed(error_message(exc), "invalid-query") from None
    database = rows.get(session, Database, database_id) if 0 < database_id < 2**31 else None
    if database is None:
        raise QueryFailed(f"Database {database_id} does not exist.", "invalid-query")
    driver = _driver_for(database)
    first = query.stages[0]
    is_native = first.native is not None
    # The data-access gate (core.query.access): the query's database and tables here, each card as it
    # is expanded. A saved card's caller checked the card; running it needs data access only.
    access.check_query(session, user, query, saved=saved, card_id=options.get("card_id"))
    try:
        query = expand_cards(session, user, query, saved=saved)
    except Invalid as exc:
        raise QueryFailed(error_message(exc), "invalid-query") from None
    grant = user if access.is_grant(user) else None
    ctx = QueryContext(session=session, user=None if grant else user, dataset_query=dataset_query, query=query,
                       database=database, driver=driver, context=context, grant=grant, **options)
    if ctx.constraints is None:
        ctx.constraints = query.constraints
    ctx.query_hash = query_hash(dataset_query)
    ctx.js_int_to_string = bool((dataset_query.get("middleware") or {}).get("js-int-to-string?", True))
    ctx.disable_remaps = ctx.disable_remaps or bool((query.middleware or {}).get("disable-remaps?"))
    ctx.timeout = timeout_seconds(session, database)
    P.check_parameters(query.parameters)
    try:
        _apply_parameters(ctx, session, user, driver, database, query, first, is_native, now)
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
        # Malformed parameters or tags the checks above did not foresee: the client's mistake.
        raise QueryFailed(f"Invalid parameters: {exc}", "invalid-parameter") from None
    return ctx


def _apply_parameters(ctx, session, user, driver, database, query, first, is_native, now=None) -> None:
    tz = setting(session, "report-timezone") or None
    from .dates import now_in

    now = now or now_in(tz)
    start = week_start(session)
    if is_native and len(query.stages) == 1:
        ctx.native = N.substitute(
            first.native["query"], first.native.get("template-tags"), query.parameters,
            _resolvers(session, user, driver, database, ctx.card_id is not None), driver=driver, now=now,
            week_start=start)
    else:
        apply_mbql_parameters(session, query, now, start)


def _resolvers(session: Session, user: User | None, driver, database: Database, saved: bool) -> N.Resolvers:
    return N.Resolvers(
        field=lambda dimension, alias=None: field_info(session, driver, dimension, alias),
        snippet=lambda snippet_id, name: snippet_text(session, user, snippet_id, name, saved),
        card=lambda card_id: card_native(session, user, card_id, driver, database, saved),
    )


# --------------------------------------------------------------------------------------------------
# Compiling and executing (the core implementation of execute_query)
# --------------------------------------------------------------------------------------------------


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
    rows, csv, iso_text = raw.rows, raw.csv, raw.iso_text
    dimensions = remap_dimensions(context)
    if dimensions is not None:
        from . import remaps

        def internal():
            return remaps.internal_remaps(context.session, dimensions, cols)

        # Kept with the statement only when the columns are the statement's own.
        internals = plans.internal_remaps(context, internal) if cols is stmt.columns else internal()
        if internals:
            # The driver's own CSV text would lack the added columns: rows go through Python.
            cols = remaps.with_internal_columns(cols, internals)
            rows, csv, iso_text = remaps.with_internal_values(rows, internals), None, None
    return Result(context, cols, rows, stmt.native_form, stack.close, csv=csv, iso_text=iso_text)


# --------------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------------


def _hook():
    from core.http.auth import tessera

    return tessera().pm.hook


_STATS = select(QueryStats.average_execution_time).where(QueryStats.query_hash == bindparam("hash"))


def _stats(ctx: QueryContext) -> None:
    # The average only: the row also keeps the whole query text, which every run would load.
    ctx.average_execution_time = memo.get_or_compute(ctx.session, ("query stats", ctx.query_hash),
                                                      lambda: ctx.session.scalar(_STATS, {"hash": ctx.query_hash}))


def open_query(session: Session, user: User | None, dataset_query: Any, **options) -> Result:
    """A streaming Result (iterate its rows, then it closes; or use it as a context manager).
    Raises QueryFailed when the query cannot start."""
    ctx = prepare(session, user, dataset_query, **options)
    _stats(ctx)
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
        _stats(ctx)
        result = _hook().execute_query(context=ctx)
        if result.encoded is not None:
            result.close()
            return R.completed_body(ctx, result, result.encoded, result.row_count), R.SUCCESS_STATUS
        result.read_iso_text(R.temporal_text_columns(result.cols))
        rows: list[tuple] = []
        for batch in result.batches():  # whole batches: no Python step per row
            rows.extend(batch)
        data = R.data_body(ctx, result, rows)
        result.body_built(data)
        return R.completed_body(ctx, result, data, len(rows)), R.SUCCESS_STATUS
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
    return _decode(R.completed_body(ctx, result, R.data_body(ctx, result, rows), len(rows)))


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
