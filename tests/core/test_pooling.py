"""What a pooled PostgreSQL app-DB connection costs besides its statements (core.appdb.pooling), and the
change counters read by several threads at once (core.appdb.changes.Changes), on a real server."""
from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text

from core.appdb import pooling
from core.appdb.db import AppDatabase
from core.appdb.models import Setting
from core.testing import postgres_app_db_copy  # noqa: F401  (fixture)

IDLE = 0  # psycopg's TransactionStatus.IDLE: no transaction open on the connection
INTRANS = 2


@pytest.fixture
def database(postgres_app_db_copy):  # noqa: F811
    database = AppDatabase(postgres_app_db_copy)
    with database.session() as session:
        session.add(Setting(key="colour", value='"blue"'))
    yield database
    database.dispose()


@pytest.fixture
def server(postgres_app_db_copy):  # noqa: F811
    """An engine of its own on the same database: what another process sees."""
    engine = create_engine(postgres_app_db_copy, isolation_level="AUTOCOMMIT")
    yield engine
    engine.dispose()


def status(session) -> int:
    return session.connection().connection.dbapi_connection.info.transaction_status


def stored(server, key: str):
    with server.connect() as conn:
        return conn.execute(text("SELECT value FROM setting WHERE key = :key"), {"key": key}).scalar()


@pytest.mark.parametrize("sql, plain", [
    ("SELECT a FROM t", True),
    ("  (SELECT a FROM t) UNION (SELECT b FROM u)", True),
    ("WITH x AS (SELECT 1) SELECT * FROM x", True),
    ("WITH x AS (DELETE FROM t RETURNING id) SELECT * FROM x", False),
    ("SELECT a FROM t WHERE id = 1 FOR UPDATE", False),
    ("SELECT a FROM t FOR NO KEY UPDATE OF t", False),
    ("select a from t for share", False),
    ("SELECT pg_advisory_xact_lock(1)", False),
    ("SELECT nextval('s')", False),
    ("INSERT INTO t VALUES (1)", False),
    ("SAVEPOINT sa_1", False),
    ("SET LOCAL statement_timeout = 5", False),
])
def test_only_a_select_that_holds_nothing_past_itself_is_a_plain_read(sql, plain):
    assert pooling.plain_read(sql) is plain


def test_reads_leave_no_transaction_open_and_the_first_write_begins_one(database, server):
    with database.Session() as session:
        assert session.scalar(select(Setting.value).where(Setting.key == "colour")) == '"blue"'
        assert status(session) == IDLE  # no BEGIN was sent: nothing to roll back either
        session.execute(Setting.__table__.update().where(Setting.key == "colour").values(value='"red"'))
        session.add(Setting(key="size", value='"large"'))
        session.flush()
        assert status(session) == INTRANS
        # Later reads run in the write's transaction: they see its rows, other connections do not.
        assert session.scalar(select(Setting.value).where(Setting.key == "colour")) == '"red"'
        assert stored(server, "colour") == '"blue"' and stored(server, "size") is None
        session.rollback()
    assert stored(server, "colour") == '"blue"' and stored(server, "size") is None  # both undone together
    with database.Session() as session:
        session.scalar(select(Setting.value).where(Setting.key == "colour"))
        session.execute(Setting.__table__.update().where(Setting.key == "colour").values(value='"red"'))
        session.add(Setting(key="size", value='"large"'))
        session.commit()
    assert stored(server, "colour") == '"red"' and stored(server, "size") == '"large"'


def test_a_commit_after_reads_moves_the_change_counters_of_what_it_wrote(database):
    before = database.changes.read()
    with database.Session() as session:
        session.scalar(select(Setting.value).where(Setting.key == "colour"))  # outside a transaction
        session.execute(Setting.__table__.update().where(Setting.key == "colour").values(value='"red"'))
        session.commit()
    after = database.changes.read()
    assert after["setting"] == before.get("setting", 0) + 1
    assert database.changes.read() is after  # nothing moved since: the same snapshot


def test_a_row_lock_is_held_in_a_transaction_until_it_ends(database, server):
    with database.Session() as session:
        session.scalar(select(Setting.value).where(Setting.key == "colour"))
        session.scalar(select(Setting.value).where(Setting.key == "colour").with_for_update())
        assert status(session) == INTRANS
        with server.connect() as other, pytest.raises(Exception, match="could not obtain lock"):
            other.execute(text("SELECT value FROM setting WHERE key = 'colour' FOR UPDATE NOWAIT"))
        session.rollback()
    with server.connect() as other:
        assert other.execute(text("SELECT value FROM setting WHERE key = 'colour' FOR UPDATE NOWAIT")).scalar()


def test_a_connection_the_caller_put_in_autocommit_stays_so(database, server):
    with database.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("SELECT 1"))
        conn.execute(text("UPDATE setting SET value = '\"green\"' WHERE key = 'colour'"))
        assert stored(server, "colour") == '"green"'  # committed by the statement itself


