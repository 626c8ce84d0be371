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


def test_pools_of_databases_deleted_or_changed_elsewhere_are_closed(app, admin, birds, tmp_path, monkeypatch):
    """Another instance deletes one database and re-points another, committing to the shared app DB:
    this process's watcher closes those two pools (and keeps the third) without being asked."""
    import time

    from sqlalchemy import create_engine, delete, update

    from core.appdb.models import Database
    from core.driver import stale_pools

    monkeypatch.setattr(stale_pools, "INTERVAL_SECONDS", 0.1)
    other = tmp_path / "files" / "other.db"
    sqlite3.connect(other).close()
    ids = [admin.post("/api/database", json={"name": name, "engine": "sqlite", "details": {"db": birds}}).json["id"]
           for name in ("Kept", "Deleted", "Moved")]
    state = app.extensions["tessera"]
    with app.app_context():
        from core.appdb.db import session

        engines = {i: connections.engine_for(session().get(Database, i)) for i in ids}
        moved_details = crypto.encrypt_details({"db": str(other)})
    elsewhere = create_engine(app.config["TESSERA_DB_URL"])  # another process's connection to the app DB
    with elsewhere.begin() as conn:
        conn.execute(delete(Database).where(Database.id == ids[1]))
        conn.execute(update(Database).where(Database.id == ids[2]).values(details=moved_details))
    elsewhere.dispose()
    deadline = time.monotonic() + 10
    while set(state.extras["connection_pools"]) != {f"db-{ids[0]}"} and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(state.extras["connection_pools"]) == {f"db-{ids[0]}"}
    with app.app_context():
        assert connections.engine_for(session().get(Database, ids[0])) is engines[ids[0]]
    # Nothing left to watch once the pools are gone: the watcher ends.
    with app.app_context():
        connections.dispose(ids[0])
    deadline = time.monotonic() + 10
    while stale_pools.MARKER in state.extras and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stale_pools.MARKER not in state.extras


def test_a_pool_built_while_the_watcher_closes_stale_ones_is_checked_at_its_next_look(app, monkeypatch):
    """A sync that read a database's row before its change rebuilds the pool from the old details while
    the watcher is closing the stale one: the watcher's next look checks that new pool too (it once
    remembered the pools held after its check, the rebuilt one among them, and never looked again)."""
    import time

    from core.driver import stale_pools

    monkeypatch.setattr(stale_pools, "INTERVAL_SECONDS", 0.05)
    state = app.extensions["tessera"]
    held = {"stale"}
    checks = []

    def close_stale(_state):
        checks.append(sorted(held))
        held.clear()
        if len(checks) == 1:
            held.add("rebuilt from the old details")  # the sync's pool, built while this check ran

    with app.app_context():
        stale_pools.watch(app, state, lambda _state: frozenset(held), close_stale)
    deadline = time.monotonic() + 10
    while held and time.monotonic() < deadline:
        time.sleep(0.02)
    assert checks[:2] == [["stale"], ["rebuilt from the old details"]]
    assert not held
    deadline = time.monotonic() + 10
    while stale_pools.MARKER in state.extras and time.monotonic() < deadline:  # nothing held: it ends
        time.sleep(0.02)
    assert stale_pools.MARKER not in state.extras


def test_a_retired_engine_closes_each_connection_given_back(app, birds):
    """A sync that fetched the engine before its database changed keeps using it: the connection it had
    out and the ones it opens afterwards are closed when given back, never pooled again."""
    from sqlalchemy import text

    with app.app_context():
        database = SimpleNamespace(id=11, engine="sqlite", details=crypto.encrypt_details({"db": birds}))
        engine = connections.engine_for(database)
        held = engine.connect()
        before = held.connection.dbapi_connection
        connections.dispose(database.id)
        assert "db-11" not in app.extensions["tessera"].extras["connection_pools"]
        assert held.execute(text("SELECT count(*) FROM birds")).scalar() == 0  # still usable while out
        held.close()
        with pytest.raises(sqlite3.ProgrammingError):  # closed at check-in
            before.execute("SELECT 1")
        with engine.connect() as later:
            after = later.connection.dbapi_connection
            assert later.execute(text("SELECT count(*) FROM birds")).scalar() == 0
        with pytest.raises(sqlite3.ProgrammingError):
            after.execute("SELECT 1")
        # An engine still in service pools its connections as before.
        kept = connections.engine_for(database)
        with kept.connect() as conn:
            pooled = conn.connection.dbapi_connection
        assert pooled.execute("SELECT 1").fetchone() == (1,)
        connections.dispose(database.id)


def test_a_pool_rebuilt_from_old_details_after_the_change_is_closed(app, admin, birds, tmp_path, monkeypatch):
    """The watcher has seen the change, then a sync that read the row before it builds a pool from the old
    details: the watcher (kept running by another database's pool) checks that new pool too and closes it."""
    import time

    from sqlalchemy import create_engine, update

    from core.appdb.models import Database
    from core.driver import stale_pools

    monkeypatch.setattr(stale_pools, "INTERVAL_SECONDS", 0.1)
    other = tmp_path / "files" / "other.db"
    sqlite3.connect(other).close()
    database_id, kept_id = (admin.post("/api/database", json={"name": name, "engine": "sqlite",
                                                                "details": {"db": birds}}).json["id"]
                            for name in ("Moved", "Kept"))
    state = app.extensions["tessera"]
    pools = state.extras.setdefault("connection_pools", {})
    name = f"db-{database_id}"
    with app.app_context():
        from core.appdb.db import session

        row = session().get(Database, database_id)
        read_before = SimpleNamespace(id=row.id, engine=row.engine, details=row.details)
        connections.engine_for(row)
        connections.engine_for(session().get(Database, kept_id))
    elsewhere = create_engine(app.config["TESSERA_DB_URL"])
    with elsewhere.begin() as conn:
        conn.execute(update(Database).where(Database.id == database_id)
                     .values(details=crypto.encrypt_details({"db": str(other)}, app.config)))
    elsewhere.dispose()

    def closed_within(seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while name in pools and time.monotonic() < deadline:
            time.sleep(0.05)
        return name not in pools

    assert closed_within(10)
    time.sleep(0.3)  # the watcher has looked again since: the counter no longer moves
    with app.app_context():
        connections.engine_for(read_before)
    assert name in pools
    assert closed_within(10)
    assert f"db-{kept_id}" in pools
