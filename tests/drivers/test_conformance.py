"""The four built-in drivers against the one conformance suite (core.testing.DriverConformance).

PostgreSQL and MariaDB are the loopback servers, used for real; those classes skip, naming the
server, only when it does not answer.
"""
from __future__ import annotations

import contextlib

import pytest
from sqlalchemy import create_engine

from core.driver.sources import ConnectionPolicy
from core.testing import ConformanceTarget, DriverConformance, mariadb_data_source, postgres_data_source
from drivers.duckdb import DuckDBDriver
from drivers.mysql import MySQLDriver
from drivers.postgres import PostgresDriver
from drivers.sqlite import SQLiteDriver

# One xdist worker runs this module (make test: --dist loadgroup): each class fills its database once.
pytestmark = pytest.mark.xdist_group("driver-conformance")


class TestSQLite(DriverConformance):
    driver = SQLiteDriver
    teeth_sql = "ATTACH DATABASE '{out}' AS other"
    teeth_cleanup_sql = None
    escape_statements = ["ATTACH DATABASE '{out}' AS other", "VACUUM INTO '{out}'", "SELECT load_extension('{out}')",
                         "SELECT writefile('{out}', 'x')"]
    extra_write_statements = ["PRAGMA query_only=0", "PRAGMA writable_schema=1"]

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_target(cls, tmp_path_factory):
        directory = tmp_path_factory.mktemp("sqlite-files")
        path = directory / "conformance.db"
        return ConformanceTarget(details={"db": str(path)}, admin_engine=create_engine(f"sqlite:///{path}"),
                                 policy=ConnectionPolicy(file_dirs=(directory,)))


class TestDuckDB(DriverConformance):
    driver = DuckDBDriver
    slow_sql = "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3"
    teeth_sql = "COPY conf_people TO '{out}'"
    teeth_cleanup_sql = None
    escape_statements = ["COPY conf_people TO '{out}'", "SELECT * FROM read_text('/etc/passwd')",
                         "SELECT * FROM read_csv('/etc/passwd')", "ATTACH '{out}' AS other", "INSTALL httpfs",
                         "LOAD httpfs", "SET enable_external_access = true", "SELECT * FROM glob('/etc/*')"]

    def remove_guards(self, monkeypatch):
        super().remove_guards(monkeypatch)
        monkeypatch.setattr(DuckDBDriver, "engine_options", classmethod(lambda cls, details: {}))

    def test_session_state_does_not_outlive_the_statement(self, conformance):
        self.run(conformance.engine, "CREATE TEMP TABLE conf_people AS SELECT 'EVIL' AS name")
        self.run(conformance.engine, "SET search_path = 'temp.main'")
        assert self.run(conformance.engine, "SELECT name FROM conf_people WHERE id = 1") == [("Ada",)]
        assert self.run(conformance.engine, "SELECT count(*) FROM duckdb_tables() WHERE temporary") == [(0,)]

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_target(cls, tmp_path_factory):
        directory = tmp_path_factory.mktemp("duckdb-files")
        path = directory / "conformance.duckdb"
        return ConformanceTarget(details={"database_file": str(path)}, admin_engine=create_engine(f"duckdb:///{path}"),
                                 policy=ConnectionPolicy(file_dirs=(directory,)))


@contextlib.contextmanager
def _server_target(source_factory):
    with source_factory() as source:
        admin = create_engine(source.admin_url)
        yield ConformanceTarget(details=source.details, admin_engine=admin)
        admin.dispose()


def _grant_create(details):
    """Persisted models live in a schema of Tessera's own, which needs CREATE on the database."""
    def grant(admin):
        with admin.begin() as conn:
            conn.exec_driver_sql(f'GRANT CREATE ON DATABASE "{details["dbname"]}" TO "{details["user"]}"')
    return grant


class TestPostgres(DriverConformance):
    driver = PostgresDriver
    # Statements stream through a server-side cursor (DECLARE ... CURSOR FOR), which only takes
    # queries; a query calling a function that writes is what only the read-only transaction stops.
    teeth_sql = "SELECT conf_write()"
    teeth_cleanup_sql = None
    escape_statements = ["COPY (SELECT 1) TO PROGRAM 'touch {out}'", "COPY conf_people TO '{out}'",
                         "SELECT pg_read_file('/etc/passwd')", "SELECT lo_import('/etc/passwd')"]
    extra_write_statements = [
        "WITH d AS (DELETE FROM conf_orders RETURNING *) SELECT * FROM d",
        "SELECT * INTO conf_copy FROM conf_people",
        "DO $$BEGIN DELETE FROM conf_orders; END$$",
        "SELECT conf_write()",
        "SELECT set_config('transaction_read_only', 'off', true), conf_write()",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE; DELETE FROM conf_orders",
        "sElEcT 1 /* x */ ; DeLeTe FrOm conf_orders",
    ]

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_target(cls):
        with _server_target(postgres_data_source) as target:
            target.allow_tessera_tables = _grant_create(target.details)
            with target.admin_engine.begin() as conn:
                conn.exec_driver_sql("CREATE FUNCTION conf_write() RETURNS integer LANGUAGE plpgsql AS "
                                     "$$ BEGIN DELETE FROM conf_orders; RETURN 1; END $$")
            yield target


class TestMariaDB(DriverConformance):
    driver = MySQLDriver
    slow_sql = "SELECT count(*) FROM information_schema.columns a, information_schema.columns b, information_schema.columns c"
    # MariaDB stops recursive CTEs at max_recursive_iterations (1000); its sequence engine streams.
    series_sql = "SELECT seq AS x, 'padding-to-make-rows-bigger' AS pad FROM seq_1_to_1000000 WHERE seq <= :n"
    escape_statements = ["SELECT * FROM conf_people INTO OUTFILE '{out}'",
                         "SELECT * FROM conf_people INTO DUMPFILE '{out}'",
                         "LOAD DATA INFILE '/etc/passwd' INTO TABLE conf_orders"]
    extra_write_statements = [
        "WITH d AS (SELECT 1) DELETE FROM conf_orders",
        "REPLACE INTO conf_orders (id, person_id, total, note) VALUES (1, 1, 1, 'x')",
        "CREATE TEMPORARY TABLE conf_tmp (a INTEGER)",
    ]

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_target(cls):
        with _server_target(mariadb_data_source) as target:
            yield target
