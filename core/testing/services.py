"""The real services tests talk to, on loopback: whether PostgreSQL and MariaDB answer (a test needing
one skips, naming the server, only when none does), throwaway data sources on them with a role that
can only read, and an SMTP server that keeps what it receives.
"""
from __future__ import annotations

import contextlib
import socket
import uuid
from dataclasses import dataclass

import pytest

POSTGRES_HOST, POSTGRES_PORT = "127.0.0.1", 5432
MARIADB_HOST, MARIADB_PORT = "127.0.0.1", 3306


def server_answers(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def require_postgres() -> str:
    """The admin URL of the loopback PostgreSQL server, or skip the test naming it."""
    if not server_answers(POSTGRES_HOST, POSTGRES_PORT):
        pytest.skip(f"no PostgreSQL server answers on {POSTGRES_HOST}:{POSTGRES_PORT}")
    return f"postgresql+psycopg://postgres@{POSTGRES_HOST}:{POSTGRES_PORT}/postgres"


def require_mariadb() -> str:
    """The URL of the loopback MariaDB/MySQL server's `test` database, or skip naming it."""
    if not server_answers(MARIADB_HOST, MARIADB_PORT):
        pytest.skip(f"no MariaDB/MySQL server answers on {MARIADB_HOST}:{MARIADB_PORT}")
    return f"mysql+pymysql://root@{MARIADB_HOST}:{MARIADB_PORT}/test"


# --------------------------------------------------------------------------------------------------
# A real SMTP server on loopback that keeps what it receives (for invitations, subscriptions)
# --------------------------------------------------------------------------------------------------


class SmtpSink:
    """A minimal SMTP server (EHLO, AUTH PLAIN, MAIL, RCPT, DATA, RSET, NOOP, QUIT) in a thread.

    `messages` holds one dict per accepted message: envelope sender, recipients, the raw message
    and the credentials the client logged in with, if any."""

    def __init__(self):
        import socketserver
        import threading

        sink = self
        self.messages: list[dict] = []

        class Handler(socketserver.StreamRequestHandler):
            def reply(self, line: str) -> None:
                self.wfile.write((line + "\r\n").encode())

            def handle(self):
                state = {"from": None, "to": [], "auth": None}
                self.reply("220 tessera-test-smtp ready")
                while True:
                    raw = self.rfile.readline()
                    if not raw:
                        return
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    verb = line.split(" ", 1)[0].upper()
                    if verb in ("EHLO", "HELO"):
                        self.reply("250-tessera-test-smtp")
                        self.reply("250 AUTH PLAIN")
                    elif verb == "AUTH":
                        import base64

                        parts = line.split(" ")
                        decoded = base64.b64decode(parts[2]).split(b"\0") if len(parts) > 2 else []
                        state["auth"] = tuple(p.decode() for p in decoded[1:3])
                        self.reply("235 2.7.0 Authentication successful")
                    elif verb == "MAIL":
                        state["from"] = line.split(":", 1)[1].strip().strip("<>").split(">")[0]
                        self.reply("250 OK")
                    elif verb == "RCPT":
                        state["to"].append(line.split(":", 1)[1].strip().strip("<>").split(">")[0])
                        self.reply("250 OK")
                    elif verb == "DATA":
                        self.reply("354 End data with <CR><LF>.<CR><LF>")
                        lines = []
                        while True:
                            data_line = self.rfile.readline()
                            if data_line in (b".\r\n", b".\n", b""):
                                break
                            lines.append(data_line[1:] if data_line.startswith(b"..") else data_line)
                        sink.messages.append({"from": state["from"], "to": list(state["to"]),
                                              "data": b"".join(lines).decode("utf-8", "replace"),
                                              "auth": state["auth"]})
                        state["to"] = []
                        self.reply("250 OK: queued")
                    elif verb in ("RSET", "NOOP"):
                        self.reply("250 OK")
                    elif verb == "QUIT":
                        self.reply("221 Bye")
                        return
                    else:
                        self.reply("502 Command not implemented")

        class Server(socketserver.ThreadingTCPServer):
            allow_reuse_address = True
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.host, self.port = self.server.server_address
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def smtp_server():
    """A running SmtpSink on 127.0.0.1 (a random port), shut down after the test."""
    sink = SmtpSink()
    yield sink
    sink.close()

# --------------------------------------------------------------------------------------------------
# Data sources on the loopback servers, with a role that can only read (drivers refuse the others)
# --------------------------------------------------------------------------------------------------


@dataclass
class DataSource:
    """A throwaway database: `details` to register it with, `admin_url` to fill it (full rights)."""

    engine: str
    details: dict
    admin_url: str


@contextlib.contextmanager
def postgres_data_source(prefix: str = "tessera_src"):
    """A fresh PostgreSQL database and a LOGIN role without server privileges; dropped afterwards.

    The role may write to the schema (so tests can prove the engine's read-only transaction, not a
    missing grant, is what stops writes); Tessera's drivers never let it.
    """
    from sqlalchemy import create_engine, text

    admin_url = require_postgres()
    suffix = uuid.uuid4().hex[:10]
    name, role = f"{prefix}_{suffix}", f"{prefix}_ro_{suffix}"
    server = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
        conn.execute(text(f'CREATE ROLE "{role}" LOGIN'))
    db_url = admin_url.rsplit("/", 1)[0] + "/" + name
    inside = create_engine(db_url, isolation_level="AUTOCOMMIT")
    with inside.connect() as conn:
        conn.execute(text(f'GRANT ALL ON SCHEMA public TO "{role}"'))
        conn.execute(text(f'ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO "{role}"'))
    inside.dispose()
    try:
        yield DataSource("postgres", {"host": POSTGRES_HOST, "port": POSTGRES_PORT, "dbname": name, "user": role},
                         db_url)
    finally:
        with server.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"), {"n": name})
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
        server.dispose()


@contextlib.contextmanager
def mariadb_data_source(prefix: str = "tessera_src"):
    """A fresh MariaDB/MySQL database and a user with rights on it only (no FILE, no SUPER)."""
    import secrets

    from sqlalchemy import create_engine, text

    admin_url = require_mariadb()
    suffix = uuid.uuid4().hex[:10]
    name, user, password = f"{prefix}_{suffix}", f"tsrc_{suffix}", secrets.token_hex(12)
    server = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
        conn.execute(text(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'"))
        conn.execute(text(f"GRANT ALL ON `{name}`.* TO '{user}'@'%'"))
    try:
        yield DataSource("mysql", {"host": MARIADB_HOST, "port": MARIADB_PORT, "dbname": name, "user": user,
                                   "password": password}, admin_url.rsplit("/", 1)[0] + "/" + name + "?charset=utf8mb4")
    finally:
        with server.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
            conn.execute(text(f"DROP USER IF EXISTS '{user}'@'%'"))
        server.dispose()
