"""The Spark SQL driver against a local Spark Connect server: Tessera's DriverConformance suite, its
own rules, and discovery through the `tessera.drivers` entry point."""
from __future__ import annotations

import pytest
import sqlalchemy as sa
from tessera_driver_spark.driver import SparkDriver, connect_url

from core.driver import QueryError, connections
from core.http.errors import Invalid
from core.testing import ConformanceTarget, DriverConformance

# Under pytest-xdist every Spark test runs on one worker (`--dist loadgroup`): one JVM per run, not per worker.
pytestmark = pytest.mark.xdist_group("spark")
CONF_DB = "tessera_conf"
SPARK_SCHEMAS = {
    "conf_people": "id INT, name STRING, score BIGINT, height DOUBLE, balance DECIMAL(10,2), active BOOLEAN, "
                   "born DATE, seen_at TIMESTAMP_NTZ, wakes STRING, bio STRING",
    "conf_orders": "id INT, person_id INT, total DECIMAL(10,2), note STRING",
}


def copy_to_spark(spark, database: str, tables: dict[str, str]):
    """after_fill: the rows the suite wrote to its SQLite admin database become Spark tables."""
    def copy(admin):
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
        with admin.connect() as conn:
            for table, schema in tables.items():
                rows = [tuple(str(v) if type(v).__name__ == "time" else v for v in row)
                        for row in conn.execute(sa.text(f"SELECT * FROM {table} ORDER BY 1"))]
                rows = [_typed(row, schema) for row in rows]
                spark.createDataFrame(rows, schema=schema).write.mode("overwrite").saveAsTable(f"{database}.{table}")
    return copy


def _typed(row, schema):
    """SQLite hands back dates and decimals as text or floats; give Spark the Python types its schema names."""
    import datetime as dt
    from decimal import Decimal

    out = []
    for value, column in zip(row, schema.split(", ")):
        kind = column.split(" ", 1)[1]
        if value is None:
            out.append(None)
        elif kind.startswith("DECIMAL"):
            out.append(Decimal(str(value)).quantize(Decimal("0.01")))
        elif kind == "DATE" and isinstance(value, str):
            out.append(dt.date.fromisoformat(value))
        elif kind.startswith("TIMESTAMP") and isinstance(value, str):
            out.append(dt.datetime.fromisoformat(value))
        elif kind == "BOOLEAN":
            out.append(bool(value))
        else:
            out.append(value)
    return tuple(out)


