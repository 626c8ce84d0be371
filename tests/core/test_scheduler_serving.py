"""Where scheduled jobs run when Tessera serves: one scheduler process per instance, started and stopped
by the serving command (`tessera run`, contrib/gunicorn.conf.py), never one per web worker and never a
thread of gunicorn's master (which forks); none with TESSERA_SCHEDULER=off."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.schedule import schedule
from core.testing import FAST_HASHING

ROOT = Path(__file__).resolve().parents[2]
EXTRA = "tests.core.scheduler_jobs"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def app_config(app_config):
    return {**app_config, "TESSERA_PLUGINS_EXTRA": EXTRA}


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def serve_and_collect(app, app_config, tmp_path, command, extra_env, wait_for_runs=True) -> tuple[int, list[int]]:
    """Serve with `command` while a job due every second writes its pid; (server pid, pids of the runs),
    checking that the runs came from a scheduler process of the server that ends with it."""
    out = tmp_path / "runs.txt"
    state = app.extensions["tessera"]
    with state.db.session() as session:
        schedule(session, "test-count", "every-second", "* * * * * ? *", None, {"file": str(out)})
        session.commit()
    port = free_port()
    env = {**os.environ, **{k: str(v) for k, v in app_config.items()}, **{k: str(v) for k, v in FAST_HASHING.items()},
           "PYTHONPATH": str(ROOT), "TESSERA_BIND": f"127.0.0.1:{port}", "TESSERA_WORKERS": "2",
           "TESSERA_LOAD_SAMPLE_DATABASE": "false", "TESSERA_SCHEDULER_POLL_SECONDS": "0.2", **extra_env}
    server = subprocess.Popen([part.replace("PORT", str(port)) for part in command], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + (30 if wait_for_runs else 6)
        while time.monotonic() < deadline:
            if wait_for_runs and out.exists() and len(out.read_text().splitlines()) >= 3:
                break
            time.sleep(0.2)
        pids = [int(line.split()[1]) for line in out.read_text().splitlines()] if out.exists() else []
        for pid in set(pids):
            assert " worker --parent " in cmdline(pid) and f"--parent {server.pid}" in cmdline(pid)
    finally:
        server.terminate()
        server.wait(15)
    deadline = time.monotonic() + 10
    while any(cmdline(pid) for pid in set(pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(cmdline(pid) for pid in set(pids)), "the scheduler process outlived its server"
    return server.pid, pids


def test_tessera_run_runs_jobs_in_one_scheduler_process_not_in_each_web_worker(app, app_config, tmp_path):
    pid, pids = serve_and_collect(app, app_config, tmp_path, [sys.executable, "-m", "core.assembly.cli", "run",
                                                              "--port", "PORT", "--workers", "2"], {})
    assert len(pids) >= 3 and len(set(pids)) == 1 and pid not in pids


def test_gunicorn_configuration_starts_one_scheduler_process(app, app_config, tmp_path):
    pytest.importorskip("gunicorn")
    pid, pids = serve_and_collect(app, app_config, tmp_path, [sys.executable, "-m", "gunicorn", "-c",
                                                              "contrib/gunicorn.conf.py", "wsgi:app"], {})
    assert len(pids) >= 3 and len(set(pids)) == 1 and pid not in pids


def test_scheduler_off_leaves_jobs_to_workers(app, app_config, tmp_path):
    _, pids = serve_and_collect(app, app_config, tmp_path, [sys.executable, "-m", "core.assembly.cli", "run",
                                                            "--port", "PORT", "--workers", "2"],
                                {"TESSERA_SCHEDULER": "off"}, wait_for_runs=False)
    assert pids == []


def test_a_scheduler_process_stops_when_its_server_dies_without_a_word(app_config, tmp_path):
    import signal

    env = {**os.environ, **{k: str(v) for k, v in app_config.items()}, "PYTHONPATH": str(ROOT)}
    # a stand-in server: starts the scheduler process, prints its pid, then waits to be killed
    server = subprocess.Popen([sys.executable, "-c", (
        "import os, subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-m', 'core.assembly.cli', 'worker', '--parent', str(os.getpid())])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(120)\n")], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    scheduler_pid = int(server.stdout.readline())
    try:
        deadline = time.monotonic() + 30
        while "worker" in cmdline(scheduler_pid) and time.monotonic() < deadline:
            if Path(f"/proc/{scheduler_pid}/status").exists() and len(os.listdir(f"/proc/{scheduler_pid}/task")) > 1:
                break  # the worker runs its scheduler (more than one thread)
            time.sleep(0.1)
        server.send_signal(signal.SIGKILL)
        server.wait(5)
        # It notices within a second, then lets a tick in flight end (on a loaded machine, seconds).
        deadline = time.monotonic() + 30
        while cmdline(scheduler_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not cmdline(scheduler_pid), "an orphaned scheduler process kept running"
    finally:
        if cmdline(scheduler_pid):
            os.kill(scheduler_pid, signal.SIGKILL)


def http_get(port: int, path: str) -> tuple[int, dict]:
    import json
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
    except OSError:
        return 0, {}


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"not within {seconds} s: {what}")


COMMANDS = {
    "tessera run": [sys.executable, "-m", "core.assembly.cli", "run", "--port", "PORT", "--workers", "2"],
    "gunicorn.conf.py": [sys.executable, "-m", "gunicorn", "-c", "contrib/gunicorn.conf.py", "wsgi:app"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_killed_scheduler_process_is_restarted_and_due_jobs_run_again(app, app_config, tmp_path, command):
    """kill -9 the instance's scheduler process: the serving process logs it and starts another after the
    back-off, a job due every second runs again (in the new process) within a bounded time, and
    GET /api/health/scheduler says so while /api/health keeps Metabase's body."""
    import signal

    if command == "gunicorn.conf.py":
        pytest.importorskip("gunicorn")
    out, log = tmp_path / "runs.txt", tmp_path / "server.log"
    with app.extensions["tessera"].db.session() as session:
        schedule(session, "test-count", "every-second", "* * * * * ? *", None, {"file": str(out)})
        session.commit()
    port = free_port()
    env = {**os.environ, **{k: str(v) for k, v in app_config.items()}, **{k: str(v) for k, v in FAST_HASHING.items()},
           "PYTHONPATH": str(ROOT), "TESSERA_BIND": f"127.0.0.1:{port}", "TESSERA_WORKERS": "2",
           "TESSERA_LOAD_SAMPLE_DATABASE": "false", "TESSERA_SCHEDULER_POLL_SECONDS": "0.2",
           "TESSERA_SCHEDULER_RESTART_SECONDS": "2"}  # the 503 window a probe can see
    runs = lambda: [int(line.split()[1]) for line in out.read_text().splitlines()] if out.exists() else []  # noqa: E731
    with open(log, "w") as server_log:
        server = subprocess.Popen([part.replace("PORT", str(port)) for part in COMMANDS[command]], cwd=ROOT, env=env,
                                  stdout=server_log, stderr=subprocess.STDOUT)
    try:
        first = wait_for(lambda: runs() and runs()[-1], 90, "a first run")
        assert http_get(port, "/api/health") == (200, {"status": "ok"})
        status, detail = wait_for(lambda: (lambda s: s[0] == 200 and s)(http_get(port, "/api/health/scheduler")), 30,
                                  "the scheduler health detail")
        assert detail["status"] == "ok" and detail["restarts"] == 0 and detail["last_exit_at"] is None

        os.kill(first, signal.SIGKILL)
        killed_at = time.monotonic()
        status, detail = wait_for(lambda: (lambda s: s[1].get("status") != "ok" and s)(http_get(port, "/api/health/scheduler")),
                                  5, "the health detail to see the dead scheduler")
        assert status == 503 and detail["status"] in ("restarting", "down")
        # a due job runs again, in another scheduler process of the same server, within a bounded time
        # (bounded: the back-off, a process start, one poll; generous for a loaded test machine)
        second = wait_for(lambda: [pid for pid in runs() if pid != first][-1:], 60, "a run after the kill")[0]
        assert time.monotonic() - killed_at < 60
        assert f"--parent {server.pid}" in cmdline(second)
        status, detail = http_get(port, "/api/health/scheduler")
        assert status == 200 and detail["status"] == "ok" and detail["restarts"] == 1 and detail["last_exit_at"]
        assert http_get(port, "/api/health") == (200, {"status": "ok"})
        text = log.read_text()
        assert f"scheduler process {first} " in text and "restart 1 in 2.0 s" in text
        assert f"scheduler process {second} started (restart 1)" in text
    finally:
        server.terminate()
        server.wait(60)  # gthread workers end gracefully: slow on a loaded machine
    wait_for(lambda: not any(cmdline(pid) for pid in set(runs())), 10, "the scheduler process to stop with its server")


