"""The CSV-directory driver: Tessera's DriverConformance suite, its own rules, and discovery through
the `tessera.drivers` entry point (a dist-info on sys.path, as pip would install it)."""
from __future__ import annotations

import pytest
from sqlalchemy import create_engine

from core.driver import ConnectionPolicy, QueryError, connections
from core.http.errors import Invalid
from core.testing import ConformanceTarget, DriverConformance
from tessera_driver_csv import driver as csv_driver
from tessera_driver_csv.driver import CSVDriver

# One xdist worker runs this module (make test: --dist loadgroup): the class writes its files once.
pytestmark = pytest.mark.xdist_group("csv-driver")


def _export_csv(directory):
    def export(admin):
        with admin.connect() as conn:
            for table in ("conf_people", "conf_orders"):
                conn.exec_driver_sql(f"COPY {table} TO '{directory / (table + '.csv')}' (HEADER)")
    return export


class TestCSVConformance(DriverConformance):
    driver = CSVDriver
    reports_constraints = False
    expected_base_types = {
        "id": ("type/BigInteger", "type/Integer"), "name": ("type/Text",), "score": ("type/BigInteger",),
        "height": ("type/Float",), "balance": ("type/Float", "type/Decimal"), "active": ("type/Boolean",),
        "born": ("type/Date",), "seen_at": ("type/DateTime",), "wakes": ("type/Time",), "bio": ("type/Text",),
    }
    slow_sql = "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3"
    teeth_sql = "COPY conf_people TO '{out}'"
    teeth_cleanup_sql = None
    escape_statements = ["COPY conf_people TO '{out}'", "SELECT * FROM read_csv('/etc/passwd')",
                         "SELECT * FROM read_text('/etc/passwd')", "ATTACH '{out}' AS other", "INSTALL httpfs",
                         "SET enable_external_access = true"]

    def remove_guards(self, monkeypatch):
        super().remove_guards(monkeypatch)
        monkeypatch.setattr(csv_driver, "LOCKED_CONFIG", dict(csv_driver.BASE_CONFIG))

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_target(cls, tmp_path_factory):
        directory = tmp_path_factory.mktemp("csv-files")
        admin = create_engine(f"duckdb:///{tmp_path_factory.mktemp('csv-admin') / 'source.duckdb'}")
        return ConformanceTarget(details={"directory": str(directory)}, admin_engine=admin,
                                 policy=ConnectionPolicy(file_dirs=(directory.parent,)), after_fill=_export_csv(directory))


@pytest.fixture
def csv_dir(tmp_path):
    directory = tmp_path / "files" / "exports"
    directory.mkdir(parents=True)
    (directory / "birds.csv").write_text("id,name\n1,toucan\n2,puffin\n")
    return directory


def _engine(csv_dir):
    policy = ConnectionPolicy(file_dirs=(csv_dir.parent,))
    return connections.build_engine(CSVDriver, connections.check(CSVDriver, {"directory": str(csv_dir)}, policy))


def _rows(engine, sql):
    with CSVDriver.execute(engine, sql) as result:
        return list(result.rows)


def test_new_files_appear_and_outside_symlinks_do_not(csv_dir, tmp_path):
    engine = _engine(csv_dir)
    assert [t.name for t in CSVDriver.describe_tables(engine)] == ["birds"]
    outside = tmp_path / "secret.csv"
    outside.write_text("secret\nhunter2\n")
    (csv_dir / "leak.csv").symlink_to(outside)
    (csv_dir / "Nest Sites.csv").write_text("site,birds\nnorth,3\n")
    assert [t.name for t in CSVDriver.describe_tables(engine)] == ["birds", "nest_sites"]
    assert _rows(engine, "SELECT sum(birds) FROM nest_sites") == [(3,)]
    with pytest.raises(QueryError):
        _rows(engine, f"SELECT * FROM read_csv('{outside}')")
    engine.dispose()


@pytest.mark.parametrize("make", [lambda d: d / "birds.csv", lambda d: d / "missing", lambda d: "/etc"])
def test_directory_must_be_an_allowed_directory(csv_dir, make):
    with pytest.raises(Invalid) as error:
        connections.check(CSVDriver, {"directory": str(make(csv_dir))}, ConnectionPolicy(file_dirs=(csv_dir.parent,)))
    assert "directory" in error.value.body["errors"]


def test_discovered_through_the_entry_point(tmp_path, monkeypatch, csv_dir):
    site = tmp_path / "site"
    dist = site / "tessera_driver_csv-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tessera-driver-csv\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[tessera.drivers]\ncsv = tessera_driver_csv\n")
    monkeypatch.syspath_prepend(str(site))

    from core.assembly.app import create_app

    data = tmp_path / "data"
    app = create_app({"TESSERA_DATA_DIR": str(data), "TESSERA_DB_URL": f"sqlite:///{tmp_path / 'app.db'}",
                      "TESSERA_PLUGINS_AUTOLOAD": True, "TESSERA_FILE_DB_DIRS": str(csv_dir.parent)})
    try:
        state = app.extensions["tessera"]
        assert state.drivers["csv"] is CSVDriver
        assert state.pm.tessera_versions.get("csv") == "0.1.0"
        engines = app.test_client().get("/api/session/properties").json["engines"]
        assert engines["csv"]["driver-name"] == "CSV directory"
        assert engines["csv"]["source"]["type"] == "community"
        assert [f["name"] for f in engines["csv"]["details-fields"]] == ["directory"]
        with app.app_context():
            connections.can_connect("csv", {"directory": str(csv_dir)})
    finally:
        state.db.dispose()


def test_a_snapshot_connection_must_be_locked_down():
    import duckdb

    from core.driver import LockdownError

    locked = duckdb.connect(":memory:", config=csv_driver.LOCKED_CONFIG)
    CSVDriver.lockdown(locked, None)  # passes: nothing to say
    for config in (csv_driver.BASE_CONFIG, {**csv_driver.BASE_CONFIG, "enable_external_access": False}):
        with pytest.raises(LockdownError, match="lock_configuration"):
            CSVDriver.lockdown(duckdb.connect(":memory:", config=config), None)
    with pytest.raises(LockdownError, match="autoload_known_extensions"):
        CSVDriver.lockdown(duckdb.connect(":memory:", config={**csv_driver.LOCKED_CONFIG,
                                                              "autoload_known_extensions": True}), None)
