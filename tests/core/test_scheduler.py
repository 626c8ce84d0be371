"""core.schedule on the SQLite app DB: cron reading and zones, the runner driven by a test clock, a
failing run recorded while the next still runs, GET /api/task, a sync schedule that really re-syncs,
and APScheduler running the ticks in process."""
import datetime as dt
import sqlite3
import time

import pytest

from core.appdb.models import ScheduledJob, TaskHistory
from core.schedule import CronError, schedule, scheduled, unschedule
from core.schedule.cron import fields, next_after
from core.schedule.runner import run_due, tick
from core.sync.schedules import schedule_to_cron
from core.testing import make_user, set_setting, sqlite_file, wait_for_sync

EXTRA = "tests.core.scheduler_jobs"
T0 = dt.datetime(2026, 11, 26, 5, 0, 30, tzinfo=dt.timezone.utc)


def utc(seconds: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


@pytest.fixture
def app_config(app_config):
    return {**app_config, "TESSERA_PLUGINS_EXTRA": EXTRA}


def add_job(app, kind, key, cron, args, timezone=None):
    state = app.extensions["tessera"]
    with state.db.session() as session:
        schedule(session, kind, key, cron, timezone, args)
        session.commit()


def history(app, task=None):
    state = app.extensions["tessera"]
    with state.db.session() as session:
        query = session.query(TaskHistory).order_by(TaskHistory.id)
        if task:
            query = query.filter(TaskHistory.task == task)
        return [(row.task, row.status, row.fire_time, row.task_details, row.db_id) for row in query]


# --- cron strings -----------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, zone, expected", [
    ({"schedule_type": "hourly", "schedule_minute": 5}, None, "2026-11-26T05:05:00"),
    ({"schedule_type": "daily", "schedule_hour": 7}, "Europe/Paris", "2026-11-26T06:00:00"),
    ({"schedule_type": "weekly", "schedule_day": "fri", "schedule_hour": 3}, None, "2026-11-27T03:00:00"),
    ({"schedule_type": "monthly", "schedule_frame": "first"}, None, "2026-12-01T00:00:00"),
    ({"schedule_type": "monthly", "schedule_frame": "mid", "schedule_hour": 1}, None, "2026-12-15T01:00:00"),
    ({"schedule_type": "monthly", "schedule_frame": "last"}, None, "2026-11-30T00:00:00"),
    ({"schedule_type": "monthly", "schedule_frame": "last", "schedule_day": "fri"}, None, "2026-11-27T00:00:00"),
    ({"schedule_type": "monthly", "schedule_frame": "first", "schedule_day": "tue"}, None, "2026-12-01T00:00:00"),
])
def test_metabase_schedules_fire_when_metabase_says(spec, zone, expected):
    cron = schedule_to_cron(spec)
    fire = next_after(cron, zone, int(T0.timestamp()))
    assert utc(fire).replace(tzinfo=None).isoformat() == expected


def test_quartz_fields_and_errors():
    assert fields("0 0 12 ? * MON-FRI *")["day_of_week"] == "mon-fri"
    assert fields("0 0 12 ? * 2,4,6")["day_of_week"] == "mon,wed,fri"
    for bad in ("0 0 * * *", "0 0 12 ? * ?", "0 0 12 15W * ?", "0 61 * * * ? *", "0 0 12 ? * 9"):
        with pytest.raises(CronError):
            next_after(bad, None, 0)
    with pytest.raises(CronError):
        next_after("0 0 * * * ? *", "Mars/Olympus", 0)
    # a daylight-saving change: 02:30 does not exist in Paris on 2026-03-29; that day's run is not lost, it
    # happens an hour later on the wall clock (03:30 CEST), and the next day's at 02:30 again
    march = int(dt.datetime(2026, 3, 29, 0, 0, tzinfo=dt.timezone.utc).timestamp())
    that_day = next_after("0 30 2 * * ? *", "Europe/Paris", march)
    assert utc(that_day).isoformat() == "2026-03-29T01:30:00+00:00"
    assert utc(next_after("0 30 2 * * ? *", "Europe/Paris", that_day)).isoformat() == "2026-03-30T00:30:00+00:00"


