"""One test per execute_query implementation: the core's (trylast), row limits (wrapper), the cache
(tryfirst + wrapper) and the audit log (wrapper); plus permissions on the processor entry points."""
from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import select

from core.appdb.counters import flush
from core.appdb.models import Database, QueryExecution, User
from core.assembly.app import create_app
from core.query import limits, processor
from core.query.preparation import prepare
from core.testing import make_user, setup_admin
from tests.support import write_plugin

from .conftest import make_orders


def native(orders, sql):
    return {"database": orders.database_id, "type": "native", "native": {"query": sql}}


def mbql(orders, inner):
    return {"database": orders.database_id, "type": "query", "query": {"source-table": orders.table_id, **inner}}


def _admin_user(session):
    return session.scalar(select(User).where(User.is_superuser.is_(True)))


def test_core_implementation_is_last(tmp_path, monkeypatch, app_config):
    """A plugin's execute_query (not trylast) answers before the core's; wrappers still wrap it."""
    name = write_plugin(tmp_path, monkeypatch, """
        from core import hookimpl
        from core.query.result import Result

        @hookimpl
        def execute_query(context):
            cols = [{"name": "answer", "display_name": "Answer", "base_type": "type/Integer"}]
            return Result(context, cols, iter([(42,), (43,), (44,)]), {"query": "-- from a plugin", "params": None})
    """)
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    admin = setup_admin(app)
    orders = make_orders(app, count=3)
    body = admin.post("/api/dataset", json={**native(orders, "SELECT 1"), "constraints": {"max-results-bare-rows": 2}}).json
    assert body["data"]["rows"] == [[42], [43]]  # the limits wrapper still cut the plugin's rows
    assert body["data"]["native_form"]["query"] == "-- from a plugin"
    app.extensions["tessera"].db.dispose()


def test_limits_wrapper(app, admin, orders):
    with app.test_request_context():
        from core.appdb.db import session as request_session

        session = request_session()
        user = _admin_user(session)

        def limit(query, **options):
            ctx = prepare(session, user, query, **options)
            return limits.row_limit(ctx)

        assert limit(native(orders, "SELECT 1")) == (2000, True)
        aggregated = mbql(orders, {"aggregation": [["count"]]})
        assert limit(aggregated) == (10000, True)
        assert limit(mbql(orders, {"limit": 50})) == (50, False)
        assert limit({**native(orders, "SELECT 1"), "constraints": {"max-results": 10, "max-results-bare-rows": 500}}) \
            == (10, True)
        assert limit(native(orders, "SELECT 1"), export_format="csv") == (1048575, False)
        assert limit(native(orders, "SELECT 1"), export_format="csv", download_cap=10000) == (10000, False)
        app.extensions["tessera"].settings.set(session, "download-row-limit", 2000000)
        assert limit(native(orders, "SELECT 1"), export_format="csv") == (2000000, False)
        assert limit(native(orders, "SELECT 1"), export_format="xlsx") == (1048575, False)
        # The wrapper really applies it: a run stops at the limit.
        envelope, status = processor.run_query(session, user, {**native(orders, "SELECT id FROM orders"),
                                                                "constraints": {"max-results-bare-rows": 3}})
        assert status == 202 and envelope["row_count"] == 3


def _caching_on(app, session, orders) -> None:
    """Query caching on, and the orders database's results kept for an hour."""
    app.extensions["tessera"].settings.set(session, "enable-query-caching", True)
    session.get(Database, orders.database_id).cache_ttl = 1  # hours
    session.commit()


def _keep_100_orders(orders) -> None:
    conn = sqlite3.connect(orders.path)
    conn.execute("DELETE FROM orders WHERE id > 100")
    conn.commit()
    conn.close()


def test_cache_tryfirst_and_wrapper(app, admin, orders):
    with app.test_request_context():
        from core.appdb.db import session as request_session

        session = request_session()
        user = _admin_user(session)
        query = native(orders, "SELECT count(*) FROM orders")
        # Not cached while caching is off, nor for ad-hoc runs, nor with ignore_cache.
        _caching_on(app, session, orders)
        first, _ = processor.run_query(session, user, query, context="question", ignore_cache=False)
        assert first["cached"] is None and first["data"]["rows"] == [[2500]]
        _keep_100_orders(orders)
        second, _ = processor.run_query(session, user, query, context="question", ignore_cache=False)
        assert second["cached"] is not None and second["data"]["rows"] == [[2500]]
        fresh, _ = processor.run_query(session, user, query, context="question", ignore_cache=True)
        assert fresh["cached"] is None and fresh["data"]["rows"] == [[100]]
        adhoc, _ = processor.run_query(session, user, query, context="ad-hoc", ignore_cache=False)
        assert adhoc["data"]["rows"] == [[100]]
        flush(app)
        hits = session.scalars(select(QueryExecution.cache_hit).order_by(QueryExecution.id)).all()
        assert hits == [False, True, False, False]


