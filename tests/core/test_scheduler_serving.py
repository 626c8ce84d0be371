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
        deadline = time.monotonic() + 15
        while cmdline(scheduler_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not cmdline(scheduler_pid), "an orphaned scheduler process kept running"
    finally:
        if cmdline(scheduler_pid):
            os.kill(scheduler_pid, signal.SIGKILL)
