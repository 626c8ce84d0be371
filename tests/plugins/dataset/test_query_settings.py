"""The settings a query run reads: one app-DB read per run for all of them, never stale across runs,
and SettingsRegistry.get_many answering exactly as get() does key by key."""
from __future__ import annotations

import pytest
from sqlalchemy import event

from core.assembly.records import SettingDef
from core.assembly.settings import SettingsRegistry


def mbql_count(orders):
    return {"database": orders.database_id, "type": "query",
            "query": {"source-table": orders.table_id, "aggregation": [["count"]],
                      "breakout": [["field", orders.fields["id"], None]]}}


@pytest.fixture
def setting_reads(app):
    """How many statements each request sent to the app DB's setting table."""
    engine = app.extensions["tessera"].db.engine
    seen: list[str] = []

    def listen(conn, cursor, statement, params, context, executemany):
        if " setting" in statement and "FROM setting" in statement:
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", listen)
    yield seen
    event.remove(engine, "before_cursor_execute", listen)


def test_one_settings_read_per_query_run(admin, orders, setting_reads):
    # A run consults timezone, week start, timeout and both row limits: one read gives them all.
    admin.post("/api/dataset", json=mbql_count(orders))  # teaches the snapshot every key asked for
    # A commit (here an unrelated setting) makes a new app-DB generation: the run reads the rows once.
    assert admin.put("/api/setting/site-name", json={"value": "Elsewhere"}).status_code == 204
    setting_reads.clear()
    response = admin.post("/api/dataset", json=mbql_count(orders))
    assert response.status_code == 202, response.json
    assert len(setting_reads) == 1
    # Nothing committed since: the rows are answered from core.appdb.memo.
    setting_reads.clear()
    assert admin.post("/api/dataset", json=mbql_count(orders)).status_code == 202
    assert len(setting_reads) <= 1


def test_a_changed_setting_is_seen_by_the_next_query(admin, orders):
    query = mbql_count(orders)
    assert admin.post("/api/dataset", json=query).json["row_count"] == orders.count
    assert admin.put("/api/setting/aggregated-query-row-limit", json={"value": 7}).status_code == 204
    assert admin.post("/api/dataset", json=query).json["row_count"] == 7
    assert admin.put("/api/setting/aggregated-query-row-limit", json={"value": 11}).status_code == 204
    assert admin.post("/api/dataset", json=query).json["row_count"] == 11
    assert admin.put("/api/setting/report-timezone", json={"value": "Europe/Paris"}).status_code == 204
    assert admin.post("/api/dataset", json=query).json["data"]["results_timezone"] == "Europe/Paris"
    assert admin.put("/api/setting/aggregated-query-row-limit", json={"value": None}).status_code == 204
    assert admin.post("/api/dataset", json=query).json["row_count"] == orders.count


def test_get_many_answers_as_get_does(app):
    from core.appdb.db import session as request_session
    from core.appdb.models import Setting

    definitions = {d.key: d for d in [
        SettingDef("plain", default=3, type="integer"),
        SettingDef("stored", default="x"),
        SettingDef("from-env", default=1, type="integer"),
        SettingDef("computed", getter=lambda session: "computed!", env=False),
    ]}
    registry = SettingsRegistry(definitions, environ={"TESSERA_FROM_ENV": "42"})
    with app.test_request_context():
        session = request_session()
        session.add(Setting(key="stored", value='"from the table"'))  # pending: get_many flushes it
        many = registry.get_many(session, ["plain", "stored", "from_env", "computed", "nobody-declares-this"])
        assert many == {"plain": 3, "stored": "from the table", "from-env": 42, "computed": "computed!"}
        assert many == {key: registry.get(session, key) for key in many}
        assert registry.get_many(session, []) == {}
        session.rollback()


def test_the_snapshot_learns_stored_keys_but_not_computed_ones(app, admin):
    from core.appdb.db import session as request_session
    from core.query import context

    with app.test_request_context():
        session = request_session()
        assert context.setting(session, "site-name") is not None  # stored (or default): learnt
        assert context.setting(session, "version")["tag"]  # computed by a getter: read, not learnt
        assert context.setting(session, "no-plugin-declares-this", "fallback") == "fallback"
    assert "site-name" in context._SNAPSHOT_KEYS
    assert "version" not in context._SNAPSHOT_KEYS
    assert "no-plugin-declares-this" not in context._SNAPSHOT_KEYS
