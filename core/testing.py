"""Test fixtures for Tessera and for third-party plugins and drivers (a pytest plugin).

Load it with `pytest_plugins = ["core.testing"]`. The app DB of each test is a copy of one SQLite
file migrated once per session, so a test costs a file copy, not a migration run. The PostgreSQL
and MariaDB servers on loopback are used for real; a test needing one skips, naming the server,
only when none answers.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import shutil
import socket
import uuid
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

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
    from core.appdb.db import AppDatabase

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
    from core.assembly.app import create_app

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
    from core.identity.users import create_user

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
    from core.assembly.app import create_app

    config = {"TESSERA_DATA_DIR": str(tmp_path), "TESSERA_PLUGINS_AUTOLOAD": False, **FAST_HASHING}
    if request.param == "sqlite":
        shutil.copy(app_db_template, tmp_path / "tessera.db")
        config.update(TESSERA_DB_URL=f"sqlite:///{tmp_path / 'tessera.db'}", TESSERA_RUN_MIGRATIONS=False)
    else:
        config["TESSERA_DB_URL"] = request.getfixturevalue("postgres_app_db")
    application = create_app(config)
    yield application
    application.extensions["tessera"].db.dispose()


# --------------------------------------------------------------------------------------------------
# Data sources: the Sample Database and small SQLite files, and waiting for background syncs
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def sample_database_template(tmp_path_factory) -> Path:
    """The Sample Database generated once per test session."""
    from core.sync.sample_data import FILE_NAME, generate

    return generate(tmp_path_factory.mktemp("sample") / FILE_NAME)


@pytest.fixture
def sample_database_file(app, sample_database_template) -> Path:
    """The session's Sample Database copied where the app generates it, so that adding it is cheap."""
    from core.sync.sample_data import FILE_NAME, directory

    target = directory(app.config["TESSERA_DATA_DIR"])
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(sample_database_template, target / FILE_NAME)
    return target / FILE_NAME


def wait_for_sync(app, timeout: float = 120) -> None:
    """Block until every background sync and value scan of the app has finished."""
    from core.sync.schema import wait

    wait(app, timeout)


def sqlite_file(app, name: str, script: str) -> str:
    """A SQLite file in the app's allowed data-file directory, built by running `script`."""
    import sqlite3

    folder = Path(app.config["TESSERA_DATA_DIR"]) / "files"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.commit()
    conn.close()
    return str(path)

# Rows other plugins' APIs create, for tests that only need them to exist.


def add_database(app, name: str = "Warehouse", tables: tuple[tuple[str | None, str], ...] = (("PUBLIC", "ORDERS"),)):
    """A registered database with tables, straight into the app DB; returns (db_id, [table ids])."""
    from core.appdb.models import Database, Table

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
    from core.appdb.models import Collection

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


# --------------------------------------------------------------------------------------------------
# DriverConformance: one suite every driver passes (built-in and third-party)
# --------------------------------------------------------------------------------------------------


@dataclass
class ConformanceTarget:
    """What a driver's test gives the suite: an empty database it may fill through `admin_engine`
    (full rights; disposed once the fixed schema is in), the `details` Tessera registers it with,
    and the policy those details are checked against."""

    details: dict
    admin_engine: Any
    policy: Any = None
    # Called with the admin engine once the fixed schema is in (e.g. to export it to files).
    after_fill: Any = None
    # Called with the admin engine before the persist-models probe: grant what Tessera's own tables need.
    allow_tessera_tables: Any = None


PEOPLE = [
    (1, "Ada", 10**12, 1.5, Decimal("10.25"), True, dt.date(1990, 1, 2), dt.datetime(2020, 1, 2, 3, 4, 5),
     dt.time(6, 30), "Zoë 🦜 北京"),
    (2, "Bob", None, None, None, None, None, None, None, None),
    (3, "Cléo", -5, 2.25, Decimal("-3.50"), False, dt.date(2001, 12, 31), dt.datetime(1999, 12, 31, 23, 59, 59),
     dt.time(23, 0), "second line\nwith 'quotes' and \"doubles\""),
]
ORDERS = [(1, 1, Decimal("5.00"), "first"), (2, 1, Decimal("7.50"), None), (3, 3, Decimal("1.25"), "ünïcödé"),
          (4, None, Decimal("0.00"), "orphan")]


