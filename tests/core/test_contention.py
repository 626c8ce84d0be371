"""SQLAlchemy's per-request counters without their lock (core.appdb.contention): the same unique,
increasing numbers from any number of threads, with no lock for a thread to queue at."""
from __future__ import annotations

import threading

from sqlalchemy.orm import Session, loading, session

from core.appdb import contention


def test_the_counters_a_request_reaches_are_lock_free_after_an_app_db_is_made(app):
    for module, name in contention.COUNTERS:
        counter = getattr(module, name)
        assert not contention._guarded(counter), f"{module.__name__}.{name} still takes a lock"
    assert contention.install() == []  # installed once: nothing left to replace


def test_a_guarded_counter_is_recognised_and_continues_after_its_last_number(monkeypatch):
    from sqlalchemy import util

    locked = util.counter()
    assert contention._guarded(locked)
    handed = [locked() for _ in range(5)]
    monkeypatch.setattr(session, "_new_sessionid", locked)
    monkeypatch.setattr(loading, "_new_runid", util.counter())
    assert contention.install() == ["sqlalchemy.orm.session._new_sessionid", "sqlalchemy.orm.loading._new_runid"]
    assert session._new_sessionid() > max(handed)


def test_sessions_made_in_many_threads_get_unique_numbers(app):
    keys: list[int] = []
    lock = threading.Lock()

    def make():
        mine = [Session().hash_key for _ in range(2000)]
        with lock:
            keys.extend(mine)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keys) == 16000 and len(set(keys)) == 16000