def test_scheduler_health_detail_without_a_supervisor_and_with_a_dead_process(app, tmp_path):
    """What GET /api/health/scheduler answers when the app is not served by `tessera run` or gunicorn.conf.py,
    when the jobs are left to workers, and when the recorded process is gone (503 for a probe)."""
    import json

    client = app.test_client()
    assert (client.get("/api/health/scheduler").status_code, client.get("/api/health/scheduler").json) == \
        (200, {"status": "unsupervised"})
    app.config["TESSERA_SCHEDULER"] = "off"
    assert client.get("/api/health/scheduler").json == {"status": "off"}
    app.config["TESSERA_SCHEDULER"] = "inprocess"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    status_file = tmp_path / "scheduler.json"
    status_file.write_text(json.dumps({"status": "running", "pid": gone.pid, "restarts": 3,
                                       "started_at": "2026-01-01T00:00:00Z", "last_exit_at": None}))
    app.config["TESSERA_SCHEDULER_STATUS_FILE"] = str(status_file)
    answer = client.get("/api/health/scheduler")
    assert answer.status_code == 503 and answer.json["status"] == "down" and answer.json["restarts"] == 3
    status_file.write_text(json.dumps({"status": "running", "pid": os.getpid(), "restarts": 3,
                                       "started_at": "2026-01-01T00:00:00Z", "last_exit_at": "2026-01-01T00:00:01Z"}))
    assert client.get("/api/health/scheduler").json == {"status": "ok", "restarts": 3, "started_at": "2026-01-01T00:00:00Z",
                                                        "last_exit_at": "2026-01-01T00:00:01Z"}
    assert client.get("/api/health").json == {"status": "ok"}
