"""The app DB's start-up lock (core.appdb.locks): one holder at a time among all processes on one app DB,
taken by the migration run (create_app and `tessera migrate`) and around the start-up hooks."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from core.appdb.db import AppDatabase
from core.appdb.locks import file_lock
from core.testing import FAST_HASHING

ROOT = Path(__file__).resolve().parents[2]
WAITING = ("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
           "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")


@pytest.fixture(params=["sqlite", "postgresql"])
def app_db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tessera.db'}"
    return request.getfixturevalue("postgres_app_db")


def test_a_second_holder_waits_for_the_first(app_db_url):
    # Two AppDatabase objects stand for two processes: separate connections (PostgreSQL) or open files (flock).
    first, second = AppDatabase(app_db_url), AppDatabase(app_db_url)
    entered = threading.Event()

    def contender():
        with second.exclusive():
            entered.set()

    try:
        with first.exclusive():
            thread = threading.Thread(target=contender)
            thread.start()
            assert not entered.wait(0.5), "the lock let a second holder in"
        assert entered.wait(10), "the lock was not released"
        thread.join(10)
        with first.exclusive():  # released on its connection, which went back to the pool
            pass
    finally:
        first.dispose()
        second.dispose()


def test_an_in_memory_database_needs_no_lock(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    engine = create_engine("sqlite://")
    with file_lock(engine), file_lock(engine):  # one process only: taken twice without waiting
        entered = True
    assert entered
    assert list(tmp_path.iterdir()) == []  # and no lock file made anywhere near


def test_tessera_migrate_waits_for_the_lock_then_migrates(postgres_app_db, tmp_path):
    env = {**os.environ, **{k: str(v) for k, v in FAST_HASHING.items()}, "TESSERA_DB_URL": postgres_app_db,
           "TESSERA_DATA_DIR": str(tmp_path), "TESSERA_PLUGINS_AUTOLOAD": "false", "PYTHONPATH": str(ROOT)}
    holder = AppDatabase(postgres_app_db)
    migrate = None
    try:
        with holder.exclusive():
            migrate = subprocess.Popen([sys.executable, "-m", "core.assembly.cli", "migrate"], cwd=ROOT, env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            deadline = time.monotonic() + 30
            with holder.engine.connect() as conn:
                while not conn.exec_driver_sql(WAITING).scalar():  # the command reached the lock and waits
                    assert migrate.poll() is None, migrate.communicate()[0]
                    assert time.monotonic() < deadline, "tessera migrate never asked for the lock"
                    time.sleep(0.1)
                    conn.rollback()
                assert conn.exec_driver_sql("SELECT to_regclass('alembic_version')").scalar() is None
        output = migrate.communicate(timeout=60)[0]
        assert migrate.returncode == 0 and "app database is up to date" in output, output
        with holder.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM core_user").scalar() == 0
    finally:
        if migrate is not None and migrate.poll() is None:
            migrate.kill()
        holder.dispose()


def test_a_process_that_does_not_migrate_waits_for_one_that_migrates(app_config, tmp_path):
    # TESSERA_RUN_MIGRATIONS=false: it must not read the schema of an app DB another process is migrating.
    from alembic import command

    from core.appdb.db import alembic_config
    from core.assembly.app import create_app
    from core.assembly.plugins import make_plugin_manager, plugin_migrations

    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    config = {**app_config, "TESSERA_DB_URL": url}
    holder = AppDatabase(url)
    started, failed = [], []

    def start():
        try:
            started.append(create_app(config))
        except Exception as exc:
            failed.append(exc)

    thread = threading.Thread(target=start)
    try:
        with holder.exclusive():  # the holder migrates the empty database while the other starts
            thread.start()
            thread.join(1.0)
            assert not started and not failed, failed
            command.upgrade(alembic_config(url, holder.engine), "heads")
            for migrations in plugin_migrations(make_plugin_manager(config)):
                command.upgrade(alembic_config(url, holder.engine, migrations.directory, migrations.version_table),
                                "heads")
        thread.join(30)
        assert started and not failed, failed
    finally:
        for app in started:
            app.extensions["tessera"].db.dispose()
        holder.dispose()
