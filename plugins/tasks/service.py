"""Reading the task history and the job table for /api/task."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import Database, ScheduledJob, TaskHistory
from core.http.errors import check_404
from core.http.paging import Paging

STATUSES = ("started", "success", "failed", "unknown")
# Metabase's sort columns; db_name and db_engine order by the run's database.
SORT_COLUMNS = ("started_at", "ended_at", "duration", "task", "status", "db_name", "db_engine")
_SORT = {"started_at": TaskHistory.started_at, "ended_at": TaskHistory.ended_at, "duration": TaskHistory.duration,
         "task": TaskHistory.task, "status": TaskHistory.status, "db_name": Database.name, "db_engine": Database.engine}


def task_json(row: TaskHistory) -> dict:
    return {"id": row.id, "task": row.task, "db_id": row.db_id, "started_at": row.started_at,
            "ended_at": row.ended_at, "duration": row.duration, "task_details": row.task_details,
            "status": row.status}


def list_tasks(session: Session, page: Paging, status: str | None = None, task: str | None = None,
               sort_column: str = "started_at", descending: bool = True) -> dict:
    conditions = [column == value for column, value in ((TaskHistory.status, status), (TaskHistory.task, task))
                  if value is not None]
    total = session.scalar(select(func.count()).select_from(TaskHistory).where(*conditions)) or 0
    column = _SORT[sort_column]
    statement = select(TaskHistory).where(*conditions)
    if column.class_ is Database:
        statement = statement.outerjoin(Database, Database.id == TaskHistory.db_id)
    # the id breaks ties, so that equal values (a status, a database) page in a stable order
    statement = statement.order_by(column.desc() if descending else column.asc(), TaskHistory.id.desc())
    if page.paged:
        statement = statement.limit(page.limit).offset(page.offset)
    return {"total": total, "limit": page.limit, "offset": page.offset,
            "data": [task_json(row) for row in session.scalars(statement)]}


def unique_tasks(session: Session) -> list[str]:
    return list(session.scalars(select(TaskHistory.task).group_by(TaskHistory.task).order_by(TaskHistory.task)))


def get_task(session: Session, task_id: int) -> dict:
    return task_json(check_404(session.get(TaskHistory, task_id)))


def _at(seconds: int | None) -> dt.datetime | None:
    return None if seconds is None else dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


def info(session: Session, state) -> dict:
    jobs = list(session.scalars(select(ScheduledJob).order_by(ScheduledJob.kind, ScheduledJob.id)))
    last = dict(session.execute(select(TaskHistory.job_id, func.max(TaskHistory.fire_time))
                                .where(TaskHistory.job_id.in_([job.id for job in jobs]))
                                .group_by(TaskHistory.job_id)).all()) if jobs else {}
    return {
        "scheduler": [f"scheduler mode: {state.config.get('TESSERA_SCHEDULER') or 'inprocess'}",
                      f"poll interval: {state.config.get('TESSERA_SCHEDULER_POLL_SECONDS')}s",
                      f"job kinds: {', '.join(sorted(state.job_kinds)) or 'none'}"],
        "jobs": [{
            "key": f"{job.kind}.{job.key}",
            "kind": job.kind,
            "description": (state.job_kinds[job.kind].task or job.kind) if job.kind in state.job_kinds else None,
            "active": job.kind in state.job_kinds,
            "data": job.args,
            "triggers": [{"key": f"{job.kind}.{job.key}.trigger", "schedule": job.cron,
                          "timezone": job.timezone or job.fire_zone, "next-fire-time": _at(job.next_fire),
                          "previous-fire-time": _at(last.get(job.id)),
                          "state": "NORMAL" if job.kind in state.job_kinds else "PAUSED"}],
        } for job in jobs],
    }
