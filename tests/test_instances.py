"""Two Tessera instances on one PostgreSQL app DB behave as one (issue 21 items 1 and 2).

Two real production servers (`gunicorn wsgi:app -c contrib/gunicorn.conf.py`, two gthread workers
each) are started at the same moment on a PostgreSQL app DB created empty for this module, each with a
data directory of its own (as on two machines) and the same TESSERA_ENCRYPTION_KEY. Everything is
checked through HTTP: start-up (four processes migrate and seed at once), sessions and logout, a
setting changed on one seen by the other, login throttling, a database's changed details, the pools
of a database changed or deleted on one closed on the other, the result cache, permission-graph
revisions, and a short wrk run against both at once.
"""
from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, FAST_HASHING
from core.testing.services import postgres_data_source, require_postgres

# One xdist worker runs this module (make test: --dist loadgroup): its two servers start once.
pytestmark = pytest.mark.xdist_group("instances")

ROOT = Path(__file__).resolve().parents[1]
KEY = "instances-test-key-0123456789abcdefghijklmnop"  # shared by both, as production must
PROPAGATION_SECONDS = 2.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Instance:
    """One production server (gunicorn, two gthread workers) in its own process group."""

    def __init__(self, name: str, env: dict, workdir: Path):
        self.name, self.port = name, _free_port()
        self.log = workdir / f"{name}.log"
        data = workdir / name
        data.mkdir()
        self.env = {**env, "TESSERA_DATA_DIR": str(data), "TESSERA_BIND": f"127.0.0.1:{self.port}"}
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "-c", "contrib/gunicorn.conf.py", "wsgi:app"],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"{self.name} exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                if self.call("GET", "/api/health")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        pytest.fail(f"{self.name} did not answer /api/health in time:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(timeout=10)

    def call(self, method: str, path: str, body=None, token: str | None = None):
        """One request on a new connection (either worker may take it); (status, decoded body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Content-Type": "application/json", **({"X-Metabase-Session": token} if token else {})}
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        return response.status, json.loads(data) if data else None


@pytest.fixture(scope="module")
def app_db_url():
    """A new, empty PostgreSQL database for this module's app DB; dropped afterwards."""
    admin_url = require_postgres()
    name = f"tessera_instances_{uuid.uuid4().hex[:12]}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"), {"n": name})
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        engine.dispose()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("instances")


@pytest.fixture(scope="module")
def files(workdir) -> Path:
    """The data files both instances may open (TESSERA_FILE_DB_DIRS), as a shared volume would be."""
    path = workdir / "files"
    path.mkdir()
    for name in ("x", "y"):
        with sqlite3.connect(path / f"{name}.db") as conn:
            conn.execute("CREATE TABLE t (v TEXT)")
            conn.execute("INSERT INTO t VALUES (?)", (name,))
    return path


@pytest.fixture(scope="module")
def cluster(app_db_url, workdir, files):
    """Instances a and b, started at the same moment on the empty app DB, set up through a."""
    if shutil.which("wrk") is None:
        pytest.skip("wrk is not installed (apt-get install -y wrk): the load run needs it")
    env = {**os.environ, **{key: str(value) for key, value in FAST_HASHING.items()},
           "TESSERA_DB_URL": app_db_url, "TESSERA_ENCRYPTION_KEY": KEY, "TESSERA_FILE_DB_DIRS": str(files),
           "TESSERA_PLUGINS_AUTOLOAD": "false", "TESSERA_LOAD_SAMPLE_DATABASE": "false",
           "TESSERA_WORKERS": "2", "TESSERA_THREADS": "4", "TESSERA_ACCESS_LOG": "", "PYTHONPATH": str(ROOT)}
    instances = [Instance(name, env, workdir) for name in ("a", "b")]
    try:
        for instance in instances:
            instance.start()
        deadline = time.monotonic() + 60
        for instance in instances:
            instance.wait_ready(deadline)
        a, b = instances
        # One setup token for the whole cluster: the start-up hooks seeded it once.
        tokens = {instance.call("GET", "/api/session/properties")[1]["setup-token"] for instance in instances}
        assert len(tokens) == 1 and None not in tokens
        status, body = a.call("POST", "/api/setup", {
            "token": tokens.pop(), "prefs": {"site_name": "Cluster Co"},
            "user": {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "first_name": "Ada", "last_name": "Admin"}})
        assert status == 200, body
        yield a, b
    finally:
        for instance in instances:
            instance.stop()


