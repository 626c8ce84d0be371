"""PostgreSQL and MySQL/MariaDB lockdowns (compat/security.md section 2, threat rows 2, 6 and 7).

The loopback servers are used for real. Each refusal has a twin that removes the guard and shows
the attack then works, so a guard that disappears fails this file.
"""
from __future__ import annotations

import socket
import struct
import threading
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from core.driver import connections
from core.driver.records import LockdownError
from core.driver.sources import ConnectionPolicy
from core.http.errors import Invalid
from core.testing import (
    MARIADB_HOST,
    MARIADB_PORT,
    POSTGRES_HOST,
    POSTGRES_PORT,
    mariadb_data_source,
    postgres_data_source,
    require_mariadb,
    require_postgres,
)
from drivers.mysql import MySQLDriver
from drivers.postgres import PostgresDriver

NO_POLICY = ConnectionPolicy()


def _connect(driver, details: dict):
    engine = connections.build_engine(driver, connections.check(driver, details, NO_POLICY), poolclass=NullPool)
    return engine


def _first_value(driver, details, sql):
    engine = _connect(driver, details)
    try:
        with engine.connect() as conn:
            return conn.execute(text(sql)).scalar()
    finally:
        engine.dispose()


# ---- PostgreSQL --------------------------------------------------------------------------------

SUPERUSER = {"host": POSTGRES_HOST, "port": POSTGRES_PORT, "dbname": "postgres", "user": "postgres"}


@pytest.mark.security_row(6)
def test_postgres_superuser_is_refused_at_registration(app):
    require_postgres()
    with app.app_context(), pytest.raises(Invalid) as error:
        connections.can_connect("postgres", SUPERUSER)
    assert "superuser" in error.value.body["message"]
    assert "user" in error.value.body["errors"]


@pytest.mark.security_row(6)
def test_postgres_superuser_guard_has_teeth(monkeypatch):
    require_postgres()
    monkeypatch.setattr(PostgresDriver, "lockdown", classmethod(lambda cls, conn, details: None))
    assert _first_value(PostgresDriver, SUPERUSER, "SELECT length(pg_read_file('/etc/hostname')) > 0") is True


@pytest.mark.parametrize("grant", ["pg_read_server_files", "pg_write_server_files", "pg_execute_server_program",
                                   "CREATEROLE"])
@pytest.mark.security_row(6)
def test_postgres_privileged_roles_are_refused(grant):
    admin_url = require_postgres()
    role = f"tessera_priv_{uuid.uuid4().hex[:8]}"
    server = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(f'CREATE ROLE "{role}" LOGIN'))
        if grant == "CREATEROLE":
            conn.execute(text(f'ALTER ROLE "{role}" CREATEROLE'))
        else:
            conn.execute(text(f'GRANT {grant} TO "{role}"'))
    try:
        engine = _connect(PostgresDriver, {**SUPERUSER, "user": role})
        with pytest.raises(Exception) as error:
            engine.connect()
        assert isinstance(getattr(error.value, "orig", error.value), LockdownError) or "LockdownError" in repr(error.value)
        engine.dispose()
    finally:
        with server.connect() as conn:
            conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
        server.dispose()


@pytest.mark.security_row(6)
def test_postgres_limited_role_is_accepted_and_cannot_reach_the_server():
    with postgres_data_source() as source:
        assert _first_value(PostgresDriver, source.details, "SELECT current_user") == source.details["user"]
        engine = _connect(PostgresDriver, source.details)
        from core.driver.records import QueryError

        for statement in ("COPY (SELECT 1) TO PROGRAM 'true'", "SELECT pg_read_file('/etc/hostname')",
                          "CREATE TABLE t (a int)"):
            with pytest.raises(QueryError):
                with PostgresDriver.execute(engine, statement) as result:
                    list(result.rows)
        engine.dispose()


@pytest.mark.parametrize("details, key", [
    ({"host": "/var/run/postgresql"}, "host"),
    ({"host": "@abstract"}, "host"),
    ({"host": "db1,db2"}, "host"),
    ({"dbname": "postgres options=-csession_preload_libraries=x"}, "dbname"),
    ({"options": "-c default_transaction_read_only=off"}, "options"),
    ({"passfile": "/etc/passwd"}, "passfile"),
    ({"sslkey": "/etc/ssl/private/x"}, "sslkey"),
    ({"service": "x"}, "service"),
    ({"hostaddr": "127.0.0.1"}, "hostaddr"),
])
@pytest.mark.security_row(2)
def test_postgres_detail_injection_is_refused(details, key):
    with pytest.raises(Invalid) as error:
        connections.check(PostgresDriver, {**SUPERUSER, **details}, NO_POLICY)
    assert key in error.value.body["errors"]


