"""The first run (issue 28): what `make run` installs and where it listens, `tessera run`'s TESSERA_HOST and
TESSERA_PORT, its start line, and two instances side by side on one host (each with its own gunicorn
control socket)."""
from __future__ import annotations

import http.client
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from gunicorn.ctl.client import ControlClient

from core.assembly.cli import startup_line
from drivers import sqlite_rows
from tests.serving import ROOT, Served, free_port, server_env

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


def make_dry_run(target: str, venv: Path, *args: str, **env: str) -> str:
    """What `make TARGET` would run (make -n) with VENV pointing at a directory the test prepared."""
    # Not a sub-make of the `make test` running us: MAKELEVEL and MAKEFLAGS would add "Entering directory"
    # lines (and the outer make's flags) to what we read.
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith("TESSERA_") and k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")} | env
    result = subprocess.run(["make", "--no-print-directory", "-n", target, f"VENV={venv}", *args], cwd=ROOT, env=environ,
                            capture_output=True, text=True, check=True)
    return result.stdout


def fake_venv(tmp_path: Path, *stamps: str) -> Path:
    """A venv directory as the Makefile leaves it: pyvenv.cfg, then the install stamps (newer than setup.py)."""
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for stamp in stamps:
        (venv / stamp).touch()
    return venv


@needs_make
def test_make_run_on_a_fresh_clone_installs_the_package_only(tmp_path):
    commands = make_dry_run("run", tmp_path / "fresh")
    assert "-m venv" in commands
    assert "-e ." in commands
    assert "[dev]" not in commands and "contrib/" not in commands
    assert f"{tmp_path / 'fresh'}/bin/tessera run --host 127.0.0.1 --port 3000" in commands


@needs_make
def test_make_run_port_and_host(tmp_path):
    venv = fake_venv(tmp_path, ".installed-run")
    commands = make_dry_run("run", venv, "PORT=3001", "HOST=0.0.0.0")
    assert commands.strip() == f"{venv}/bin/tessera run --host 0.0.0.0 --port 3001"
    from_environment = make_dry_run("run", venv, TESSERA_PORT="3005", TESSERA_HOST="192.0.2.1")
    assert from_environment.strip() == f"{venv}/bin/tessera run --host 192.0.2.1 --port 3005"


@needs_make
def test_make_test_after_make_run_adds_the_dev_extra_and_contrib_drivers(tmp_path):
    commands = make_dry_run("install-test", fake_venv(tmp_path, ".installed-run"))
    assert "-e '.[dev]'" in commands and "contrib/tessera-driver-spark" in commands
    assert "-m venv" not in commands and "what it needs to run" not in commands


@needs_make
def test_make_run_after_make_test_installs_nothing(tmp_path):
    venv = fake_venv(tmp_path, ".installed-run", ".installed-test")
    assert "pip" not in make_dry_run("run", venv)
    assert "pip" not in make_dry_run("install-test", venv)


def test_tessera_run_reads_host_and_port_from_the_environment_and_names_what_it_runs_with(tmp_path):
    port = free_port()
    env = server_env(tmp_path / "data", TESSERA_HOST="127.0.0.1", TESSERA_PORT=str(port),
                     TESSERA_LOAD_SAMPLE_DATABASE="false")
    with Served([sys.executable, "-m", "core.assembly.cli", "run", "--workers", "1"], env, port,
                tmp_path / "server.log") as server:
        output = server.output()
    lines = [line for line in output.splitlines() if "accelerations:" in line]
    assert len(lines) == 1, output
    line = lines[0]
    assert f"sqlite C row reader {'on' if sqlite_rows.native is not None else 'off'}" in line
    assert "plugins (" in line and " session," in line and "dashboards" in line
    assert "drivers (" in line and "sqlite" in line and "postgres" in line
    assert f"Listening at: http://127.0.0.1:{port}" in output


def test_start_line_says_when_the_c_row_reader_is_not_used(app, monkeypatch):
    monkeypatch.setattr(sqlite_rows, "native", None)  # as on a machine where the extension did not build
    assert "sqlite C row reader off" in startup_line(app)


def test_start_line_names_an_extra_plugin(tmp_path, monkeypatch):
    from core.assembly.app import create_app
    from tests.support import write_plugin

    name = write_plugin(tmp_path, monkeypatch, "from core import hookimpl\n")
    app = create_app({"TESSERA_DATA_DIR": str(tmp_path / "data"), "TESSERA_PLUGINS_AUTOLOAD": False,
                      "TESSERA_PLUGINS_EXTRA": name})
    assert name in startup_line(app)


def _listeners(socket_path: Path) -> str:
    with ControlClient(str(socket_path), timeout=10) as client:
        return str(client.send_command("show listeners"))


def test_two_instances_on_one_host_keep_to_their_own_control_socket():
    # A short folder: a Unix socket's path must fit in 108 bytes, and pytest's own temporary folders
    # (xdist's, the test's long name, a growing pytest-N) can pass that, which leaves gunicorn without one.
    tmp_path = Path(tempfile.mkdtemp(prefix="tss-"))
    assert len(str(tmp_path / "a" / "gunicorn.ctl")) < 100
    home = tmp_path / "home"
    home.mkdir()
    instances = []
    for name in ("a", "b"):
        port = free_port()
        env = server_env(tmp_path / name, HOME=str(home), TESSERA_LOAD_SAMPLE_DATABASE="false")
        env.pop("XDG_RUNTIME_DIR", None)  # gunicorn's default would then be ~/.gunicorn/gunicorn.ctl, shared
        instances.append(Served([sys.executable, "-m", "core.assembly.cli", "run", "--port", str(port),
                                 "--workers", "1"], env, port, tmp_path / f"{name}.log"))
    a, b = instances
    try:
        a.wait_ready()
        b.wait_ready()
        sockets = [tmp_path / "a" / "gunicorn.ctl", tmp_path / "b" / "gunicorn.ctl"]
        # The arbiter binds its control socket beside its workers: a worker may answer first.
        deadline = time.monotonic() + 15
        while not all(path.is_socket() for path in sockets) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(path.is_socket() for path in sockets)
        # An unsaved question's link of several kilobytes reaches the app (gunicorn's default stops at 4094).
        long_link = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
        long_link.request("GET", "/api/health?q=" + "a" * 7000)
        assert long_link.getresponse().status == 200
        long_link.close()
        assert str(a.port) in _listeners(sockets[0]) and str(b.port) not in _listeners(sockets[0])
        assert str(b.port) in _listeners(sockets[1])
        a.stop()
        assert a.process.returncode == 0
        assert b.answers()
        assert not sockets[0].exists() and sockets[1].is_socket()
        assert str(b.port) in _listeners(sockets[1])
        b.stop()
        assert b.process.returncode == 0
        assert not (home / ".gunicorn").exists()
    finally:
        a.stop()
        b.stop()
        shutil.rmtree(tmp_path, ignore_errors=True)


def test_the_production_gunicorn_config_puts_the_control_socket_in_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSERA_DATA_DIR", str(tmp_path))
    settings = runpy.run_path(str(ROOT / "contrib" / "gunicorn.conf.py"))
    assert settings["control_socket"] == str(tmp_path / "gunicorn.ctl")
