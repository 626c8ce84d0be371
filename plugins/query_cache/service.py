"""Cache policy and storage (the query_cache table, one row per query hash)."""
from __future__ import annotations

import orjson

from core.appdb.models import QueryCache, utcnow
from core.query.context import setting
from core.query.result import Result
from core.query.results import json_rows


def ttl_seconds(context) -> float | None:
    """How long this query's results stay fresh, or None when it is not to be cached."""
    # A run without remapped columns (disable-remaps?: field values, parameter lists) has the same
    # query hash as the card's ordinary run but not the same columns: it neither reads nor fills the cache.
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


def cached_result(context) -> Result | None:
    ttl = ttl_seconds(context)
    if ttl is None:
        return None
    row = context.session.get(QueryCache, context.query_hash)
    if row is None or (utcnow() - row.updated_at).total_seconds() > ttl:
        return None
    stored = orjson.loads(row.results)
    result = Result(context, stored["cols"], iter([tuple(r) for r in stored["rows"]]), stored.get("native_form"),
                    cached=row.updated_at)
    return result


def fill_on_close(context, result: Result) -> None:
    if result.cached is not None or ttl_seconds(context) is None:
        return
    rows: list = []
    result.tap(rows.extend)
    limit_kb = int(setting(context.session, "query-caching-max-kb", 2000))

    def store(done: Result) -> None:
        if done.error is not None or done.truncated and not context.limit_from_constraints:
            return
        blob = orjson.dumps({"cols": done.cols, "rows": json_rows(rows), "native_form": done.native_form},
                            default=str)
        if len(blob) > limit_kb * 1024:
            return
        session = context.session
        row = session.get(QueryCache, context.query_hash)
        if row is None:
            session.add(QueryCache(query_hash=context.query_hash, results=blob, updated_at=utcnow()))
        else:
            row.results, row.updated_at = blob, utcnow()
        session.commit()

    result.on_close(store)
