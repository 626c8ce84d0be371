"""The bench harness tests' apps start from the session's migrated app DB (bench.common.MIGRATED_APP_DB_ENV),
in this process and in the bench's child processes, which inherit the environment."""
import pytest

from bench.common import MIGRATED_APP_DB_ENV


@pytest.fixture(autouse=True)
def migrated_bench_app_db(monkeypatch, app_db_template):
    monkeypatch.setenv(MIGRATED_APP_DB_ENV, str(app_db_template))
