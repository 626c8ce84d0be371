"""A sync stores each table's estimated_row_count as its driver's engine estimates it (SQLite: counted
up to a bound; PostgreSQL: the planner's reltuples; MariaDB/MySQL: information_schema.TABLES; DuckDB: its
own count), so the API's tables and the browse pages show row counts of synced tables. The server
engines skip when their loopback server does not answer."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import create_engine, text

from core.testing import mariadb_data_source, postgres_data_source, sqlite_file, wait_for_sync

SCRIPT = """
CREATE TABLE small (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE big (id INTEGER PRIMARY KEY);
CREATE VIEW small_names AS SELECT name FROM small;
"""


def ok(response):
    assert response.status_code == 200, response.json
    return response.json


def estimates(admin, db: int) -> dict[str, int | None]:
    tables = ok(admin.get(f"/api/database/{db}/metadata"))["tables"]
    return {t["name"].lower(): t["estimated_row_count"] for t in tables}


def register(app, admin, engine: str, details: dict) -> int:
    db = ok(admin.post("/api/database", json={"name": f"Rows {engine}", "engine": engine, "details": details}))["id"]
    wait_for_sync(app)
    return db


def fill(url: str, statements: list[str]) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))
    engine.dispose()


def test_sqlite_tables_are_counted_up_to_a_bound_and_shown_on_the_browse_page(app, admin, monkeypatch):
    from drivers.sqlite import SQLiteDriver
    from tests.plugins.app.test_pages import sign_in

    path = sqlite_file(app, "rows.sqlite", SCRIPT + "INSERT INTO small (name) VALUES ('a'), ('b'), ('c');"
                       + "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500) "
                         "INSERT INTO big SELECT i FROM n;")
    db = register(app, admin, "sqlite", {"db": path})
    assert estimates(admin, db) == {"small": 3, "big": 1500, "small_names": None}  # a view is not counted
    page = sign_in(app).get(f"/browse/databases/{db}").get_data(as_text=True)
    assert re.search(r'<span class="rows">1,500 rows</span>', page) and '<span class="rows">3 rows</span>' in page
    # More rows than the bound: no estimate rather than a whole scan; the others keep theirs.
    monkeypatch.setattr(SQLiteDriver, "COUNT_BOUND", 1000)
    assert admin.post(f"/api/database/{db}/sync_schema").status_code == 200
    wait_for_sync(app)
    assert estimates(admin, db) == {"small": 3, "big": None, "small_names": None}


def test_postgres_tables_take_the_planners_estimate(app, admin):
    with postgres_data_source("tessera_rows") as source:
        fill(source.admin_url, ["CREATE TABLE small (id INTEGER PRIMARY KEY)", "CREATE TABLE never (id INTEGER)",
                                "INSERT INTO small SELECT generate_series(1, 250)", "ANALYZE small",
                                f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{source.details["user"]}"'])
        db = register(app, admin, "postgres", source.details)
        # `never` was never analysed: the planner has no estimate for it yet.
        assert estimates(admin, db) == {"small": 250, "never": None}


def test_mysql_tables_take_information_schemas_count(app, admin):
    with mariadb_data_source("tessera_rows") as source:
        fill(source.admin_url, ["CREATE TABLE small (id INTEGER PRIMARY KEY) ENGINE=InnoDB",
                                "INSERT INTO small VALUES (1), (2), (3), (4)", "ANALYZE TABLE small"])
        db = register(app, admin, "mysql", source.details)
        assert estimates(admin, db) == {"small": 4}


def test_duckdb_tables_take_duckdbs_count(app, admin):
    duckdb = pytest.importorskip("duckdb")
    from pathlib import Path

    folder = Path(app.config["TESSERA_DATA_DIR"]) / "files"  # where file databases may be
    folder.mkdir(parents=True, exist_ok=True)
    path = str(folder / "rows.duckdb")
    conn = duckdb.connect(path)
    conn.execute("CREATE TABLE small AS SELECT range AS id FROM range(42)")
    conn.close()
    db = register(app, admin, "duckdb", {"database_file": path})
    assert estimates(admin, db) == {"small": 42}
