"""Writing the execution log and the running average (Metabase's: new = (9 * old + this) / 10)."""
from __future__ import annotations

import logging
import time

from core.models import Query as QueryStats, QueryExecution

log = logging.getLogger("tessera.query.audit")


def record(context, result, error: BaseException | None = None) -> None:
    session = context.session
    error = error or (result.error if result is not None else None)
    running_time = result.running_time if result is not None else int((time.monotonic() - context.started) * 1000)
    cached = result is not None and result.cached is not None
    session.add(QueryExecution(
        hash=context.query_hash, started_at=context.started_at, running_time=running_time,
        result_rows=result.row_count if result is not None else 0, native=context.is_native,
        context=context.context, error=None if error is None else str(getattr(error, "message", error))[:10000],
        executor_id=context.user.id if context.user is not None else None, card_id=context.card_id,
        dashboard_id=context.dashboard_id, database_id=context.database.id, cache_hit=cached,
    ))
    if error is None and not cached:
        stats = session.get(QueryStats, context.query_hash)
        if stats is None:
            session.add(QueryStats(query_hash=context.query_hash, average_execution_time=running_time,
                                   query=context.dataset_query))
        else:
            stats.average_execution_time = int((9 * stats.average_execution_time + running_time) / 10)
    session.commit()
