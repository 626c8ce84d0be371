"""One app per test module for the x-ray tests: the Sample Database synced on SQLite, and the same
rows copied into a DuckDB file synced as a second database (sync and the copy cost seconds, the
x-rays milliseconds, so the tests share them and keep to reading; tests that write use their own
names)."""
from __future__ import annotations

import csv
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.testing import FAST_HASHING, make_user, setup_admin, wait_for_sync

DUCKDB_SCHEMA = """
CREATE TABLE PRODUCTS (ID INTEGER PRIMARY KEY, EAN VARCHAR, TITLE VARCHAR, CATEGORY VARCHAR, VENDOR VARCHAR,
  PRICE DOUBLE, RATING DOUBLE, CREATED_AT TIMESTAMP);
CREATE TABLE PEOPLE (ID INTEGER PRIMARY KEY, ADDRESS VARCHAR, EMAIL VARCHAR, PASSWORD VARCHAR, NAME VARCHAR,
  CITY VARCHAR, LONGITUDE DOUBLE, STATE VARCHAR, SOURCE VARCHAR, BIRTH_DATE DATE, ZIP VARCHAR, LATITUDE DOUBLE,
  CREATED_AT TIMESTAMP);
CREATE TABLE ORDERS (ID INTEGER PRIMARY KEY, USER_ID INTEGER REFERENCES PEOPLE(ID),
  PRODUCT_ID INTEGER REFERENCES PRODUCTS(ID), SUBTOTAL DOUBLE, TAX DOUBLE, TOTAL DOUBLE, DISCOUNT DOUBLE,
  CREATED_AT TIMESTAMP, QUANTITY INTEGER);
CREATE TABLE REVIEWS (ID INTEGER PRIMARY KEY, PRODUCT_ID INTEGER REFERENCES PRODUCTS(ID), REVIEWER VARCHAR,
  RATING INTEGER, BODY VARCHAR, CREATED_AT TIMESTAMP);
"""
TABLES = ("PRODUCTS", "PEOPLE", "ORDERS", "REVIEWS")


def duckdb_copy(source: Path, target: Path) -> None:
    """The Sample Database's rows in a DuckDB file with the same tables and foreign keys (through CSV:
    DuckDB reads it natively, and no extension has to be downloaded)."""
    import duckdb

    src = sqlite3.connect(source)
    conn = duckdb.connect(str(target))
    conn.execute(DUCKDB_SCHEMA)
    for table in TABLES:
        text = target.parent / f"{table}.csv"
        with open(text, "w", newline="") as out:
            csv.writer(out).writerows(src.execute(f"SELECT * FROM {table}"))
        conn.execute(f"INSERT INTO {table} SELECT * FROM read_csv(?, header = false, nullstr = '', "
                     "all_varchar = true)", [str(text)])
        text.unlink()
    conn.close()
    src.close()


@dataclass
class Shop:
    app: object
    admin: object
    ids: dict            # "db", "ORDERS", "ORDERS.TOTAL", ... on SQLite
    duck: dict | None    # the same on DuckDB (None without the duckdb module)

    def get(self, path: str, client=None):
        return (client or self.admin).get(path)


def metadata_ids(admin, db_id: int) -> dict:
    ids = {"db": db_id}
    for table in admin.get(f"/api/database/{db_id}/metadata").json["tables"]:
        ids[table["name"]] = table["id"]
        for field in table["fields"]:
            ids[f"{table['name']}.{field['name']}"] = field["id"]
    return ids


@pytest.fixture(scope="module")
def shop(tmp_path_factory, app_db_template, sample_database_template):
    from core.assembly.app import create_app
    from core.sync.sample_data import FILE_NAME, directory

    data_dir = tmp_path_factory.mktemp("xrays")
    shutil.copy(app_db_template, data_dir / "tessera.db")
    app = create_app({"TESSERA_DATA_DIR": str(data_dir), "TESSERA_DB_URL": f"sqlite:///{data_dir / 'tessera.db'}",
                      "TESSERA_PLUGINS_AUTOLOAD": False, "TESSERA_RUN_MIGRATIONS": False, **FAST_HASHING})
    directory(data_dir).mkdir(parents=True, exist_ok=True)
    shutil.copy(sample_database_template, directory(data_dir) / FILE_NAME)
    admin = setup_admin(app)
    db_id = admin.post("/api/database/sample_database").json["id"]
    duck = None
    try:
        import duckdb  # noqa: F401
    except ImportError:
        duckdb = None
    if duckdb is not None:
        files = data_dir / "files"
        files.mkdir(exist_ok=True)
        duckdb_copy(sample_database_template, files / "sample.duckdb")
        response = admin.post("/api/database", json={"name": "Sample on DuckDB", "engine": "duckdb",
                                                     "details": {"database_file": str(files / "sample.duckdb")}})
        assert response.status_code == 200, response.json
        duck_id = response.json["id"]
    wait_for_sync(app)
    if duckdb is not None:
        duck = metadata_ids(admin, duck_id)
    yield Shop(app, admin, metadata_ids(admin, db_id), duck)
    app.extensions["tessera"].db.dispose()


@pytest.fixture(scope="module")
def reader(shop):
    """An ordinary user (All Users' default rights: the sample data readable)."""
    return make_user(shop.app, email="reader@example.com")