class TestSparkConformance(DriverConformance):
    driver = SparkDriver
    reports_constraints = False  # Spark's catalog has no primary keys, and v1 tables keep no NOT NULL
    expected_base_types = {**DriverConformance.expected_base_types, "wakes": ("type/Text",)}  # no TIME column here
    # Far longer than the 0.5 s timeout, yet finite: an interrupt Spark misses (seen under heavy parallel
    # load) then fails the test instead of hanging the suite for hours, as range(10^12) did.
    slow_sql = "SELECT count(*) FROM range(20000000000) WHERE id % 7 = 3"
    # Sixteen slices: Spark sends the first rows when the first slice is done, so leaving after one row
    # is cheap on two busy cores too (two slices of half a million made it 2-3 s under parallel tests).
    series_sql = "SELECT id AS x, 'padding-to-make-rows-bigger' AS pad FROM range(1, :n + 1, 1, 16)"
    extra_write_statements = ["SET spark.sql.runSQLOnFiles = true", "CACHE TABLE conf_people",
                              "TRUNCATE TABLE conf_orders", "CREATE TEMPORARY VIEW conf_orders AS SELECT 1 AS id"]
    teeth_sql = "INSERT OVERWRITE LOCAL DIRECTORY '{out}' USING csv SELECT 1 AS a"
    teeth_cleanup_sql = None
    escape_statements = ["INSERT OVERWRITE LOCAL DIRECTORY '{out}' USING csv SELECT 1 AS a",
                         "SELECT * FROM text.`/etc/passwd`", "SELECT * FROM csv.`/etc/hostname`",
                         "ADD JAR '{out}'", "CREATE TEMPORARY VIEW leak USING text OPTIONS (path '/etc/passwd')",
                         "SELECT 1; INSERT OVERWRITE LOCAL DIRECTORY '{out}' SELECT 1"]

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_target(cls, tmp_path_factory, spark_server, spark_admin):
        admin = sa.create_engine(f"sqlite:///{tmp_path_factory.mktemp('spark-admin') / 'source.db'}")
        return ConformanceTarget(details={"host": "127.0.0.1", "port": spark_server.port, "dbname": CONF_DB},
                                 admin_engine=admin, after_fill=copy_to_spark(spark_admin, CONF_DB, SPARK_SCHEMAS))

    def test_timestamps_come_back_as_utc_wall_clock(self, conformance):
        import datetime as dt

        rows = self.run(conformance.engine, "SELECT TIMESTAMP'2024-03-31 01:30:00 UTC', seen_at FROM conf_people "
                        "WHERE id = 1")
        assert rows == [(dt.datetime(2024, 3, 31, 1, 30), dt.datetime(2020, 1, 2, 3, 4, 5))]

    def test_java_reflection_is_refused(self, conformance):
        for sql in ("SELECT reflect('java.lang.System', 'getProperty', 'user.dir')",
                    "SELECT `java_method`('java.lang.Math', 'abs', -1)",
                    "SELECT TRY_REFLECT/**/('java.lang.Math', 'abs', -1)"):
            with pytest.raises(Exception, match="calls Java on the cluster"):
                self.run(conformance.engine, sql)
        assert self.run(conformance.engine, "SELECT abs(-1)") == [(1,)]

    def test_a_timeout_leaves_no_spark_job_behind(self, conformance):
        """A timeout that lands while Spark is still planning the statement stops its jobs too.

        The short timeouts aim at that window. A job left behind holds both task slots of the test
        server (local[2]) for the 20 s or more the slow statement takes, so a statement that needs a
        task, run right after, waits for it; without one it takes well under a second."""
        import time

        from core.driver.records import QueryTimeout

        for timeout in (0.05, 0.1, 0.2, 0.05, 0.1, 0.2):
            with pytest.raises(QueryTimeout):
                self.run(conformance.engine, self.slow_sql, timeout=timeout)
            started = time.monotonic()
            assert self.run(conformance.engine, "SELECT count(*) FROM range(1000)") == [(1000,)]
            waited = time.monotonic() - started
            assert waited < 8, f"the next statement waited {waited:.1f} s: the timed-out one ({timeout} s) still ran"

    def test_an_interrupt_sent_before_the_statement_starts_still_stops_it(self, conformance):
        """A client gone just as its statement is sent: the disconnect's interrupt reaches the server
        before the operation exists and stops nothing, so it is sent again until the statement ends."""
        import time

        from tessera_driver_spark.driver import _session

        with conformance.engine.connect() as conn:
            self.driver.canceller(conn)()
            started = time.monotonic()
            try:
                with pytest.raises(sa.exc.OperationalError, match="Query was cancelled"):
                    conn.execute(sa.text(self.slow_sql)).fetchall()
            finally:
                _session(conn).reset_interrupt()
            stopped_after = time.monotonic() - started
            assert stopped_after < 5, f"stopped after {stopped_after:.1f} s"
            started = time.monotonic()
            assert conn.execute(sa.text("SELECT count(*) FROM range(1000)")).fetchall() == [(1000,)]
            assert time.monotonic() - started < 8

    def test_a_session_is_locked_before_use(self, conformance):
        with conformance.engine.connect() as conn:
            spark = conn.connection.dbapi_connection.session
            assert spark.conf.get("spark.sql.runSQLOnFiles") == "false"
            assert spark.catalog.currentDatabase() == CONF_DB


def test_details_are_checked_and_the_url_is_built_from_them():
    details = connections.check(SparkDriver, {"host": "spark.example.com", "user": "ana", "token": "abc"},
                                connections.ConnectionPolicy())
    assert connect_url(details) == "sc://spark.example.com:15002/;use_ssl=true;user_id=ana;token=abc"
    for bad in ({"host": "h;token=x"}, {"user": "a;b"}, {"token": "a;use_ssl=false"}, {"dbname": "x y"},
                {"port": 0}, {"url": "sc://evil"}):
        with pytest.raises(Invalid) as error:
            connections.check(SparkDriver, bad, connections.ConnectionPolicy())
        assert set(bad) & set(error.value.body["errors"]), bad


def test_a_server_that_does_not_answer_is_a_query_error():
    from socket import socket

    with socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    details = connections.check(SparkDriver, {"host": "127.0.0.1", "port": port}, connections.ConnectionPolicy())
    engine = connections.build_engine(SparkDriver, details)
    with pytest.raises(QueryError):
        with SparkDriver.execute(engine, "SELECT 1", timeout=5) as result:
            list(result.rows)
    engine.dispose()


