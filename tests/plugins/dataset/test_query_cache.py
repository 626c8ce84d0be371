"""The result cache through the API: a repeated card query is answered from the app DB (by any app
instance on it, and by the same card on a dashboard), other parameters or a changed query miss, and a
caller who may not read the card gets 403, never the stored rows."""
from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import func, select

from core.appdb.counters import flush
from core.appdb.models import QueryCache, QueryExecution
from core.assembly.app import create_app
from core.testing import ApiClient, make_user, setup_admin

from .conftest import make_orders


@pytest.fixture
def orders(app, admin):
    return make_orders(app, count=300)


def _caching_on(admin) -> None:
    assert admin.put("/api/setting/enable-query-caching", json={"value": True}).status_code == 204


def _card(admin, orders, query: dict, **extra) -> int:
    body = {"name": "Cached", "display": "table", "visualization_settings": {}, "cache_ttl": 1,
            "dataset_query": {"database": orders.database_id, **query}, **extra}
    response = admin.post("/api/card", json=body)
    assert response.status_code == 200, response.json
    return response.json["id"]


def _table_card(admin, orders, **extra) -> int:
    return _card(admin, orders, {"type": "query", "query": {"source-table": orders.table_id,
                                                           "order-by": [["asc", ["field", orders.fields["id"], None]]]}},
                 **extra)


def _delete_orders(orders, above: int) -> None:
    """Change the data behind the cache's back: a hit still shows the stored rows."""
    conn = sqlite3.connect(orders.path)
    conn.execute("DELETE FROM orders WHERE id > ?", (above,))
    conn.commit()
    conn.close()


def _cache_hits(app) -> list[bool]:
    """Each run of a saved card, in order: whether the cache answered it (saving a card runs its query too)."""
    flush(app)
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        return list(session.scalars(select(QueryExecution.cache_hit).where(QueryExecution.card_id.is_not(None))
                                    .order_by(QueryExecution.id)))


def test_a_repeated_card_query_is_answered_from_the_cache(app, admin, orders):
    _caching_on(admin)
    card = _table_card(admin, orders)
    first = admin.post(f"/api/card/{card}/query")
    assert first.status_code == 202 and first.json["cached"] is None and first.json["row_count"] == 300
    assert first.json["data"]["rows"][0][3] == "2024-01-01T07:00:00"  # SQLite's text datetime, as ISO-8601
    _delete_orders(orders, 10)
    second = admin.post(f"/api/card/{card}/query")
    assert second.status_code == 202 and second.json["cached"] is not None
    assert second.json["updated_at"] == second.json["cached"] and second.json["row_count"] == 300
    # The stored data object is sent as it was built: the same bytes, not a re-encoding.
    assert second.json["data"] == first.json["data"]
    assert first.data[:first.data.rindex(b',"row_count":')] == second.data[:second.data.rindex(b',"row_count":')]
    fresh = admin.post(f"/api/card/{card}/query", json={"ignore_cache": True})
    assert fresh.json["cached"] is None and fresh.json["row_count"] == 10
    assert _cache_hits(app) == [False, True, False]


def test_the_same_card_on_a_dashboard_reads_the_same_entry(app, admin, orders):
    _caching_on(admin)
    card = _table_card(admin, orders)
    assert admin.post(f"/api/card/{card}/query").json["cached"] is None
    dashboard = admin.post("/api/dashboard", json={"name": "Board"}).json["id"]
    saved = admin.put(f"/api/dashboard/{dashboard}", json={"dashcards": [
        {"id": -1, "card_id": card, "size_x": 4, "size_y": 3, "row": 0, "col": 0}]})
    assert saved.status_code == 200, saved.json
    dashcard = saved.json["dashcards"][0]["id"]
    _delete_orders(orders, 10)
    ran = admin.post(f"/api/dashboard/{dashboard}/dashcard/{dashcard}/card/{card}/query")
    assert ran.status_code == 202 and ran.json["cached"] is not None
    assert ran.json["context"] == "dashboard" and ran.json["row_count"] == 300


def test_other_parameters_and_a_changed_query_miss(app, admin, orders):
    _caching_on(admin)
    tag = {"id": "t1", "name": "top", "display-name": "Top", "type": "number"}
    card = _card(admin, orders, {"type": "native", "native": {
        "query": "SELECT id, category FROM orders WHERE id <= {{top}} ORDER BY id", "template-tags": {"top": tag}}})

    def run(value):
        params = [{"type": "number/=", "target": ["variable", ["template-tag", "top"]], "value": value}]
        response = admin.post(f"/api/card/{card}/query", json={"parameters": params})
        assert response.status_code == 202, response.json
        return response.json

    assert run(5)["cached"] is None
    assert run(5)["cached"] is not None
    other = run(7)
    assert other["cached"] is None and other["row_count"] == 7
    changed = admin.put(f"/api/card/{card}", json={"dataset_query": {
        "database": orders.database_id, "type": "native", "native": {
            "query": "SELECT id FROM orders WHERE id <= {{top}} ORDER BY id", "template-tags": {"top": tag}}}})
    assert changed.status_code == 200, changed.json
    after = run(5)
    assert after["cached"] is None and after["data"]["cols"][-1]["name"] == "id"
    assert _cache_hits(app) == [False, True, False, False]


