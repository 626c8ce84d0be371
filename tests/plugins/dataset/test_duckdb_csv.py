"""CSV downloads of DuckDB written by DuckDB itself (drivers/duckdb_csv.py) are byte for byte the file
the generic path writes from the Python values: every column type, awkward text, NULLs, remapped
columns, a report time zone, one-column rows and row limits; and the downloads DuckDB's SQL cannot
write that way (formatted rows, blobs) go through Python."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.testing import wait_for_sync
from tests.plugins.dataset.test_csv_batches import both_ways, tables

duckdb = pytest.importorskip("duckdb")

THINGS = """
CREATE TABLE makers (id INTEGER PRIMARY KEY, name VARCHAR);
INSERT INTO makers VALUES (1, 'Acme, Inc.'), (2, 'Blue "Box"'), (3, NULL);
CREATE TABLE things (
    id INTEGER PRIMARY KEY, maker_id INTEGER REFERENCES makers (id), tiny TINYINT, big BIGINT, huge HUGEINT,
    ubig UBIGINT, ratio DOUBLE, small_float FLOAT, price DECIMAL(10, 2), whole DECIMAL(12, 0),
    label VARCHAR, flag BOOLEAN, day DATE, happened TIMESTAMP, at_tz TIMESTAMPTZ,
    clock TIME, ident UUID);
INSERT INTO things
SELECT i, i % 3 + 1, (i % 250 - 125)::TINYINT, i * 1000000007 - 5000000000,
       i::HUGEINT * 17014118346046923173168730371588410,
       (i::UBIGINT * 1844674407370955), i * 0.1 + 1 / 3, (i / 7)::FLOAT, i * 1.25 - 3000, i * 1000,
       'item ' || i, i % 2 = 0, DATE '2024-01-01' + i::INTEGER, TIMESTAMP '2024-01-01 00:00:00' + to_seconds(i * 3607),
       TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_microseconds(i * 3607000123),
       TIME '00:00:00' + to_microseconds(i * 1000003),
       ('00000000-0000-0000-0000-' || lpad(i::VARCHAR, 12, '0'))::UUID
FROM range(1, 6001) t(i);
INSERT INTO things VALUES
    (7001, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (7002, 2, -128, -9223372036854775808, -170141183460469231731687303715884105727, 18446744073709551615,
     '-0.0'::DOUBLE, 'nan', -0.00, 0, 'with,comma', true, DATE '0099-01-05', TIMESTAMP '2024-01-05 00:00:00',
     TIMESTAMPTZ '2024-01-05 00:00:00+00', TIME '00:00:00', NULL),
    (7003, 3, 127, 9223372036854775807, 0, 0, 'inf', '-inf', 99999999.99, -5, 'with "quote"', false,
     'infinity', TIMESTAMP '2024-01-05 13:45:00.123456', TIMESTAMPTZ '2024-01-05 13:45:00.5+05:30',
     TIME '23:59:59.999999', NULL),
    (7004, NULL, 0, 0, 1, 1, 1e16, 1e-5, 0.01, 1, 'line' || chr(10) || 'break', NULL, '-infinity',
     'infinity', 'infinity', TIME '13:45:00.000001', NULL),
    (7005, NULL, 1, 1, 1, 1, 1e15, 0.1, 0.10, 1, 'cr' || chr(13) || 'here', NULL, DATE '2024-02-29',
     '-infinity', '-infinity', NULL, NULL),
    (7006, NULL, 1, 1, 1, 1, 123456789.123, 2.5, 1234567.89, 1, '', NULL, NULL, TIMESTAMP '1960-06-01 00:00:00',
     NULL, NULL, NULL),
    (7007, NULL, 1, 1, 1, 1, 0.30000000000000004, 1.7e38, -0.5, 1, 'ünïcödé ✓ 漢字, 😀', NULL, NULL,
     TIMESTAMP '1960-06-01 00:00:00.5', TIMESTAMPTZ '1969-12-31 23:59:59.999999+00', NULL, NULL),
    (7008, NULL, 1, 1, 1, 1, 5e-324, 1e-45, 10.00, 1, 'None', NULL, NULL, NULL, NULL, NULL, NULL),
    (7009, NULL, 1, 1, 1, 1, 1.7976931348623157e308, 3.4e38, 0.05, 1, 'semi;colon	tab', NULL, NULL, NULL, NULL,
     NULL, NULL);
"""


@pytest.fixture
def things(app, admin):
    folder = Path(app.config["TESSERA_DATA_DIR"]) / "files"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "things.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute(THINGS)
    conn.close()
    created = admin.post("/api/database", json={"name": "Things", "engine": "duckdb",
                                                "details": {"database_file": str(path)}})
    assert created.status_code == 200, created.json
    wait_for_sync(app)
    database_id = created.json["id"]
    yield database_id, tables(admin, database_id)
    from core.driver import connections

    with app.app_context():
        connections.dispose(database_id)


def native(database_id: int, sql: str) -> dict:
    return {"query": {"database": database_id, "type": "native", "native": {"query": sql}}}


def table_query(database_id: int, table: dict, **query) -> dict:
    return {"query": {"database": database_id, "type": "query", "query": {"source-table": table["id"], **query}}}


def test_every_type_byte_for_byte(admin, monkeypatch, things):
    database_id, found = things
    data = both_ways(admin, monkeypatch, table_query(database_id, found["things"]), None, driver=True).decode()
    lines = data.split("\n")
    assert lines[0].startswith("ID,Maker ID,Tiny,")
    assert len(data.splitlines()) > 6000
    for expected in (",-0.0,", ",nan,", ",inf,", ",1e+16,", ",9.999999747378752e-06,", '"with,comma"',
                     '"with ""quote"""',
                     '"line\nbreak"', ",0099-01-05,", ",9999-12-31,", ",2024-01-05T13:45:00.123456,",
                     "2024-01-05T08:15:00.500000+00:00", ",23:59:59.999999,", ",1960-06-01,",
                     ",99999999.99,", ",1234567.89,", ",true,", ",false,", "00000000-0000-0000-0000-000000000007"):
        assert expected in data, expected
    # The same through native SQL, and with a separator that is a letter of nothing above.
    both_ways(admin, monkeypatch, native(database_id, "SELECT * FROM things ORDER BY id"), None, driver=True)
    semicolons = {**native(database_id, "SELECT label, happened, ratio FROM things"), "separator": ";"}
    both_ways(admin, monkeypatch, semicolons, None, driver=True)


