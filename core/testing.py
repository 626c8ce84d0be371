"""Test fixtures for Tessera and for third-party plugins and drivers (a pytest plugin).

Load it with `pytest_plugins = ["core.testing"]`. The app DB of each test is a copy of one SQLite
file migrated once per session, so a test costs a file copy, not a migration run. The PostgreSQL
and MariaDB servers on loopback are used for real; a test needing one skips, naming the server,
only when none answers.
"""
from __future__ import annotations

import shutil
import socket
import uuid
from pathlib import Path

import pytest

FAST_HASHING = {"TESSERA_PASSWORD_HASH_TIME_COST": 1, "TESSERA_PASSWORD_HASH_MEMORY_KIB": 8}
ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "Sup3r-Secret-Admin"
USER_PASSWORD = "Ordinary-Us3r-Pass"

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


class ApiClient:
    """A Flask test client that sends a session (or API key) header on every request."""

    def __init__(self, app, headers: dict | None = None, user=None):
        self.app = app
        self.client = app.test_client()
        self.headers = dict(headers or {})
        self.user = user

    def request(self, method: str, path: str, **kwargs):
        headers = {**self.headers, **kwargs.pop("headers", {})}
        return self.client.open(path, method=method, headers=headers, **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)

    def put(self, path, **kw):
        return self.request("PUT", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)


@pytest.fixture(scope="session")
def app_db_template(tmp_path_factory) -> Path:
    from .db import AppDatabase

    path = tmp_path_factory.mktemp("template") / "tessera.db"
    database = AppDatabase(f"sqlite:///{path}")
    database.migrate()
    database.dispose()
    return path


@pytest.fixture
def app_config(tmp_path, app_db_template) -> dict:
    db_file = tmp_path / "tessera.db"
    shutil.copy(app_db_template, db_file)
    return {
        "TESSERA_DATA_DIR": str(tmp_path),
        "TESSERA_DB_URL": f"sqlite:///{db_file}",
        "TESSERA_PLUGINS_AUTOLOAD": False,
        "TESSERA_RUN_MIGRATIONS": False,
        **FAST_HASHING,
    }


@pytest.fixture
def app(app_config):
    from .app import create_app

    application = create_app(app_config)
    yield application
    application.extensions["tessera"].db.dispose()


@pytest.fixture
def client(app) -> ApiClient:
    """An anonymous client."""
    return ApiClient(app)


def setup_admin(app) -> ApiClient:
    """Run the first-user setup through the API and return a client logged in as that superuser."""
    anonymous = app.test_client()
    token = anonymous.get("/api/session/properties").json["setup-token"]
    response = anonymous.post("/api/setup", json={
        "token": token,
        "user": {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "first_name": "Ada", "last_name": "Admin"},
        "prefs": {"site_name": "Test Co"},
    })
    assert response.status_code == 200, response.json
    client = ApiClient(app, {"X-Metabase-Session": response.json["id"]})
    client.user = client.get("/api/user/current").json
    return client


def make_user(app, email: str = "user@example.com", first_name: str = "Ulla", last_name: str = "User",
              password: str = USER_PASSWORD, superuser: bool = False) -> ApiClient:
    """Create a user in the app DB and return a client logged in as them."""
    from .users import create_user

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        create_user(session, email=email, first_name=first_name, last_name=last_name,
                    password_hash=state.hasher.hash(password), is_superuser=superuser)
    response = app.test_client().post("/api/session", json={"username": email, "password": password})
    assert response.status_code == 200, response.json
    client = ApiClient(app, {"X-Metabase-Session": response.json["id"]})
    client.user = client.get("/api/user/current").json
    return client


@pytest.fixture
def admin(app) -> ApiClient:
    """A client logged in as the superuser created by setup."""
    return setup_admin(app)


@pytest.fixture
def user(app, admin) -> ApiClient:
    """A client logged in as an ordinary user (setup already done by `admin`)."""
    return make_user(app)


@pytest.fixture
def postgres_app_db():
    """A fresh PostgreSQL app database on the loopback server; dropped afterwards."""
    from sqlalchemy import create_engine, text

    admin_url = require_postgres()
    name = f"tessera_app_{uuid.uuid4().hex[:12]}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with engine.connect() as conn:
            conn.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"), {"name": name})
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_app(request, tmp_path, app_db_template):
    """The app on each app-DB backend: the SQLite file and, when one answers, PostgreSQL."""
    from .app import create_app

    config = {"TESSERA_DATA_DIR": str(tmp_path), "TESSERA_PLUGINS_AUTOLOAD": False, **FAST_HASHING}
    if request.param == "sqlite":
        shutil.copy(app_db_template, tmp_path / "tessera.db")
        config.update(TESSERA_DB_URL=f"sqlite:///{tmp_path / 'tessera.db'}", TESSERA_RUN_MIGRATIONS=False)
    else:
        config["TESSERA_DB_URL"] = request.getfixturevalue("postgres_app_db")
    application = create_app(config)
    yield application
    application.extensions["tessera"].db.dispose()


# Rows other plugins' APIs create, for tests that only need them to exist.


def add_database(app, name: str = "Warehouse", tables: tuple[tuple[str | None, str], ...] = (("PUBLIC", "ORDERS"),)):
    """A registered database with tables, straight into the app DB; returns (db_id, [table ids])."""
    from core.models import Database, Table

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        database = Database(name=name, engine="sqlite")
        session.add(database)
        session.flush()
        table_ids = []
        for schema, table in tables:
            row = Table(db_id=database.id, schema=schema, name=table)
            session.add(row)
            session.flush()
            table_ids.append(row.id)
        return database.id, table_ids


def add_collection(app, name: str, parent_id: int | None = None, namespace: str | None = None) -> int:
    from core.models import Collection

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        location = "/"
        if parent_id is not None:
            parent = session.get(Collection, parent_id)
            location = f"{parent.location}{parent_id}/"
        row = Collection(name=name, location=location, namespace=namespace)
        session.add(row)
        session.flush()
        return row.id


def set_setting(app, key: str, value) -> None:
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        state.settings.set(session, key, value)


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