def test_schedule_refuses_unreadable_cron_and_unschedule_removes(app):
    state = app.extensions["tessera"]
    with state.db.session() as session:
        with pytest.raises(CronError):
            schedule(session, "test-count", "k", "every minute", None, {})
        schedule(session, "test-count", "a", "0 * * * * ? *", None, {"file": "x"})
        schedule(session, "test-count", "b", "0 * * * * ? *", None, {"file": "x"})
        session.commit()
        assert {job.key for job in scheduled(session, "test-count")} == {"a", "b"}
        assert unschedule(session, "test-count", "a") == 1
        assert unschedule(session, "test-count") == 1
        session.commit()
        assert scheduled(session, "test-count") == []


# --- the runner, on a clock the test drives -----------------------------------------------------------


def test_each_occurrence_runs_once_and_missed_ones_are_coalesced(app, tmp_path):
    out = tmp_path / "runs.txt"
    add_job(app, "test-count", "minutely", "0 * * * * ? *", {"file": str(out)})
    assert run_due(app, T0) == []  # plans the first occurrence: 05:01:00
    for second in range(0, 200, 7):  # ticks every 7 s until 05:03:50: three occurrences
        run_due(app, T0 + dt.timedelta(seconds=second))
    fires = [int(line.split()[0]) for line in out.read_text().splitlines()]
    assert [utc(f).strftime("%H:%M:%S") for f in fires] == ["05:01:00", "05:02:00", "05:03:00"]
    # nobody ran it for an hour: one run (the latest missed occurrence's), then on schedule again
    assert len(run_due(app, T0 + dt.timedelta(hours=1))) == 1
    assert len(out.read_text().splitlines()) == 4
    assert run_due(app, T0 + dt.timedelta(hours=1, seconds=5)) == []
    assert [h[1] for h in history(app, "test-count")] == ["success"] * 4


def test_a_failing_run_is_recorded_and_the_next_one_still_runs(app, admin, tmp_path):
    add_job(app, "test-flaky", "f", "0 */10 * * * ? *", {"file": str(tmp_path / "n"), "fail": [1], "db_id": 7})
    run_due(app, T0)
    first = run_due(app, T0 + dt.timedelta(minutes=10))
    second = run_due(app, T0 + dt.timedelta(minutes=20))
    assert len(first) == len(second) == 1
    rows = history(app, "test-flaky")
    assert [r[1] for r in rows] == ["failed", "success"]
    failed = admin.get(f"/api/task/{first[0]}").json
    assert failed["status"] == "failed" and failed["db_id"] == 7 and failed["task"] == "test-flaky"
    assert failed["task_details"]["exception"] == "ValueError"
    assert failed["task_details"]["message"] == "run 1 was told to fail"
    assert failed["duration"] >= 0 and failed["ended_at"] >= failed["started_at"]
    assert admin.get(f"/api/task/{second[0]}").json["task_details"] == {"run": 2}


def test_task_history_api_pages_newest_first_for_admins_only(app, admin, tmp_path):
    add_job(app, "test-count", "c", "0 * * * * ? *", {"file": str(tmp_path / "c")})
    run_due(app, T0)
    ids = [run_due(app, T0 + dt.timedelta(minutes=m))[0] for m in range(1, 6)]
    everything = admin.get("/api/task/").json
    assert everything["total"] == 5 and everything["limit"] is None and everything["offset"] is None
    assert [row["id"] for row in everything["data"]] == ids[::-1]
    assert set(everything["data"][0]) == {"id", "task", "db_id", "started_at", "ended_at", "duration",
                                          "task_details", "status"}
    page = admin.get("/api/task/?limit=2&offset=1").json
    assert page["total"] == 5 and page["limit"] == 2 and page["offset"] == 1
    assert [row["id"] for row in page["data"]] == ids[::-1][1:3]
    assert admin.get("/api/task/?limit=-1").status_code == 400
    assert admin.get("/api/task/999999").status_code == 404
    assert admin.get("/api/task/0").status_code == 400
    info = admin.get("/api/task/info").json
    job = next(j for j in info["jobs"] if j["key"] == "test-count.c")
    assert job["triggers"][0]["schedule"] == "0 * * * * ? *" and job["triggers"][0]["next-fire-time"]
    plain = make_user(app)
    for path in ("/api/task/", f"/api/task/{ids[0]}", "/api/task/info"):
        assert plain.get(path).status_code == 403


