"""Preparing a run: the dataset_query normalised (core.query.mbql), passed through the data-access gate
(core.query.access), its card sources expanded (core.query.cards) and its parameters applied (native
template tags substituted through the resolvers here, MBQL ones by core.query.parameter_filters),
into the QueryContext every execute_query implementation reads.

The SQL a referenced card (`{{#N}}`) or a native source inside compiled MBQL stands for is made here
too: a card is prepared and compiled as a query of its own, so preparing recurses through it.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

import orjson
from sqlalchemy.orm import Session

from core.appdb import rows
from core.appdb.models import Database, User
from core.http.errors import Invalid

from . import access, restrictions
from . import native as N
from . import parameters as P
from .cards import expand as expand_cards
from .cards import own_model_metadata
from .cards import resolving as card_resolution
from .compilation import compile_mbql
from .context import SETTINGS_MEMO, QueryContext, query_hash, setting, timeout_seconds, week_start
from .errors import QueryFailed
from .natives import splice as splice_natives
from .parameter_filters import apply_mbql_parameters
from .result import error_message
from .tags import field_info, snippet_text


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
        # A restriction's native source carries the values of its variables (core.query.restrictions).
        return N.substitute(stage["query"], stage.get("template-tags"), stage.get("parameters"), resolvers,
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
            context: str = "ad-hoc", now: dt.datetime | None = None, filter_values: bool = False,
            **options) -> QueryContext:
    """Normalise, check permission and apply parameters; QueryFailed or an ApiError when it cannot run.
    `now`: the clock of date parameters (the report time zone's current time when not given).
    `filter_values`: the query lists a filter's values for a dashboard or saved question the caller
    may read (core.query.access.check_query says what that allows)."""
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
    access.check_query(session, user, query, saved=saved, card_id=options.get("card_id"), filter_values=filter_values)
    # The viewer's row and column restrictions (core.query.restrictions): no native SQL of theirs on a
    # database where they are restricted, and no persisted model (its table holds every row).
    row_policy = restrictions.policy(session, user, database.id)
    if is_native:
        restrictions.refuse_native(row_policy)
    # A model's own run ends where the model's query ends: its columns take the model's metadata.
    query.last.model_metadata = own_model_metadata(session, options.get("card_id")) or query.last.model_metadata
    try:
        query = expand_cards(session, user, query, saved=saved, persisted=not row_policy)
        if row_policy:
            if restrictions.has_native(query.stages):
                restrictions.refuse_native(row_policy)
            restrictions.prepare_stages(session, user, row_policy)
    except Invalid as exc:
        raise QueryFailed(error_message(exc), "invalid-query") from None
    ctx = QueryContext(session=session, viewer=user, dataset_query=dataset_query, query=query,
                       database=database, driver=driver, context=context, row_policy=row_policy, **options)
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
