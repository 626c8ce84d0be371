"""Prepared runs and compiled statements kept per process while the app DB is unchanged (issue 15:
compiling MBQL with sqlglot was most of an uncached 2000-row card query's time, and preparing it most
of a cached one's).

`prepared(...)` keeps what core.query.preparation.prepare made of a query for a user (normalised, the
data-access gate passed, card sources expanded, parameters applied) while the app-DB tables read are unchanged,
keyed by who runs it (core.policy.audience: the user's groups when they alone decide the query's permissions,
else the user or the shared object's grant, never a bare id),
the query and the run's options; each run gets a QueryContext of its own around the
shared, never-modified prepared query (a run that compiles copies it first). Date parameters count
from the clock: on a miss the query is prepared a second time with a clock far from now and kept only
when both agree. A refusal (403, a failed query) is never kept: it is raised again by the next run.

A prepared MBQL run compiles to the same SQL, bound values and columns as long as the app DB (field
and table metadata, dimensions, segments, the caller's permissions, settings) is the same and the
clock does not enter. `statement(ctx, compile)` keeps what `compile(ctx, now)` returns in
core.appdb.memo while the tables they read are unchanged (a commit of one, by any worker, ends them),
keyed by the prepared query (card sources expanded, parameters applied), the row cap, the principal and the
settings that shape the SQL (the principal as for prepared runs: the remapped columns a caller reads follow
its groups). Relative date filters compile against the clock: on a miss the query is
compiled a second time with a clock far from now, and the statement is kept only when both agree, so
a clock-dependent statement is compiled on every run, as before. Native queries are not kept (they
are rendered, not compiled). Each run gets its own copy of the parts a caller could change.
The internal remaps of the result's columns (FieldValues names) are kept the same way.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import time
from typing import Any, Callable

import orjson

from core.appdb import memo
from core.policy.audience import principal_or_audience

from .context import SETTINGS_MEMO, QueryContext, setting

KEY = "tessera.plan-key"
SHARED = "tessera.shared-query"  # in a run's extras: its query is the memo's, copied before compiling
# A clock far enough from now that any relative filter (minutes to years) moves with it.
CLOCK_PROBE = dt.timedelta(days=400, hours=1, minutes=1, seconds=1, microseconds=1)


def plan_key(ctx: QueryContext) -> bytes | None:
    """What decides the compiled statement besides the app DB, or None when it is not to be kept."""
    if ctx.native is not None:
        return None
    if KEY in ctx.extras:
        return ctx.extras[KEY]
    try:
        query = orjson.dumps(ctx.query, option=orjson.OPT_NON_STR_KEYS, default=_refuse)
        who = principal_or_audience(ctx.session, ctx.viewer, query)
        # A restricted viewer's statement holds their attribute values (core.query.restrictions): keyed by them.
        restricted = ctx.row_policy.key if ctx.row_policy else ""
        key = orjson.dumps([ctx.database.id, orjson.Fragment(query), ctx.max_rows, ctx.download, ctx.disable_remaps, who,
                            restricted,
                            setting(ctx.session, "report-timezone"), setting(ctx.session, "start-of-week")],
                           option=orjson.OPT_NON_STR_KEYS, default=_refuse)
    except TypeError:  # a value JSON cannot hold exactly (integers beyond 64 bits, unknown objects)
        key = None
    ctx.extras[KEY] = key
    return key


def _refuse(value: Any):
    raise TypeError(type(value).__name__)


def prepared(session, user, dataset_query: Any, context: str, options: dict, prepare: Callable) -> QueryContext:
    """prepare(session, user, dataset_query, context=context, **options), kept while the app DB is
    unchanged and the clock does not enter."""
    def fresh(now=None):
        return prepare(session, user, dataset_query, context=context, now=now, **options)

    if not memo.usable(session):
        return fresh()
    try:
        query = orjson.dumps(dataset_query, option=orjson.OPT_NON_STR_KEYS, default=_refuse)
        key = orjson.dumps([principal_or_audience(session, user, query), orjson.Fragment(query), context, options],
                           option=orjson.OPT_NON_STR_KEYS, default=_refuse)
    except TypeError:
        return fresh()
    made: list[QueryContext] = []

    def compute():
        first = fresh()
        made.append(first)
        # The settings this run has read (core.query.context.setting): the same for every run of this
        # counters, given again to each when they are plain values no caller can change.
        snapshot = dict(session.info.get(SETTINGS_MEMO) or {})
        from .dates import now_in

        try:
            clock = now_in(setting(session, "report-timezone") or None) + CLOCK_PROBE
            timeless = _shape(first) == _shape(fresh(clock))
        except Exception:  # the far clock made the query fail: it depends on the clock
            timeless = False
        session.info[SETTINGS_MEMO] = dict(snapshot)
        first.extras[SHARED] = True  # its query is the template's too: copied before it is compiled
        plain = all(v is None or isinstance(v, (str, int, float, bool)) for v in snapshot.values())
        return dataclasses.replace(first, session=None, viewer=None, extras={}), snapshot if plain else None, timeless

    template, snapshot, _ = memo.get_or_compute(session, ("prepared query", key), compute, keep=lambda value: value[2])
    if made:
        return made[0]
    from core.appdb import rows
    from core.appdb.models import Database

    if snapshot is None:
        session.info.pop(SETTINGS_MEMO, None)  # as prepare does: this run reads the settings afresh
    else:
        session.info[SETTINGS_MEMO] = dict(snapshot)
    database = rows.get(session, Database, template.database.id)
    if database is None:  # deleted since: a commit, so other counters; kept for safety
        return fresh()
    return _run_of(template, session=session, viewer=user, database=database, extras={SHARED: True},
                   started_at=dt.datetime.now(dt.timezone.utc), started=time.monotonic())


def _run_of(template: QueryContext, **own) -> QueryContext:
    """dataclasses.replace(template, **own): QueryContext is a plain dataclass (every field set by its
    __init__, no __post_init__), so its fields are copied as they are, at a third of replace's cost (it
    runs on every kept run)."""
    ctx = object.__new__(QueryContext)
    ctx.__dict__.update(template.__dict__)
    ctx.__dict__.update(own)
    return ctx


def _shape(ctx: QueryContext):
    native = ctx.native.render("qmark") if ctx.native is not None else None
    return orjson.dumps(ctx.query, option=orjson.OPT_NON_STR_KEYS, default=repr), native, ctx.constraints


def statement(ctx: QueryContext, compile: Callable[[QueryContext, dt.datetime | None], Any]):
    """compile(ctx, None)'s statement (core.query.execution.Statement), kept while the app DB is unchanged."""
    key = plan_key(ctx)
    if key is None or not memo.usable(ctx.session):
        if ctx.extras.pop(SHARED, False):
            ctx.query = copy.deepcopy(ctx.query)
        return compile(ctx, None)

    def compute():
        # The compiler fills in defaults on the query it is given (temporal units): the probe gets the
        # query as prepared, as the first compilation did, and a shared query is never compiled.
        if ctx.extras.pop(SHARED, False):
            ctx.query = copy.deepcopy(ctx.query)
        probe = dataclasses.replace(ctx, query=copy.deepcopy(ctx.query))
        first = compile(ctx, None)
        from .dates import now_in

        clock = now_in(setting(ctx.session, "report-timezone") or None) + CLOCK_PROBE
        return first, _same(first, compile(probe, clock))

    stmt, _ = memo.get_or_compute(ctx.session, ("compiled statement", key), compute, keep=lambda value: value[1])
    return _copy(stmt)


def _same(a, b) -> bool:
    return (a.sql, a.params, a.native_form, a.columns) == (b.sql, b.params, b.native_form, b.columns)


def _copy(stmt):
    form = dict(stmt.native_form)
    if isinstance(form.get("params"), list):
        form["params"] = list(form["params"])
    return dataclasses.replace(stmt, params=dict(stmt.params) if stmt.params else stmt.params, native_form=form,
                               columns=None if stmt.columns is None else [dict(c) for c in stmt.columns])


def internal_remaps(ctx: QueryContext, compute: Callable[[], list]) -> list:
    """The run's internal remaps (core.query.remaps.internal_remaps) for the columns of its kept
    statement, kept with it; computed every time for a statement that is not kept."""
    key = ctx.extras.get(KEY)
    if key is None:
        return compute()
    return memo.get_or_compute(ctx.session, ("internal remaps", key), compute)