def test_a_connection_goes_back_to_the_pool_in_the_engine_s_isolation_level(database):
    with database.engine.connect() as conn:
        conn.execute(text("SELECT 1"))
        dbapi_connection = conn.connection.dbapi_connection
        assert dbapi_connection.autocommit
    assert not dbapi_connection.autocommit  # a later write on the DBAPI cursor alone begins a transaction


def backend_pid(database) -> tuple[int, object]:
    with database.engine.connect() as conn:
        return conn.execute(text("SELECT pg_backend_pid()")).scalar(), conn.connection.dbapi_connection


def test_a_connection_back_from_a_recent_use_is_checked_out_without_a_round_trip(database):
    pid, dbapi_connection = backend_pid(database)
    trace = Path(tempfile.mkdtemp()) / "trace"
    dbapi_connection.pgconn.trace(os.open(trace, os.O_WRONLY | os.O_CREAT))
    try:
        with database.engine.connect() as conn:
            assert conn.connection.dbapi_connection is dbapi_connection  # the same pooled connection
    finally:
        dbapi_connection.pgconn.untrace()
    assert trace.read_text() == ""  # nothing was sent: no ping, no BEGIN, no ROLLBACK


def test_a_connection_whose_server_session_ended_is_replaced_at_checkout(database, server):
    pid, _ = backend_pid(database)
    with server.connect() as conn:
        assert conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid}).scalar()
    time.sleep(0.2)  # the server's goodbye reaches the socket
    with database.Session() as session:  # no error: the pool saw the socket speak, pinged and reconnected
        assert session.scalar(select(Setting.value).where(Setting.key == "colour")) == '"blue"'
        assert session.scalar(text("SELECT pg_backend_pid()")) != pid


def test_a_connection_idle_longer_than_the_limit_is_pinged(database, server, monkeypatch):
    pid, dbapi_connection = backend_pid(database)
    monkeypatch.setattr(time, "monotonic", lambda real=time.monotonic: real() + 3600)  # an hour later
    trace = Path(tempfile.mkdtemp()) / "trace"
    dbapi_connection.pgconn.trace(os.open(trace, os.O_WRONLY | os.O_CREAT))
    try:
        with database.engine.connect() as conn:
            assert conn.connection.dbapi_connection is dbapi_connection
    finally:
        dbapi_connection.pgconn.untrace()
    assert "Query" in trace.read_text()  # the ping


def test_threads_read_the_change_counters_at_once_on_connections_of_their_own(database, server):
    """While the counters' table is locked, every reading thread waits on the server, not on one
    another: each holds a connection of its own; all see the commit made meanwhile."""
    database.changes.read()
    readers = 3
    answers: list = []
    with server.connect() as locker:
        locker.execute(text("BEGIN"))
        locker.execute(text("LOCK TABLE appdb_change IN ACCESS EXCLUSIVE MODE"))
        threads = [threading.Thread(target=lambda: answers.append(database.changes.read())) for _ in range(readers)]
        for thread in threads:
            thread.start()
        waiting = 0
        with server.connect() as watcher:  # outside the locker's transaction, which sees one statistics snapshot
            for _ in range(200):
                waiting = watcher.execute(text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock' AND query LIKE '%appdb_change%'")).scalar()
                if waiting == readers:
                    break
                time.sleep(0.05)
        locker.execute(text("UPDATE appdb_change SET counter = counter + 1 WHERE table_name = 'setting'"))
        locker.execute(text("COMMIT"))
        for thread in threads:
            thread.join(10)
    assert waiting == readers
    assert len(answers) == readers and all(answer is not None for answer in answers)
    assert len({answer["setting"] for answer in answers}) == 1
    assert database.changes.read()["setting"] == answers[0]["setting"]


def test_a_counter_reader_whose_server_session_ended_is_replaced(database, server):
    before = database.changes.read()
    with server.connect() as conn:
        ended = conn.execute(text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                  "WHERE datname = current_database() AND pid <> pg_backend_pid()")).scalar()
    assert ended >= 1
    time.sleep(0.2)
    database.changes.read()  # None (nothing kept for this request) or the counters, never an error
    with database.session() as session:  # a fresh pooled connection: the old one's socket spoke
        session.execute(Setting.__table__.update().where(Setting.key == "colour").values(value='"red"'))
    after = database.changes.read()
    assert after is not None and after["setting"] == before["setting"] + 1


def test_a_connection_closed_under_the_pool_is_replaced_at_checkout(database):
    pid, dbapi_connection = backend_pid(database)
    dbapi_connection.close()  # no socket left to poll: the ping decides, and fails
    with database.Session() as session:
        assert session.scalar(text("SELECT pg_backend_pid()")) != pid
