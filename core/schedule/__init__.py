"""The scheduler: jobs of plugin-registered kinds (hook register_job_kinds, core.assembly.records.JobKind)
stored in the app DB with a Quartz cron and a time zone, each occurrence run once across every
process sharing the app DB, and every run recorded in the task history (GET /api/task/).

Plugins call `schedule(session, kind, key, cron, timezone, args)` and `unschedule(session, kind, key)`
in their own transaction. `runner.run_due(app, now)` runs what is due at `now` (the clock is an
argument, so tests drive it); `service` runs it periodically with APScheduler, in process
(`tessera run`) or in its own (`tessera worker`). Owns: jobs, runs, task history; not what a job does.
"""
from .cron import CronError
from .jobs import schedule, scheduled, unschedule

__all__ = ["CronError", "schedule", "scheduled", "unschedule"]
