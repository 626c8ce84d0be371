"""SQLite lockdown (compat/security.md section 2, threat rows 3, 4, 8 and 9): each guard proven, with teeth."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from core.driver import connections
from core.driver.records import QueryError
from core.driver.sources import ConnectionPolicy
from core.http.errors import Invalid
from drivers.sqlite import SQLiteDriver


@pytest.fixture
def files(tmp_path) -> Path:
    directory = tmp_path / "files"
    directory.mkdir()
    db = sqlite3.connect(directory / "birds.db")
    db.execute("CREATE TABLE birds (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO birds VALUES (1, 'toucan'), (2, 'puffin')")
    db.commit()
    db.close()
    return directory


@pytest.fixture
def policy(files, tmp_path) -> ConnectionPolicy:
    app_db = tmp_path / "tessera.db"
    sqlite3.connect(app_db).close()
    return ConnectionPolicy(file_dirs=(files,), app_db_url=f"sqlite:///{app_db}", forbidden_files=(app_db,))


@pytest.fixture
def engine(files, policy):
    engine = connections.build_engine(SQLiteDriver, connections.check(SQLiteDriver, {"db": str(files / "birds.db")}, policy))
    yield engine
    engine.dispose()


def run(engine, sql):
    with SQLiteDriver.execute(engine, sql) as result:
        return list(result.rows)


ESCAPES = [
    "ATTACH DATABASE '{out}' AS other",
    "VACUUM INTO '{out}'",
    "SELECT load_extension('{out}')",
    "PRAGMA writable_schema=1",
    "PRAGMA query_only=0",
    "PRAGMA trusted_schema=1",
    "INSERT INTO birds VALUES (3, 'kea')",
    "DELETE FROM birds",
    "CREATE TABLE t AS SELECT * FROM birds",
    "WITH d AS (SELECT 1) DELETE FROM birds",
]


@pytest.mark.security_row(4)
@pytest.mark.parametrize("statement", ESCAPES)
def test_escapes_fail_without_touching_disk(engine, files, tmp_path, statement):
    out = tmp_path / "escape.db"
    before = sorted(os.listdir(files))
    with pytest.raises(QueryError):
        run(engine, statement.format(out=out))
    assert not out.exists()
    assert sorted(os.listdir(files)) == before
    assert run(engine, "SELECT count(*) FROM birds") == [(2,)]


@pytest.mark.security_row(4)
def test_reads_and_read_pragmas_still_work(engine):
    assert run(engine, "SELECT name FROM birds ORDER BY id") == [("toucan",), ("puffin",)]
    assert [row[1] for row in run(engine, "PRAGMA table_info(birds)")] == ["id", "name"]


@pytest.mark.security_row(4)
def test_guard_has_teeth(files, policy, tmp_path, monkeypatch):
    """Without the lockdown, mode=ro alone lets ATTACH create a file: the guard is what stops it."""
    monkeypatch.setattr(SQLiteDriver, "lockdown", classmethod(lambda cls, conn, details: None))
    engine = connections.build_engine(SQLiteDriver, connections.check(SQLiteDriver, {"db": str(files / "birds.db")}, policy))
    out = tmp_path / "escape.db"
    run(engine, f"ATTACH DATABASE '{out}' AS other")
    engine.dispose()
    assert out.exists()


@pytest.mark.security_row(4)
def test_every_lockdown_layer_is_in_place(files):
    """The layers overlap (the authorizer alone also stops ATTACH), so each is checked on its own:
    removing any one of them must fail a test even while the others still hold."""
    from drivers.sqlite import authorizer, connect_read_only

    conn = connect_read_only(str(files / "birds.db"))
    try:
        SQLiteDriver.lockdown(conn, None)
        assert conn.getlimit(sqlite3.SQLITE_LIMIT_ATTACHED) == 0
        for function in ("load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"):
            assert authorizer(sqlite3.SQLITE_FUNCTION, None, function, None, None) == sqlite3.SQLITE_DENY
        for action, arg1 in ((sqlite3.SQLITE_ATTACH, "x.db"), (sqlite3.SQLITE_DETACH, "x"),
                             (sqlite3.SQLITE_PRAGMA, "writable_schema")):
            assert authorizer(action, arg1, None, None, None) == sqlite3.SQLITE_DENY
        conn.set_authorizer(None)  # to read the pragmas the authorizer hides
        assert conn.execute("PRAGMA query_only").fetchone() == (1,)
        assert conn.execute("PRAGMA trusted_schema").fetchone() == (0,)
    finally:
        conn.close()


@pytest.mark.security_row(24)
def test_timeout_stops_a_runaway_statement(engine):
    import time

    from core.driver.records import QueryTimeout

    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        with SQLiteDriver.execute(engine, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                                          "SELECT count(*) FROM c", timeout=0.3) as result:
            list(result.rows)
    assert time.monotonic() - started < 1.3
    assert run(engine, "SELECT 1") == [(1,)]  # the pooled connection is usable again


def _fifo(files):
    path = files / "fifo"
    os.mkfifo(path)
    return str(path)


def _symlink_out(files):
    link = files / "passwd.db"
    link.symlink_to("/etc/passwd")
    return str(link)


@pytest.mark.parametrize("make_path", [
    lambda files: os.path.join(files, os.path.relpath("/etc/passwd", files)),  # ../../.. up to the real file
    _symlink_out,
    lambda files: "/dev/zero",
    _fifo,
    lambda files: str(files / "missing.db"),
    lambda files: f"file:{files / 'birds.db'}?mode=rwc",
    lambda files: str(files),
])
@pytest.mark.security_row(3)
def test_bad_paths_are_refused_before_opening(files, policy, make_path):
    path = make_path(files)
    before = sorted(os.listdir(files))
    with pytest.raises(Invalid) as error:
        connections.check(SQLiteDriver, {"db": path}, policy)
    assert "db" in error.value.body["errors"]
    assert sorted(os.listdir(files)) == before


@pytest.mark.security_row(9)
def test_app_database_is_refused(tmp_path, policy):
    everything = ConnectionPolicy(file_dirs=(tmp_path,), forbidden_files=policy.forbidden_files)
    link = tmp_path / "alias.db"
    link.symlink_to(tmp_path / "tessera.db")
    for path in (tmp_path / "tessera.db", link):
        with pytest.raises(Invalid) as error:
            connections.check(SQLiteDriver, {"db": str(path)}, everything)
        assert "application database" in error.value.body["message"]


@pytest.mark.security_row(2)
@pytest.mark.parametrize("key", ["connection-uri", "subprotocol", "classname", "uri", "mode", "init"])
def test_unknown_detail_keys_are_refused_by_name(files, policy, key):
    with pytest.raises(Invalid) as error:
        connections.check(SQLiteDriver, {"db": str(files / "birds.db"), key: "x"}, policy)
    assert key in error.value.body["errors"]


# Threat row 8: the engine, not a pattern match, refuses writes, however the statement is dressed.
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st

WRITES = ["DELETE FROM birds", "UPDATE birds SET name = 'x'", "INSERT INTO birds VALUES (9, 'x')",
          "DROP TABLE birds", "CREATE TABLE t (a)", "WITH d AS (SELECT 1) DELETE FROM birds",
          "REPLACE INTO birds VALUES (1, 'x')", "ALTER TABLE birds ADD COLUMN c"]
NOISE = st.sampled_from([" ", "\n", "\t", "/* x */", "/**/ ", " -- c\n"])


@st.composite
def dressed(draw):
    words = draw(st.sampled_from(WRITES)).split(" ")
    cased = [w.upper() if draw(st.booleans()) else w.lower() if "'" not in w else w for w in words]
    return draw(NOISE) + "".join(w + draw(NOISE) for w in cased)


@pytest.mark.security_row(8)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(statement=dressed())
def test_dressed_up_writes_are_refused(engine, statement):
    with pytest.raises(QueryError):
        run(engine, statement)
    assert run(engine, "SELECT count(*), min(name) FROM birds") == [(2, "puffin")]
