"""The core's own periodic jobs: ending expired login sessions, dropping old query-execution rows,
trimming the task history and marking the runs of processes that died as `unknown`. Registered with the plugin manager by core.assembly.plugins, as the query
processor's hooks are, so they run whichever feature plugins are enabled."""
from __future__ import annotations

import datetime as dt
import os
import socket

from sqlalchemy import delete, func, select, update

from core.appdb.models import LoginSession, QueryExecution, TaskHistory, utcnow
from core.assembly.hookspecs import hookimpl
from core.assembly.records import JobKind, JobRun

# Metabase's TaskHistory cleanup keeps the newest 100,000 rows.
TASK_HISTORY_KEEP = 100_000


def expire_sessions(job: JobRun) -> dict:
    """Login sessions older than TESSERA_MAX_SESSION_AGE no longer authenticate (core.http.auth): remove them."""
    minutes = job.app.extensions["tessera"].config["TESSERA_MAX_SESSION_AGE"]
    cutoff = utcnow() - dt.timedelta(minutes=minutes)
    removed = job.session.execute(delete(LoginSession).where(LoginSession.created_at < cutoff)).rowcount
    return {"sessions-removed": removed or 0}


def trim_query_executions(job: JobRun) -> dict:
    # Metabase keeps query executions (its audit log) for at most 720 days (MB_AUDIT_MAX_RETENTION_DAYS).
    days = int(job.app.config["TESSERA_QUERY_EXECUTION_RETENTION_DAYS"])
    cutoff = utcnow() - dt.timedelta(days=days)
    removed = job.session.execute(delete(QueryExecution).where(QueryExecution.started_at < cutoff)).rowcount
    return {"rows-removed": removed or 0}


def trim_task_history(job: JobRun) -> dict:
    newest = job.session.scalar(select(func.max(TaskHistory.id))) or 0
    removed = job.session.execute(delete(TaskHistory).where(TaskHistory.id <= newest - TASK_HISTORY_KEEP)).rowcount
    return {"rows-removed": removed or 0}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def mark_abandoned_runs(job: JobRun) -> dict:
    """Runs left `started` by a process of this host that is gone (killed, crashed) become `unknown`,
    Metabase's status for a run nobody saw end. Other hosts' runs are theirs to judge."""
    host = socket.gethostname()
    rows = job.session.execute(select(TaskHistory.id, TaskHistory.instance).where(
        TaskHistory.status == "started", TaskHistory.instance.like(f"{host}:%"))).all()
    gone = [row_id for row_id, instance in rows
            if instance.rsplit(":", 1)[1].isdigit() and not _alive(int(instance.rsplit(":", 1)[1]))]
    if gone:
        job.session.execute(update(TaskHistory).where(TaskHistory.id.in_(gone), TaskHistory.status == "started").values(
            status="unknown", ended_at=utcnow(),
            task_details={"status": "unknown", "message": "the process running it ended before it finished"}))
    return {"runs-marked": len(gone)}


@hookimpl
def register_job_kinds():
    return [
        JobKind("expired-sessions-cleanup", expire_sessions, task="session-cleanup", default_cron="0 15 * * * ? *"),
        JobKind("query-execution-cleanup", trim_query_executions, task="query-execution-cleanup",
                default_cron="0 20 3 * * ? *"),
        JobKind("task-history-cleanup", trim_task_history, task="task-history-cleanup", default_cron="0 25 3 * * ? *"),
        JobKind("abandoned-runs", mark_abandoned_runs, task="abandoned-runs", default_cron="0 */10 * * * ? *"),
    ]