def login(instance: Instance) -> str:
    status, body = instance.call("POST", "/api/session", {"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert status == 200, body
    return body["id"]


def eventually(read, expected, seconds: float = PROPAGATION_SECONDS):
    """Poll `read()` until it returns `expected` or `seconds` pass; the last value read."""
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if value == expected or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_instances_started_together_migrated_once(cluster, app_db_url):
    # Four processes ran create_app at once on an empty database: all answer, and the schema is at heads.
    a, b = cluster
    assert b.call("GET", "/api/session/properties")[1]["has-user-setup"] is True
    engine = create_engine(app_db_url)
    try:
        with engine.connect() as conn:
            assert len(conn.execute(text("SELECT version_num FROM alembic_version")).all()) >= 1
            assert conn.execute(text("SELECT count(*) FROM setting WHERE key = 'setup-token'")).scalar() == 0
    finally:
        engine.dispose()
    for instance in cluster:
        assert "Traceback" not in instance.log.read_text()


def test_session_from_one_works_on_the_other_and_logout_ends_it_everywhere(cluster):
    a, b = cluster
    token = login(a)
    for instance in (b, a, b):
        status, me = instance.call("GET", "/api/user/current", token=token)
        assert status == 200 and me["email"] == ADMIN_EMAIL
    assert b.call("DELETE", "/api/session", token=token)[0] == 204
    # No propagation delay: the very next request on either instance is refused.
    assert a.call("GET", "/api/user/current", token=token)[0] == 401
    assert b.call("GET", "/api/user/current", token=token)[0] == 401


def test_a_setting_changed_on_one_is_seen_by_the_other(cluster):
    a, b = cluster
    token = login(a)

    def site_name(instance):
        return lambda: instance.call("GET", "/api/session/properties", token=token)[1]["site-name"]

    for round_ in range(3):
        writer, reader = (a, b) if round_ % 2 == 0 else (b, a)
        before = site_name(reader)()  # the reader has the old value in its per-process memo
        new = f"Cluster {round_}"
        assert before != new
        assert writer.call("PUT", "/api/setting/site-name", {"value": new}, token=token)[0] == 204
        assert eventually(site_name(reader), new) == new


def test_login_throttling_counts_across_instances(cluster):
    a, b = cluster
    wrong = {"username": "nobody-throttled@example.com", "password": "not-the-password"}
    for attempt in range(10):
        status, body = (a, b)[attempt % 2].call("POST", "/api/session", wrong)
        assert status == 401, (attempt, body)
    for instance in (a, b):
        status, body = instance.call("POST", "/api/session", wrong)
        assert status == 400 and body["errors"]["username"].startswith("Too many attempts!")


def first_value(instance, token: str, database_id: int):
    """The first cell of `SELECT v FROM t` on the database, asked through this instance's API."""
    query = {"database": database_id, "type": "native", "native": {"query": "SELECT v FROM t"}}
    status, body = instance.call("POST", "/api/dataset", query, token)
    assert status == 202, body
    return body["data"]["rows"][0][0]


def test_changed_connection_details_reach_the_other_instance(cluster, files):
    # b builds a pool for x.db; a points the database at y.db; b's next query must read y.db.
    a, b = cluster
    token = login(a)
    status, database = a.call("POST", "/api/database", {
        "engine": "sqlite", "name": "Moving", "details": {"db": str(files / "x.db")}}, token)
    assert status == 200, database

    def value(instance):
        return first_value(instance, token, database["id"])

    assert value(b) == "x"
    status, body = a.call("PUT", f"/api/database/{database['id']}", {"details": {"db": str(files / "y.db")}}, token)
    assert status == 200, body
    assert value(b) == "y" and value(a) == "y"


def test_a_deleted_or_changed_database_closes_its_pools_on_every_instance(cluster):
    # Both instances query a PostgreSQL warehouse, so each holds connections to it. a points the database
    # at another warehouse, then deletes it: b, asked nothing meanwhile, closes its pools of each in turn.
    a, b = cluster
    token = login(a)
    with postgres_data_source("tessera_inst") as first, postgres_data_source("tessera_inst") as second:
        server = create_engine(require_postgres(), isolation_level="AUTOCOMMIT")
        for source in (first, second):
            with create_engine(source.admin_url, isolation_level="AUTOCOMMIT").connect() as conn:
                conn.execute(text("CREATE TABLE t (v TEXT)"))
                conn.execute(text("INSERT INTO t VALUES (:v)"), {"v": source.details["dbname"]})
                conn.engine.dispose()

        def held(source) -> int:
            with server.connect() as conn:
                return conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE usename = :u"),
                                    {"u": source.details["user"]}).scalar()

        status, database = a.call("POST", "/api/database", {
            "engine": "postgres", "name": "Warehouse", "details": first.details}, token)
        assert status == 200, database

        def value(instance):
            return first_value(instance, token, database["id"])

        try:
            for _ in range(4):  # either worker may take a request: most likely both hold a pool
                assert value(b) == first.details["dbname"]
            assert held(first) > 0
            status, body = a.call("PUT", f"/api/database/{database['id']}", {"details": second.details}, token)
            assert status == 200, body
            assert eventually(lambda: held(first), 0, seconds=10) == 0
            for _ in range(4):
                assert value(b) == second.details["dbname"]
            assert held(second) > 0
            assert a.call("DELETE", f"/api/database/{database['id']}", token=token)[0] == 204
            assert eventually(lambda: held(second), 0, seconds=10) == 0
        finally:
            server.dispose()


def test_result_cache_is_shared(cluster, files):
    a, b = cluster
    token = login(a)
    # A plugin's setting changed on a governs b's next query.
    assert a.call("PUT", "/api/setting/enable-query-caching", {"value": True}, token)[0] == 204
    status, database = a.call("POST", "/api/database", {
        "engine": "sqlite", "name": "Random", "details": {"db": str(files / "x.db")}}, token)
    assert status == 200, database
    status, card = a.call("POST", "/api/card", {
        "name": "Random", "display": "table", "visualization_settings": {}, "cache_ttl": 1,
        "dataset_query": {"database": database["id"], "type": "native",
                          "native": {"query": "SELECT random() AS r"}}}, token)
    assert status == 200, card

    def run(instance):
        status, body = instance.call("POST", f"/api/card/{card['id']}/query", {}, token)
        assert status == 202, body
        return body

    first = run(b)["data"]["rows"]  # b runs it and fills the cache as the body is sent

    def cached_rows(instance):
        body = run(instance)
        return body["cached"] and body["data"]["rows"]

    assert eventually(lambda: cached_rows(a), first) == first
    assert cached_rows(b) == first
    # b's query path keeps settings in its per-process memo: turned off on a, b stops serving the cache.
    assert a.call("PUT", "/api/setting/enable-query-caching", {"value": False}, token)[0] == 204
    assert eventually(lambda: run(b)["cached"], None) is None


def test_permission_graph_revisions_conflict_across_instances(cluster):
    a, b = cluster
    token = login(a)
    revision = a.call("GET", "/api/permissions/graph", token=token)[1]["revision"]
    assert b.call("GET", "/api/permissions/graph", token=token)[1]["revision"] == revision
    assert a.call("PUT", "/api/permissions/graph", {"revision": revision, "groups": {}}, token)[0] == 200
    status, body = b.call("PUT", "/api/permissions/graph", {"revision": revision, "groups": {}}, token)
    assert status == 409, body
    assert b.call("GET", "/api/permissions/graph", token=token)[1]["revision"] == revision + 1


def test_load_on_both_instances_at_once_has_no_errors(cluster, workdir, files):
    a, b = cluster
    token = login(a)
    status, database = a.call("POST", "/api/database", {
        "engine": "sqlite", "name": "Loaded", "details": {"db": str(files / "x.db")}}, token)
    assert status == 200, database
    status, card = a.call("POST", "/api/card", {
        "name": "Loaded", "display": "table", "visualization_settings": {},
        "dataset_query": {"database": database["id"], "type": "native", "native": {"query": "SELECT 1"}}}, token)
    assert status == 200, card
    # Each connection of wrk alternates a card read and the current user (the session lookup).
    script = workdir / "paths.lua"
    script.write_text(
        f'local paths = {{"/api/card/{card["id"]}", "/api/user/current", "/api/session/properties"}}\n'
        "local n = 0\n"
        "request = function()\n  n = n + 1\n"
        f'  return wrk.format("GET", paths[n % #paths + 1], {{["X-Metabase-Session"] = "{token}"}})\nend\n')
    runs = [subprocess.Popen(["wrk", "-t1", "-c8", "-d3s", "--timeout", "5s", "-s", str(script),
                              f"http://127.0.0.1:{instance.port}/"], stdout=subprocess.PIPE, text=True)
            for instance in (a, b)]
    outputs = [run.communicate(timeout=30)[0] for run in runs]
    for output in outputs:
        assert "Non-2xx" not in output and "Socket errors" not in output, output
        requests = int(re.search(r"(\d+) requests in", output).group(1))
        assert requests >= 10, output  # a loaded CI machine serves few; errors are what matter
