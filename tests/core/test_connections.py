"""core.driver.connections inside an app: validation errors, cached engines, pools, can_connect messages."""
from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest

from core.driver import connections, crypto
from core.http.errors import Invalid, NotFound


@pytest.fixture
def birds(app_config):
    from pathlib import Path

    files = Path(app_config["TESSERA_DATA_DIR"]) / "files"
    files.mkdir()
    path = files / "birds.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE birds (id INTEGER PRIMARY KEY, name TEXT)")
    db.commit()
    db.close()
    return str(path)


def test_validate_details(app, birds):
    with app.app_context():
        assert connections.validate_details("sqlite", {"db": birds, "advanced-options": False}).db == birds
        with pytest.raises(Invalid) as error:
            connections.validate_details("sqlite", {"db": birds, "connection-uri": "jdbc:h2:mem"})
        assert "connection-uri" in error.value.body["errors"]
        with pytest.raises(Invalid) as error:
            connections.validate_details("sqlite", {"db": birds, "tunnel-enabled": True})
        with pytest.raises(Invalid) as error:
            connections.validate_details("sqlite", {})
        assert error.value.body["errors"] == {"db": "value is required."}
        with pytest.raises(Invalid) as error:
            connections.validate_details("h2", {"db": birds})
        assert "engine" in error.value.body["errors"]
        # the default allowed directory is TESSERA_DATA_DIR/files; the app DB sits outside it
        with pytest.raises(Invalid):
            connections.validate_details("sqlite", {"db": app.config["TESSERA_DB_URL"].split("///")[1]})


def test_engine_cache_and_pools(app, birds, tmp_path):
    with app.app_context():
        database = SimpleNamespace(id=7, engine="sqlite", details=crypto.encrypt_details({"db": birds}))
        engine = connections.engine_for(database)
        assert connections.engine_for(database) is engine
        state = app.extensions["tessera"]
        assert state.extras["connection_pools"]["db-7"] is engine
        other = tmp_path / "files" / "other.db"
        sqlite3.connect(other).close()
        database.details = crypto.encrypt_details({"db": str(other)})
        rebuilt = connections.engine_for(database)
        assert rebuilt is not engine
        connections.dispose(7)
        assert "db-7" not in state.extras["connection_pools"]
        with pytest.raises(NotFound):
            connections.driver_for(SimpleNamespace(id=8, engine="h2", details=""))


def test_pool_shows_in_diagnostics(app, admin, birds):
    with app.app_context():
        connections.engine_for(SimpleNamespace(id=3, engine="sqlite", details=crypto.encrypt_details({"db": birds})))
    response = admin.get("/api/util/diagnostic_info/connection_pool_info")
    assert response.status_code == 200
    assert "db-3" in response.json["connection-pools"]


def test_can_connect(app, birds, tmp_path):
    with app.app_context():
        connections.can_connect("sqlite", {"db": birds})
        (tmp_path / "files" / "junk.db").write_text("not a database at all, just text")
        with pytest.raises(Invalid) as error:
            connections.can_connect("sqlite", {"db": str(tmp_path / "files" / "junk.db")})
        assert error.value.body["message"]
