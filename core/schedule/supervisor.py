"""Keeping an instance's scheduler process alive, and saying whether it is.

The serving process (`tessera run`, or gunicorn's master under contrib/gunicorn.conf.py) starts its
scheduler process (`tessera worker --parent <pid>`) through `supervise(app)`. A daemon thread of the
serving process polls that child; when it dies (a kill -9, an out-of-memory kill, a crash) the thread
logs it and starts another after a back-off: TESSERA_SCHEDULER_RESTART_SECONDS at first, doubled at each
restart up to a minute, back to the first value once a process has lived a minute. Missed occurrences
are coalesced into one run (core.schedule.runner), so a restart loses no job, and a run the dead process
left `started` is marked `unknown` by the abandoned-runs housekeeping.

Why a thread of gunicorn's master is safe here when a scheduler thread was not (core.schedule.service):
this one never opens the app DB or a driver; it sleeps, polls its child with waitpid, starts one with
subprocess and writes a small file. It logs to stderr with a handler of its own (logging re-makes
handler locks in a forked child) and not into the "tessera" ring buffer, whose plain lock a fork could
copy held; nobody reads the master's ring buffer anyway (the web workers serve /api/util/logs).

Status: each start and death is written to a JSON file in the temporary directory, named after the
serving process; its path is put in the environment and the app's config (TESSERA_SCHEDULER_STATUS_FILE)
before any web worker is forked, so the workers inherit it. `status(config)` reads it (a file read
and a kill(pid, 0): no app DB) for GET /api/health/scheduler.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

STATUS_KEY = "TESSERA_SCHEDULER_STATUS_FILE"
MAX_BACKOFF_SECONDS = 60.0
STABLE_SECONDS = 60.0  # a process that lived this long is not part of a crash loop: the back-off starts over
WATCH_SECONDS = 0.5
FAILING = ("restarting", "down")  # statuses a probe should see as unhealthy (503)

log = logging.getLogger("tessera.schedule.supervisor")


def _stderr_log() -> None:
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[%(asctime)s] [%(process)d] [%(levelname)s] %(message)s",
                                               "%Y-%m-%d %H:%M:%S %z"))  # as gunicorn's lines read
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat().replace("+00:00", "Z")


def _how_it_ended(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    # gunicorn's master reaps every child it has (waitpid(-1)), so the status may be lost and read as 0
    return f"exit status {code}" if code else "ended"


class Supervisor:
    """One scheduler process kept running by a thread of the process that created this object."""

    def __init__(self, command: list[str], env: dict, first_backoff: float, status_path: str):
        self.command, self.env = command, env
        self.first_backoff = max(0.0, first_backoff)
        self.status_path = status_path
        self.owner = os.getpid()  # forked web workers inherit this object; only the owner acts on it
        self.process: subprocess.Popen | None = None
        self.restarts = 0
        self.started_at: float | None = None
        self.last_exit_at: float | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        _stderr_log()
        self._spawn()
        self._thread = threading.Thread(target=self._watch, name="tessera-scheduler-supervisor", daemon=True)
        self._thread.start()

    def _spawn(self) -> bool:
        with self._lock:
            if self._stopping.is_set():
                return False
            self.process = subprocess.Popen(self.command, env=self.env)
            self.started_at = time.time()
            self._write("running")
        if not self.restarts:
            log.info("scheduler process %s started", self.process.pid)
        return True

    def _watch(self) -> None:
        backoff = self.first_backoff
        while not self._stopping.wait(WATCH_SECONDS):
            process = self.process
            if process.poll() is None:
                continue
            lived = time.time() - (self.started_at or time.time())
            if lived >= STABLE_SECONDS:
                backoff = self.first_backoff
            self.last_exit_at = time.time()
            self._write("restarting")
            log.warning("scheduler process %s %s after %.0f s; restart %d in %.1f s", process.pid,
                        _how_it_ended(process.returncode), lived, self.restarts + 1, backoff)
            if self._stopping.wait(backoff):
                break
            self.restarts += 1
            try:
                if not self._spawn():
                    break
            except OSError:  # no fork possible now (memory, process limit): the loop tries again later
                log.exception("could not start the scheduler process (restart %d)", self.restarts)
                self.started_at = time.time()
            else:
                log.warning("scheduler process %s started (restart %d)", self.process.pid, self.restarts)
            backoff = min(max(backoff * 2, 0.1), MAX_BACKOFF_SECONDS)

    def _write(self, status: str) -> None:
        body = {"status": status, "pid": self.process.pid if self.process else None, "restarts": self.restarts,
                "started_at": _iso(self.started_at), "last_exit_at": _iso(self.last_exit_at)}
        partial = f"{self.status_path}.{os.getpid()}.tmp"
        with open(partial, "w") as file:
            json.dump(body, file)
        os.replace(partial, self.status_path)  # readers see the old file or the new one, never half of one

    def stop(self) -> None:
        """Stop watching and stop the scheduler process (SIGTERM, SIGKILL after 10 s). Does nothing in a
        forked web worker, which inherited this object but not the child."""
        if os.getpid() != self.owner:
            return
        with self._lock:
            self._stopping.set()
            process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        try:
            os.unlink(self.status_path)
        except FileNotFoundError:
            pass


def status_path_for(config: dict, pid: int) -> str:
    """In the instance's own data directory (as gunicorn's control socket), so that instances on one host
    and a file left by a killed server stay apart; the temporary directory when there is none."""
    directory = config.get("TESSERA_DATA_DIR") or tempfile.gettempdir()
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, f"scheduler-{pid}.json")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def status(config: dict, mode: str) -> dict:
    """This instance's scheduler as an operator's probe sees it: `ok` (running), `restarting` (it died;
    another starts after the back-off), `down` (gone and not being restarted), `off` (TESSERA_SCHEDULER=off:
    `tessera worker` processes run the jobs) or `unsupervised` (served without `tessera run` or
    contrib/gunicorn.conf.py, e.g. the development server's in-process scheduler). With the restart
    count and the times of the current start and of the last death."""
    if mode == "off":
        return {"status": "off"}
    path = config.get(STATUS_KEY)
    if not path:
        return {"status": "unsupervised"}
    try:
        with open(path) as file:
            recorded = json.load(file)
    except (OSError, ValueError):
        return {"status": "down", "restarts": None, "started_at": None, "last_exit_at": None}
    state = recorded.get("status")
    if state == "running":
        state = "ok" if recorded.get("pid") and _alive(int(recorded["pid"])) else "down"
    return {"status": state, "restarts": recorded.get("restarts"), "started_at": recorded.get("started_at"),
            "last_exit_at": recorded.get("last_exit_at")}
