"""Fixtures for compiler tests: an app DB with the sample metadata, and the sample data on each engine.

Each engine gets its own copy of tests.core.query.sample: a SQLite file, a DuckDB file, and on the
loopback servers a uniquely named PostgreSQL database and MariaDB database, dropped afterwards.
"""
from __future__ import annotations

import importlib
import shutil
import uuid

import pytest
import sqlalchemy as sa

from core.db import AppDatabase
from core.testing import require_mariadb, require_postgres

from . import sample

ENGINES = ["sqlite", "duckdb", "postgres", "mysql"]
DRIVER_MODULES = {"sqlite": "drivers.sqlite", "duckdb": "drivers.duckdb", "postgres": "drivers.postgres",
                  "mysql": "drivers.mysql"}


def driver_class(engine: str):
    module = importlib.import_module(DRIVER_MODULES[engine])
    return next(d for d in module.register_drivers() if d.engine == engine)


@pytest.fixture(scope="module")
def appdb(tmp_path_factory, app_db_template):
    path = tmp_path_factory.mktemp("mbql") / "tessera.db"
    shutil.copy(app_db_template, path)
    database = AppDatabase(f"sqlite:///{path}")
    yield database
    database.dispose()


class Sample:
    """The sample data on one engine: its driver, a SQLAlchemy engine, and the ids of its metadata."""

    def __init__(self, engine_name: str, engine: sa.Engine, ids: dict, session):
        self.engine_name = engine_name
        self.engine = engine
        self.ids = ids
        self.session = session
        self.driver = driver_class(engine_name)

    def run(self, sql: str, params: dict | None = None) -> list[tuple]:
        """Through the driver's own execute, as the query processor runs SQL."""
        with self.driver.execute(self.engine, sql, params, timeout=30) as result:
            return [tuple(row) for row in result.rows]


def _server_engine(engine_name: str, stack: list):
    name = f"tessera_mbql_{uuid.uuid4().hex[:10]}"
    if engine_name == "postgres":
        admin = sa.create_engine(require_postgres(), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        url = require_postgres().rsplit("/", 1)[0] + "/" + name

        def drop():
            with admin.connect() as conn:
                conn.exec_driver_sql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
            admin.dispose()
        stack.append(drop)
        return sa.create_engine(url), "public"
    admin = sa.create_engine(require_mariadb())
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE `{name}`")
    url = require_mariadb().rsplit("/", 1)[0] + "/" + name

    def drop_mysql():
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS `{name}`")
        admin.dispose()
    stack.append(drop_mysql)
    # Results and literals are UTC: the session time zone must not shift them.
    return sa.create_engine(url, connect_args={"init_command": "SET time_zone = '+00:00'"}), None


def _open(engine_name: str, appdb, tmp_path_factory, cleanup: list) -> Sample:
    if engine_name == "sqlite":
        engine, schema = sa.create_engine(f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'sample.db'}"), None
    elif engine_name == "duckdb":
        engine, schema = sa.create_engine(f"duckdb:///{tmp_path_factory.mktemp('duckdb') / 'sample.duckdb'}"), "main"
    else:
        engine, schema = _server_engine(engine_name, cleanup)
    cleanup.insert(0, engine.dispose)
    sample.load(engine, schema if engine_name == "postgres" else None)
    with appdb.session() as session:
        ids = sample.register(session, engine_name, schema)
    session = appdb.Session()
    cleanup.insert(0, session.close)
    return Sample(engine_name, engine, ids, session)


@pytest.fixture(scope="module")
def sqlite_sample(appdb, tmp_path_factory):
    cleanup: list = []
    try:
        yield _open("sqlite", appdb, tmp_path_factory, cleanup)
    finally:
        for step in cleanup:
            step()


@pytest.fixture(scope="module")
def samples(appdb, tmp_path_factory) -> dict[str, Sample]:
    """The sample data on all four engines (skips, naming the server, when PostgreSQL or MariaDB is down)."""
    require_postgres()
    require_mariadb()
    cleanup: list = []
    try:
        yield {name: _open(name, appdb, tmp_path_factory, cleanup) for name in ENGINES}
    finally:
        for step in cleanup:
            step()
