"""A query whose client disconnects is cancelled on its database within seconds (real HTTP server)."""
from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text

from core.appdb.models import QueryExecution
from core.driver import disconnects
from core.testing import (
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    mariadb_data_source,
    postgres_data_source,
    setup_admin,
    sqlite_file,
    wait_for_sync,
)

SLOW_SQLITE = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 4000000000) "
               "SELECT count(*) FROM c")


@pytest.fixture
def served(app):
    """The app behind Werkzeug's threaded server on 127.0.0.1, with an administrator's session token."""
    from werkzeug.serving import make_server

    setup_admin(app)
    token = app.test_client().post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}).json["id"]
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_port, token
    server.shutdown()
    thread.join(5)


def register(app, token, details, engine):
    response = app.test_client().post("/api/database", json={"name": engine, "engine": engine, "details": details},
                                      headers={"X-Metabase-Session": token})
    assert response.status_code == 200, response.json
    wait_for_sync(app)
    return response.json["id"]


def post_then_leave(port: int, token: str, path: str, body: dict, until) -> socket.socket:
    """Send the request and return once `until()` says the query runs (the caller closes the socket)."""
    payload = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(payload)}\r\nX-Metabase-Session: {token}\r\n\r\n".encode() + payload)
    assert wait_for(until, 10), "the query never started"
    return sock


def wait_for(condition, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def native(db_id: int, sql: str) -> dict:
    return {"database": db_id, "type": "native", "native": {"query": sql}}


def pg_running(admin_url: str, role: str):
    """How many statements the data source's role has running (a server-side cursor's FETCH included)."""
    engine = create_engine(admin_url.rsplit("/", 1)[0] + "/postgres", isolation_level="AUTOCOMMIT")

    def count() -> int:
        with engine.connect() as conn:
            return conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND usename = :r"),
                                {"r": role}).scalar()
    return engine, count


@pytest.mark.parametrize("path, extra", [("/api/dataset", {}), ("/api/dataset/csv", {"format_rows": False})])
def test_postgres_query_is_cancelled_when_the_client_leaves(app, served, path, extra):
    port, token = served
    with postgres_data_source() as source:
        db_id = register(app, token, source.details, "postgres")
        engine, running = pg_running(source.admin_url, source.details["user"])
        try:
            query = native(db_id, "SELECT pg_sleep(41.5)::text AS slept")
            body = {**extra, "query": query} if extra else query
            sock = post_then_leave(port, token, path, body, lambda: running() == 1)
            left = time.monotonic()
            sock.close()
            assert wait_for(lambda: running() == 0, 5), "the backend still runs the query"
            assert time.monotonic() - left < 5
        finally:
            engine.dispose()


def test_mariadb_query_is_killed_when_the_client_leaves(app, served):
    port, token = served
    with mariadb_data_source() as source:
        db_id = register(app, token, source.details, "mysql")
        engine = create_engine(source.admin_url.split("?")[0].rsplit("/", 1)[0] + "/", isolation_level="AUTOCOMMIT")

        def running() -> int:
            with engine.connect() as conn:
                return conn.execute(text("SELECT count(*) FROM information_schema.processlist WHERE user = :u "
                                         "AND command = 'Query' AND info LIKE 'SELECT SLEEP%'"),
                                    {"u": source.details["user"]}).scalar()
        try:
            sock = post_then_leave(port, token, "/api/dataset", native(db_id, "SELECT SLEEP(41) AS slept"),
                                   lambda: running() == 1)
            sock.close()
            assert wait_for(lambda: running() == 0, 5), "the server still runs the query"
        finally:
            engine.dispose()


def test_sqlite_query_is_interrupted_when_the_client_leaves(app, served):
    from core.appdb.counters import flush

    port, token = served
    db_id = register(app, token, {"db": sqlite_file(app, "slow.db", "CREATE TABLE t (id INTEGER)")}, "sqlite")
    before = disconnects.stats["cancelled"]
    sock = post_then_leave(port, token, "/api/dataset", native(db_id, SLOW_SQLITE), lambda: True)
    time.sleep(1.0)  # the statement is running
    left = time.monotonic()
    sock.close()
    assert wait_for(lambda: disconnects.stats["cancelled"] > before, 5), "no interrupt after the disconnect"

    def logged():
        flush(app)
        with app.extensions["tessera"].db.session() as session:
            return session.scalars(select(QueryExecution.error).where(QueryExecution.database_id == db_id)).all()
    # The statement really ended: its run was logged, as a failure, seconds after the client left.
    assert wait_for(lambda: logged() != [], 5)
    assert logged()[0] and time.monotonic() - left < 10


def test_duckdb_query_is_interrupted_when_the_client_leaves(app, served):
    duckdb = pytest.importorskip("duckdb")
    from core.appdb.counters import flush

    port, token = served
    folder = Path(app.config["TESSERA_DATA_DIR"]) / "files"
    folder.mkdir(parents=True, exist_ok=True)
    path = str(folder / "slow.duckdb")
    duckdb.connect(path).execute("CREATE TABLE t AS SELECT 1 AS a").close()
    db_id = register(app, token, {"database_file": path}, "duckdb")
    before = disconnects.stats["cancelled"]
    sock = post_then_leave(port, token, "/api/dataset", native(
        db_id, "SELECT sum(a.range * b.range) AS s FROM range(1000000) a, range(1000000) b"), lambda: True)
    time.sleep(1.0)
    sock.close()
    assert wait_for(lambda: disconnects.stats["cancelled"] > before, 5), "no interrupt after the disconnect"

    def logged():
        flush(app)
        with app.extensions["tessera"].db.session() as session:
            return session.scalars(select(QueryExecution.error).where(QueryExecution.database_id == db_id)).all()
    assert wait_for(lambda: logged() != [], 5) and logged()[0]


def test_a_client_that_stays_gets_its_answer(app, served):
    port, token = served
    db_id = register(app, token, {"db": sqlite_file(app, "quick.db", "CREATE TABLE t (id INTEGER)")}, "sqlite")
    before = disconnects.stats["cancelled"]
    payload = json.dumps(native(db_id, "SELECT 1 AS one")).encode()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(f"POST /api/dataset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     f"Content-Length: {len(payload)}\r\nX-Metabase-Session: {token}\r\n\r\n".encode() + payload)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 202") and b'"rows":[[1]]' in answer
    assert disconnects.stats["cancelled"] == before