def test_report_timezone_decides_when_zone_less_jobs_fire(app, admin, tmp_path):
    set_setting(app, "report-timezone", "Asia/Tokyo")
    add_job(app, "test-count", "tokyo", "0 0 9 * * ? *", {"file": str(tmp_path / "t")})
    add_job(app, "test-count", "utc", "0 0 9 * * ? *", {"file": str(tmp_path / "u")}, timezone="UTC")
    run_due(app, T0)
    state = app.extensions["tessera"]
    with state.db.session() as session:
        fires = {job.key: utc(job.next_fire).isoformat() for job in scheduled(session, "test-count")}
    assert fires == {"tokyo": "2026-11-27T00:00:00+00:00", "utc": "2026-11-26T09:00:00+00:00"}
    set_setting(app, "report-timezone", "America/New_York")  # a changed zone moves the planned occurrence
    run_due(app, T0)
    with state.db.session() as session:
        assert utc(session.query(ScheduledJob).filter_by(key="tokyo").one().next_fire).isoformat() == \
            "2026-11-26T14:00:00+00:00"


def test_jobs_of_a_kind_no_plugin_registers_stay_dormant(app, tmp_path):
    add_job(app, "from-a-disabled-plugin", "x", "0 * * * * ? *", {})
    assert run_due(app, T0) == [] and run_due(app, T0 + dt.timedelta(hours=2)) == []
    assert history(app) == []


# --- the jobs the built-in plugins register ------------------------------------------------------------


def test_a_sync_schedule_resyncs_a_table_added_to_the_warehouse(app, admin):
    path = sqlite_file(app, "growing.db", "CREATE TABLE first_table (id INTEGER PRIMARY KEY)")
    db_id = admin.post("/api/database", json={
        "name": "Growing", "engine": "sqlite", "details": {"db": path},
        "schedules": {"metadata_sync": {"schedule_type": "hourly", "schedule_minute": 10}}}).json["id"]
    wait_for_sync(app)
    tables = lambda: {t["name"] for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]}  # noqa: E731
    assert tables() == {"first_table"}
    tick(app, T0)  # the database's job appears and is planned for 05:10
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE added_later (id INTEGER PRIMARY KEY, label TEXT)")
    conn.commit()
    conn.close()
    tick(app, T0 + dt.timedelta(minutes=5))
    assert tables() == {"first_table"}  # not due yet
    tick(app, T0 + dt.timedelta(minutes=10))
    assert tables() == {"first_table", "added_later"}
    rows = [r for r in history(app, "sync") if r[4] == db_id]
    assert [(r[1], utc(r[2]).strftime("%H:%M")) for r in rows] == [("success", "05:10")]
    # a changed schedule is followed, a deleted database's jobs go
    admin.put(f"/api/database/{db_id}", json={"schedules": {"metadata_sync": {"schedule_type": "daily",
                                                                               "schedule_hour": 4}}})
    tick(app, T0 + dt.timedelta(minutes=11))
    state = app.extensions["tessera"]
    with state.db.session() as session:
        job = session.query(ScheduledJob).filter_by(kind="database-sync", key=str(db_id)).one()
        assert job.cron == "0 0 4 * * ? *" and utc(job.next_fire).isoformat() == "2026-11-27T04:00:00+00:00"
    assert admin.delete(f"/api/database/{db_id}").status_code == 204
    tick(app, T0 + dt.timedelta(minutes=12))
    with state.db.session() as session:
        assert session.query(ScheduledJob).filter_by(key=str(db_id)).filter(
            ScheduledJob.kind.like("database-%")).count() == 0


