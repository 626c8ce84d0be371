"""CSV downloads written a batch at a time by one `%` format (core.export.csv.format_batch) are byte
for byte what the csv module writes row by row: over the Sample Database, over tables of awkward
values on SQLite, PostgreSQL and MariaDB, and over generated rows."""
from __future__ import annotations

import csv
import io
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text

from core.export import csv as csv_export
from core.export.formatting import text_datetime
from core.testing import mariadb_data_source, postgres_data_source, sqlite_file, wait_for_sync
from tests.plugins.test_databases import add_sample

CLEAN_BATCH = range(2001, 4001)  # the second batch of 2,000 rows holds no awkward value


def both_ways(admin, monkeypatch, body: dict, formatted: bool | None = True, driver: bool | None = None) -> bytes:
    """The download written by the driver itself (where it can), by the batch formatter and by the
    csv module alone, asserted equal; returned. `formatted`: whether some batch passed the batch
    formatter's check (True), none did (False), or either (None); `driver`: whether the driver
    wrote the rows (SQLite's C reader), when not None."""
    from core.query.result import Result

    outcomes, drivers = [], []
    real, real_chunks = csv_export.format_batch, Result.csv_chunks
    monkeypatch.setattr(csv_export, "format_batch", lambda *a: outcomes.append(real(*a) is not None) or real(*a))
    monkeypatch.setattr(Result, "csv_chunks", lambda *a: drivers.append(True) or real_chunks(*a))
    out = []
    for driver_writes, batch_format in ((True, True), (False, True), (False, False)):
        monkeypatch.setattr(csv_export, "DRIVER_WRITES", driver_writes)
        monkeypatch.setattr(csv_export, "BATCH_FORMAT", batch_format)
        response = admin.post("/api/dataset/csv", json=body)
        data = response.get_data()  # read whole before the next request
        response.close()
        assert response.status_code == 200, data
        out.append(data)
    monkeypatch.setattr(csv_export, "DRIVER_WRITES", True)
    monkeypatch.setattr(csv_export, "BATCH_FORMAT", True)
    monkeypatch.setattr(csv_export, "format_batch", real)
    monkeypatch.setattr(Result, "csv_chunks", real_chunks)
    assert out[0] == out[1] == out[2]
    if formatted is not None:
        assert any(outcomes) is formatted, outcomes
    if driver is not None:
        assert bool(drivers) is driver
    return out[0]


def tables(admin, database_id: int) -> dict:
    metadata = admin.get(f"/api/database/{database_id}/metadata").json
    return {t["name"]: t for t in metadata["tables"]}


def export_table(admin, monkeypatch, database_id: int, table: dict, formatted: bool | None = True,
                 driver: bool | None = None, **extra) -> bytes:
    query = {"database": database_id, "type": "query", "query": {"source-table": table["id"]}}
    return both_ways(admin, monkeypatch, {"query": query, **extra}, formatted, driver)


def test_sample_database_tables(app, admin, monkeypatch, sample_database_file):
    database_id = add_sample(app, admin)
    found = tables(admin, database_id)
    assert set(found) == {"ORDERS", "PEOPLE", "PRODUCTS", "REVIEWS"}
    for name, table in found.items():
        # Review bodies are sentences with commas: the csv module quotes them.
        data = export_table(admin, monkeypatch, database_id, table, None if name == "REVIEWS" else True, driver=True)
        assert data.count(b"\n") > 100
    orders = export_table(admin, monkeypatch, database_id, found["ORDERS"]).decode().splitlines()
    assert len(orders) == 18760 + 1
    formatted = export_table(admin, monkeypatch, database_id, found["ORDERS"], False, driver=True, format_rows=True)
    assert b'"' in formatted  # formatted numbers hold commas: those batches go through the csv module


