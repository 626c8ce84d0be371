"""Fixtures for compiler tests: an app DB with the sample metadata, and the sample data on each engine.

`samples` puts tests.core.query.sample on the four engines (a SQLite file, a DuckDB file, and on the
loopback servers a uniquely named PostgreSQL database and MariaDB database, dropped afterwards) and
registers and syncs each (core.testing.register_synced). `sqlite_sample` and `appdb` write metadata rows directly, for tests of the
compiler alone.
"""
from __future__ import annotations

import contextlib
import importlib
import shutil

import pytest
import sqlalchemy as sa

from core.appdb.db import AppDatabase
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
    """The sample data on one engine: its driver (a built-in one's unless given), a SQLAlchemy engine,
    and the ids of its metadata."""

    def __init__(self, engine_name: str, engine: sa.Engine, ids: dict, session, driver=None):
        self.engine_name = engine_name
        self.engine = engine
        self.ids = ids
        self.session = session
        self.driver = driver or driver_class(engine_name)

    def run(self, sql: str, params: dict | None = None) -> list[tuple]:
        """Through the driver's own execute, as the query processor runs SQL."""
        with self.driver.execute(self.engine, sql, params, timeout=30) as result:
            return [tuple(row) for row in result.rows]


def _open(engine_name: str, appdb, tmp_path_factory, cleanup: list) -> Sample:
    """The sample on SQLite with metadata rows written directly (compiler tests that need no sync)."""
    engine = sa.create_engine(f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'sample.db'}")
    cleanup.insert(0, engine.dispose)
    sample.load(engine)
    with appdb.session() as session:
        ids = sample.register(session, engine_name, None)
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
def samples(tmp_path_factory, app_db_template) -> dict[str, Sample]:
    """The sample data on all four engines, registered and synced as a user would (sync writes the
    tables, fields, types and fingerprints), queried through the locked-down engines Tessera opens.
    PostgreSQL and MariaDB get their own database and unprivileged user, dropped afterwards."""
    from core.assembly.app import create_app
    from core.driver import connections
    from core.testing import FAST_HASHING, mariadb_data_source, postgres_data_source, register_synced

    require_postgres()
    require_mariadb()
    data_dir = tmp_path_factory.mktemp("synced")
    shutil.copy(app_db_template, data_dir / "tessera.db")
    app = create_app({"TESSERA_DATA_DIR": str(data_dir), "TESSERA_DB_URL": f"sqlite:///{data_dir / 'tessera.db'}",
                      "TESSERA_PLUGINS_AUTOLOAD": False, "TESSERA_RUN_MIGRATIONS": False, **FAST_HASHING})
    state = app.extensions["tessera"]
    files = data_dir / "files"
    files.mkdir()
    with app.app_context(), contextlib.ExitStack() as stack:
        sources = {}
        for engine_name, filename, key in (("sqlite", "sample.db", "db"), ("duckdb", "sample.duckdb", "database_file")):
            loader = sa.create_engine(f"{engine_name}:///{files / filename}")
            sample.load(loader)
            loader.dispose()
            sources[engine_name] = {key: str(files / filename)}
        for engine_name, source in (("postgres", postgres_data_source("tessera_mbql")),
                                    ("mysql", mariadb_data_source("tessera_mbql"))):
            server = stack.enter_context(source)
            loader = sa.create_engine(server.admin_url)
            sample.load(loader, "public" if engine_name == "postgres" else None)
            loader.dispose()
            sources[engine_name] = server.details
        stack.callback(connections.dispose_all)
        out = {}
        for engine_name in ENGINES:
            session, ids, engine = register_synced(state, stack, f"Sample on {engine_name}", engine_name,
                                                   sources[engine_name], sample.coerce_synced)
            out[engine_name] = Sample(engine_name, engine, ids, session)
        yield out
    state.db.dispose()
