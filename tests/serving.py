"""A server command (`tessera run`, `make run`) as a real process for the tests of the first run: started in
its own process group, waited for until /api/health answers, stopped with SIGTERM to the whole group."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen, timeout: float = 10) -> None:
    """Terminate a helper server the tests started (an OpenID provider, slapd), killing it if it lingers."""
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Served:
    """One server process; its output (the start line, gunicorn's log) goes to `log`."""

    def __init__(self, argv: list[str], env: dict, port: int, log: Path, cwd: Path = ROOT):
        self.port, self.log = port, log
        with log.open("w") as out:
            self.process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"server exited with {self.process.returncode}:\n{self.output()[-3000:]}")
            if self.answers():
                return
            time.sleep(0.2)
        raise AssertionError(f"server did not answer /api/health within {timeout} s:\n{self.output()[-3000:]}")

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def output(self) -> str:
        return self.log.read_text()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def __enter__(self) -> "Served":
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def server_env(data_dir: Path, **extra: str) -> dict:
    """The environment of a test server: its own data dir, cheap password hashing, this checkout's code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env.update({"TESSERA_DATA_DIR": str(data_dir), "TESSERA_PASSWORD_HASH_TIME_COST": "1",
                "TESSERA_PASSWORD_HASH_MEMORY_KIB": "8", "PYTHONPATH": str(ROOT)})
    env.update(extra)
    return env
