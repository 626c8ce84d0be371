"""Cache policy and storage (the query_cache table: one row per cache key, shared by every worker and
instance on the app DB).

The key is the SHA-256 of what decides the answer: the database, the prepared query (normalised, card
sources expanded, parameters applied as filters or as the native SQL's bound values: a changed card
query, source card or parameter value gives another key), the row cap, the caller's groups (the
remapped columns a caller may read depend on them; a public link's or embed's grant keys its own entries),
and the settings that change the SQL or how rows
are written (js-int-to-string, report time zone, start of week). As Metabase's query hash, it does
not follow metadata edits or the clock of relative date filters: the time to live bounds those.
Permission is checked before the cache is asked (the processor's gate, the card's collection). A
viewer's row restrictions (sandboxes: core.query.restrictions) are part of the key, attribute values
included, so two users of one group with different attributes never share an entry.

A row holds one JSON line (row count, columns, native form) and then the response's encoded `data`
object (core.query.results.data_body); a hit is served as those bytes, its rows never decoded. The row
is written on a connection of its own, never in the request's transaction.
"""
from __future__ import annotations

import hashlib
import logging

import orjson
from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.exc import IntegrityError, OperationalError

from core.appdb import memo
from core.appdb.models import QueryCache, utcnow
from core.policy.audience import audience_key
from core.query.context import PARAMSTYLE, setting
from core.query.result import Result

log = logging.getLogger("tessera.query.cache")
KEY = "query_cache_key"


def ttl_seconds(context) -> float | None:
    """How long this query's results stay fresh, or None when it is not to be cached."""
    # A run without remapped columns (disable-remaps?: field values, parameter lists) is kept out
    # although its compiled SQL would tell it apart: such runs are never asked again the same way.
    if context.ignore_cache or context.download or context.context == "ad-hoc" or context.disable_remaps:
        return None
    session = context.session
    if not setting(session, "enable-query-caching", False):
        return None
    hours = context.cache_ttl if context.cache_ttl is not None else context.database.cache_ttl
    if hours:
        return float(hours) * 3600
    average = context.average_execution_time
    min_ttl = float(setting(session, "query-caching-min-ttl", 60))
    if average is None or average / 1000 < min_ttl:
        return None
    return average / 1000 * float(setting(session, "query-caching-ttl-ratio", 10))


def cache_key(context) -> str:
    """The key of this run's answer. Built from the prepared query, not its SQL: compiling costs more
    than serving a hit (it reads metadata and writes SQL with sqlglot)."""
    native = context.native.render(PARAMSTYLE) if context.native is not None else None
    # External remaps add the columns of fields the caller may read (core.query.access): permissions
    # are per group, so members of the same groups share entries; administrators read everything. A
    # shared object's grant has no account: its entries are its own (core.policy.principal.key_of).
    audience = audience_key(context.session, context.viewer)
    material = [context.database.id, context.query.stages, context.query.parameters, native, context.max_rows,
                context.limit_from_constraints, context.js_int_to_string, audience,
                setting(context.session, "report-timezone"), setting(context.session, "start-of-week"),
                context.row_policy.key if context.row_policy else ""]
    text = orjson.dumps(material, default=repr, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS)
    return hashlib.sha256(text).hexdigest()


def cached_result(context) -> Result | None:
    ttl = ttl_seconds(context)
    if ttl is None:
        return None
    key = context.extras[KEY] = cache_key(context)
    row = stored_row(context.session, key)
    if row is None or (utcnow() - row[2]).total_seconds() > ttl:
        return None
    stored, data, updated_at = row
    # The columns are copied: the memo's head is shared between requests.
    result = Result(context, [dict(c) for c in stored["cols"]], _rows(data), stored["native_form"], cached=updated_at,
                    encoded=data)
    result.row_count = stored["row_count"]
    return result


_ROW = select(QueryCache.results, QueryCache.updated_at).where(QueryCache.query_hash == bindparam("key"))


def stored_row(session, key: str) -> tuple[dict, bytes, object] | None:
    """(head, encoded data, updated_at) of the key's row, its head line decoded: kept in core.appdb.memo
    while the app DB is unchanged (a new row is a commit), so a repeated hit reads and splits no row;
    the age is checked by the caller."""
    def read():
        row = session.execute(_ROW, {"key": key}).first()
        if row is None:
            return None
        head, _, data = bytes(row.results).partition(b"\n")
        return orjson.loads(head), data, row.updated_at

    return memo.get_or_compute(session, ("query cache row", key), read,
                               weigh=lambda row: 0 if row is None else len(row[1]), alone=True)


def _rows(data: bytes):
    """The stored rows, decoded only for a caller that iterates the result instead of sending it."""
    yield from (tuple(row) for row in orjson.loads(data)["rows"])


def fill_on_body(context, result: Result) -> None:
    key = context.extras.get(KEY)
    if result.cached is not None or key is None:
        return
    limit_kb = int(setting(context.session, "query-caching-max-kb", 2000))

    def store(data: bytes) -> None:
        if result.truncated and not context.limit_from_constraints or len(data) > limit_kb * 1024:
            return
        head = orjson.dumps({"row_count": result.row_count, "cols": result.cols, "native_form": result.native_form},
                            default=str)
        write(context.session.get_bind(), key, head + b"\n" + data)

    result.on_body(store)


def write(engine, key: str, blob: bytes) -> None:
    """Replace the key's row in a transaction of its own (the request's session never commits here)."""
    table = QueryCache.__table__
    try:
        with engine.begin() as conn:
            conn.execute(delete(table).where(table.c.query_hash == key))
            conn.execute(insert(table).values(query_hash=key, results=blob, updated_at=utcnow()))
    except (IntegrityError, OperationalError):  # another worker stored the same key meanwhile, or a lock
        log.info("query cache row %s not written", key[:12], exc_info=True)
