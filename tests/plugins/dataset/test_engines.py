"""The native template-tag cases through POST /api/dataset on the four engines' real drivers: SQLite,
DuckDB, PostgreSQL and MariaDB give the same ids, equal to what Python computes, and hostile values
stay values. (Relative-date cases need a fixed clock and are covered in tests/core/query.)"""
from __future__ import annotations

import copy
import sqlite3
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from core.appdb.models import Database, Field, Table
from core.driver import crypto
from core.testing import mariadb_data_source, postgres_data_source
from tests.core.query.test_native_engines import CASES, ROWS

# One xdist worker runs this module (make test: --dist loadgroup): its module-scoped database on each engine is loaded once.
pytestmark = pytest.mark.xdist_group("dataset-engines")

ENGINE_CASES = [c for c in CASES if not any(p.get("type") == "date/relative" for p in c[2])]
COLUMNS = [("id", "type/Integer"), ("category", "type/Text"), ("price", "type/Float"),
           ("created_at", "type/DateTime"), ("active", "type/Boolean")]


def _fill(url: str, create: str, table: str) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(create))
        conn.execute(text(f"INSERT INTO {table} VALUES (:a, :b, :c, :d, :e)"),
                     [dict(zip("abcde", row)) for row in ROWS])
    engine.dispose()


def _local_source(engine: str, files: Path) -> tuple[dict, str | None]:
    if engine == "sqlite":
        path = files / f"orders_{uuid.uuid4().hex[:6]}.db"
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE orders (id INTEGER, category TEXT, price REAL, created_at TIMESTAMP, active BOOLEAN)")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
                         [(i, c, p, d.isoformat(sep=" "), a) for i, c, p, d, a in ROWS])
        conn.commit()
        conn.close()
        return {"db": str(path)}, None
    duckdb = pytest.importorskip("duckdb")
    path = files / f"orders_{uuid.uuid4().hex[:6]}.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE orders (id INTEGER, category VARCHAR, price DOUBLE, created_at TIMESTAMP, active BOOLEAN)")
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", ROWS)
    conn.close()
    return {"database_file": str(path)}, "main"


@pytest.fixture(scope="module", params=["sqlite", "duckdb", "postgres", "mysql"])
def server_source(request):
    """The server engines' throwaway databases live for the module (creating one costs a second);
    the file engines' are made per test inside that test's allowed directory."""
    if request.param in ("sqlite", "duckdb"):
        yield request.param, None, None
        return
    if request.param == "postgres":
        with postgres_data_source("tessera_qp") as ds:
            _fill(ds.admin_url, "CREATE TABLE orders (id INTEGER, category TEXT, price DOUBLE PRECISION, "
                                "created_at TIMESTAMP, active BOOLEAN)", "orders")
            yield request.param, ds.details, "public"
    else:
        with mariadb_data_source("tessera_qp") as ds:
            _fill(ds.admin_url, "CREATE TABLE orders (id INTEGER, category VARCHAR(50), price DOUBLE, "
                                "created_at DATETIME, active BOOLEAN)", "orders")
            yield request.param, ds.details, None


@pytest.fixture
def engine_db(server_source, app, admin):
    engine, details, schema = server_source
    files = Path(app.config["TESSERA_DATA_DIR"]) / "files"
    files.mkdir(exist_ok=True)
    if details is None:
        details, schema = _local_source(engine, files)
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        database = Database(name=engine, engine=engine, details=crypto.encrypt_details(details),
                            initial_sync_status="complete")
        session.add(database)
        session.flush()
        table = Table(db_id=database.id, name="orders", schema=schema, display_name="Orders")
        session.add(table)
        session.flush()
        fields = {}
        for position, (name, base) in enumerate(COLUMNS):
            field = Field(table_id=table.id, name=name, display_name=name, base_type=base, effective_type=base,
                          position=position, database_position=position)
            session.add(field)
            session.flush()
            fields[name] = field.id
        database_id = database.id
    yield database_id, fields, schema
    with app.app_context():
        from core.driver import connections

        connections.dispose(database_id)


