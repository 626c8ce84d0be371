"""Every worker's write-behind batch (core.appdb.counters) takes its row locks in one order, whatever
order the views and runs came in: two workers' flushes that updated the same rows in opposite orders
deadlocked on PostgreSQL (broken after a second, one batch failed)."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import event, insert

from core.appdb.counters import WriteBehind
from core.appdb.models import Card
from core.appdb.models import Query as QueryStats
from plugins.query_audit.service import update_averages


def _updates(engine, run) -> list[tuple[str, list]]:
    seen = []

    def record(_conn, _cursor, statement, parameters, _context, executemany):
        if statement.lstrip().upper().startswith("UPDATE"):
            seen.append((statement.split()[1], list(parameters) if executemany else [parameters]))

    event.listen(engine, "before_cursor_execute", record)
    try:
        run()
    finally:
        event.remove(engine, "before_cursor_execute", record)
    return seen


def test_view_counts_are_written_table_by_table_in_key_order(app):
    engine = app.extensions["tessera"].db.engine
    buffer = WriteBehind(engine)
    now = dt.datetime.now(dt.timezone.utc)
    for card_id in (30, 4, 17, 9):
        buffer.bump(Card, card_id, add={"view_count": 1}, latest={"last_used_at": now})
    updates = _updates(engine, buffer.flush)
    buffer.close()
    assert len(updates) == 1
    table, rows = updates[0]
    assert table == "report_card"
    keys = [row[-1] for row in rows]  # the key binds last: ... WHERE report_card.id = ?
    assert keys == [4, 9, 17, 30]


def test_running_averages_are_written_in_hash_order(app):
    engine = app.extensions["tessera"].db.engine
    hashes = ["c" * 64, "a" * 64, "b" * 64]
    with engine.begin() as conn:
        conn.execute(insert(QueryStats.__table__), [{"query_hash": h, "average_execution_time": 10, "query": {}}
                                                    for h in hashes])

    def fold():
        with engine.begin() as conn:
            update_averages(conn, [(h, 20, {}) for h in hashes])

    updated = [rows[0][-1] for _, rows in _updates(engine, fold)]  # ... WHERE query_hash = ?
    assert [value[:1] for value in updated] == ["a", "b", "c"]