def test_one_column_limits_and_time_zone(admin, monkeypatch, things):
    database_id, found = things
    one = both_ways(admin, monkeypatch, native(database_id, "SELECT label FROM things ORDER BY id"), None,
                    driver=True).decode()
    assert '\n""\n' in one  # NULLs and '' as the only cell
    limited = both_ways(admin, monkeypatch, native(database_id, "SELECT * FROM things ORDER BY id LIMIT 2500"),
                        None, driver=True)
    assert limited.count(b"\n") == 2501
    assert admin.put("/api/setting/report-timezone", json={"value": "Asia/Kolkata"}).status_code == 204
    zoned = both_ways(admin, monkeypatch, table_query(database_id, found["things"]), None, driver=True).decode()
    assert "+00:00" in zoned or "+05:30" in zoned
    both_ways(admin, monkeypatch, native(database_id, "SELECT at_tz, at_tz AT TIME ZONE 'America/St_Johns' AS local "
                                                      "FROM things"), None, driver=True)


def test_remapped_column(admin, monkeypatch, things):
    database_id, found = things
    maker = next(f for f in found["things"]["fields"] if f["name"] == "maker_id")
    name = next(f for f in found["makers"]["fields"] if f["name"] == "name")
    admin.put(f"/api/field/{maker['id']}", json={"semantic_type": "type/FK", "fk_target_field_id": next(
        f["id"] for f in found["makers"]["fields"] if f["name"] == "id")})
    remap = admin.post(f"/api/field/{maker['id']}/dimension", json={"type": "external", "name": "Maker",
                                                                    "human_readable_field_id": name["id"]})
    assert remap.status_code == 200, remap.json
    data = both_ways(admin, monkeypatch, table_query(database_id, found["things"]), None, driver=True).decode()
    header = data.split("\n")[0].split(",")
    assert header[1] == "Maker" and "Maker ID" not in header
    assert '"Acme, Inc."' in data and '"Blue ""Box"""' in data


def test_what_sql_cannot_write_goes_through_python(admin, monkeypatch, things):
    database_id, found = things
    formatted = both_ways(admin, monkeypatch, {**table_query(database_id, found["things"]), "format_rows": True},
                          None, driver=False)
    assert b"January" in formatted
    both_ways(admin, monkeypatch, native(database_id, "SELECT id, 'ab'::BLOB AS b, INTERVAL 3 DAY AS i, "
                                                      "FROM things"), None, driver=False)
    both_ways(admin, monkeypatch, native(database_id, "SELECT id, (id * 1.00001)::DECIMAL(30, 5) AS wide FROM things"),
              None, driver=False)


def test_native_statements_that_cannot_be_wrapped(admin, monkeypatch, things):
    database_id, _ = things
    ended = both_ways(admin, monkeypatch, native(database_id, "SELECT id, label FROM things ORDER BY id;\n  "), None,
                      driver=True)
    assert ended.count(b"\n") > 6000
    commented = both_ways(admin, monkeypatch, native(database_id, "SELECT id FROM things -- every id"), None,
                          driver=True)
    assert commented.startswith(b"id\n1\n")
    for sql in ("SHOW TABLES", "DESCRIBE things", "SELECT id, 'a;b' AS odd FROM things"):
        both_ways(admin, monkeypatch, native(database_id, sql), None, driver=False)
