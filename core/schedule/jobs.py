"""Adding, changing and removing scheduled jobs: what plugins call (through core.schedule).

Every function works in the caller's session and never commits, so a job changes in the same
transaction as the object it belongs to (a pulse and its send job).
"""
from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from core.appdb.models import ScheduledJob

from .cron import trigger


def schedule(session: Session, kind: str, key: str | int, cron: str, timezone: str | None = None,
             args: dict | None = None) -> ScheduledJob:
    """Create the job (kind, key) or change its cron, zone and args. `cron` is a Quartz cron string
    (core.sync.schedules.schedule_to_cron writes them); `timezone` an IANA zone, or None for the
    `report-timezone` setting (UTC when unset). Raises core.schedule.cron.CronError for a cron or zone
    it cannot read. A changed cron or zone starts counting from the next occurrence after now."""
    trigger(cron, timezone)  # refuse what the runner could not read, now rather than at every tick
    key = str(key)
    job = session.scalars(select(ScheduledJob).where(ScheduledJob.kind == kind, ScheduledJob.key == key)).first()
    if job is None:
        job = ScheduledJob(kind=kind, key=key, cron=cron, timezone=timezone, args=dict(args or {}))
        session.add(job)
    else:
        if (job.cron, job.timezone) != (cron, timezone):
            job.next_fire = None
            job.fire_zone = None
        job.cron, job.timezone, job.args = cron, timezone, dict(args or {})
    session.flush()
    return job


def unschedule(session: Session, kind: str, key: str | int | None = None) -> int:
    """Remove the job (kind, key), or every job of `kind` when key is None. Returns how many went."""
    statement = delete(ScheduledJob).where(ScheduledJob.kind == kind)
    if key is not None:
        statement = statement.where(ScheduledJob.key == str(key))
    return session.execute(statement).rowcount or 0


def scheduled(session: Session, kind: str | None = None) -> list[ScheduledJob]:
    """The stored jobs (of one kind), oldest first."""
    statement = select(ScheduledJob).order_by(ScheduledJob.id)
    if kind is not None:
        statement = statement.where(ScheduledJob.kind == kind)
    return list(session.scalars(statement))