def test_housekeeping_removes_expired_sessions(app, admin):
    from core.appdb.models import LoginSession

    state = app.extensions["tessera"]
    with state.db.session() as session:
        old = session.query(LoginSession).first()
        old.created_at = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=30)
        session.commit()
    tick(app, T0)
    tick(app, T0 + dt.timedelta(hours=1))
    assert admin.get("/api/user/current").status_code == 401
    assert ("session-cleanup", "success") in [(r[0], r[1]) for r in history(app)]
    row = next(r for r in history(app) if r[0] == "session-cleanup")
    assert row[3] == {"sessions-removed": 1}


# --- APScheduler driving the ticks in this process ------------------------------------------------------


def test_the_in_process_scheduler_runs_jobs_on_the_wall_clock(app_config, tmp_path):
    from core.assembly.app import create_app
    from core.schedule.service import start_background

    app = create_app({**app_config, "TESSERA_SCHEDULER_POLL_SECONDS": 0.2})
    out = tmp_path / "wall.txt"
    add_job(app, "test-count", "every-second", "* * * * * ? *", {"file": str(out)})
    scheduler = start_background(app)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(out.read_text().splitlines() if out.exists() else []) < 2:
            time.sleep(0.1)
    finally:
        scheduler.shutdown(wait=True)
        app.extensions["tessera"].db.dispose()
    fires = [int(line.split()[0]) for line in out.read_text().splitlines()]
    assert len(fires) >= 2 and len(set(fires)) == len(fires)


# --- the hook -------------------------------------------------------------------------------------------


def test_hook_register_job_kinds_collects_kinds_and_refuses_a_duplicate_name(app_config, tmp_path, monkeypatch):
    from core.assembly.app import create_app
    from core.assembly.plugins import PluginError
    from tests.support import write_plugin

    source = '''
        from core import hookimpl
        from core.assembly.records import JobKind
        @hookimpl
        def register_job_kinds():
            return [JobKind("hooked-kind", lambda job: {"ok": True}, default_cron="0 0 * * * ? *")]
    '''
    first = write_plugin(tmp_path, monkeypatch, source)
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": first})
    assert "hooked-kind" in app.extensions["tessera"].job_kinds
    tick(app, T0)  # default_cron: the kind's "default" job exists without anyone scheduling it
    tick(app, T0 + dt.timedelta(hours=1))
    assert ("hooked-kind", "success", None) in [(r[0], r[1], r[4]) for r in history(app)]
    app.extensions["tessera"].db.dispose()
    second = write_plugin(tmp_path, monkeypatch, source)
    with pytest.raises(PluginError) as error:
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": f"{first},{second}"})
    assert "job kind 'hooked-kind'" in str(error.value) and first in str(error.value) and second in str(error.value)


def test_persisted_models_are_refreshed_on_the_persistence_schedule(app, app_config, admin, user):
    from pathlib import Path

    from tests.plugins.cards.fixtures import card_body, make_warehouse, native_query, register_warehouse

    db = register_warehouse(app, make_warehouse(Path(app_config["TESSERA_DATA_DIR"])))["db"]
    model = user.post("/api/card", json=card_body("People", native_query(db, "SELECT id FROM people"),
                                                  type="model")).json
    assert admin.put("/api/setting/persisted-model-refresh-cron-schedule", json={"value": "not a cron"}).status_code == 400
    assert admin.put("/api/setting/persisted-model-refresh-cron-schedule",
                     json={"value": "0 0 0/2 * * ? *"}).status_code == 204
    assert admin.post(f"/api/database/{db}/persist").status_code == 204
    assert user.post(f"/api/card/{model['id']}/persist").status_code == 204
    con = sqlite3.connect(Path(app_config["TESSERA_DATA_DIR"]) / "files" / "warehouse.sqlite")
    con.execute("INSERT INTO people VALUES (4, 'Edsger', 'Dijkstra', 72)")
    con.commit()
    table = f"tessera_cache_model_{model['id']}"
    tick(app, T0)  # next occurrence of every two hours: 06:00
    tick(app, T0 + dt.timedelta(minutes=30))
    assert con.execute(f'SELECT count(*) FROM "{table}"').fetchone() == (3,)
    tick(app, T0 + dt.timedelta(hours=1))
    assert con.execute(f'SELECT count(*) FROM "{table}"').fetchone() == (4,)
    con.close()
    row = next(r for r in history(app) if r[0] == "persist-refresh")
    assert row[1] == "success" and row[3] == {"success": 1, "error": 0, "skipped": 0} and row[4] == db


