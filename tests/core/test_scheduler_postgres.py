"""core.schedule with several schedulers on one PostgreSQL app DB: every occurrence runs exactly once.

Two processes drive the runner over the same three simulated minutes at once; two threads race for
the same occurrence many times; two real `tessera worker` processes run a job due every second."""
import datetime as dt
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.appdb.models import ScheduledJob, TaskHistory
from core.schedule import schedule, unschedule
from core.schedule.runner import _claim, run_due

ROOT = Path(__file__).resolve().parents[2]
EXTRA = "tests.core.scheduler_jobs"
T0 = dt.datetime(2026, 11, 26, 5, 0, 30, tzinfo=dt.timezone.utc)


@pytest.fixture
def pg_app(postgres_app_db, tmp_path):
    from core.assembly.app import create_app

    app = create_app({"TESSERA_DB_URL": postgres_app_db, "TESSERA_DATA_DIR": str(tmp_path / "main"),
                      "TESSERA_PLUGINS_AUTOLOAD": False, "TESSERA_PLUGINS_EXTRA": EXTRA})
    yield app
    app.extensions["tessera"].db.dispose()


def add_job(app, kind, key, cron, args):
    state = app.extensions["tessera"]
    with state.db.session() as session:
        schedule(session, kind, key, cron, None, args)
        session.commit()


def runs(app, task):
    with app.extensions["tessera"].db.session() as session:
        return [(row.status, row.fire_time, row.instance) for row in
                session.query(TaskHistory).filter_by(task=task).order_by(TaskHistory.id)]


def env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "TESSERA_PASSWORD_HASH_TIME_COST": "1",
            "TESSERA_PASSWORD_HASH_MEMORY_KIB": "8"}


def test_two_processes_running_a_minutely_job_for_three_minutes_make_three_runs(pg_app, postgres_app_db, tmp_path):
    out = tmp_path / "runs.txt"
    add_job(pg_app, "test-count", "minutely", "0 * * * * ? *", {"file": str(out)})
    go = tmp_path / "go"
    start, end = int(T0.timestamp()), int((T0 + dt.timedelta(minutes=3)).timestamp())  # 05:00:30 .. 05:03:30
    procs = [subprocess.Popen([sys.executable, "-m", "tests.core.scheduler_driver", postgres_app_db,
                               str(tmp_path / f"p{i}"), str(start), str(end), "1", str(go)],
                              cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        go.touch()  # both tick the same simulated seconds at the same moment
        outputs = [proc.communicate(timeout=120) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert all(proc.returncode == 0 for proc in procs), [o[1][-2000:] for o in outputs]
    lines = out.read_text().splitlines()
    fires = [dt.datetime.fromtimestamp(int(line.split()[0]), dt.timezone.utc).strftime("%H:%M:%S") for line in lines]
    assert sorted(fires) == ["05:01:00", "05:02:00", "05:03:00"]
    assert sum(int(o[0].split()[-1]) for o in outputs) == 3
    assert [r[0] for r in runs(pg_app, "test-count")] == ["success"] * 3


def test_racing_claims_of_one_occurrence_have_one_winner(pg_app, tmp_path):
    add_job(pg_app, "test-count", "race", "0 * * * * ? *", {"file": str(tmp_path / "race")})
    state = pg_app.extensions["tessera"]
    kind = state.job_kinds["test-count"]
    run_due(pg_app, T0)
    with state.db.session() as session:
        job = session.query(ScheduledJob).filter_by(key="race").one()
        job_id, fire = job.id, job.next_fire
    for round_number in range(15):
        barrier, won = threading.Barrier(4), []

        def claim():
            barrier.wait()
            won.append(_claim(state, job_id, fire, fire, kind, None))

        threads = [threading.Thread(target=claim) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len([w for w in won if w is not None]) == 1, won
        fire += 60  # the winner moved the job to the next minute
    assert len(runs(pg_app, "test-count")) == 15


def test_two_tessera_workers_never_run_an_occurrence_twice(pg_app, postgres_app_db, tmp_path):
    out = tmp_path / "wall.txt"
    workers = []
    for i in range(2):
        worker_env = {**env(), "TESSERA_DB_URL": postgres_app_db, "TESSERA_DATA_DIR": str(tmp_path / f"w{i}"),
                      "TESSERA_PLUGINS_AUTOLOAD": "false", "TESSERA_PLUGINS_EXTRA": EXTRA,
                      "TESSERA_RUN_MIGRATIONS": "false", "TESSERA_SCHEDULER_POLL_SECONDS": "0.1"}
        workers.append(subprocess.Popen([sys.executable, "-m", "core.assembly.cli", "worker"], cwd=ROOT,
                                        env=worker_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        for worker in workers:
            assert worker.stdout.readline().startswith("tessera worker:"), worker.stderr.read()
        add_job(pg_app, "test-count", "every-second", "* * * * * ? *", {"file": str(out)})
        time.sleep(3.5)
        with pg_app.extensions["tessera"].db.session() as session:
            unschedule(session, "test-count", "every-second")
            session.commit()
        time.sleep(0.5)  # a run claimed just before the job went finishes
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()
    fires = [int(line.split()[0]) for line in out.read_text().splitlines()]
    assert len(fires) >= 2, "the workers ran nothing"
    assert len(set(fires)) == len(fires), "an occurrence ran twice"
    history = runs(pg_app, "test-count")
    assert sorted(r[1] for r in history) == sorted(fires) and {r[0] for r in history} == {"success"}


def test_a_sync_schedule_resyncs_a_new_table_with_the_app_db_on_postgresql(pg_app):
    import sqlite3

    from core.schedule.runner import tick
    from core.testing import setup_admin, sqlite_file, wait_for_sync

    admin = setup_admin(pg_app)
    path = sqlite_file(pg_app, "growing.db", "CREATE TABLE first_table (id INTEGER PRIMARY KEY)")
    db_id = admin.post("/api/database", json={
        "name": "Growing", "engine": "sqlite", "details": {"db": path},
        "schedules": {"metadata_sync": {"schedule_type": "hourly", "schedule_minute": 10}}}).json["id"]
    wait_for_sync(pg_app)
    tick(pg_app, T0)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE added_later (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    tick(pg_app, T0 + dt.timedelta(minutes=10))
    tables = {t["name"] for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]}
    assert tables == {"first_table", "added_later"}
    task = admin.get("/api/task/?task=sync").json
    assert task["total"] == 1 and task["data"][0]["db_id"] == db_id and task["data"][0]["status"] == "success"