def awkward_rows(count: int = 12000) -> list[tuple]:
    """Clean rows, with batches of awkward ones: 1 (awkward), 2 (clean), 3 onwards (awkward)."""
    labels = ["with,comma", 'with "quote"', "line\nbreak", "cr\rhere", "crlf\r\n", "", None, "None", "NoneNone",
              "ünïcödé ✓ 漢字", "emoji 😀", " lead space", "tab\tin", "semi;colon", "%s %d %% %(x)s"]
    amounts = [0.1 + 0.2, 1e20, 1e-7, 100.0, 2 / 3, 1e16, 123456789.123, -2.5, None, 0.0, 5e-324,
               1.7976931348623157e308, float("inf"), 1e15, 0.0001]
    anything = [-0.0, 2**63 - 1, "12", 1.5, None, -(2**63), b"blob,\xff", "x"]
    ats = ["2024-01-05 13:45:00", "2024-01-05 00:00:00", "2024-01-05 00:00:00.000", "2024-01-05 13:45:00.123",
           "2024-01-05T13:45:00", "2024-01-05", None, "not a date", "2024-01-05 13:45:00+02:00", 2460315.5,
           "2024-01-05 00:00:00.000000", "2024-01-05 13:45", "2024-01-05  3:45:00"]
    rows = []
    for i in range(1, count + 1):
        if i in CLEAN_BATCH or i % 3:
            at = f"2024-{i % 12 + 1:02d}-{i % 28 + 1:02d} {'00:00:00' if i % 5 == 0 else f'{i % 24:02d}:{i % 60:02d}:07'}"
            rows.append((i, f"item {i}", i * 0.25, i, at, f"2023-{i % 12 + 1:02d}-01", i % 2, i * 10**12))
        else:
            k = i // 3
            rows.append((i, labels[k % len(labels)], amounts[k % len(amounts)], anything[k % len(anything)],
                         ats[k % len(ats)], None if k % 4 == 0 else "2024-02-29", [0, 1, None][k % 3],
                         [2**63 - 1, -(2**63), 0, None][k % 4]))
    return rows


AWKWARD_SQLITE = ("CREATE TABLE awkward (id INTEGER PRIMARY KEY, label TEXT, amount REAL, anything, "
                  "at DATETIME, day DATE, flag BOOLEAN, big INTEGER)")


def test_awkward_values_on_sqlite(app, admin, monkeypatch):
    import sqlite3

    path = sqlite_file(app, "awkward.db", AWKWARD_SQLITE + ";")
    conn = sqlite3.connect(path)
    conn.executemany("INSERT INTO awkward VALUES (?, ?, ?, ?, ?, ?, ?, ?)", awkward_rows())
    conn.commit()
    conn.close()
    created = admin.post("/api/database", json={"name": "Awkward", "engine": "sqlite", "details": {"db": path}})
    assert created.status_code == 200, created.json
    wait_for_sync(app)
    database_id = created.json["id"]
    table = tables(admin, database_id)["awkward"]
    data = export_table(admin, monkeypatch, database_id, table, driver=True).decode()
    lines = data.split("\n")
    assert lines[0] == "ID,Label,Amount,Anything,At,Day,Flag,Big"
    assert lines[5] == "5,item 5,1.25,5,2024-06-06,2023-06-01,1,5000000000000"
    assert "\n2001,item 2001,500.25,2001,2024-10-14T09:21:07,2023-10-01,1,2001000000000000\n" in data
    for expected in (",0.30000000000000004,", ",1e+20,", ",1e-07,", ',"with,comma",', ',"with ""quote""",',
                     '"line\nbreak"', ",9223372036854775807", ",-9223372036854775808", ",-0.0,", ",inf,",
                     ",2024-01-05T13:45:00.123,", ",ünïcödé ✓ 漢字,", ",%s %d %% %(x)s,", ",None,"):
        assert expected in data, expected
    # An unquoted CR is what the csv module writes (it quotes only the line terminator's \n).
    reader = list(csv.reader(io.StringIO(data.replace("\r", "<CR>"))))
    assert len(reader) == 12001 and all(len(row) == 8 for row in reader)
    fields = {f["name"]: f["id"] for f in table["fields"]}
    for names in (["label"], ["at"], ["amount", "label"]):
        query = {"database": database_id, "type": "query",
                 "query": {"source-table": table["id"], "fields": [["field", fields[n], None] for n in names]}}
        one = both_ways(admin, monkeypatch, {"query": query}, None).decode()
        if names == ["label"]:
            assert '\n""\n' in one  # a row of one empty cell
    both_ways(admin, monkeypatch, {"query": {"database": database_id, "type": "query",
                                             "query": {"source-table": table["id"]}},
                                   "format_rows": True, "csv_include_bom": True}, None)


def _server_table(url: str, create: str, rows: list[tuple]) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(create))
        conn.execute(text("INSERT INTO awkward VALUES (:a, :b, :c, :d, :e, :f, :g, :h)"),
                     [dict(zip("abcdefgh", row)) for row in rows])
    engine.dispose()


