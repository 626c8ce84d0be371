"""Fixtures for tests of the app: a migrated app DB copied per test, the app on SQLite and PostgreSQL,
an API client, the administrator and a plain user, the Sample Database, and rows other plugins'
APIs create for tests that only need them to exist.
"""
from __future__ import annotations

import contextlib
import shutil
import uuid
from pathlib import Path

import pytest

from .services import require_postgres

FAST_HASHING = {"TESSERA_PASSWORD_HASH_TIME_COST": 1, "TESSERA_PASSWORD_HASH_MEMORY_KIB": 8}
ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "Sup3r-Secret-Admin"
USER_PASSWORD = "Ordinary-Us3r-Pass"

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
    from core.assembly.heap import freeze_loaded_heap
    from core.assembly.plugins import migrate_app_db

    path = tmp_path_factory.mktemp("template") / "tessera.db"
    database = AppDatabase(f"sqlite:///{path}")
    migrate_app_db(database, {"TESSERA_PLUGINS_AUTOLOAD": False})
    database.dispose()
    # Every plugin is imported by now: frozen, that heap is no longer scanned by the full collections
    # that each test's app sets off (they cost a quarter of a second every few tests before).
    freeze_loaded_heap()
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


@contextlib.contextmanager
def _postgres_database(prefix: str, template: str | None = None):
    """A new database on the loopback PostgreSQL server (a copy of `template` when given): its URL; dropped
    afterwards."""
    from sqlalchemy import create_engine, text

    admin_url = require_postgres()
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")))
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with engine.connect() as conn:
            conn.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"), {"name": name})
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        engine.dispose()


@pytest.fixture
def postgres_app_db():
    """A fresh, empty PostgreSQL app database on the loopback server; dropped afterwards."""
    with _postgres_database("tessera_app") as url:
        yield url


@pytest.fixture(scope="session")
def postgres_app_db_template() -> str:
    """The name of a PostgreSQL app database migrated once per session (per xdist worker), which
    backend_config copies with CREATE DATABASE ... TEMPLATE as the SQLite branch copies app_db_template.
    Nothing may stay connected to it: PostgreSQL copies a template only while no one is."""
    from core.appdb.db import AppDatabase
    from core.assembly.plugins import migrate_app_db

    with _postgres_database("tessera_template") as url:
        database = AppDatabase(url)
        migrate_app_db(database, {"TESSERA_PLUGINS_AUTOLOAD": False})
        database.dispose()
        yield url.rsplit("/", 1)[1]


def backend_config(request, tmp_path, app_db_template) -> dict:
    """The configuration of an app on the app-DB backend `request.param` names, each a copy of a database
    migrated once per session ("sqlite": of app_db_template's file; "postgresql": of
    postgres_app_db_template, skipped when no server answers). Migrating an empty database at start-up
    is the concern of the tests that ask for postgres_app_db."""
    config = {"TESSERA_DATA_DIR": str(tmp_path), "TESSERA_PLUGINS_AUTOLOAD": False, "TESSERA_RUN_MIGRATIONS": False,
              **FAST_HASHING}
    if request.param == "sqlite":
        shutil.copy(app_db_template, tmp_path / "tessera.db")
        config["TESSERA_DB_URL"] = f"sqlite:///{tmp_path / 'tessera.db'}"
    else:
        config["TESSERA_DB_URL"] = request.getfixturevalue("postgres_app_db_copy")
    return config


@pytest.fixture
def postgres_app_db_copy(postgres_app_db_template):
    """A PostgreSQL app database already migrated (a copy of the session's template); dropped afterwards."""
    with _postgres_database("tessera_app", template=postgres_app_db_template) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def any_app(request, tmp_path, app_db_template):
    """The app on each app-DB backend: the SQLite file and, when one answers, PostgreSQL."""
    from core.assembly.app import create_app

    application = create_app(backend_config(request, tmp_path, app_db_template))
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
