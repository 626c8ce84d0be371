"""The write-behind buffer (core.appdb.counters) from many threads at once: no request thread takes a
lock another request thread takes (bumps are kept per thread, the other writes in one queue), and still
every write is written once, bumps of the same row merged, folds in the order they came, and a GET sees
every thread's views not written yet."""
from __future__ import annotations

import datetime as dt
import threading
import time

from sqlalchemy import insert, select, text

from core.appdb.counters import WriteBehind
from core.appdb.models import Card
from core.appdb.models import Query as QueryStats
from core.testing import setup_admin


def _in_threads(count: int, work) -> None:
    threads = [threading.Thread(target=work, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _card(app, name: str, creator: int) -> int:
    with app.extensions["tessera"].db.engine.begin() as conn:
        return conn.execute(insert(Card.__table__).values(
            name=name, display="table", dataset_query={}, visualization_settings={}, creator_id=creator,
            query_type="query", type="question").returning(Card.__table__.c.id)).scalar_one()


def test_bumps_from_many_threads_are_merged_and_read_back_before_the_flush(app):
    engine = app.extensions["tessera"].db.engine
    creator = setup_admin(app).user["id"]
    cards = [_card(app, f"Viewed {n}", creator) for n in range(3)]
    buffer = WriteBehind(engine, interval=3600)  # flushed by the test alone
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)

    def view(n: int) -> None:
        for turn in range(300):
            buffer.bump(Card, cards[turn % 3], add={"view_count": 1},
                        latest={"last_used_at": start + dt.timedelta(seconds=n * 1000 + turn)})

    try:
        _in_threads(8, view)
        counted, latest = buffer.pending(Card, cards[0])
        assert counted == {"view_count": 800}  # 100 of each thread's 300
        assert latest["last_used_at"] == start + dt.timedelta(seconds=7 * 1000 + 297)
        buffer.flush()
        assert buffer.pending(Card, cards[0]) == ({}, {})
        with engine.connect() as conn:
            counts = dict(conn.execute(select(Card.id, Card.view_count).where(Card.id.in_(cards))).all())
        assert counts == {card: 800 for card in cards}
    finally:
        buffer.close()


def test_queued_writes_from_many_threads_are_written_once_and_folds_in_order(app):
    engine = app.extensions["tessera"].db.engine
    buffer = WriteBehind(engine, interval=0.01)  # its own thread flushes while the threads add
    folded: list = []

    def fold(_conn, items):
        folded.extend(items)

    def add(n: int) -> None:
        for turn in range(200):
            buffer.insert(QueryStats, {"query_hash": f"{n:02d}{turn:062d}", "average_execution_time": 1,
                                       "query": {}})
            buffer.fold(fold, (n, turn))

    try:
        _in_threads(8, add)
        buffer.flush()
        buffer.delete(QueryStats, "query_hash", f"{0:02d}{0:062d}")  # a batch's deletes come before its inserts
        buffer.flush()
        with engine.connect() as conn:
            stored = conn.execute(text("SELECT count(*) FROM query WHERE average_execution_time = 1")).scalar()
        assert stored == 8 * 200 - 1
        assert sorted(folded) == sorted((n, turn) for n in range(8) for turn in range(200))
        for n in range(8):
            assert [turn for thread, turn in folded if thread == n] == list(range(200))
    finally:
        buffer.close()


def test_the_thread_stops_when_idle_and_a_later_write_starts_another(app, monkeypatch):
    from core.appdb import counters

    monkeypatch.setattr(counters, "IDLE_ROUNDS", 2)
    engine = app.extensions["tessera"].db.engine
    buffer = WriteBehind(engine, interval=0.01)
    folded: list = []
    try:
        buffer.fold(lambda _conn, items: folded.extend(items), "first")
        deadline = time.monotonic() + 10
        while (buffer._thread is not None or folded != ["first"]) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert folded == ["first"] and buffer._thread is None
        buffer.fold(lambda _conn, items: folded.extend(items), "second")
        assert buffer._thread is not None
        while folded != ["first", "second"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert folded == ["first", "second"]
    finally:
        buffer.close()
