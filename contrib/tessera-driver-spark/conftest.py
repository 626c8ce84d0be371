"""Makes this distribution importable when Tessera's `make test` runs it from a source checkout, and
starts the one local Spark Connect server the package's tests share (spark_server.py)."""
import sys
from pathlib import Path

import pytest

from core.testing.app import app_db_template  # noqa: F401 - the migrated app DB, for the MBQL cases

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture(scope="session")
def spark_server():
    from spark_server import LocalSparkConnect, ensure_java

    reason = ensure_java()
    if reason:
        pytest.skip(reason)
    server = LocalSparkConnect()
    try:
        server.wait()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def spark_admin(spark_server):
    """A Spark Connect session with full rights (no lockdown), for filling the test databases."""
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(spark_server.url).create()
    yield session
    session.stop()
