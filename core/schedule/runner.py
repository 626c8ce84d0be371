"""Running what is due: each occurrence claimed once across processes, run, and recorded.

`run_due(app, now)` is one tick. Claiming is a compare-and-set on the job's `next_fire`:
`UPDATE scheduled_job SET next_fire = <following occurrence> WHERE id = ? AND next_fire = <this one>`.
Whoever's UPDATE matches the row runs the occurrence; any other process's UPDATE finds the value
moved and matches nothing (PostgreSQL re-reads the row after the first writer commits; SQLite has one
writer at a time). The claim and the task-history row "started" commit together, so a run that dies
with its process stays visible as started, and nothing runs twice. Missed occurrences (no scheduler
was running) are coalesced into one run, as Quartz's "fire once now" misfire rule does.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import time
import traceback

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from core.appdb.models import ScheduledJob, TaskHistory
from core.assembly.records import JobKind, JobRun

from .cron import CronError, next_after

log = logging.getLogger("tessera.schedule")
INSTANCE = f"{socket.gethostname()}:{os.getpid()}"
DEFAULT_KEY = "default"


def _utc(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


def report_timezone(state, session) -> str | None:
    try:
        return state.settings.get(session, "report-timezone") or None
    except KeyError:  # the settings plugin declares it; without it, UTC
        return None


def reconcile(state, session) -> None:
    """Make the job table hold each kind's `default_cron` job and exactly the jobs its `jobs(session)`
    derives from stored rows. Committed per kind; a concurrent scheduler's identical insert is ignored,
    and a kind whose `jobs` fails is logged and left as it was (the others still reconcile)."""
    for kind in state.job_kinds.values():
        try:
            _reconcile_kind(session, kind)
            session.commit()
        except IntegrityError:  # another scheduler inserted the same job first
            session.rollback()
        except Exception:
            session.rollback()
            log.exception("could not reconcile the scheduled jobs of kind %s", kind.name)


def _reconcile_kind(session, kind: JobKind) -> None:
    wanted: set[str] = {DEFAULT_KEY} if kind.default_cron else set()  # the default job keeps whatever cron it has
    derived = kind.jobs(session) if kind.jobs else None
    stored = {job.key: job for job in session.scalars(select(ScheduledJob).where(ScheduledJob.kind == kind.name))}
    for key, (cron, zone, args) in (derived or {}).items():
        key, args = str(key), dict(args or {})
        wanted.add(key)
        job = stored.get(key)
        if job is None:
            session.add(ScheduledJob(kind=kind.name, key=key, cron=cron, timezone=zone, args=args))
        elif (job.cron, job.timezone, job.args) != (cron, zone, args):
            if (job.cron, job.timezone) != (cron, zone):
                job.next_fire, job.fire_zone = None, None
            job.cron, job.timezone, job.args = cron, zone, args
    if kind.default_cron and DEFAULT_KEY not in stored:
        session.add(ScheduledJob(kind=kind.name, key=DEFAULT_KEY, cron=kind.default_cron, args={}))
    if derived is not None:
        for key, job in stored.items():
            if key not in wanted:
                session.delete(job)


def _plan(session, jobs: list[ScheduledJob], now: int, default_zone: str | None) -> None:
    """Compute next_fire for jobs that have none, or whose zone follows a report-timezone that changed."""
    for job in jobs:
        zone = job.timezone or default_zone
        if job.next_fire is not None and (job.timezone or job.fire_zone == (default_zone or "UTC")):
            continue
        try:
            following = next_after(job.cron, zone, now - 1)
        except CronError as exc:
            log.error("job %s/%s has an unreadable schedule: %s", job.kind, job.key, exc)
            continue
        if following is None and job.next_fire is None:
            continue  # a cron with no occurrence left (a past year): nothing to plan, nothing to write
        current = ScheduledJob.next_fire.is_(None) if job.next_fire is None else ScheduledJob.next_fire == job.next_fire
        session.execute(update(ScheduledJob).where(ScheduledJob.id == job.id, current)
                        .values(next_fire=following, fire_zone=zone or "UTC"))
    session.commit()


def _claim(state, job_id: int, fire: int, now: int, kind: JobKind, default_zone: str | None) -> int | None:
    """Move the job past this occurrence and record the run as started, in one transaction; the
    history id if this process won the occurrence, else None."""
    with state.db.session() as session:
        job = session.get(ScheduledJob, job_id)
        if job is None or job.next_fire != fire:
            return None
        zone = job.timezone or default_zone
        following = next_after(job.cron, zone, max(fire, now))
        claimed = session.execute(update(ScheduledJob).where(ScheduledJob.id == job_id, ScheduledJob.next_fire == fire)
                                  .values(next_fire=following, fire_zone=zone or "UTC")).rowcount
        if claimed != 1:
            session.rollback()
            return None
        row = TaskHistory(task=kind.task or kind.name, db_id=kind.db_id(job.args) if kind.db_id else None,
                          job_id=job_id, fire_time=fire, started_at=_utc(time.time()), status="started",
                          instance=INSTANCE)
        session.add(row)
        session.commit()
        return row.id


def run_job(app, kind: JobKind, key: str, args: dict, fired_at: dt.datetime, history_id: int) -> bool:
    """Run one occurrence in an app context with a session of its own, then record how it ended."""
    state = app.extensions["tessera"]
    started = time.monotonic()
    details, status = None, "success"
    with app.app_context(), state.db.session() as session:
        try:
            details = kind.run(JobRun(app=app, session=session, kind=kind.name, key=key, args=dict(args),
                                      fired_at=fired_at))
            session.commit()
        except Exception as exc:  # a job's failure is recorded, never raised into the scheduler
            session.rollback()
            log.exception("job %s/%s failed", kind.name, key)
            status = "failed"
            details = {**(getattr(exc, "task_details", None) or {}),  # what the run wants kept (JobKind)
                       "status": "failed", "exception": type(exc).__name__, "message": str(exc)[:2000],
                       "stacktrace": traceback.format_exc().splitlines()[-20:]}
    with state.db.session() as session:
        session.execute(update(TaskHistory).where(TaskHistory.id == history_id).values(
            status=status, ended_at=_utc(time.time()), duration=int((time.monotonic() - started) * 1000),
            task_details=details if isinstance(details, dict) or details is None else {"result": details}))
        session.commit()
    return status == "success"


def tick(app, now: dt.datetime | None = None, submit=None) -> list[int]:
    """What the scheduler does every few seconds: reconcile the job table with the kinds, run what is due."""
    state = app.extensions["tessera"]
    if state.job_kinds:
        with app.app_context(), state.db.session() as session:
            reconcile(state, session)
    return run_due(app, now, submit)


def run_due(app, now: dt.datetime | None = None, submit=None) -> list[int]:
    """One tick: run every occurrence due at `now` (default: the wall clock) that this process claims.
    Returns the task-history ids of the runs it claimed. Runs happen here, one after the other, unless
    `submit(function)` is given (the scheduler's thread pool), so that a long sync does not hold back a
    subscription due meanwhile. A job still running in this process is not claimed again until it ends."""
    state = app.extensions["tessera"]
    clock = int((now or dt.datetime.now(dt.timezone.utc)).timestamp())
    kinds = state.job_kinds
    if not kinds:
        return []
    with state.db.session() as session:
        default_zone = report_timezone(state, session)
        jobs = list(session.scalars(select(ScheduledJob).where(ScheduledJob.kind.in_(kinds))))
        _plan(session, jobs, clock, default_zone)
        due = session.execute(select(ScheduledJob.id, ScheduledJob.kind, ScheduledJob.key, ScheduledJob.args,
                                     ScheduledJob.next_fire)
                              .where(ScheduledJob.kind.in_(kinds), ScheduledJob.next_fire <= clock)
                              .order_by(ScheduledJob.next_fire, ScheduledJob.id)).all()
    ran = []
    running = state.extras.setdefault("schedule_running", set())
    for job_id, kind_name, key, args, fire in due:
        kind = kinds[kind_name]
        if job_id in running:
            continue
        try:
            history_id = _claim(state, job_id, fire, clock, kind, default_zone)
        except CronError as exc:
            log.error("job %s/%s has an unreadable schedule: %s", kind_name, key, exc)
            continue
        if history_id is None:
            continue
        ran.append(history_id)
        running.add(job_id)

        def work(kind=kind, key=key, args=args, fire=fire, history_id=history_id, job_id=job_id):
            try:
                run_job(app, kind, key, args or {}, _utc(fire), history_id)
            finally:
                running.discard(job_id)

        if submit is None:
            work()
        else:
            submit(work)
    return ran