def _with_ids(tags: dict, fields: dict) -> dict:
    tags = copy.deepcopy(tags)
    for tag in tags.values():
        dimension = tag.get("dimension")
        if dimension:
            tag["dimension"] = ["field", fields[dimension[1]], None]
    return tags


def test_native_cases_agree_on_every_engine(admin, engine_db):
    database_id, fields, schema = engine_db
    table = f"{schema}.orders" if schema else "orders"
    for sql, tags, params, expected in ENGINE_CASES:
        body = {"database": database_id, "type": "native",
                "native": {"query": sql.replace("{T}", table), "template-tags": _with_ids(tags, fields)},
                "parameters": params}
        if any(t.get("type") == "snippet" for t in tags.values()):
            admin.post("/api/native-query-snippet", json={"name": "active_only", "content": "active = {{flag}}"})
        if any(t.get("type") == "card" for t in tags.values()):
            continue  # card references need a saved card; covered with a fake resolver in tests/core/query
        response = admin.post("/api/dataset", json=body)
        assert response.status_code == 202, (sql, params, response.json)
        assert sorted(r[0] for r in response.json["data"]["rows"]) == expected, (sql, params)
    count = admin.post("/api/dataset", json={"database": database_id, "type": "native",
                                             "native": {"query": f"SELECT count(*) FROM {table}"}}).json
    assert count["data"]["rows"] == [[len(ROWS)]]


def test_date_exclusions_on_every_engine(admin, engine_db):
    """date/all-options exclusions use the driver's own date-part extraction."""
    database_id, fields, schema = engine_db
    table = f"{schema}.orders" if schema else "orders"
    tags = _with_ids({"d": {"id": "d", "name": "d", "display-name": "D", "type": "dimension",
                            "widget-type": "date/all-options", "dimension": ["field", "created_at", None]}}, fields)
    cases = [("exclude-months-Jan", [r[0] for r in ROWS if r[3].month != 1]),
             ("exclude-days-Fri-Sun", [r[0] for r in ROWS if r[3].isoweekday() not in (5, 7)]),
             ("exclude-hours-0-12", [r[0] for r in ROWS if r[3].hour not in (0, 12)]),
             ("exclude-quarters-2", [r[0] for r in ROWS if (r[3].month - 1) // 3 + 1 != 2])]
    for value, expected in cases:
        body = {"database": database_id, "type": "native",
                "native": {"query": f"SELECT id FROM {table} WHERE {{{{d}}}}", "template-tags": tags},
                "parameters": [{"type": "date/all-options", "target": ["dimension", ["template-tag", "d"]],
                                "value": value}]}
        response = admin.post("/api/dataset", json=body)
        assert response.status_code == 202, (value, response.json)
        assert sorted(r[0] for r in response.json["data"]["rows"]) == sorted(expected), value


SLOW = {
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c",
    "duckdb": "SELECT count(*) FROM range(1000000000) a, range(1000) b WHERE a.range + b.range = -1",
    "postgres": "SELECT count(*) FROM generate_series(1, 1000000000) a",
    "mysql": "SELECT MAX(MD5(seq)) FROM seq_1_to_10000000000",  # MariaDB's sequence engine
}


def test_database_timeout_stops_statements(app, admin, engine_db):
    import time

    database_id, _fields, _schema = engine_db
    state = app.extensions["tessera"]
    with state.db.session() as session:
        database = session.get(Database, database_id)
        database.settings = {"query-timeout-seconds": 1}
        engine = database.engine
    started = time.monotonic()
    response = admin.post("/api/dataset", json={"database": database_id, "type": "native",
                                                "native": {"query": SLOW[engine]}})
    elapsed = time.monotonic() - started
    assert response.status_code == 400, response.json
    assert response.json["error_type"] == "timed-out", response.json
    assert elapsed < 8
    # The pooled connection still answers afterwards.
    again = admin.post("/api/dataset", json={"database": database_id, "type": "native",
                                             "native": {"query": "SELECT 1"}})
    assert again.json["data"]["rows"] == [[1]]