def test_a_relative_date_parameter_is_answered_from_the_cache_on_a_repeat(app, admin, orders):
    """The parameter is resolved against the clock, so its run's plan is prepared afresh each time
    (core.query.plans), yet the resolved query is the same today: the stored rows answer it."""
    _caching_on(admin)
    card = _table_card(admin, orders)
    created_at = ["field", orders.fields["created_at"], None]
    body = {"parameters": [{"type": "date/all-options", "target": ["dimension", created_at], "value": "past30years"}]}
    first = admin.post(f"/api/card/{card}/query", json=body)
    assert first.status_code == 202 and first.json["cached"] is None and first.json["row_count"] == 300
    _delete_orders(orders, 10)
    again = [admin.post(f"/api/card/{card}/query", json=body).json for _ in range(2)]
    assert [(a["cached"] is not None, a["row_count"]) for a in again] == [(True, 300), (True, 300)]
    assert _cache_hits(app)[-3:] == [False, True, True]


def test_a_user_who_may_not_read_the_card_gets_403_not_the_cached_rows(app, admin, orders):
    _caching_on(admin)
    card = _table_card(admin, orders, collection_id=admin.user["personal_collection_id"])
    assert admin.post(f"/api/card/{card}/query").json["cached"] is None
    assert admin.post(f"/api/card/{card}/query").json["cached"] is not None
    other = make_user(app, email="other@example.com")
    refused = other.post(f"/api/card/{card}/query")
    assert refused.status_code == 403 and b"Widget" not in refused.data and b"rows" not in refused.data


def test_two_app_instances_on_one_app_db_share_the_cache(any_app):
    """Like two gunicorn workers: each app has its own process state; the entry is the app DB's."""
    admin = setup_admin(any_app)
    orders = make_orders(any_app, count=300)
    _caching_on(admin)
    card = _table_card(admin, orders)
    config = {key: value for key, value in any_app.config.items() if key.startswith("TESSERA_")}
    other_app = create_app({**config, "TESSERA_RUN_MIGRATIONS": False})
    try:
        other = ApiClient(other_app, admin.headers)
        assert other.post(f"/api/card/{card}/query").json["cached"] is None
        _delete_orders(orders, 10)
        ran = admin.post(f"/api/card/{card}/query")
        assert ran.json["cached"] is not None and ran.json["row_count"] == 300
        again = other.post(f"/api/card/{card}/query")
        assert again.json["cached"] == ran.json["cached"] and again.data[:200] == ran.data[:200]
        with any_app.app_context(), any_app.extensions["tessera"].db.session() as session:
            assert len(session.scalars(select(QueryCache)).all()) == 1
    finally:
        other_app.extensions["tessera"].db.dispose()


def test_a_hit_reads_a_bounded_number_of_rows_and_writes_nothing_in_the_request(app, admin, orders):
    import threading

    from sqlalchemy import event

    _caching_on(admin)
    card = _table_card(admin, orders)
    assert admin.post(f"/api/card/{card}/query").json["cached"] is None
    flush(app)
    statements: list[str] = []
    me = threading.get_ident()  # the query log's own thread writes its row; the request must not

    def seen(conn, cursor, statement, *args):
        if threading.get_ident() == me:
            statements.append(statement.lstrip().split(None, 1)[0].upper())

    engine = app.extensions["tessera"].db.engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        assert admin.post(f"/api/card/{card}/query").json["cached"] is not None
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    # Six reads, and the app DB's generation read before them (core.appdb.memo; the flush above made
    # it new, so nothing is answered from the memo here).
    assert statements and set(statements) == {"SELECT"} and len(statements) <= 7, statements


def test_a_cards_run_statistics_leave_out_cache_hits_and_come_from_one_index(app, admin, orders):
    """As Metabase: average_query_time and last_query_start describe the runs the cache did not
    answer; they are read from ix_query_execution_card_runs alone, however many hits were logged."""
    from sqlalchemy import update

    from plugins.cards.serialize import _QUERY_STATS

    _caching_on(admin)
    card = _table_card(admin, orders)
    for _ in range(4):
        admin.post(f"/api/card/{card}/query")
    hits = _cache_hits(app)
    assert hits.count(True) == 3
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        later = session.scalar(select(QueryExecution.started_at).order_by(QueryExecution.id.desc()).limit(1))
        session.execute(update(QueryExecution).where(QueryExecution.cache_hit.is_(True))
                        .values(running_time=10**7, started_at=later.replace(year=later.year + 1)))
        session.commit()
        real = session.execute(select(func.avg(QueryExecution.running_time), func.max(QueryExecution.started_at))
                               .where(QueryExecution.card_id == card, QueryExecution.cache_hit.is_(False))).one()
    hydrated = admin.get(f"/api/card/{card}").json
    assert hydrated["average_query_time"] == float(real[0]) < 10**7
    assert hydrated["last_query_start"].startswith(real[1].isoformat()[:19])
    with state.db.engine.connect() as conn:
        sql = str(_QUERY_STATS.compile(dialect=conn.dialect))
        plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, (card,)))
    assert "COVERING INDEX ix_query_execution_card_runs" in plan, plan