def test_runs_without_remaps_skip_the_cache(app, admin, orders):
    """A disable-remaps run shares the query hash of the ordinary run, not its columns."""
    with app.test_request_context():
        from core.appdb.db import session as request_session

        session = request_session()
        user = _admin_user(session)
        _caching_on(app, session, orders)
        query = mbql(orders, {"aggregation": [["count"]]})
        first, _ = processor.run_query(session, user, query, context="question", ignore_cache=False, disable_remaps=True)
        _keep_100_orders(orders)
        second, _ = processor.run_query(session, user, query, context="question", ignore_cache=False)
        assert (first["data"]["rows"], second["data"]["rows"], second["cached"]) == ([[2500]], [[100]], None)
        asked = {**query, "middleware": {"disable-remaps?": True}}
        third, _ = processor.run_query(session, user, asked, context="question", ignore_cache=False)
        assert third["cached"] is None
        fourth, _ = processor.run_query(session, user, query, context="question", ignore_cache=False)
        assert fourth["cached"] is not None and fourth["data"]["rows"] == [[100]]


def test_cache_expires(app, admin, orders):
    import datetime as dt

    from core.appdb.models import QueryCache

    with app.test_request_context():
        from core.appdb.db import session as request_session

        session = request_session()
        user = _admin_user(session)
        _caching_on(app, session, orders)
        query = native(orders, "SELECT count(*) FROM orders")
        processor.run_query(session, user, query, context="question", ignore_cache=False)
        row = session.scalar(select(QueryCache))
        row.updated_at = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)
        session.commit()
        again, _ = processor.run_query(session, user, query, context="question", ignore_cache=False)
        assert again["cached"] is None


def test_audit_wrapper_records_streamed_runs(app, admin, orders):
    with app.test_request_context():
        from core.appdb.db import session as request_session

        session = request_session()
        user = _admin_user(session)
        result = processor.open_query(session, user, native(orders, "SELECT id FROM orders"), context="csv-download",
                                      export_format="csv")
        flush(app)
        assert session.scalar(select(QueryExecution)) is None  # nothing logged until the stream ends
        assert sum(1 for _ in result) == 2500
        flush(app)
        run = session.scalar(select(QueryExecution))
        assert (run.result_rows, run.context, run.native, run.error) == (2500, "csv-download", True, None)


def test_permissions_are_checked(app, admin, orders):
    user = make_user(app, email="plain@example.com")
    group_graph = admin.get("/api/permissions/graph")
    if group_graph.status_code != 200:
        pytest.skip("no permissions graph endpoint in this build")
    graph = group_graph.json
    all_users = "1"
    graph["groups"][all_users] = {str(orders.database_id): {"view-data": "unrestricted", "create-queries": "no"}}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    assert user.post("/api/dataset", json=native(orders, "SELECT 1")).status_code == 403
    assert user.post("/api/dataset/csv", json={"query": native(orders, "SELECT 1")}).status_code == 403
    assert admin.post("/api/dataset", json=native(orders, "SELECT 1")).status_code == 202


def test_download_permission_levels(app, admin, orders):
    user = make_user(app, email="downloader@example.com")
    graph = admin.get("/api/permissions/graph").json

    def set_download(level):
        graph["groups"]["1"] = {str(orders.database_id): {"view-data": "unrestricted",
                                                          "create-queries": "query-builder-and-native",
                                                          "download": {"schemas": level}}}
        response = admin.put("/api/permissions/graph", json=graph)
        assert response.status_code == 200, response.json
        graph["revision"] = response.json["revision"]

    set_download("limited")
    query = {"query": native(orders, "SELECT id FROM orders")}
    rows = user.post("/api/dataset/csv", json=query).get_data(as_text=True).strip().split("\n")
    assert len(rows) == 1 + 2500  # limited is 10,000 rows: all 2,500 here
    set_download("none")
    assert user.post("/api/dataset/csv", json=query).status_code == 403
    assert user.post("/api/dataset", json=native(orders, "SELECT 1")).status_code == 202  # viewing stays allowed


def test_the_query_log_keeps_metabase_s_running_average(app):
    """new = (9 * old + this) / 10, truncated; one execution row per run."""
    import datetime as dt

    from core.appdb.counters import flush
    from core.appdb.models import Query as QueryStats
    from plugins.query_audit.service import update_averages

    db = app.extensions["tessera"].db
    # The first run in one batch, the next two in another: the fold continues from the stored average.
    for batch in ((100,), (200, 7)):
        for running_time in batch:
            db.write_behind.insert(QueryExecution, {
                "hash": "h" * 64, "started_at": dt.datetime.now(dt.timezone.utc), "running_time": running_time,
                "result_rows": 1, "native": True, "context": "ad-hoc", "error": None, "executor_id": None,
                "card_id": None, "dashboard_id": None, "database_id": None, "cache_hit": False})
            db.write_behind.fold(update_averages, ("h" * 64, running_time, {"type": "native"}))
        flush(app)
    with db.session() as session:
        stats = session.get(QueryStats, "h" * 64)
        assert (stats.average_execution_time, stats.query) == (int((9 * 110 + 7) / 10), {"type": "native"})
        runs = session.scalars(select(QueryExecution.running_time).where(QueryExecution.hash == "h" * 64)).all()
        assert sorted(runs) == [7, 100, 200]