def test_a_long_run_holds_back_no_other_job_and_is_not_claimed_again_while_it_runs(app, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    release, out = tmp_path / "release", tmp_path / "count"
    add_job(app, "test-wait", "long", "0 * * * * ? *", {"release": str(release)})
    add_job(app, "test-count", "short", "0 * * * * ? *", {"file": str(out)})
    pool = ThreadPoolExecutor(4)
    try:
        run_due(app, T0, pool.submit)
        assert len(run_due(app, T0 + dt.timedelta(minutes=1), pool.submit)) == 2
        # the short run has ended (its file written, its history recorded, its claim let go) while
        # the long one still runs; waiting on the file alone raced the end of the short run
        running = app.extensions["tessera"].extras["schedule_running"]
        deadline = time.monotonic() + 10
        while len(running) > 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(out.read_text().splitlines()) == 1
        assert [r[1] for r in history(app, "test-count")] == ["success"]
        # a minute later the long job is still running here: only the short one is claimed
        assert len(run_due(app, T0 + dt.timedelta(minutes=2), pool.submit)) == 1
        release.touch()
    finally:
        pool.shutdown(wait=True)
    assert [r[1] for r in history(app, "test-wait")] == ["success"]
    assert len(run_due(app, T0 + dt.timedelta(minutes=2, seconds=1))) == 1  # its due occurrence, once free


def test_housekeeping_drops_old_query_executions(app, admin):
    from core.appdb.models import QueryExecution

    state = app.extensions["tessera"]
    now = dt.datetime.now(dt.timezone.utc)
    with state.db.session() as session:
        for age in (800, 10):
            session.add(QueryExecution(hash="h" * 64, started_at=now - dt.timedelta(days=age), running_time=1,
                                       result_rows=0, native=False, context="ad-hoc"))
        session.commit()
    tick(app, T0)
    tick(app, T0 + dt.timedelta(days=1))
    with state.db.session() as session:
        ages = [(now - row.started_at).days for row in session.query(QueryExecution)]
    assert ages == [10]
    row = next(r for r in history(app) if r[0] == "query-execution-cleanup")
    assert row[1] == "success" and row[3] == {"rows-removed": 1}


def test_task_history_filters_sorts_and_names_tasks(app, admin, tmp_path):
    add_job(app, "test-flaky", "f", "0 * * * * ? *", {"file": str(tmp_path / "n"), "fail": [2], "db_id": 1})
    add_job(app, "test-count", "c", "0 */2 * * * ? *", {"file": str(tmp_path / "c")})
    run_due(app, T0)
    for minute in range(1, 5):
        run_due(app, T0 + dt.timedelta(minutes=minute))
    failed = admin.get("/api/task/?status=failed").json
    assert failed["total"] == 1 and [r["task"] for r in failed["data"]] == ["test-flaky"]
    counted = admin.get("/api/task/?task=test-count&limit=1").json
    assert counted["total"] == 2 and len(counted["data"]) == 1 and counted["data"][0]["task"] == "test-count"
    by_task = [r["task"] for r in admin.get("/api/task/?sort_column=task&sort_direction=asc").json["data"]]
    assert by_task == sorted(by_task) and len(by_task) == 6
    oldest_first = [r["id"] for r in admin.get("/api/task/?sort_direction=asc").json["data"]]
    assert oldest_first == sorted(oldest_first)
    assert admin.get("/api/task/?sort_column=db_name").status_code == 200
    assert admin.get("/api/task/?status=exploded").status_code == 400
    assert admin.get("/api/task/?sort_column=password").status_code == 400
    assert admin.get("/api/task/unique-tasks").json == ["test-count", "test-flaky"]
    assert make_user(app).get("/api/task/unique-tasks").status_code == 403


def test_field_values_are_scanned_on_their_schedule_except_for_on_demand_databases(app, admin):
    from core.appdb.models import Field, FieldValues, Table

    path = sqlite_file(app, "values.db", "CREATE TABLE pets (id INTEGER PRIMARY KEY, kind TEXT);"
                                         "INSERT INTO pets (kind) VALUES ('cat'), ('dog')")
    db_id = admin.post("/api/database", json={
        "name": "Values", "engine": "sqlite", "details": {"db": path},
        "schedules": {"cache_field_values": {"schedule_type": "daily", "schedule_hour": 6}}}).json["id"]
    wait_for_sync(app)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO pets (kind) VALUES ('owl')")
    conn.commit()
    conn.close()
    state = app.extensions["tessera"]

    def kinds():
        with state.db.session() as session:
            field = session.query(Field).join(Table).filter(Table.db_id == db_id, Field.name == "kind").one()
            return session.query(FieldValues).filter_by(field_id=field.id).one().values

    assert kinds() == ["cat", "dog"]
    tick(app, T0)
    tick(app, T0 + dt.timedelta(hours=1))  # 06:00:30
    assert kinds() == ["cat", "dog", "owl"]
    assert [(r[1], r[4]) for r in history(app, "update-field-values")] == [("success", db_id)]
    # on demand: values only when someone asks, so no scheduled scan
    admin.put(f"/api/database/{db_id}", json={"is_on_demand": True})
    tick(app, T0 + dt.timedelta(hours=1, minutes=1))
    with state.db.session() as session:
        assert session.query(ScheduledJob).filter_by(kind="database-field-values", key=str(db_id)).count() == 0
        assert session.query(ScheduledJob).filter_by(kind="database-sync", key=str(db_id)).count() == 1


def test_a_run_whose_process_died_is_marked_unknown(app):
    import socket
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    state = app.extensions["tessera"]
    with state.db.session() as session:
        for pid in (dead.pid, __import__("os").getpid()):
            session.add(TaskHistory(task="test-count", status="started", instance=f"{socket.gethostname()}:{pid}",
                                    started_at=dt.datetime.now(dt.timezone.utc)))
        session.add(TaskHistory(task="test-count", status="started", instance=f"elsewhere:{dead.pid}",
                                started_at=dt.datetime.now(dt.timezone.utc)))
        session.commit()
    tick(app, T0)
    tick(app, T0 + dt.timedelta(minutes=10))
    statuses = [(r[1], r[3]) for r in history(app, "test-count")]
    assert statuses[0] == ("unknown", {"status": "unknown", "message": "the process running it ended before it finished"})
    assert [s[0] for s in statuses[1:]] == ["started", "started"]  # alive here; another host's


def test_a_kind_whose_jobs_fail_leaves_the_others_running(app_config, tmp_path, monkeypatch):
    from core.assembly.app import create_app
    from tests.support import write_plugin

    broken = write_plugin(tmp_path, monkeypatch, '''
        from core import hookimpl
        from core.assembly.records import JobKind
        def jobs(session):
            raise RuntimeError("cannot list")
        @hookimpl
        def register_job_kinds():
            return [JobKind("broken-kind", lambda job: None, jobs=jobs)]
    ''')
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": f"{EXTRA},{broken}"})
    out = tmp_path / "still.txt"
    add_job(app, "test-count", "still", "0 * * * * ? *", {"file": str(out)})
    tick(app, T0)
    tick(app, T0 + dt.timedelta(minutes=1))
    assert len(out.read_text().splitlines()) == 1
    state = app.extensions["tessera"]
    with state.db.session() as session:  # the housekeeping kinds after it were reconciled too
        assert {job.kind for job in scheduled(session)} >= {"expired-sessions-cleanup", "abandoned-runs", "test-count"}
    state.db.dispose()