def _server_rows() -> list[tuple]:
    import datetime as dt
    import decimal

    out = []
    for id_, label, amount, _anything, at, day, flag, big in awkward_rows(6500):
        if isinstance(amount, float) and not math.isfinite(amount):
            amount = None
        if isinstance(amount, float) and (amount > 1e300 or 0 < amount < 1e-300):
            amount = 1.5
        when = dt.datetime(2024, 1 + id_ % 12, 1 + id_ % 28, 0 if id_ % 5 == 0 else id_ % 24, 0 if id_ % 5 == 0 else 7)
        out.append((id_, label, amount, decimal.Decimal(id_) / 8, when, when.date(), None if flag is None else bool(flag),
                    big))
    return out


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_awkward_values_on_server_engines(app, admin, monkeypatch, engine):
    source_of = postgres_data_source if engine == "postgres" else mariadb_data_source
    with source_of("tessera_csv") as source:
        if engine == "postgres":
            create = ("CREATE TABLE awkward (id INTEGER PRIMARY KEY, label TEXT, amount DOUBLE PRECISION, "
                      "price NUMERIC(12,3), at TIMESTAMP, day DATE, flag BOOLEAN, big BIGINT)")
        else:
            create = ("CREATE TABLE awkward (id INTEGER PRIMARY KEY, label VARCHAR(100), amount DOUBLE, "
                      "price DECIMAL(12,3), at DATETIME, day DATE, flag BOOLEAN, big BIGINT)")
        _server_table(source.admin_url, create, _server_rows())
        created = admin.post("/api/database", json={"name": engine, "engine": engine, "details": source.details})
        assert created.status_code == 200, created.json
        wait_for_sync(app)
        database_id = created.json["id"]
        table = tables(admin, database_id)["awkward"]
        data = export_table(admin, monkeypatch, database_id, table, driver=False).decode()
        assert ",0.30000000000000004," in data and '"with,comma"' in data and "2024-06-06" in data
        assert len(list(csv.reader(io.StringIO(data.replace("\r", "<CR>"))))) == 6501
        export_table(admin, monkeypatch, database_id, table, None, format_rows=True)
        with app.app_context():
            from core.driver import connections

            connections.dispose(database_id)


# ---- the writer on its own ----------------------------------------------------------------------

CELL = st.one_of(
    st.none(), st.integers(min_value=-(2**70), max_value=2**70), st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.sampled_from(list('ab,;"\n\r %Nonet\t\x00é😀|')), max_size=6),
    st.sampled_from(["None", "2024-01-05 00:00:00", "2024-01-05 13:45:00", "2024-01-05 1:45:00", ""]),
)


@settings(max_examples=600, deadline=None)
@given(width=st.integers(min_value=1, max_value=4), separator=st.sampled_from([",", ";", "\t", "%", "|", "o"]),
       data=st.data())
def test_batches_equal_the_csv_module(width, separator, data):
    rows = data.draw(st.lists(st.tuples(*[CELL] * width), max_size=12))
    temporal = data.draw(st.booleans())
    columns = [{"name": f"c{i}", "display_name": f"C{i}",
                "base_type": "type/DateTime" if temporal and i == 0 else "type/Text"} for i in range(width)]
    options = {"separator": separator}
    monkey = csv_export.BATCH_FORMAT
    try:
        csv_export.BATCH_FORMAT = True
        fast = b"".join(csv_export.write(columns, iter(rows), options))
        csv_export.BATCH_FORMAT = False
        reference = b"".join(csv_export.write(columns, iter(rows), options))
    finally:
        csv_export.BATCH_FORMAT = monkey
    assert fast == reference


def test_canonical_datetimes_match_text_datetime():
    values = [f"2024-01-{d:02d} {h:02d}:{m:02d}:00" for d in range(1, 29) for h in (0, 9) for m in (0, 30)]
    assert csv_export._canonical_datetimes(values) == [text_datetime(v) for v in values]
    assert csv_export._canonical_datetimes(values + [None]) is None
    for odd in ("2024-01-05T13:45:00", "2024-01-05 13:45:0", "2024-01-05 13:45:000", "2024 01-05 13:45:00",
                "2024-01-0513:45:00 ", "2024-01-05\n13:45:00"):
        assert csv_export._canonical_datetimes(values + [odd]) is None, odd


def test_a_file_of_awkward_batches_stops_trying(monkeypatch):
    """After GIVE_UP_AFTER failed batches in a row, the csv module writes the rest directly."""
    calls = []
    real = csv_export.format_batch
    monkeypatch.setattr(csv_export, "format_batch", lambda *a: calls.append(1) or real(*a))
    columns = [{"name": "a", "display_name": "A"}, {"name": "b", "display_name": "B"}]
    rows = [(i, "x,y") for i in range(20000)]
    data = b"".join(csv_export.write(columns, iter(rows), {}))
    assert len(calls) == csv_export.GIVE_UP_AFTER
    assert data.splitlines()[1] == b'0,"x,y"' and len(data.splitlines()) == 20001


