"""Where the scheduler runs: an APScheduler job that calls runner.tick every few seconds.

`TESSERA_SCHEDULER` decides what a serving command does: `inprocess` (default) gives each instance
one scheduler, `off` leaves every job to `tessera worker` processes (BlockingScheduler, a process of
their own). Several of either on one PostgreSQL app DB are safe: each occurrence is claimed once
(core.schedule.runner).

Under gunicorn (`tessera run`, contrib/gunicorn.conf.py) "in process" means a scheduler process that
the serving command starts, restarts when it dies (core.schedule.supervisor) and stops with itself,
never a scheduler thread of gunicorn's master: the master
forks web workers whenever one is replaced, and a fork taken while a scheduler thread holds SQLite's
(or any library's) internal mutex leaves the new worker deadlocked on its first app-DB query. The
development server, which does not fork, runs a BackgroundScheduler thread.
"""
from __future__ import annotations

import atexit
import datetime as dt
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from apscheduler.events import EVENT_SCHEDULER_SHUTDOWN
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.blocking import BlockingScheduler

from .runner import tick
from .supervisor import STATUS_KEY, Supervisor, status, status_path_for

log = logging.getLogger("tessera.schedule")
MODES = ("inprocess", "off")


def mode(config: dict) -> str:
    value = str(config.get("TESSERA_SCHEDULER") or "inprocess").strip().lower()
    if value not in MODES:
        raise ValueError(f"TESSERA_SCHEDULER must be one of {', '.join(MODES)}, not {value!r}")
    return value


def poll_seconds(config: dict) -> float:
    return float(config.get("TESSERA_SCHEDULER_POLL_SECONDS") or 5)


def threads(config: dict) -> int:
    return max(1, int(config.get("TESSERA_SCHEDULER_THREADS") or 4))


def _safe_tick(app, pool) -> None:
    try:
        tick(app, submit=pool.submit)
    except Exception:  # the app DB away for a moment must not stop the scheduler; the next tick retries
        log.exception("scheduler tick failed")


def _add_tick(scheduler, app) -> None:
    # Runs go to a pool of their own: the tick only claims, so one long job holds back no other.
    pool = ThreadPoolExecutor(threads(app.config), thread_name_prefix="tessera-job")
    scheduler.add_listener(lambda event: pool.shutdown(wait=True), EVENT_SCHEDULER_SHUTDOWN)
    scheduler.add_job(_safe_tick, "interval", args=[app, pool], seconds=poll_seconds(app.config), id="tessera-tick",
                      max_instances=1, coalesce=True, next_run_time=dt.datetime.now(dt.timezone.utc))


def start_background(app) -> BackgroundScheduler:
    """Start the scheduler in a daemon thread of this process (a process that never forks); returns it."""
    scheduler = BackgroundScheduler(daemon=True, timezone=dt.timezone.utc)
    _add_tick(scheduler, app)
    scheduler.start()
    log.info("scheduler started in process, every %ss", poll_seconds(app.config))
    return scheduler


def run_blocking(app, parent_pid: int | None = None) -> None:
    """Run the scheduler in the foreground until the process is stopped (`tessera worker`). With
    `parent_pid`, stop when that process is gone (a scheduler process whose server died)."""
    scheduler = BlockingScheduler(timezone=dt.timezone.utc)
    _add_tick(scheduler, app)
    if parent_pid:
        def orphaned():
            if os.getppid() != parent_pid:
                log.info("the serving process %s is gone: scheduler process stops", parent_pid)
                scheduler.shutdown(wait=False)

        scheduler.add_job(orphaned, "interval", seconds=1, id="tessera-parent-watch")
    log.info("scheduler worker started, every %ss", poll_seconds(app.config))
    try:
        scheduler.start()
    except (KeyboardInterrupt, SystemExit):
        pass


def config_env(config: dict) -> dict:
    """The app's configuration as TESSERA_* environment variables, so a child process builds the same app."""
    env = {}
    for key, value in config.items():
        if not key.startswith("TESSERA_") or value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple, set)):
            value = ",".join(map(str, value))
        env[key] = str(value)
    return env


def restart_seconds(config: dict) -> float:
    return float(config.get("TESSERA_SCHEDULER_RESTART_SECONDS") or 1)


def supervise(app) -> Supervisor | None:
    """Start this instance's scheduler process when TESSERA_SCHEDULER is inprocess, restarted whenever it
    dies (core.schedule.supervisor); it is stopped when this process exits (and stops by itself if this
    process dies without saying so). Call it before forking web workers: they inherit where its status is."""
    if mode(app.config) != "inprocess":
        return None
    # It migrates like any process (the operator's TESSERA_RUN_MIGRATIONS): under the start-up lock that is
    # a no-op once done, and on a first start it may come before the web workers have migrated.
    env = {**os.environ, **config_env(app.config), "TESSERA_LOAD_SAMPLE_DATABASE": "false"}
    path = status_path_for(app.config, os.getpid())
    os.environ[STATUS_KEY] = app.config[STATUS_KEY] = path  # for web workers, forked or configured after this
    supervisor = Supervisor([sys.executable, "-m", "core.assembly.cli", "worker", "--parent", str(os.getpid())],
                            env, restart_seconds(app.config), path)
    supervisor.start()
    atexit.register(supervisor.stop)
    return supervisor


def stop(supervisor: Supervisor | None) -> None:
    if supervisor is not None:
        supervisor.stop()


def health(config: dict) -> dict:
    """This instance's scheduler for GET /api/health/scheduler (core.schedule.supervisor.status)."""
    return status(config, mode(config))