def conformance_schema():
    from sqlalchemy import (
        BigInteger,
        Boolean,
        Column,
        Date,
        DateTime,
        Float,
        ForeignKey,
        Integer,
        MetaData,
        Numeric,
        String,
        Table,
        Text,
        Time,
    )

    metadata = MetaData()
    people = Table(
        "conf_people", metadata,
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("name", String(50), nullable=False),
        Column("score", BigInteger), Column("height", Float), Column("balance", Numeric(10, 2)),
        Column("active", Boolean), Column("born", Date), Column("seen_at", DateTime), Column("wakes", Time),
        Column("bio", Text),
    )
    orders = Table(
        "conf_orders", metadata,
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("person_id", Integer, ForeignKey("conf_people.id")),
        Column("total", Numeric(10, 2)), Column("note", String(100)),
    )
    return metadata, people, orders


def _join_probe(kind: str):
    from sqlglot import exp

    return (exp.select(exp.column("id", "p"), exp.column("id", "o").as_("order_id"))
            .from_(exp.to_table("conf_people").as_("p"))
            .join(exp.to_table("conf_orders").as_("o"), on="o.person_id = p.id", join_type=kind))


def feature_probes() -> dict:
    """Feature name -> (sqlglot tree, check on the rows). Every declared feature with a probe must pass."""
    import sqlglot
    from sqlglot import exp

    people = exp.to_table("conf_people")
    name, height = exp.column("name"), exp.column("height")
    return {
        "basic-aggregations": (exp.select(exp.Count(this=exp.Star()), exp.Sum(this=exp.column("score"))).from_(people),
                               lambda rows: rows[0][0] == 3 and int(rows[0][1]) == 10**12 - 5),
        "standard-deviation-aggregations": (exp.select(exp.Stddev(this=height)).from_(people),
                                            lambda rows: abs(float(rows[0][0]) - 0.5303300858899106) < 1e-9),
        "percentile-aggregations": (sqlglot.parse_one(
            "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY height) FROM conf_people", read="postgres"),
            lambda rows: abs(float(rows[0][0]) - 1.875) < 1e-9),
        "expressions": (exp.select((exp.column("id") * 2 + 1).as_("x")).from_(people).order_by("id"),
                        lambda rows: [r[0] for r in rows] == [3, 5, 7]),
        "regex": (exp.select(name).from_(people).where(exp.RegexpLike(this=name, expression=exp.Literal.string("^A"))),
                  lambda rows: rows == [("Ada",)]),
        "case-sensitivity-string-filter-options": (
            exp.select(name).from_(people).where(exp.Lower(this=name).like(exp.Literal.string("%cl%"))),
            lambda rows: rows == [("Cléo",)]),
        "nested-queries": (exp.select(exp.Count(this=exp.Star())).from_(
            exp.select("id").from_(people).where("id > 1").subquery("s")), lambda rows: rows[0][0] == 2),
        "binning": (exp.select(exp.Floor(this=exp.Div(this=height, expression=exp.Literal.number(1))).as_("bin"))
                    .from_(people).where(height.is_(exp.null()).not_()).order_by("bin"),
                    lambda rows: [float(r[0]) for r in rows] == [1.0, 2.0]),
        "inner-join": (_join_probe("inner"), lambda rows: len(rows) == 3),
        "left-join": (_join_probe("left"), lambda rows: len(rows) == 4),
        "right-join": (_join_probe("right"), lambda rows: len(rows) == 4),
        "full-join": (_join_probe("full"), lambda rows: len(rows) == 5),
    }


