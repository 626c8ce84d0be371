"""The built-in drivers as plugins: listed in /api/session/properties with their connection forms."""
from __future__ import annotations

import pytest

from core.assembly.app import create_app
from core.driver.contract import NetworkDetails
from core.driver.sql import SQLDriver


def test_engines_in_session_properties(client):
    engines = client.get("/api/session/properties").json["engines"]
    assert {"sqlite", "duckdb", "postgres", "mysql"} <= set(engines)
    postgres = {f["name"]: f for f in engines["postgres"]["details-fields"]}
    assert list(postgres) == ["host", "port", "dbname", "user", "password", "ssl"]
    assert postgres["password"]["type"] == "password" and postgres["dbname"]["required"] is True
    assert postgres["ssl"]["type"] == "boolean" and postgres["host"]["default"] == "localhost"
    assert [f["name"] for f in engines["sqlite"]["details-fields"]] == ["db"]
    assert [f["name"] for f in engines["duckdb"]["details-fields"]] == ["database_file"]
    assert engines["mysql"]["driver-name"] == "MySQL"


# Placeholder texts of Metabase's connection forms (its SQLite, H2 and server-engine defaults): Tessera's
# forms must read as its own.
FOREIGN_TEXTS = ("camsaul", "toucan", "birds_of_the_world", "name.database.com", "metabase", "😋")


def test_connection_forms_use_tesseras_own_texts(client):
    engines = client.get("/api/session/properties").json["engines"]
    for engine, info in engines.items():
        for field in info["details-fields"]:
            for key in ("placeholder", "display-name", "helper-text"):
                text = str(field.get(key, "")).lower()
                assert not any(foreign in text for foreign in FOREIGN_TEXTS), (engine, field)
    sqlite = engines["sqlite"]["details-fields"][0]
    assert sqlite["placeholder"] == "/srv/tessera/files/sales.sqlite"
    assert "TESSERA_FILE_DB_DIRS" in sqlite["helper-text"]
    postgres = {f["name"]: f for f in engines["postgres"]["details-fields"]}
    assert postgres["host"]["placeholder"] == "db.example.com" and postgres["dbname"]["placeholder"] == "analytics"


def test_a_driver_can_be_disabled(app_config):
    app = create_app({**app_config, "TESSERA_DRIVERS_DISABLED": "duckdb"})
    try:
        assert "duckdb" not in app.extensions["tessera"].drivers
        assert "sqlite" in app.extensions["tessera"].drivers
    finally:
        app.extensions["tessera"].db.dispose()


def test_incomplete_driver_is_refused_at_definition():
    with pytest.raises(TypeError, match="lockdown, guard"):
        class Careless(SQLDriver):
            engine = "careless"
            display_name = "Careless"
            sqlglot_dialect = "postgres"
            sqlalchemy_dialect = "postgresql+psycopg"
            Details = NetworkDetails


def test_a_missing_dbapi_hides_its_driver(tmp_path):
    """Without duckdb, PyMySQL and psycopg installed the server still starts, offering SQLite only."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = f"""
import sys, json
for name in ("duckdb", "duckdb_engine", "pymysql", "psycopg"):
    sys.modules[name] = None  # import fails as if the package were not installed
from core.assembly.app import create_app
app = create_app({{"TESSERA_DATA_DIR": {str(tmp_path)!r}, "TESSERA_PLUGINS_AUTOLOAD": False}})
print(json.dumps(sorted(app.extensions["tessera"].drivers)))
"""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["sqlite"]


@pytest.mark.security_row(5)
def test_duckdb_lockdown_refuses_an_unlocked_session(tmp_path):
    """The per-query check reads the settings back: a session opened without the locked
    configuration is refused, naming what is open; Tessera's own sessions pass."""
    duckdb = pytest.importorskip("duckdb", reason="the DuckDB driver is installed with the duckdb extra")
    from core.driver.records import LockdownError
    from drivers.duckdb import Anchor, DuckDBDriver

    path = str(tmp_path / "plain.duckdb")
    duckdb.connect(path).execute("CREATE TABLE t AS SELECT 1 AS a").close()
    open_session = duckdb.connect(path, read_only=True)
    with pytest.raises(LockdownError, match="enable_external_access, lock_configuration"):
        DuckDBDriver.lockdown(open_session, None)
    open_session.close()
    anchor = Anchor(path)
    try:
        session = anchor()
        DuckDBDriver.lockdown(session, None)
        assert session.execute("SELECT a FROM t").fetchall() == [(1,)]
    finally:
        anchor.close()


@pytest.mark.security_row(5)
def test_duckdb_anchor_refuses_an_instance_that_is_not_locked(tmp_path, monkeypatch):
    """The Anchor reads the settings back when it opens the instance; without the lock it hands out
    no session at all."""
    duckdb = pytest.importorskip("duckdb", reason="the DuckDB driver is installed with the duckdb extra")
    from core.driver.records import LockdownError
    from drivers import duckdb as driver

    path = str(tmp_path / "plain.duckdb")
    duckdb.connect(path).execute("CREATE TABLE t AS SELECT 1 AS a").close()
    monkeypatch.delitem(driver.LOCKED_CONFIG, "lock_configuration")
    anchor = driver.Anchor(path)
    with pytest.raises(LockdownError, match="lock_configuration"):
        anchor()
    assert anchor.connection is None


@pytest.mark.security_row(5)
def test_duckdb_sessions_cannot_unlock_what_the_anchor_verified(tmp_path):
    """Why one check per instance covers every session on it: no session can change a checked
    setting, for itself or globally."""
    duckdb = pytest.importorskip("duckdb", reason="the DuckDB driver is installed with the duckdb extra")
    from drivers.duckdb import EXPECTED, Anchor, DuckDBDriver, unlocked_settings

    path = str(tmp_path / "plain.duckdb")
    duckdb.connect(path).execute("CREATE TABLE t AS SELECT 1 AS a").close()
    anchor = Anchor(path)
    try:
        session = anchor()
        for name, value in EXPECTED.items():
            flipped = "true" if value == "false" else "false"
            for scope in ("SESSION ", "GLOBAL ", ""):
                with pytest.raises(duckdb.Error, match="locked"):
                    session.execute(f"SET {scope}{name} = {flipped}")
        assert unlocked_settings(session) == []
        assert unlocked_settings(anchor()) == []
        DuckDBDriver.lockdown(session, None)
    finally:
        anchor.close()
