"""The change counters' reader on the SQLite file (core.appdb.changes.Changes with SQLite's data_version
precheck): threads read at once on connections of their own, and each connection's precheck answers
for that connection alone. (tests/core/test_pooling.py proves the same of PostgreSQL's readers.)"""
from __future__ import annotations

import threading

from sqlalchemy import text

from core.appdb.changes import Changes, cursor_rows


def _reader(app, fetch=None) -> Changes:
    engine = app.extensions["tessera"].db.engine
    return Changes(engine, True, "PRAGMA data_version", fetch=fetch)


def _write_setting(app, value: str) -> None:
    with app.extensions["tessera"].db.engine.begin() as conn:
        conn.execute(text("INSERT INTO setting (key, value) VALUES ('colour', :v) "
                          "ON CONFLICT (key) DO UPDATE SET value = :v"), {"v": value})


def test_a_read_waiting_on_its_statement_holds_up_no_other_thread(app):
    """The first read's statement is held; a second thread's read completes meanwhile (with one
    connection under a lock it waited for the first), and both answer the same counters."""
    entered, release = threading.Event(), threading.Event()
    calls = []

    def held_first(conn, sql, parameters):
        calls.append(threading.get_ident())
        if len(calls) == 1:
            entered.set()
            assert release.wait(10)
        return cursor_rows(conn, sql, parameters)

    changes = _reader(app, held_first)
    answers = {}
    first = threading.Thread(target=lambda: answers.setdefault("first", changes.read()))
    first.start()
    assert entered.wait(10)
    second = threading.Thread(target=lambda: answers.setdefault("second", changes.read()))
    second.start()
    second.join(10)
    finished_while_held = not second.is_alive()
    release.set()
    first.join(10)
    changes.close()
    assert finished_while_held
    assert answers["first"] is not None and answers["first"] == answers["second"]
    assert len(changes._idle) == 0  # closed: every connection given back was closed with it


def test_every_connection_sees_a_commit_made_after_its_last_read(app):
    changes = _reader(app)
    # Two reads at once leave two connections, each with the snapshot it read.
    barrier = threading.Barrier(2)

    def fetch_together(conn, sql, parameters):
        barrier.wait(10)
        return cursor_rows(conn, sql, parameters)

    changes.fetch = fetch_together
    threads = [threading.Thread(target=changes.read) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    changes.fetch = cursor_rows
    assert len(changes._idle) == 2
    before = changes.read().get("setting", 0)

    _write_setting(app, '"red"')
    for reader in changes._idle:
        assert changes._current(reader, None)["setting"] == before + 1
    # Unmoved, a connection answers the snapshot it read without reading the table again.
    counted = []
    changes.fetch = lambda conn, sql, parameters: counted.append(sql) or cursor_rows(conn, sql, parameters)
    again = [changes._current(reader, None) for reader in changes._idle]
    assert counted == [] and [a["setting"] for a in again] == [before + 1, before + 1]
    changes.close()
