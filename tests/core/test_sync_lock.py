"""One sync of a database at a time across instances: two apps on one app DB stand for two instances
(each has its own in-process locks, as two processes do), and a manual sync started on both at once runs
on one after the other (core.sync.schema.locked over core.appdb.locks' named lock)."""
from __future__ import annotations

import threading
import time

import pytest

from core.sync import schema
from core.testing import ApiClient, backend_config, setup_admin, sqlite_file, wait_for_sync


@pytest.fixture(params=["sqlite", "postgresql"])
def two_instances(request, tmp_path, app_db_template):
    from core.assembly.app import create_app

    config = backend_config(request, tmp_path, app_db_template)
    apps = [create_app(dict(config)) for _ in range(2)]
    try:
        yield apps
    finally:
        for app in apps:
            wait_for_sync(app)
            app.extensions["tessera"].db.dispose()


def test_manual_syncs_on_two_instances_run_one_after_the_other(two_instances, monkeypatch):
    first, second = two_instances
    admin = setup_admin(first)
    other = ApiClient(second, admin.headers)  # the same login session, served by the other instance
    path = sqlite_file(first, "slow.db", "CREATE TABLE t (id INTEGER PRIMARY KEY)")
    db_id = admin.post("/api/database", json={"name": "Slow", "engine": "sqlite", "details": {"db": path}}).json["id"]
    wait_for_sync(first)

    runs, guard = [], threading.Lock()
    original = schema.sync_database

    def slow_sync(state, database_id, *args, **kwargs):
        started = time.monotonic()
        time.sleep(0.5)  # long enough for the other instance's run to start meanwhile, were it free to
        try:
            return original(state, database_id, *args, **kwargs)
        finally:
            with guard:
                runs.append((started, time.monotonic(), id(state)))

    monkeypatch.setattr(schema, "sync_database", slow_sync)
    assert admin.post(f"/api/database/{db_id}/sync_schema").status_code == 200
    assert other.post(f"/api/database/{db_id}/sync_schema").status_code == 200
    wait_for_sync(first)
    wait_for_sync(second)
    assert len(runs) == 2 and runs[0][2] != runs[1][2]  # one run on each instance
    (_, first_end, _), (second_start, _, _) = sorted(runs)
    assert second_start >= first_end, "the two instances synced the database at the same time"