WRITE_STATEMENTS = [
    "INSERT INTO conf_orders (id, person_id, total, note) VALUES (99, 1, 1, 'x')",
    "UPDATE conf_people SET name = 'pwned'",
    "DELETE FROM conf_orders",
    "CREATE TABLE conf_new (a INTEGER)",
    "DROP TABLE conf_orders",
    "SELECT 1; DROP TABLE conf_orders",
    "select 1; /* sneaky */ delete from conf_orders",
]


class DriverConformance:
    """The suite every driver passes. Subclass it with `driver = MyDriver` and a class-scoped fixture
    `conformance_target` returning a ConformanceTarget for an empty database. Engine extras:
    `escape_statements` (must fail and leave `{out}` absent), `extra_write_statements`,
    `teeth_sql` (refused when locked, succeeds once `remove_guards` has run) and `slow_sql`.
    """

    driver: ClassVar[type]
    slow_sql: ClassVar[str] = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                               "SELECT count(*) FROM c")
    series_sql: ClassVar[str] = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < :n) "
                                 "SELECT x, 'padding-to-make-rows-bigger' AS pad FROM c")
    escape_statements: ClassVar[list[str]] = []
    extra_write_statements: ClassVar[list[str]] = []
    teeth_sql: ClassVar[str] = "CREATE TABLE conf_teeth (a INTEGER)"
    teeth_cleanup_sql: ClassVar[str | None] = "DROP TABLE IF EXISTS conf_teeth"
    # Whether the engine knows primary keys and NOT NULL (a CSV file does not).
    reports_constraints: ClassVar[bool] = True
    expected_base_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "id": ("type/Integer", "type/BigInteger"), "name": ("type/Text",), "score": ("type/BigInteger",),
        "height": ("type/Float",), "balance": ("type/Decimal",), "active": ("type/Boolean",),
        "born": ("type/Date",), "seen_at": ("type/DateTime",), "wakes": ("type/Time",), "bio": ("type/Text",),
    }

    # ---- fixtures --------------------------------------------------------------------------------

    def pytest_generate_tests(self, metafunc):
        # One probe per feature the driver declares; features it does not declare are not tested.
        if "feature" in metafunc.fixturenames:
            metafunc.parametrize("feature", sorted(set(feature_probes()) & set(self.driver.features)))
        if "persisting" in metafunc.fixturenames:
            metafunc.parametrize("persisting", ["declared" if "persist-models" in self.driver.features else "undeclared"])

    @pytest.fixture(scope="class")
    @classmethod
    def conformance(cls, conformance_target):
        from core.driver.connections import build_engine, check
        from core.driver.sources import ConnectionPolicy

        metadata, people, orders = conformance_schema()
        admin = conformance_target.admin_engine
        with admin.begin() as conn:
            metadata.create_all(conn, checkfirst=False)
            conn.execute(people.insert(), [dict(zip(people.c.keys(), row)) for row in PEOPLE])
            conn.execute(orders.insert(), [dict(zip(orders.c.keys(), row)) for row in ORDERS])
        if conformance_target.after_fill:
            conformance_target.after_fill(admin)
        admin.dispose()  # file engines: the locked engine must be the only one on the file
        policy = conformance_target.policy or ConnectionPolicy()
        details = check(cls.driver, conformance_target.details, policy)
        engine = build_engine(cls.driver, details)
        yield SimpleNamespace(engine=engine, details=details, raw=conformance_target.details, policy=policy,
                              target=conformance_target)
        engine.dispose()

    def run(self, engine, sql, params=None, **kwargs) -> list[tuple]:
        with self.driver.execute(engine, sql, params, **kwargs) as result:
            return list(result.rows)

    def count(self, conformance, table="conf_orders") -> int:
        return self.run(conformance.engine, f"SELECT count(*) FROM {table}")[0][0]

    def remove_guards(self, monkeypatch) -> None:
        """Switch the engine's lockdown off (for the teeth test); engines with more guards add them."""
        monkeypatch.setattr(self.driver, "lockdown", classmethod(lambda cls, conn, details: None))
        monkeypatch.setattr(self.driver, "guard", classmethod(contextlib.contextmanager(lambda cls, conn, t: (yield))))

    # ---- declaration -----------------------------------------------------------------------------

    def test_declaration(self):
        from core.driver.sql import SQLDriver

        assert issubclass(self.driver, SQLDriver) and self.driver.available()
        info = self.driver.engine_info()
        assert info["driver-name"] == self.driver.display_name
        names = [p["name"] for p in info["details-fields"]]
        assert len(names) == len(set(names)) and names
        for prop in info["details-fields"]:
            assert prop["type"] in {"string", "password", "integer", "boolean"}, prop
        secrets_ = set(self.driver.Details.model_construct().secret_keys())
        assert {p["name"] for p in info["details-fields"] if p["type"] == "password"} == secrets_
        import sqlglot.dialects

        assert sqlglot.Dialect.get_or_raise(self.driver.sqlglot_dialect)

    def test_unknown_detail_keys_are_refused(self, conformance):
        from core.driver.connections import check
        from core.http.errors import Invalid

        for key in ("connection-uri", "subprotocol", "classname", "init_command", "local_infile", "options"):
            with pytest.raises(Invalid) as error:
                check(self.driver, {**conformance.raw, key: "x"}, conformance.policy)
            assert key in error.value.body["errors"], key

    def test_secrets_are_masked(self, conformance):
        from core.driver.crypto import MASK, mask_details

        for key in conformance.details.secret_keys():
            masked = mask_details(self.driver, {**conformance.raw, key: "s3cret"})
            assert masked[key] == MASK

    # ---- introspection ---------------------------------------------------------------------------

    def test_dbms_version(self, conformance):
        version = self.driver.dbms_version(conformance.engine)
        assert version["flavor"] and version["version"]
        assert version["semantic-version"] and all(isinstance(p, int) for p in version["semantic-version"])

    def _table(self, conformance, name):
        tables = {t.name: t for t in self.driver.describe_tables(conformance.engine)}
        assert name in tables, sorted(tables)
        return tables[name]

    def test_tables(self, conformance):
        names = {t.name for t in self.driver.describe_tables(conformance.engine)}
        assert {"conf_people", "conf_orders"} <= names
        if "schemas" in self.driver.features:
            assert all(isinstance(s, str) for s in self.driver.syncable_schemas(conformance.engine))

    def test_fields_and_base_types(self, conformance):
        fields = self.driver.describe_fields(conformance.engine, self._table(conformance, "conf_people"))
        assert [f.name for f in fields] == list(self.expected_base_types)
        assert [f.position for f in fields] == list(range(len(fields)))
        for f in fields:
            assert f.base_type in self.expected_base_types[f.name], (f.name, f.database_type, f.base_type)
            assert f.database_type
        by_name = {f.name: f for f in fields}
        if self.reports_constraints:
            assert by_name["id"].pk and not by_name["name"].pk
            assert by_name["name"].required and not by_name["bio"].required
        else:
            assert not any(f.pk or f.required for f in fields)

    def test_foreign_keys(self, conformance):
        fks = self.driver.describe_fks(conformance.engine, self._table(conformance, "conf_orders"))
        expected = [("person_id", "conf_people", "id")] if "foreign-keys" in self.driver.features else []
        assert [(fk.column, fk.target_table, fk.target_column) for fk in fks] == expected

    # ---- SQL and execution -----------------------------------------------------------------------

    def test_to_sql_of_a_select_runs(self, conformance):
        from sqlglot import exp

        tree = (exp.select("name").from_(exp.to_table("conf_people"))
                .where(exp.column("id").eq(exp.Literal.number(3))))
        sql = self.driver.to_sql(tree)
        assert isinstance(sql, str) and "conf_people" in sql
        assert self.run(conformance.engine, sql) == [("Cléo",)]

    def test_named_parameters_and_values(self, conformance):
        rows = self.run(conformance.engine, "SELECT id, name, bio, score FROM conf_people WHERE id IN (:a, :b) "
                        "ORDER BY id", {"a": 1, "b": 2})
        assert rows == [(1, "Ada", "Zoë 🦜 北京", 10**12), (2, "Bob", None, None)]
        assert self.run(conformance.engine, "SELECT '%' AS pct, 'a:b' AS colon") == [("%", "a:b")]

    def test_result_columns(self, conformance):
        with self.driver.execute(conformance.engine, "SELECT id, name, height FROM conf_people ORDER BY id") as result:
            assert [c.name for c in result.columns] == ["id", "name", "height"]
            assert all(c.base_type.startswith("type/") for c in result.columns)
            assert len(list(result.rows)) == 3

    def test_streams_rows(self, conformance):
        import tracemalloc

        with self.driver.execute(conformance.engine, self.series_sql, {"n": 5}, max_rows=3) as result:
            assert not isinstance(result.rows, (list, tuple))
            assert [row[0] for row in result.rows] == [1, 2, 3]
        tracemalloc.start()
        try:
            with self.driver.execute(conformance.engine, self.series_sql, {"n": 50_000}) as result:
                total = sum(1 for _ in result.rows)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert total == 50_000
        # All 50k rows held at once would take about 8 MB; batches of 1000 take a few hundred KB.
        assert peak < 4 * 1024 * 1024, f"peak {peak} bytes for 50k rows: rows are not streamed"

    def test_abandoned_stream_is_cheap(self, conformance):
        """Leaving after one row of a million neither reads the rest nor spoils the connection."""
        import time

        started = time.monotonic()
        with self.driver.execute(conformance.engine, self.series_sql, {"n": 1_000_000}) as result:
            assert next(result.rows)[0] == 1
        assert time.monotonic() - started < 1.5
        assert self.run(conformance.engine, "SELECT 1") == [(1,)]

    @pytest.mark.security_row(24)
    def test_timeout_stops_the_statement(self, conformance):
        import time

        from core.driver.records import QueryTimeout

        started = time.monotonic()
        with pytest.raises(QueryTimeout):
            self.run(conformance.engine, self.slow_sql, timeout=0.5)
        assert time.monotonic() - started < 2.5
        assert self.run(conformance.engine, "SELECT 1") == [(1,)]  # the connection is usable again

    def test_engine_errors_are_query_errors(self, conformance):
        from core.driver.records import QueryError, QueryTimeout

        with pytest.raises(QueryError) as error:
            self.run(conformance.engine, "SELECT no_such_column FROM conf_people")
        assert not isinstance(error.value, QueryTimeout) and error.value.message

    def test_declared_feature_works(self, conformance, feature):
        tree, check_rows = feature_probes()[feature]
        rows = self.run(conformance.engine, self.driver.to_sql(tree))
        assert check_rows(rows), (feature, self.driver.to_sql(tree), rows)

    def test_persist_models_probe(self, conformance, persisting):
        """A driver declaring persist-models: its `writable` transaction creates and fills a table where
        `owned_schema` says, the read-only engine reads it, and is read-only again afterwards. A driver
        that does not declare it cannot write even through `writable`."""
        import sqlalchemy as sa
        from sqlglot import exp

        from core.driver.records import LockdownError, QueryError

        schema = self.driver.owned_schema
        table = sa.Table("tessera_cache_conf_probe", sa.MetaData(), sa.Column("id", sa.BigInteger),
                         sa.Column("name", sa.Text), sa.Column("born", sa.Date), schema=schema, quote=True)
        if persisting == "undeclared":
            with pytest.raises((sa.exc.SQLAlchemyError, LockdownError, QueryError)):
                with self.driver.writable(conformance.engine, conformance.details) as conn:
                    table.create(conn)
            return
        if conformance.target.allow_tessera_tables is not None:
            conformance.target.allow_tessera_tables(conformance.target.admin_engine)
        with self.driver.writable(conformance.engine, conformance.details) as conn:
            if schema is not None:
                conn.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
            table.drop(conn, checkfirst=True)
            table.create(conn)
            conn.execute(table.insert(), [{"id": 1, "name": "Ada", "born": dt.date(1815, 12, 10)},
                                          {"id": 2, "name": "Cléo", "born": None}])
        source = exp.Table(this=exp.to_identifier(table.name, quoted=True),
                           db=exp.to_identifier(schema, quoted=True) if schema else None)
        read = self.driver.to_sql(exp.select("id", "name").from_(source).order_by("id"))
        assert self.run(conformance.engine, read) == [(1, "Ada"), (2, "Cléo")]
        with pytest.raises(QueryError):  # the data connections went back read-only
            self.run(conformance.engine, f"DELETE FROM {self.driver.to_sql(source)}")
        assert len(self.run(conformance.engine, read)) == 2
        with self.driver.writable(conformance.engine, conformance.details) as conn:
            table.drop(conn)
        with pytest.raises(QueryError):
            self.run(conformance.engine, read)

    # ---- compiled-MBQL forms (core.query.dialect methods) ------------------------------------------

    TRUNCATE_UNITS = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")
    EXTRACT_UNITS = ("second", "minute-of-hour", "hour-of-day", "day-of-week", "day-of-month", "day-of-year",
                     "week-of-year", "month-of-year", "quarter-of-year", "year")
    WEEK_STARTS = (0, 3, 4, 5, 6)  # Python weekdays: Monday, Thursday (seen_at's own day), Friday, Saturday, Sunday

    @staticmethod
    def _timestamp_text(value) -> str:
        if isinstance(value, dt.datetime):
            return value.strftime("%Y-%m-%d %H:%M:%S")
        if isinstance(value, dt.date):
            return value.isoformat() + " 00:00:00"
        return str(value)[:19]

    @staticmethod
    def expected_truncation(value: dt.datetime, unit: str, week_start: int) -> str:
        day = value.replace(hour=0, minute=0, second=0)
        start = {"second": value, "minute": value.replace(second=0), "hour": value.replace(minute=0, second=0),
                 "day": day, "week": day - dt.timedelta(days=(value.weekday() - week_start) % 7),
                 "month": day.replace(day=1), "quarter": day.replace(month=(value.month - 1) // 3 * 3 + 1, day=1),
                 "year": day.replace(month=1, day=1)}[unit]
        return start.strftime("%Y-%m-%d %H:%M:%S")

    @staticmethod
    def expected_extraction(value: dt.datetime, unit: str, week_start: int) -> int:
        return {"second": value.second, "minute-of-hour": value.minute, "hour-of-day": value.hour,
                "day-of-week": (value.weekday() - week_start) % 7 + 1, "day-of-month": value.day,
                "day-of-year": value.timetuple().tm_yday, "week-of-year": value.isocalendar()[1],
                "month-of-year": value.month, "quarter-of-year": (value.month - 1) // 3 + 1,
                "year": value.year}[unit]

    def test_temporal_buckets_honour_the_week_start(self, conformance):
        """truncate_temporal and extract_temporal, every unit and several week starts, against Python."""
        from sqlglot import exp

        seen_at = exp.column("seen_at")
        cases = [("truncate", unit, start) for unit in self.TRUNCATE_UNITS
                 for start in (self.WEEK_STARTS if unit == "week" else (6,))]
        cases += [("extract", unit, start) for unit in self.EXTRACT_UNITS
                  for start in (self.WEEK_STARTS if unit == "day-of-week" else (6,))]
        columns = [(self.driver.truncate_temporal if kind == "truncate" else self.driver.extract_temporal)(
            seen_at.copy(), unit, start).as_(f"c{i}") for i, (kind, unit, start) in enumerate(cases)]
        for person in (PEOPLE[0], PEOPLE[2]):  # a Thursday early in a year, a Friday late in one
            tree = exp.select(*columns).from_("conf_people").where(exp.column("id").eq(exp.Literal.number(person[0])))
            sql = self.driver.to_sql(tree)
            row = self.run(conformance.engine, sql)[0]
            for (kind, unit, start), got in zip(cases, row):
                if kind == "truncate":
                    expected, actual = self.expected_truncation(person[7], unit, start), self._timestamp_text(got)
                else:
                    expected, actual = self.expected_extraction(person[7], unit, start), int(float(got))
                assert actual == expected, (kind, unit, start, person[7], actual, sql)

    # (kind, value, case-sensitive, names matched): LIKE and GLOB wildcards and the escape character
    # are matched literally; case-sensitive matching is exact even where collations ignore case.
    STRING_MATCHES = (
        ("contains", "d", True, {"Ada"}), ("contains", "D", True, set()), ("contains", "D", False, {"Ada"}),
        ("starts-with", "b", True, set()), ("starts-with", "b", False, {"Bob"}), ("ends-with", "éo", True, {"Cléo"}),
        ("ends-with", "A", False, {"Ada"}), ("contains", "a_a", False, set()), ("contains", "A%", True, set()),
        ("contains", "%", False, set()), ("contains", "!", True, set()), ("contains", "A*", True, set()),
        ("contains", "?", True, set()), ("starts-with", "[A]", True, set()), ("starts-with", "[AB]", False, set()),
    )

    def test_string_match_and_exact_text(self, conformance):
        from sqlglot import exp

        name = exp.column("name")
        for kind, value, case_sensitive, expected in self.STRING_MATCHES:
            condition = self.driver.string_match(name.copy(), kind, value, case_sensitive)
            sql = self.driver.to_sql(exp.select("name").from_("conf_people").where(condition))
            assert {row[0] for row in self.run(conformance.engine, sql)} == expected, (kind, value, case_sensitive, sql)
        for value, expected in (("Ada", {"Ada"}), ("ada", set()), ("ADA", set())):
            exact = self.driver.exact_text(exp.Literal.string(value))
            sql = self.driver.to_sql(exp.select("name").from_("conf_people").where(name.copy().eq(exact)))
            assert {row[0] for row in self.run(conformance.engine, sql)} == expected, (value, sql)

    # ---- read-only and lockdown ------------------------------------------------------------------

    @pytest.mark.security_row(8)
    def test_writes_are_refused_by_the_engine(self, conformance):
        from core.driver.records import QueryError

        before = (self.count(conformance), self.count(conformance, "conf_people"))
        for statement in WRITE_STATEMENTS + self.extra_write_statements:
            with pytest.raises(QueryError):
                self.run(conformance.engine, statement)
            assert (self.count(conformance), self.count(conformance, "conf_people")) == before, statement
        assert self.run(conformance.engine, "SELECT name FROM conf_people WHERE id = 1") == [("Ada",)]

    @pytest.mark.security_row(4, 5, 6)
    def test_escapes_fail_without_touching_disk(self, conformance, tmp_path):
        from core.driver.records import QueryError

        out = tmp_path / "escape.out"
        for statement in self.escape_statements:
            with pytest.raises(QueryError):
                self.run(conformance.engine, statement.format(out=out))
            assert not out.exists(), statement

    @pytest.mark.security_row(4, 5, 6, 8)
    def test_guards_have_teeth(self, conformance, monkeypatch, tmp_path):
        """The same statement succeeds once the lockdown is removed: the guard, nothing else, stops it."""
        from core.driver.connections import build_engine
        from core.driver.records import QueryError

        out = tmp_path / "teeth.out"
        sql = self.teeth_sql.format(out=out)
        with pytest.raises(QueryError):
            self.run(conformance.engine, sql)
        assert not out.exists()
        conformance.engine.dispose()
        with monkeypatch.context() as patch:
            self.remove_guards(patch)
            unguarded = build_engine(self.driver, conformance.details)
            try:
                self.run(unguarded, sql)
                if "{out}" in self.teeth_sql:
                    assert out.exists()
                if self.teeth_cleanup_sql:
                    self.run(unguarded, self.teeth_cleanup_sql)
            finally:
                unguarded.dispose()
