"""Scheduled syncs and field-value scans of every database, on the schedules stored with it
(Metabase's `metadata_sync` and `cache_field_values`), run by core.schedule.

The jobs are derived from the database rows (JobKind.jobs): the scheduler keeps one job per database
and schedule, adds it when a database is added, follows a changed schedule and drops the job of a
deleted database, so the database endpoints have nothing to call.
"""
from __future__ import annotations

from sqlalchemy import select

from core.appdb.models import Database
from core.assembly.records import JobKind, JobRun
from core.sync import schema

SYNC, VALUES = "database-sync", "database-field-values"


class SyncFailed(RuntimeError):
    """The sync recorded an error on the database (its sync_error); the task history shows it too."""


def _database_id(args: dict) -> int | None:
    return args.get("database_id")


def _sync_jobs(session) -> dict:
    rows = session.execute(select(Database.id, Database.metadata_sync_schedule)).all()
    return {str(i): (cron, None, {"database_id": i}) for i, cron in rows if cron}


def _values_jobs(session) -> dict:
    # Metabase scans values on a schedule only for fully synced databases that are not on demand.
    rows = session.execute(select(Database.id, Database.cache_field_values_schedule, Database.is_full_sync,
                                  Database.is_on_demand)).all()
    return {str(i): (cron, None, {"database_id": i}) for i, cron, full, on_demand in rows
            if cron and full is not False and not on_demand}


def sync(job: JobRun) -> dict:
    state = job.app.extensions["tessera"]
    database_id = job.args["database_id"]
    timings: dict = {}
    with schema.locked(state, database_id):
        ok = schema.sync_database(state, database_id, timings)
    if not ok:
        row = job.session.get(Database, database_id)
        raise SyncFailed(row.sync_error if row is not None and row.sync_error else
                         f"database {database_id} could not be synced")
    return {"timings": {phase: round(seconds, 3) for phase, seconds in timings.items()}}


def scan_values(job: JobRun) -> dict:
    state = job.app.extensions["tessera"]
    database_id = job.args["database_id"]
    with schema.locked(state, database_id):
        ok = schema.rescan_values(state, database_id)
    if not ok:
        raise SyncFailed(f"the field values of database {database_id} could not be scanned")
    return {}


KINDS = [
    JobKind(SYNC, sync, task="sync", db_id=_database_id, jobs=_sync_jobs),
    JobKind(VALUES, scan_values, task="update-field-values", db_id=_database_id, jobs=_values_jobs),
]
