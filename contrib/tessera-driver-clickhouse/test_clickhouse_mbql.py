"""The MBQL conformance cases (tests/core/query/test_conformance.py) compiled for ClickHouse and run on
chDB, next to SQLite as the reference: the same answers (and Python's, where a case carries them).

The sample is registered and synced as a user would; ClickHouse has no foreign keys, so the FK
targets are then set on the synced fields as an admin does in the data model.
"""
from __future__ import annotations

import contextlib
import shutil
import sys

import pytest
import sqlalchemy as sa
from chdb_home import admin_engine, chdb_home, create_database

from core.http.errors import Invalid
from tests.core.query import sample
from tests.core.query.conftest import Sample
from tests.core.query.test_conformance import (
    CASES,
    NAMED_ZONES_QUERY,
    WEEK_CASE_NAMES,
    WEEK_STARTS,
    assert_rows_equal,
    named_zone_answers,
    normal,
    run_case,
    sort_key,
    week_cases,
)

# One xdist worker runs this module (make test: --dist loadgroup): its module-scoped sample is loaded into chDB once.
pytestmark = pytest.mark.xdist_group("clickhouse-mbql")

ENGINES = ("sqlite", "clickhouse")


def _entry_point(site):
    dist = site / "tessera_driver_clickhouse-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tessera-driver-clickhouse\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[tessera.drivers]\nclickhouse = tessera_driver_clickhouse\n")
    sys.path.insert(0, str(site))


def _coerce_and_set_foreign_keys(session, ids):
    from core.appdb.models.database import Field

    sample.coerce_synced(session, ids)
    for name in sample.TABLE_ORDER:
        for column, _, _, _, fk in sample.COLUMNS[name]:
            if fk:
                field = session.get(Field, ids[f"${name}.{column}"])
                field.semantic_type, field.fk_target_field_id = "type/FK", ids[f"${fk}"]


@pytest.fixture(scope="module")
def samples(tmp_path_factory, app_db_template):
    from core.assembly.app import create_app
    from core.driver import connections
    from core.testing import FAST_HASHING, register_synced

    data_dir = tmp_path_factory.mktemp("ch-mbql")
    shutil.copy(app_db_template, data_dir / "tessera.db")
    site = data_dir / "site"
    _entry_point(site)
    home = chdb_home()
    app = create_app({"TESSERA_DATA_DIR": str(data_dir), "TESSERA_DB_URL": f"sqlite:///{data_dir / 'tessera.db'}",
                      "TESSERA_PLUGINS_AUTOLOAD": True, "TESSERA_RUN_MIGRATIONS": False,
                      "TESSERA_FILE_DB_DIRS": f"{data_dir / 'files'},{home.parent}", **FAST_HASHING})
    state = app.extensions["tessera"]
    (data_dir / "files").mkdir()
    loader = sa.create_engine(f"sqlite:///{data_dir / 'files' / 'sample.db'}")
    sample.load(loader)
    loader.dispose()
    create_database("mbql")
    admin = admin_engine("mbql")
    sample.load(admin)
    admin.dispose()
    sources = {"sqlite": {"db": str(data_dir / "files" / "sample.db")},
               "clickhouse": {"chdb_path": str(home), "dbname": "mbql"}}
    with app.app_context(), contextlib.ExitStack() as stack:
        stack.callback(connections.dispose_all)
        out = {}
        for engine_name in ENGINES:
            adjust = _coerce_and_set_foreign_keys if engine_name == "clickhouse" else sample.coerce_synced
            session, ids, engine = register_synced(state, stack, f"Sample on {engine_name}", engine_name,
                                                   sources[engine_name], adjust)
            out[engine_name] = Sample(engine_name, engine, ids, session, state.drivers[engine_name])
        yield out
    state.db.dispose()
    sys.path.remove(str(site))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_mbql_case(samples, case):
    name, query, ordered, features, expected = case
    clickhouse, sqlite = samples["clickhouse"], samples["sqlite"]
    if not all(feature in clickhouse.driver.features for feature in features):
        with pytest.raises(Invalid, match="not supported by the"):
            run_case(clickhouse, query)
        return
    rows = run_case(clickhouse, query)
    rows = rows if ordered else sorted(rows, key=sort_key)
    if all(feature in sqlite.driver.features for feature in features):
        reference = run_case(sqlite, query)
        assert_rows_equal(rows, reference if ordered else sorted(reference, key=sort_key), f"{name}: clickhouse vs sqlite")
    if expected is not None and name != "arithmetic-expressions":
        want = [tuple(normal(v) for v in row) for row in expected]
        assert_rows_equal(rows, want if ordered else sorted(want, key=sort_key), f"{name}: clickhouse vs Python")


@pytest.mark.parametrize("start", list(WEEK_STARTS))
@pytest.mark.parametrize("case", WEEK_CASE_NAMES)
def test_start_of_week(samples, start, case):
    ws = WEEK_STARTS[start]
    _, query, expected = next(c for c in week_cases(ws) if c[0] == case)
    want = [tuple(normal(v) for v in row) for row in expected]
    assert_rows_equal(run_case(samples["clickhouse"], query, week_start=ws), want, f"{case} starting {start}")


def test_named_time_zones(samples):
    """convert-timezone with named zones (DST included) against Python's zoneinfo, as core's suite does."""
    rows = run_case(samples["clickhouse"], NAMED_ZONES_QUERY)
    assert_rows_equal(rows, named_zone_answers(), "named zones on clickhouse")

