"""Where the scheduler runs: an APScheduler job that calls runner.tick every few seconds.

`TESSERA_SCHEDULER` decides whether a serving process runs it: `inprocess` (default) starts one
BackgroundScheduler per instance (`tessera run`: in gunicorn's master, never in each web worker;
contrib/gunicorn.conf.py does the same), `off` leaves it to `tessera worker`, which runs a
BlockingScheduler in a process of its own. Several of either on one PostgreSQL app DB are safe: each
occurrence is claimed once (core.schedule.runner).
"""
from __future__ import annotations

import datetime as dt
import logging

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.blocking import BlockingScheduler

from .runner import tick

log = logging.getLogger("tessera.schedule")
MODES = ("inprocess", "off")


def mode(config: dict) -> str:
    value = str(config.get("TESSERA_SCHEDULER") or "inprocess").strip().lower()
    if value not in MODES:
        raise ValueError(f"TESSERA_SCHEDULER must be one of {', '.join(MODES)}, not {value!r}")
    return value


def poll_seconds(config: dict) -> float:
    return float(config.get("TESSERA_SCHEDULER_POLL_SECONDS") or 5)


def _safe_tick(app) -> None:
    try:
        tick(app)
    except Exception:  # the app DB away for a moment must not stop the scheduler; the next tick retries
        log.exception("scheduler tick failed")


def _add_tick(scheduler, app) -> None:
    scheduler.add_job(_safe_tick, "interval", args=[app], seconds=poll_seconds(app.config), id="tessera-tick",
                      max_instances=1, coalesce=True, next_run_time=dt.datetime.now(dt.timezone.utc))


def start_background(app) -> BackgroundScheduler:
    """Start the scheduler in a daemon thread of this process; returns it (call .shutdown() to stop)."""
    scheduler = BackgroundScheduler(daemon=True, timezone=dt.timezone.utc)
    _add_tick(scheduler, app)
    scheduler.start()
    log.info("scheduler started in process, every %ss", poll_seconds(app.config))
    return scheduler


def start_if_in_process(app) -> BackgroundScheduler | None:
    return start_background(app) if mode(app.config) == "inprocess" else None


def run_blocking(app) -> None:
    """Run the scheduler in the foreground until the process is stopped (`tessera worker`)."""
    scheduler = BlockingScheduler(timezone=dt.timezone.utc)
    _add_tick(scheduler, app)
    log.info("scheduler worker started, every %ss", poll_seconds(app.config))
    try:
        scheduler.start()
    except (KeyboardInterrupt, SystemExit):
        pass
