"""The Trino driver without a server: the SQL it writes for every MBQL conformance case, feature probe
and temporal bucket is compared with golden files (golden/*.sql), each parsed back with sqlglot's Trino
grammar. A change in the SQL shows as a diff to review against Trino's documentation; regenerate with
TESSERA_UPDATE_GOLDEN=1 once reviewed. The connection-free parts of DriverConformance run too.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp
from tessera_driver_trino.driver import TrinoDriver

from core.appdb.db import AppDatabase
from core.http.errors import Invalid
from core.query.compiler import compile_query
from core.query.mbql import normalize
from core.testing import DriverConformance
from core.testing.conformance import feature_probes
from tests.core.query import sample
from tests.core.query.test_conformance import CASES, NAMED_ZONES_QUERY, WEEK_CASE_NAMES, WEEK_STARTS, week_cases

# One xdist worker runs this module (make test: --dist loadgroup): its module-scoped fixtures are built once.
pytestmark = pytest.mark.xdist_group("trino-golden")

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("TESSERA_UPDATE_GOLDEN") == "1"


def check_golden(name: str, sql: str) -> None:
    sqlglot.parse(sql, read="trino")  # what Trino's grammar (as sqlglot knows it) accepts
    path = GOLDEN / f"{name}.sql"
    if UPDATE:
        path.write_text(sql + "\n")
    assert path.exists(), f"no golden file {path.name}: run with TESSERA_UPDATE_GOLDEN=1 and review it"
    assert sql + "\n" == path.read_text(), f"{name}: the SQL differs from {path.name}"


@pytest.fixture(scope="module")
def trino_sample(tmp_path_factory, app_db_template):
    path = tmp_path_factory.mktemp("trino") / "tessera.db"
    shutil.copy(app_db_template, path)
    database = AppDatabase(f"sqlite:///{path}")
    with database.session() as session:
        ids = sample.register(session, "trino", "sample")
    session = database.Session()
    yield session, ids
    session.close()
    database.dispose()


def compiled(trino_sample, query, week_start=6) -> str:
    session, ids = trino_sample
    normalized = normalize(sample.resolve({"database": "$db", "type": "query", "query": query}, ids))
    result = compile_query(session, normalized, TrinoDriver, now=sample.NOW, week_start=week_start)
    params = "".join(f"\n-- :{k} = {v!r}" for k, v in sorted((result.params or {}).items()))
    return result.sql + params


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_mbql_case_sql(trino_sample, case):
    name, query, _, features, _ = case
    if not all(feature in TrinoDriver.features for feature in features):
        with pytest.raises(Invalid, match="not supported by the"):
            compiled(trino_sample, query)
        return
    check_golden(f"mbql-{name}", compiled(trino_sample, query))


@pytest.mark.parametrize("start", list(WEEK_STARTS))
@pytest.mark.parametrize("case", WEEK_CASE_NAMES)
def test_start_of_week_sql(trino_sample, start, case):
    _, query, _ = next(c for c in week_cases(WEEK_STARTS[start]) if c[0] == case)
    check_golden(f"week-{case}-{start}", compiled(trino_sample, query, week_start=WEEK_STARTS[start]))


def test_named_time_zones_sql(trino_sample):
    """The named-zone query of core's MBQL suite (a zone with DST, a zone from another, a fixed offset)."""
    check_golden("named-time-zones", compiled(trino_sample, NAMED_ZONES_QUERY))


@pytest.mark.parametrize("feature", sorted(set(feature_probes()) & TrinoDriver.features))
def test_feature_probe_sql(feature):
    check_golden(f"probe-{feature}", TrinoDriver.to_sql(feature_probes()[feature][0]))


def test_temporal_buckets_sql():
    seen_at = exp.column("seen_at")
    columns = [TrinoDriver.truncate_temporal(seen_at.copy(), unit, start).as_(f"t_{unit}_{start}")
               for unit in DriverConformance.TRUNCATE_UNITS for start in (DriverConformance.WEEK_STARTS if unit == "week" else (6,))]
    columns += [TrinoDriver.extract_temporal(seen_at.copy(), unit, start).as_(f"x_{unit.replace('-', '_')}_{start}")
                for unit in DriverConformance.EXTRACT_UNITS
                for start in (DriverConformance.WEEK_STARTS if unit == "day-of-week" else (6,))]
    check_golden("temporal-buckets", TrinoDriver.to_sql(exp.select(*columns).from_("conf_people")))


def test_string_matches_sql():
    name = exp.column("name")
    conditions = [TrinoDriver.string_match(name.copy(), kind, value, sensitive)
                  for kind, value, sensitive, _ in DriverConformance.STRING_MATCHES]
    check_golden("string-matches", ";\n".join(TrinoDriver.to_sql(exp.select("name").from_("conf_people").where(c))
                                             for c in conditions))


def test_offset_comes_before_limit():
    """Trino's grammar takes OFFSET before LIMIT (LIMIT ... OFFSET is a syntax error there)."""
    sql = compiled_page = TrinoDriver.to_sql(exp.select("id").from_("t").order_by("id").limit(7).offset(14))
    assert sql.endswith("OFFSET 14 LIMIT 7"), compiled_page


class TestTrinoDeclaration(DriverConformance):
    """The parts of the suite that need no server; the rest skip, naming why."""

    driver = TrinoDriver

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_target(cls):
        pytest.skip("no Trino server can run here: the generated SQL is checked against golden files instead")


def test_details_and_url():
    from core.driver import ConnectionPolicy, connections
    from core.driver.crypto import MASK, mask_details

    details = connections.check(TrinoDriver, {"host": "trino.example.com", "dbname": "hive", "schema_name": "web",
                                              "user": "reader", "password": "pw", "ssl": True}, ConnectionPolicy())
    url = TrinoDriver.url(details)
    assert (url.drivername, url.host, url.port, url.database, url.password) == ("trino", "trino.example.com", 443,
                                                                               "hive/web", None)
    assert TrinoDriver.engine_options(details)["connect_args"]["http_scheme"] == "https"
    assert mask_details(TrinoDriver, details.plain())["password"] == MASK
    with pytest.raises(Invalid) as error:
        connections.check(TrinoDriver, {"host": "h", "dbname": "hive", "user": "u", "password": "pw"}, ConnectionPolicy())
    assert "ssl" in error.value.body["errors"]
