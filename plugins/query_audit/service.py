"""Writing the execution log and the running average (Metabase's: new = (9 * old + this) / 10).

Rows are written by one background thread per app with its own app-DB session, as Metabase saves
query executions asynchronously: a run's response never waits on the log's commit. `flush(app)`
waits until everything queued is written (tests, shutdown).
"""
from __future__ import annotations

import logging
import queue
import threading
import time

from sqlalchemy import insert, select, update

from core.appdb.models import Query as QueryStats
from core.appdb.models import QueryExecution

log = logging.getLogger("tessera.query.audit")
IDLE_SECONDS = 2.0


class Writer:
    def __init__(self, db):
        self.db = db
        self.queue: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def put(self, item: dict) -> None:
        self.queue.put(item)
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="tessera-query-log", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                item = self.queue.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self.lock:
                    if self.queue.empty():  # put() starts a new thread for anything queued after this
                        self.thread = None
                        return
                continue
            try:
                write(self.db, item)
            except Exception:
                log.exception("could not write the query log")
            finally:
                self.queue.task_done()

    def flush(self) -> None:
        self.queue.join()


def writer_for(state) -> Writer:
    writer = state.extras.get("query_audit_writer")
    if writer is None:
        writer = state.extras.setdefault("query_audit_writer", Writer(state.db))
    return writer


def flush(app) -> None:
    writer = app.extensions["tessera"].extras.get("query_audit_writer")
    if writer is not None:
        writer.flush()


def write(db, item: dict) -> None:
    """The execution row and the running average, as Core statements in one transaction: in a single
    process this thread shares the GIL with the requests, and the ORM's unit of work cost them several
    milliseconds each (docs/ARCHITECTURE.md, "Query log")."""
    stats_query = item.pop("_stats", None)
    executions, stats = QueryExecution.__table__, QueryStats.__table__
    with db.engine.begin() as conn:
        conn.execute(insert(executions).values(**item))
        if stats_query is None:
            return
        old = conn.execute(select(stats.c.average_execution_time).where(stats.c.query_hash == item["hash"])).first()
        if old is None:
            conn.execute(insert(stats).values(query_hash=item["hash"], average_execution_time=item["running_time"],
                                              query=stats_query))
        else:
            average = int((9 * old[0] + item["running_time"]) / 10)
            conn.execute(update(stats).where(stats.c.query_hash == item["hash"]).values(average_execution_time=average))


def record(context, result, error: BaseException | None = None) -> None:
    from core.http.auth import tessera

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
    if error is None and not cached:
        item["_stats"] = context.dataset_query
    writer_for(tessera()).put(item)