def test_a_timeout_interrupts_again_until_the_statement_ends():
    """An interrupt that reaches the server before it has registered the statement's operation stops
    nothing: the timeout keeps interrupting until the statement ends, and not after."""
    import time
    from types import SimpleNamespace

    from tessera_driver_spark import dbapi
    from tessera_driver_spark.dbapi import REINTERRUPT_SECONDS

    calls = []

    class RecordingSession:  # stands in for the Spark Connect session: only its interrupts matter here
        def interruptAll(self):
            calls.append(time.monotonic())

    connection = dbapi.Connection(RecordingSession())
    conn = SimpleNamespace(connection=SimpleNamespace(dbapi_connection=connection))
    with SparkDriver.guard(conn, 0.1):
        time.sleep(0.1 + 2.5 * REINTERRUPT_SECONDS)
    assert len(calls) >= 2, calls
    ended_with = len(calls)
    time.sleep(2 * REINTERRUPT_SECONDS)
    assert len(calls) == ended_with
    assert connection._interrupted is None


def test_discovered_through_the_entry_point(tmp_path, monkeypatch, spark_server):
    site = tmp_path / "site"
    dist = site / "tessera_driver_spark-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tessera-driver-spark\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[tessera.drivers]\nsparksql = tessera_driver_spark\n")
    monkeypatch.syspath_prepend(str(site))

    from core.assembly.app import create_app

    app = create_app({"TESSERA_DATA_DIR": str(tmp_path / "data"), "TESSERA_DB_URL": f"sqlite:///{tmp_path / 'app.db'}",
                      "TESSERA_PLUGINS_AUTOLOAD": True})
    state = app.extensions["tessera"]
    try:
        assert state.drivers["sparksql"] is SparkDriver
        assert state.pm.tessera_versions.get("sparksql") == "0.1.0"
        engines = app.test_client().get("/api/session/properties").json["engines"]
        assert "spark" not in engines  # Metabase's engine name only
        assert engines["sparksql"]["driver-name"] == "Spark SQL"
        assert engines["sparksql"]["source"]["type"] == "community"
        fields = {f["name"]: f for f in engines["sparksql"]["details-fields"]}
        assert list(fields) == ["host", "port", "dbname", "user", "token", "ssl"]
        assert fields["token"]["type"] == "password" and fields["port"]["default"] == 15002
        with app.app_context():
            try:
                connections.can_connect("sparksql", {"host": "127.0.0.1", "port": spark_server.port})
            finally:
                connections.dispose_all()
    finally:
        state.db.dispose()


def test_a_database_stored_under_the_former_engine_name_becomes_sparksql(tmp_path):
    """The engine was first called `spark`; Metabase's name is `sparksql`. A database registered under
    the old name is renamed by the driver's own migration when the driver is first loaded, and then
    finds its driver. (No Spark server: nothing connects.)"""
    from core.appdb.models import Database
    from core.assembly.app import create_app
    from core.driver.crypto import encrypt_details

    config = {"TESSERA_DATA_DIR": str(tmp_path / "data"), "TESSERA_DB_URL": f"sqlite:///{tmp_path / 'app.db'}",
              "TESSERA_PLUGINS_AUTOLOAD": False}
    before = create_app(config)  # an app DB migrated before the driver was installed
    state = before.extensions["tessera"]
    with before.app_context(), state.db.session() as session:
        details = encrypt_details({"host": "127.0.0.1", "port": 15002}, state.config)
        session.add_all([Database(name="Lake", engine="spark", details=details),
                         Database(name="Other", engine="sqlite", details=details)])
    state.db.dispose()

    app = create_app({**config, "TESSERA_PLUGINS_EXTRA": "tessera_driver_spark"})
    state = app.extensions["tessera"]
    try:
        with app.app_context(), state.db.session() as session:
            engines = {d.name: d.engine for d in session.scalars(sa.select(Database))}
            assert engines == {"Lake": "sparksql", "Other": "sqlite"}
            lake = session.scalar(sa.select(Database).where(Database.name == "Lake"))
            assert connections.driver_for(lake) is SparkDriver
        assert "sparksql" in app.test_client().get("/api/session/properties").json["engines"]
    finally:
        state.db.dispose()