@pytest.mark.security_row(9)
def test_app_db_on_postgres_is_refused():
    policy = ConnectionPolicy(app_db_url="postgresql+psycopg://tessera@localhost:5432/tessera_app")
    with pytest.raises(Invalid) as error:
        connections.check(PostgresDriver, {"host": "127.0.0.1", "dbname": "tessera_app", "user": "other"}, policy)
    assert "application database" in error.value.body["message"]
    connections.check(PostgresDriver, {"host": "127.0.0.1", "dbname": "warehouse", "user": "other"}, policy)


# ---- MySQL / MariaDB ---------------------------------------------------------------------------

ROOT = {"host": MARIADB_HOST, "port": MARIADB_PORT, "dbname": "test", "user": "root"}


def test_mysql_file_privilege_is_refused_at_registration(app):
    require_mariadb()
    with app.app_context(), pytest.raises(Invalid) as error:
        connections.can_connect("mysql", ROOT)
    assert "FILE" in error.value.body["message"]


def test_mysql_file_privilege_guard_has_teeth(monkeypatch):
    require_mariadb()
    monkeypatch.setattr(MySQLDriver, "lockdown", classmethod(lambda cls, conn, details: None))
    assert _first_value(MySQLDriver, ROOT, "SELECT LOAD_FILE('/etc/hostname') IS NOT NULL") == 1


@pytest.mark.security_row(8)
def test_mysql_limited_user_is_read_only_even_after_changing_the_session():
    from core.driver.records import QueryError

    with mariadb_data_source() as source:
        admin = create_engine(source.admin_url)
        with admin.begin() as conn:
            conn.execute(text("CREATE TABLE t (a int)"))
        admin.dispose()
        engine = _connect(MySQLDriver, source.details)
        with MySQLDriver.execute(engine, "SET SESSION TRANSACTION READ WRITE") as result:
            list(result.rows)
        with pytest.raises(QueryError):
            with MySQLDriver.execute(engine, "INSERT INTO t VALUES (1)") as result:
                list(result.rows)
        with MySQLDriver.execute(engine, "SELECT count(*) FROM t") as result:
            assert list(result.rows) == [(0,)]
        engine.dispose()


@pytest.mark.parametrize("key", ["local_infile", "init_command", "read_default_file", "read_default_group",
                                 "client_flag", "ssl_key", "defer_connect", "unix_socket"])
@pytest.mark.security_row(2)
def test_mysql_option_injection_is_refused(key):
    with pytest.raises(Invalid) as error:
        connections.check(MySQLDriver, {**ROOT, key: "1"}, NO_POLICY)
    assert key in error.value.body["errors"]


class RogueMySQL:
    """A fake MySQL server that answers the first query with LOAD DATA LOCAL for a client file and
    records every byte the client sends after that request (threat row 7)."""

    def __init__(self, wanted: str):
        self.wanted = wanted.encode()
        self.after_request = b""
        self.requested = False
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @staticmethod
    def packet(seq: int, payload: bytes) -> bytes:
        return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload

    @staticmethod
    def read_packet(conn) -> bytes:
        header = conn.recv(4)
        if len(header) < 4:
            return b""
        length = int.from_bytes(header[:3], "little")
        data = b""
        while len(data) < length:
            chunk = conn.recv(length - len(data))
            if not chunk:
                break
            data += chunk
        return data

    def serve(self):
        conn, _ = self.sock.accept()
        conn.settimeout(3)
        try:
            capabilities = 0x000FA7FF | (1 << 7)  # PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, LOCAL_FILES, ...
            salt = b"12345678abcdefghijkl"
            greeting = (b"\x0a" + b"5.7.99-rogue\x00" + struct.pack("<I", 1) + salt[:8] + b"\x00"
                        + struct.pack("<H", capabilities & 0xFFFF) + b"\x21" + struct.pack("<H", 2)
                        + struct.pack("<H", capabilities >> 16) + bytes([21]) + b"\x00" * 10 + salt[8:] + b"\x00"
                        + b"mysql_native_password\x00")
            conn.sendall(self.packet(0, greeting))
            self.read_packet(conn)  # handshake response
            conn.sendall(self.packet(2, b"\x00\x00\x00\x02\x00\x00\x00"))  # OK
            while True:  # PyMySQL's own SET NAMES / SET AUTOCOMMIT get an OK; the first query does not
                command = self.read_packet(conn)
                if not command.upper().startswith(b"\x03SET "):
                    break
                conn.sendall(self.packet(1, b"\x00\x00\x00\x02\x00\x00\x00"))
            if not command:
                return
            conn.sendall(self.packet(1, b"\xfb" + self.wanted))
            self.requested = True
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                self.after_request += data
                if data.endswith(b"\x00\x00\x00" + data[-1:]) or len(self.after_request) > 1 << 20:
                    conn.sendall(self.packet(data[-1] + 1, b"\x00\x00\x00\x02\x00\x00\x00"))
        except OSError:
            pass
        finally:
            conn.close()
            self.sock.close()


