"""The production server: gunicorn with two gthread workers (contrib/gunicorn.conf.py) on one app DB.

Per-process state shows up only here: login throttling must count across workers, a client that
leaves must stop its query in whichever worker runs it, and new connections are shared out between
the workers.
"""
from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from core.appdb.models import QueryExecution
from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, FAST_HASHING, setup_admin, sqlite_file

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(app_config: dict, port: int) -> dict:
    return {**os.environ, **{k: str(v) for k, v in app_config.items()}, **{k: str(v) for k, v in FAST_HASHING.items()},
            "TESSERA_BIND": f"127.0.0.1:{port}", "TESSERA_WORKERS": "2", "TESSERA_THREADS": "4"}


def start_server(env: dict, worker_class: str = "gthread", **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "contrib/gunicorn.conf.py", "-k", worker_class,
                             "wsgi:app"], cwd=ROOT, env=env, **popen)


@pytest.fixture
def gunicorn(request, app, app_config):
    """Two workers of the production configuration (gthread), or of `param` as worker class."""
    pytest.importorskip("gunicorn")
    worker_class = getattr(request, "param", "gthread")
    setup_admin(app)
    port = free_port()
    server = start_server(server_env(app_config, port), worker_class,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if call(port, "GET", "/api/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("gunicorn did not start")
        yield port
    finally:
        server.terminate()
        server.wait(10)


def call(port: int, method: str, path: str, body: dict | None = None, token: str | None = None):
    """One request on a new connection (so the kernel may hand it to either worker)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", **({"X-Metabase-Session": token} if token else {})}
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, json.loads(data) if data else None


def test_a_question_link_of_several_kilobytes_is_served(gunicorn):
    # An unsaved question travels in its page's link: past gunicorn's default request line of 4094 bytes
    # it would be refused before the app sees it.
    assert call(gunicorn, "GET", "/api/health?q=" + "a" * 7000)[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", gunicorn, timeout=30)
    conn.request("GET", "/api/health?q=" + "a" * 9000)
    assert conn.getresponse().status == 414  # still bounded
    conn.close()


@pytest.mark.parametrize("gunicorn", ["sync"], indirect=True)
def test_throttling_counts_across_workers(gunicorn):
    # Sync workers serve one request at a time, so each pair of simultaneous failures reaches both workers:
    # counted per worker (as before), five each would not reach the threshold of ten.
    wrong = {"username": ADMIN_EMAIL, "password": "wrong-password-1"}
    with ThreadPoolExecutor(2) as pool:
        for _ in range(5):
            statuses = list(pool.map(lambda _: call(gunicorn, "POST", "/api/session", wrong)[0], range(2)))
            assert statuses == [401, 401]
    for _ in range(4):
        status, body = call(gunicorn, "POST", "/api/session", {"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
        assert status == 400 and body["errors"]["username"].startswith("Too many attempts!")


def test_a_query_stops_when_its_client_leaves_a_worker(app, gunicorn):
    port = gunicorn
    _, session = call(port, "POST", "/api/session", {"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    token = session["id"]
    path = sqlite_file(app, "slow.db", "CREATE TABLE t (id INTEGER)")
    status, database = call(port, "POST", "/api/database", {"name": "Slow", "engine": "sqlite", "details": {"db": path}},
                               token)
    assert status == 200
    payload = json.dumps({"database": database["id"], "type": "native", "native": {"query": (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 4000000000) SELECT count(*) FROM c")}})
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"POST /api/dataset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(payload)}\r\nX-Metabase-Session: {token}\r\n\r\n".encode() + payload.encode())
    time.sleep(1.5)
    sock.close()
    left = time.monotonic()
    engine = create_engine(app.config["TESSERA_DB_URL"])
    try:
        # The worker's query log writes the run once the statement has ended: interrupted, not finished.
        while time.monotonic() - left < 8:
            with engine.connect() as conn:
                errors = conn.execute(select(QueryExecution.error).where(
                    QueryExecution.database_id == database["id"])).scalars().all()
            if errors:
                break
            time.sleep(0.2)
        assert errors and errors[0], "the query was still running 8 s after its client left"
    finally:
        engine.dispose()


def _holders(port: int, client_ports: set[int]) -> Counter:
    """How many of the connections from `client_ports` to `port` each process holds (read from /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if int(local.rsplit(":", 1)[1], 16) == port and int(remote.rsplit(":", 1)[1], 16) in client_ports:
                inodes.add(f"socket:[{inode}]")
    held = Counter()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            held.update(fd_dir.parent.name for fd in fd_dir.iterdir() if os.readlink(fd) in inodes)
        except OSError:  # a process that ended, or one not ours
            continue
    return held


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the connections' owners from Linux's /proc")
def test_a_burst_of_connections_is_shared_out_between_the_workers(gunicorn):
    # On one shared listening socket a burst often went whole to one worker, which then served every
    # kept-alive connection on one core while the other idled (core.assembly.server.choose_listeners).
    clients = [socket.create_connection(("127.0.0.1", gunicorn), timeout=10) for _ in range(24)]
    try:
        for client in clients:
            client.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
        for client in clients:
            assert client.recv(1024).startswith(b"HTTP/1.1 200")  # accepted and answered, still open
        held = _holders(gunicorn, {client.getsockname()[1] for client in clients})
        assert sum(held.values()) == 24
        assert len(held) == 2 and min(held.values()) >= 3, held
    finally:
        for client in clients:
            client.close()


def test_a_second_server_on_a_taken_port_stops_and_says_so(gunicorn, app_config):
    second = start_server(server_env(app_config, gunicorn), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        output, _ = second.communicate(timeout=60)
    finally:
        second.kill()
    assert second.returncode != 0
    assert f"127.0.0.1:{gunicorn} is already in use" in output.decode()
    assert call(gunicorn, "GET", "/api/health")[0] == 200  # the first one serves on


@pytest.mark.parametrize("bind, worker_class, workers, own", [
    (["127.0.0.1:0"], "gthread", 2, True),
    (["127.0.0.1:0"], "gthread", 1, False),  # nothing to share out
    (["unix:/tmp/tessera-test.sock"], "gthread", 2, False),  # each worker would replace the socket's path
    (["127.0.0.1:0"], "sync", 2, False),  # a connection must not wait behind a busy sync worker
])
def test_each_gthread_worker_listens_on_its_own_tcp_socket(bind, worker_class, workers, own, monkeypatch):
    from gunicorn.config import Config
    from gunicorn.glogging import Logger

    from core.assembly.server import choose_listeners

    monkeypatch.delenv("LISTEN_FDS", raising=False)

    class Arbiter:  # what on_starting is given: the configuration, the log, the old master of a re-exec
        cfg = Config()
        log = Logger(cfg)
        master_pid = 0

    Arbiter.cfg.set("bind", bind)
    Arbiter.cfg.set("workers", workers)
    Arbiter.cfg.set("worker_class", worker_class)
    Arbiter.cfg.set("threads", 1)
    choose_listeners(Arbiter)
    assert Arbiter.cfg.reuse_port is own


def test_tessera_run_and_the_production_config_share_one_set_of_settings(tmp_path, monkeypatch):
    """contrib/gunicorn.conf.py takes core.assembly.server.settings whole, so a setting changed there
    (the request-line limit, the buffers' flush at worker exit) reaches both servers."""
    import runpy

    from core.assembly.config import load_config
    from core.assembly.server import LIMIT_REQUEST_LINE, settings

    monkeypatch.setenv("TESSERA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("TESSERA_ACCESS_LOG", "")
    production = runpy.run_path(str(ROOT / "contrib" / "gunicorn.conf.py"))
    shared = settings(load_config())
    assert {key: production[key] for key in shared} == shared
    assert production["limit_request_line"] == LIMIT_REQUEST_LINE
    assert production["accesslog"] is None  # empty turns the access log off
    assert callable(production["worker_exit"]) and callable(production["when_ready"])