@pytest.mark.parametrize("rows", [
    [("a",), (",",)], [("a",), ("",)], [("a",), (None,)], [("x", None), ("None", None)], [("x", 'q"')],
    [("x", "a\nb")], [("x", "a\rb")], [("a;b", 1)], [(None, "None")], [("NoneNone", None)], [(-0.0, 2**70)],
])
def test_each_check_sends_its_batch_to_the_csv_module(rows):
    columns = [{"name": f"c{i}", "display_name": f"C{i}"} for i in range(len(rows[0]))]
    out = []
    for batch_format in (True, False):
        csv_export.BATCH_FORMAT = batch_format
        try:
            out.append(b"".join(csv_export.write(columns, iter(rows), {"separator": ";" if "a;b" in rows[0] else ","})))
        finally:
            csv_export.BATCH_FORMAT = True
    assert out[0] == out[1]


def csv_module(columns: list[dict], rows: list, separator: str = ",") -> bytes:
    """What the csv module writes for rows of strings, numbers and None, with nothing converted."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=separator, lineterminator="\n")
    writer.writerow([c["display_name"] for c in columns])
    writer.writerows(rows)
    return buffer.getvalue().encode()


PLAIN_CELL = st.one_of(st.none(), st.integers(min_value=-(2**70), max_value=2**70),
                       st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, 1, 2.5]),
                       st.text(alphabet=st.sampled_from(list('a,"\n\r N1.0')), max_size=4))


@settings(max_examples=400, deadline=None)
@given(width=st.integers(min_value=1, max_value=3), data=st.data())
def test_strings_and_numbers_are_written_as_the_csv_module_writes_them(width, data):
    """Float columns go through a memo of repr(); the file is still the csv module's, value for value."""
    rows = data.draw(st.lists(st.tuples(*[PLAIN_CELL] * width), max_size=30))
    columns = [{"name": f"c{i}", "display_name": f"C{i}", "base_type": "type/Float"} for i in range(width)]
    assert b"".join(csv_export.write(columns, iter(rows), {})) == csv_module(columns, rows)


def test_float_memo_keeps_signs_types_and_gives_up(monkeypatch):
    columns = [{"name": "x", "display_name": "X", "base_type": "type/Float"}]
    floats = [(0.0,), (-0.0,), (1.0,), (float("nan"),), (None,), (1.0,), (2.5,), (-0.0,), (1e20,), (0.1 + 0.2,)]
    mixed = [(1,), ("2.5",), (True,), (2.5,), (-0.0,)]
    rows = floats * 500 + [(i / 7,) for i in range(6000)] + mixed * 400 + floats * 300
    # A bool among them goes through the column's writer, as it would first in its column.
    shown = [("true",) if type(r[0]) is bool else r for r in rows]
    assert b"".join(csv_export.write(columns, iter(rows), {})) == csv_module(columns, shown)
    monkeypatch.setattr(csv_export._FloatText, "SIZE", 50)
    memo = csv_export._FloatText(csv_export._AsTheyAre(repr))
    assert memo.column([0.5, 1.5, None]) == ["0.5", "1.5", None] and memo.on
    assert memo.column([1, 0.5]) == [1, 0.5]  # an int among them: the values as they are
    memo.column([i / 3 for i in range(1, 41)])
    assert memo.on and len(memo.memo) == 42
    assert memo.column([i / 3 for i in range(1, 101)]) == [repr(i / 3) for i in range(1, 101)]
    assert not memo.on and len(memo.memo) == 50  # full, and still missing
    assert memo.column([0.5]) == [0.5]


def test_driver_written_downloads_keep_the_row_limit_and_leave_the_cache_its_values(app, admin, orders, monkeypatch):
    """A capped download stops at its cap (and says it was cut) whoever writes the text; a result the
    cache taps is written from the values, since the cache keeps them."""
    from sqlalchemy import select

    from core.appdb.db import session as request_session
    from core.appdb.models import User
    from core.query import processor

    query = {"database": orders.database_id, "type": "query", "query": {"source-table": orders.table_id}}
    # Native: the cap is the reader's to keep (an MBQL query's SQL carries it as a LIMIT).
    native = {"database": orders.database_id, "type": "native", "native": {"query": "SELECT * FROM orders"}}
    with app.test_request_context():
        session = request_session()
        user = session.scalar(select(User).where(User.is_superuser.is_(True)))
        files = []
        for driver_writes in (True, False):
            monkeypatch.setattr(csv_export, "DRIVER_WRITES", driver_writes)
            result = processor.open_query(session, user, native, export_format="csv", download_cap=3)
            assert result.writes_csv
            files.append(b"".join(csv_export.write(result.cols, result, {})))
            assert result.truncated and result.row_count == 3
        assert files[0] == files[1] and files[0].count(b"\n") == 4
        result = processor.open_query(session, user, query, export_format="csv")
        kept = []
        result.tap(kept.extend)
        assert not result.writes_csv
        monkeypatch.setattr(csv_export, "DRIVER_WRITES", True)
        data = b"".join(csv_export.write(result.cols, result, {}))
        assert len(kept) == orders.count == data.count(b"\n") - 1 and not result.truncated
