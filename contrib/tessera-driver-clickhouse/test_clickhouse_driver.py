"""The ClickHouse driver on chDB (ClickHouse embedded in this process): Tessera's DriverConformance
suite, the chDB transport's own rules, and discovery through the `tessera.drivers` entry point."""
from __future__ import annotations

import pytest
import sqlalchemy as sa
from chdb_home import admin_engine, chdb_home, create_database
from tessera_driver_clickhouse.driver import ClickHouseDriver

from core.driver import ConnectionPolicy, QueryError, connections
from core.testing import ConformanceTarget, DriverConformance

# One xdist worker runs this module (make test: --dist loadgroup): the class fills its database once.
pytestmark = pytest.mark.xdist_group("clickhouse-driver")


class TestClickHouseConformance(DriverConformance):
    driver = ClickHouseDriver
    slow_sql = "SELECT count() FROM system.numbers WHERE number % 7 = 3"
    series_sql = "SELECT number + 1 AS x, 'padding-to-make-rows-bigger' AS pad FROM system.numbers LIMIT :n"
    teeth_sql = "CREATE TABLE conf_teeth (a Int32) ENGINE = Memory"
    escape_statements = ["SELECT 1 INTO OUTFILE '{out}'", "SELECT * FROM conf_people INTO OUTFILE '{out}' FORMAT CSV",
                         "WITH x AS (SELECT 1) SELECT * FROM x INTO OUTFILE '{out}'",
                         "INSERT INTO FUNCTION file('{out}', 'CSV') SELECT 1",
                         "SELECT * FROM file('/etc/passwd', 'LineAsString')",
                         "SELECT * FROM url('http://127.0.0.1:9/x', 'CSV')", "SELECT * FROM sqlite('{out}', 't')",
                         "SET readonly = 0", "SELECT 1 SETTINGS readonly = 0"]
    extra_write_statements = ["ALTER TABLE conf_orders DELETE WHERE 1", "TRUNCATE TABLE conf_orders",
                              "CREATE TEMPORARY TABLE conf_tmp (a Int8)", "OPTIMIZE TABLE conf_orders FINAL"]

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_target(cls):
        home = chdb_home()
        create_database("conf")
        return ConformanceTarget(details={"chdb_path": str(home), "dbname": "conf"}, admin_engine=admin_engine("conf"),
                                 policy=ConnectionPolicy(file_dirs=(home.parent,)))


def test_embedded_directory_must_be_allowed(tmp_path):
    from core.http.errors import Invalid

    with pytest.raises(Invalid) as error:
        connections.check(ClickHouseDriver, {"chdb_path": str(tmp_path), "dbname": "conf"},
                          ConnectionPolicy(file_dirs=(tmp_path / "elsewhere",)))
    assert "chdb_path" in error.value.body["errors"]


def test_parameters_are_bound_by_the_engine():
    """Values travel as typed query parameters: quotes, backslashes and SQL in a value stay data."""
    import datetime as dt
    from decimal import Decimal

    home = chdb_home()
    create_database("conf_params")
    details = connections.check(ClickHouseDriver, {"chdb_path": str(home), "dbname": "conf_params"},
                                ConnectionPolicy(file_dirs=(home.parent,)))
    engine = connections.build_engine(ClickHouseDriver, details)
    values = {"s": "it's \\ a\n'; DROP TABLE x; --", "i": -7, "f": 1.5, "d": Decimal("10.25"), "b": True,
              "day": dt.date(2024, 2, 29), "at": dt.datetime(2024, 2, 29, 23, 59, 58), "n": None}
    with ClickHouseDriver.execute(engine, "SELECT :s, :i, :f, :d, :b, :day, :at, :n", values) as result:
        assert list(result.rows) == [tuple(values.values())]
    with pytest.raises(QueryError):
        with ClickHouseDriver.execute(engine, "SELECT * FROM sqlite(:s, 't')", {"s": "/tmp/x.db"}) as result:
            list(result.rows)
    engine.dispose()


def test_discovered_through_the_entry_point(tmp_path, monkeypatch):
    site = tmp_path / "site"
    dist = site / "tessera_driver_clickhouse-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tessera-driver-clickhouse\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[tessera.drivers]\nclickhouse = tessera_driver_clickhouse\n")
    monkeypatch.syspath_prepend(str(site))

    from core.assembly.app import create_app

    app = create_app({"TESSERA_DATA_DIR": str(tmp_path / "data"), "TESSERA_DB_URL": f"sqlite:///{tmp_path / 'app.db'}",
                      "TESSERA_PLUGINS_AUTOLOAD": True})
    state = app.extensions["tessera"]
    try:
        assert state.drivers["clickhouse"] is ClickHouseDriver
        engines = app.test_client().get("/api/session/properties").json["engines"]
        assert engines["clickhouse"]["driver-name"] == "ClickHouse"
        fields = {f["name"]: f for f in engines["clickhouse"]["details-fields"]}
        assert fields["password"]["type"] == "password" and "chdb_path" in fields
    finally:
        state.db.dispose()


def test_dialect_ddl_is_clickhouse_ddl():
    from sqlalchemy.schema import CreateTable
    from tessera_driver_clickhouse.sa import ClickHouseDialect

    table = sa.Table("t", sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column("note", sa.String(10)), sa.Column("at", sa.DateTime, nullable=False))
    ddl = str(CreateTable(table).compile(dialect=ClickHouseDialect()))
    assert "id Int32" in ddl and "note Nullable(String)" in ddl and "at DateTime64(6)" in ddl
    assert ddl.strip().endswith("ENGINE = MergeTree ORDER BY (id)")


def test_an_unreachable_server_is_a_query_error():
    """The HTTP transport, wired as in production, against a port nothing listens on: a clean error."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    details = connections.check(ClickHouseDriver, {"host": "127.0.0.1", "port": port, "dbname": "default",
                                                   "user": "reader", "password": "pw"}, ConnectionPolicy())
    engine = connections.build_engine(ClickHouseDriver, details)
    with pytest.raises(QueryError):
        with ClickHouseDriver.execute(engine, "SELECT 1", timeout=5) as result:
            list(result.rows)
    engine.dispose()
