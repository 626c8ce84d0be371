"""SQLite's commit mark (core.appdb.wal_mark) and the change counters' read that answers from it
(core.appdb.changes.Changes): while no connection has committed, the counters read last are answered
again with no statement; a commit by any connection, in this process or another, is seen by the next
read; a forked process reads through a mark of its own."""
from __future__ import annotations

import os
import sqlite3
import sys

import pytest
from sqlalchemy import create_engine, text

from core.appdb import wal_mark
from core.appdb.changes import Changes


def _wal_file(tmp_path):
    path = tmp_path / "marked.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.commit()
    return path, conn


def test_a_commit_by_another_connection_moves_the_mark_and_reads_do_not(tmp_path):
    path, writer = _wal_file(tmp_path)
    engine = create_engine(f"sqlite:///{path}")
    mark = wal_mark.open_mark(engine, path)
    try:
        assert mark is not None
        before = mark.mark()
        writer.execute("SELECT count(*) FROM t").fetchall()
        assert mark.mark() == before
        writer.execute("INSERT INTO t VALUES (1)")
        assert mark.mark() == before  # not committed yet: no reader sees it either
        writer.commit()
        after = mark.mark()
        assert after != before
        writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        writer.execute("INSERT INTO t VALUES (2)")
        writer.commit()
        assert mark.mark() not in (before, after)
    finally:
        if mark is not None:
            mark.close()
        writer.close()
        engine.dispose()


def test_no_mark_without_wal_or_with_another_index_format(tmp_path):
    plain = tmp_path / "plain.db"
    sqlite3.connect(plain).execute("CREATE TABLE t (x INTEGER)").connection.close()
    engine = create_engine(f"sqlite:///{plain}")
    assert wal_mark.open_mark(engine, plain) is None
    engine.dispose()
    # An index header of another version (a future SQLite's format) is not read.
    shm = tmp_path / "other-shm"
    shm.write_bytes((3007001).to_bytes(4, sys.byteorder) + bytes(8) + b"\x01" + bytes(32764))
    assert wal_mark._map(shm) is None
    shm.write_bytes((wal_mark.INDEX_VERSION).to_bytes(4, sys.byteorder) + bytes(8) + b"\x01" + bytes(32764))
    index = wal_mark._map(shm)
    assert index is not None
    index.close()


def _counting_reads(changes: Changes) -> list:
    reads = []
    original = changes._read

    def counted():
        reads.append(1)
        return original()

    changes._read = counted
    return reads


def _write_setting(engine, value: str) -> None:
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO setting (key, value) VALUES ('colour', :v) "
                          "ON CONFLICT (key) DO UPDATE SET value = :v"), {"v": value})


def test_the_counters_are_answered_from_the_mark_until_another_process_commits(app, tmp_path):
    db = app.extensions["tessera"].db
    changes = db.changes
    first = changes.read()  # opens the mark
    reads = _counting_reads(changes)
    second = changes.read()
    assert changes._mark is not None
    assert changes.read() is second and not reads[1:]  # one read at most: the first after opening
    # Another process (an instance, a CLI) commits through connections of its own.
    other = create_engine(db.engine.url)
    from core.appdb import changes as changes_module

    changes_module.track(other)
    try:
        _write_setting(other, "blue")
    finally:
        other.dispose()
    moved = changes.read()
    assert moved is not second and moved.total > second.total >= first.total
    assert moved.get("setting", 0) > second.get("setting", 0)
    assert changes.read() is moved


def test_a_commit_in_this_process_is_seen_by_the_next_read(app):
    db = app.extensions["tessera"].db
    db.changes.read()
    before = db.changes.read()
    _write_setting(db.engine, "green")
    assert db.changes.read().get("setting", 0) == before.get("setting", 0) + 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_process_reads_through_a_mark_of_its_own(app):
    db = app.extensions["tessera"].db
    db.changes.read()
    db.changes.read()
    parents = db.changes._mark
    assert parents is not None
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running the parent's exit handlers
        try:
            db.changes.read()  # the parent's mark is left alone; the child opens its own
            snapshot = db.changes.read()
            own = db.changes._mark
            ok = own is not None and own is not parents and own.pid == os.getpid() and snapshot is not None
            os.write(writer, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(writer)
    answer = os.read(reader, 1)
    os.close(reader)
    os.waitpid(pid, 0)
    assert answer == b"1"
    assert db.changes._mark is parents and parents.mark() is not None  # the parent's still reads
