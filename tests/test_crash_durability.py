"""No acknowledged write is lost when the server dies with SIGKILL (compat/security.md section 8.2).

The real server (`tessera run`, gunicorn with two gthread workers) runs in its own process group on
loopback; client threads create collections and cards concurrently and remember the id of every 200.
Mid-stream the whole group gets SIGKILL. The server restarts on the same data, and every acknowledged
id must be readable; the SQLite app DB must also pass `PRAGMA integrity_check`. Both app-DB backends.
"""
from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, FAST_HASHING

ROOT = Path(__file__).resolve().parents[1]
WRITE_SECONDS = 2.5
WRITERS_PER_KIND = 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`tessera run` in a new process group, so SIGKILL reaches the gunicorn master and its workers."""

    def __init__(self, env: dict, log: Path):
        self.env, self.log = env, log
        self.port = _free_port()
        self.process = None

    def start(self) -> None:
        self.port = _free_port()
        with self.log.open("a") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "core.assembly.cli", "run", "--host", "127.0.0.1", "--port", str(self.port),
                 "--workers", "2", "--threads", "4"],
                env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"server exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                if self.call("GET", "/api/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        pytest.fail("server did not answer /api/health within 60 s")

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def call(self, method: str, path: str, body=None, session: str | None = None, timeout: float = 10):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json", **({"X-Metabase-Session": session} if session else {})})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")


def _set_up(server: Server, data_file: str) -> tuple[str, int]:
    """Setup through the API, then register the data file the cards query; returns (session, database id)."""
    status, properties = server.call("GET", "/api/session/properties")
    assert status == 200
    status, body = server.call("POST", "/api/setup", {
        "token": properties["setup-token"], "prefs": {"site_name": "Crash Co"},
        "user": {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "first_name": "Ada", "last_name": "Admin"}})
    assert status == 200, body
    session = body["id"]
    status, database = server.call("POST", "/api/database", {
        "engine": "sqlite", "name": "Crash data", "details": {"db": data_file}}, session=session, timeout=30)
    assert status == 200, database
    return session, database["id"]


def _writer(server: Server, session: str, kind: str, db_id: int, stop: threading.Event, acked: list) -> None:
    """Write until told to stop or the server is gone; only a 200 with an id counts as acknowledged."""
    n = 0
    while not stop.is_set():
        n += 1
        name = f"{kind}-{threading.get_ident()}-{n}"
        if kind == "collection":
            path, body = "/api/collection", {"name": name}
        else:
            path, body = "/api/card", {"name": name, "display": "table", "visualization_settings": {},
                                       "dataset_query": {"database": db_id, "type": "native",
                                                         "native": {"query": "SELECT 1 AS one"}}}
        try:
            status, created = server.call("POST", path, body, session=session)
        except (OSError, http.client.HTTPException):
            return  # the server died mid-request or mid-answer: this write was never acknowledged
        if status == 200:
            acked.append((kind, created["id"], name))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_acknowledged_writes_survive_kill_9(backend, request, tmp_path):
    env = {**os.environ, "TESSERA_DATA_DIR": str(tmp_path), "TESSERA_PLUGINS_AUTOLOAD": "false",
           "TESSERA_LOAD_SAMPLE_DATABASE": "false", "PYTHONPATH": str(ROOT),
           **{key: str(value) for key, value in FAST_HASHING.items()}}
    env.pop("TESSERA_DB_URL", None)
    if backend == "postgresql":
        env["TESSERA_DB_URL"] = request.getfixturevalue("postgres_app_db")
    files = tmp_path / "files"
    files.mkdir()
    data_file = files / "crash.db"
    with sqlite3.connect(data_file) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")

    server = Server(env, tmp_path / "server.log")
    server.start()
    try:
        session, db_id = _set_up(server, str(data_file))
        acked: list = []
        stop = threading.Event()
        writers = [threading.Thread(target=_writer, args=(server, session, kind, db_id, stop, acked))
                   for kind in ("collection", "card") for _ in range(WRITERS_PER_KIND)]
        for thread in writers:
            thread.start()
        time.sleep(WRITE_SECONDS)
        server.kill()  # while the writers are still sending
        stop.set()
        for thread in writers:
            thread.join(timeout=30)
        kinds = {kind for kind, _, _ in acked}
        # A run that acknowledged nothing (or one kind only) would prove nothing.
        assert kinds == {"collection", "card"} and len(acked) >= 8, (len(acked), server.log.read_text()[-2000:])

        if backend == "sqlite":
            with sqlite3.connect(tmp_path / "tessera.db") as conn:
                assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]

        server.start()
        missing = []
        for kind, object_id, name in acked:
            status, body = server.call("GET", f"/api/{kind}/{object_id}", session=session)
            if status != 200 or body["name"] != name:
                missing.append((kind, object_id, name, status))
        assert missing == [], f"{len(missing)} of {len(acked)} acknowledged writes lost: {missing[:5]}"
    finally:
        server.stop()
