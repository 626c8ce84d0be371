"""Where scheduled jobs run when Tessera serves: one scheduler per instance, in the serving master
(`tessera run`, contrib/gunicorn.conf.py), never one per web worker; none with TESSERA_SCHEDULER=off."""
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


def serve_and_collect(app, app_config, tmp_path, command, extra_env, wait_for_runs=True) -> tuple[int, list[int]]:
    """Serve with `command` while a job due every second writes its pid; (server pid, pids of the runs)."""
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
    finally:
        server.terminate()
        server.wait(15)
    lines = out.read_text().splitlines() if out.exists() else []
    return server.pid, [int(line.split()[1]) for line in lines]


def test_tessera_run_runs_jobs_once_in_its_master_not_in_each_web_worker(app, app_config, tmp_path):
    pid, pids = serve_and_collect(app, app_config, tmp_path, [sys.executable, "-m", "core.assembly.cli", "run",
                                                              "--port", "PORT", "--workers", "2"], {})
    assert len(pids) >= 3 and set(pids) == {pid}


def test_gunicorn_configuration_runs_jobs_in_the_master(app, app_config, tmp_path):
    pytest.importorskip("gunicorn")
    pid, pids = serve_and_collect(app, app_config, tmp_path, [sys.executable, "-m", "gunicorn", "-c",
                                                              "contrib/gunicorn.conf.py", "wsgi:app"], {})
    assert len(pids) >= 3 and set(pids) == {pid}


def test_scheduler_off_leaves_jobs_to_workers(app, app_config, tmp_path):
    _, pids = serve_and_collect(app, app_config, tmp_path, [sys.executable, "-m", "core.assembly.cli", "run",
                                                            "--port", "PORT", "--workers", "2"],
                                {"TESSERA_SCHEDULER": "off"}, wait_for_runs=False)
    assert pids == []
