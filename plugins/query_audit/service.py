"""Writing the execution log and the running average (Metabase's: new = (9 * old + this) / 10).

A run's row and its average go to the app DB's write-behind buffer (core.appdb.counters), as
Metabase saves query executions asynchronously: a run's response never waits on the log's commit,
and the rows of a second are written in one transaction. Tests read the log after
`core.appdb.counters.flush(app)`.
"""
from __future__ import annotations

import time

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from core.appdb import counters
from core.appdb.models import Query as QueryStats
from core.appdb.models import QueryExecution


def update_averages(conn: Connection, runs: list[tuple[str, int, dict]]) -> None:
    """The running average of each query hash, folded over this batch's runs in their order: one
    read of the stored averages, then one write per hash."""
    stats = QueryStats.__table__
    hashes = list(dict.fromkeys(query_hash for query_hash, _, _ in runs))
    stored = dict(conn.execute(select(stats.c.query_hash, stats.c.average_execution_time)
                               .where(stats.c.query_hash.in_(hashes))).all())
    averages: dict[str, int] = {}
    queries: dict[str, dict] = {}
    for query_hash, running_time, query in runs:
        old = averages.get(query_hash, stored.get(query_hash))
        averages[query_hash] = running_time if old is None else int((9 * old + running_time) / 10)
        queries.setdefault(query_hash, query)
    for query_hash, average in sorted(averages.items()):  # one lock order for every worker's batch (counters)
        if query_hash in stored:
            conn.execute(update(stats).where(stats.c.query_hash == query_hash).values(average_execution_time=average))
        else:
            conn.execute(insert(stats).values(query_hash=query_hash, average_execution_time=average,
                                              query=queries[query_hash]))


def record(context, result, error: BaseException | None = None) -> None:
    error = error or (result.error if result is not None else None)
    running_time = result.running_time if result is not None else int((time.monotonic() - context.started) * 1000)
    cached = result is not None and result.cached is not None
    item = {
        "hash": context.query_hash, "started_at": context.started_at, "running_time": running_time,
        "result_rows": result.row_count if result is not None else 0, "native": context.is_native,
        "context": context.context, "error": None if error is None else str(getattr(error, "message", error))[:10000],
        "executor_id": context.user.id if context.user is not None else None, "card_id": context.card_id,
        "dashboard_id": context.dashboard_id, "database_id": context.database.id, "cache_hit": cached,
    }
    buffer = counters.buffer()
    buffer.insert(QueryExecution, item)
    if error is None and not cached:
        buffer.fold(update_averages, (context.query_hash, running_time, context.dataset_query))