def _rogue_query(secret_file: Path, connect_args: dict) -> RogueMySQL:
    import pymysql

    rogue = RogueMySQL(str(secret_file))
    try:
        client = pymysql.connect(host="127.0.0.1", port=rogue.port, user="victim", password="",
                                 **{k: v for k, v in connect_args.items() if k in {"local_infile", "connect_timeout"}})
        try:
            client.cursor().execute("SELECT 1")
        except Exception:
            pass
        client.close()
    except Exception:
        pass
    rogue.thread.join(5)
    return rogue


@pytest.mark.security_row(7)
def test_mysql_rogue_server_cannot_read_client_files(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CLIENT-FILE")
    details = MySQLDriver.Details.model_validate({**ROOT, "port": 3306})
    connect_args = MySQLDriver.engine_options(details)["connect_args"]
    assert connect_args["local_infile"] is False
    rogue = _rogue_query(secret, connect_args)
    assert rogue.requested  # the client got as far as the rogue file request, and refused it
    assert b"TOP-SECRET" not in rogue.after_request


@pytest.mark.security_row(7)
def test_mysql_rogue_server_guard_has_teeth(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CLIENT-FILE")
    rogue = _rogue_query(secret, {"local_infile": True, "connect_timeout": 3})
    assert b"TOP-SECRET-CLIENT-FILE" in rogue.after_request


# ---- timeouts stop the statement on the server, not only in the client ------------------------

def _wait_until(predicate, seconds=3.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.mark.security_row(24)
def test_postgres_timeout_cancels_the_server_statement():
    from core.driver.records import QueryTimeout

    with postgres_data_source() as source:
        engine = _connect(PostgresDriver, source.details)
        marker = f"tessera_{uuid.uuid4().hex[:8]}"
        started = time.monotonic()
        with pytest.raises(QueryTimeout):
            with PostgresDriver.execute(engine, f"SELECT pg_sleep(30), '{marker}'", timeout=0.4) as result:
                list(result.rows)
        assert time.monotonic() - started < 1.4  # the timeout plus 1 s (security.md row 24)
        watcher = create_engine(require_postgres())
        with watcher.connect() as conn:
            running = lambda: conn.execute(text(  # noqa: E731
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE :m AND pid <> pg_backend_pid()"),
                {"m": f"%{marker}%"}).scalar() == 0
            assert _wait_until(running)
        watcher.dispose()
        engine.dispose()


@pytest.mark.security_row(24)
def test_mariadb_timeout_kills_the_server_statement():
    from core.driver.records import QueryTimeout

    with mariadb_data_source() as source:
        engine = _connect(MySQLDriver, source.details)
        marker = f"tessera_{uuid.uuid4().hex[:8]}"
        started = time.monotonic()
        with pytest.raises(QueryTimeout):
            with MySQLDriver.execute(engine, f"SELECT sleep(30), '{marker}'", timeout=0.4) as result:
                list(result.rows)
        assert time.monotonic() - started < 1.4  # the timeout plus 1 s (security.md row 24)
        watcher = create_engine(require_mariadb())
        with watcher.connect() as conn:
            running = lambda: conn.execute(text(  # noqa: E731
                "SELECT count(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE :m AND ID <> CONNECTION_ID()"),
                {"m": f"%{marker}%"}).scalar() == 0
            assert _wait_until(running)
        watcher.dispose()
        # the pooled connection lost its timeout: a statement slower than 0.4 s now completes
        with MySQLDriver.execute(engine, "SELECT sleep(0.6)") as result:
            assert list(result.rows) == [(0,)]
        engine.dispose()


# ---- registration messages ---------------------------------------------------------------------

def test_can_connect_messages(app):
    require_postgres()
    with app.app_context():
        with pytest.raises(Invalid) as error:
            connections.can_connect("postgres", {**SUPERUSER, "dbname": f"missing_{uuid.uuid4().hex[:6]}"})
        assert error.value.body["message"] == "Looks like the Database name is incorrect."
        with pytest.raises(Invalid) as error:
            connections.can_connect("postgres", {**SUPERUSER, "port": 1})
        assert set(error.value.body["errors"]) == {"host", "port"}


# ---- threat row 2: whatever the details, only allowlisted parameters reach the DBAPI ------------

from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st

DANGEROUS = ["options", "passfile", "service", "servicefile", "sslkey", "sslcert", "sslrootcert", "hostaddr",
             "init_command", "read_default_file", "read_default_group", "local_infile", "client_flag", "unix_socket",
             "connection-uri", "subprotocol", "classname", "defer_connect", "ssl_key", "host", "port", "dbname",
             "user", "password", "ssl", "sslmode", "application_name", "connect_timeout"]
VALUES = st.one_of(st.text(max_size=30), st.integers(-5, 70000), st.booleans(), st.none())
ALLOWED = {
    PostgresDriver: {"host", "port", "dbname", "user", "password", "connect_timeout", "application_name", "sslmode"},
    MySQLDriver: {"host", "port", "database", "user", "password", "charset", "local_infile", "connect_timeout",
                  "ssl", "client_flag"},
}


@pytest.mark.security_row(2)
@settings(max_examples=150, deadline=None)
@given(driver=st.sampled_from([PostgresDriver, MySQLDriver]),
       details=st.dictionaries(st.sampled_from(DANGEROUS), VALUES, max_size=8), on_valid_base=st.booleans())
# Valid details every run, so the allowlist assertions are always reached (random dicts rarely pass check).
@example(driver=PostgresDriver, details={"dbname": "warehouse", "user": "reader", "options": None},
         on_valid_base=False)
@example(driver=PostgresDriver, details={"dbname": "", "user": ""}, on_valid_base=False)
@example(driver=MySQLDriver, details={"dbname": "warehouse", "user": "reader"}, on_valid_base=False)
@example(driver=PostgresDriver, details={"ssl": True, "password": "x", "port": 5433}, on_valid_base=True)
@example(driver=MySQLDriver, details={"ssl": True, "password": "x", "port": 3307}, on_valid_base=True)
def test_fuzzed_details_reach_the_dbapi_only_through_the_allowlist(driver, details, on_valid_base):
    if on_valid_base:
        # Random values over a valid base, so that optional details (ssl, port, ...) pass check and
        # their effect on the connect arguments is what gets tested.
        details = {"dbname": "warehouse", "user": "reader", **details}
    try:
        parsed = connections.check(driver, details, NO_POLICY)
    except Invalid:
        return
    engine = connections.build_engine(driver, parsed)
    try:
        args, kwargs = engine.dialect.create_connect_args(engine.url)
        kwargs = {**kwargs, **driver.engine_options(parsed).get("connect_args", {})}
        if driver is PostgresDriver:
            # SQLAlchemy's psycopg dialect always passes its own adapters map; no detail can set it.
            from psycopg.adapt import AdaptersMap

            assert isinstance(kwargs.pop("context", None), (AdaptersMap, type(None)))
        assert set(kwargs) <= ALLOWED[driver], set(kwargs) - ALLOWED[driver]
        assert not args
        if driver is MySQLDriver:
            assert kwargs["local_infile"] is False
            assert not kwargs.get("client_flag", 0) & 128  # CLIENT.LOCAL_FILES
        host = kwargs.get("host") or ""
        assert not str(host).startswith(("/", "@"))
    finally:
        engine.dispose()
