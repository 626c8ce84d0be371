"""The SQLite driver's C row reader (drivers.sqlite_rows): the same rows and errors as the sqlite3
module's cursor, CSV text equal to core.export.csv's own, the driver's timeout and lockdown still in
force, row limits kept, and the sqlite3 module's cursor taking over when the reader is not there."""
from __future__ import annotations

import sqlite3
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.driver import connections
from core.driver.records import CsvLayout, QueryError, QueryTimeout
from core.driver.sources import ConnectionPolicy
from core.export import csv as csv_export
from drivers import sqlite_rows
from drivers.sqlite import SQLiteDriver

native = sqlite_rows.native


def test_the_reader_is_built_and_used():
    # setup.py builds it wherever a C compiler and sqlite3.h exist (libsqlite3-dev on Debian), as on CI.
    assert native is not None, "drivers._sqlite_rows was not built: install a C compiler and sqlite3.h, then make install"
    assert native.sqlite_version == sqlite3.sqlite_version


VALUE = st.one_of(
    st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.floats(allow_nan=False),
    st.text(max_size=8), st.binary(max_size=6),
    st.sampled_from(["2024-01-05 13:45:00", "2024-01-05 00:00:00", "2024-01-05 00:00:00.000", "2024-01-05",
                     "2024-01-05 13:45:00,5", "2024-01-05 1:45:00", "2024-01-05 00:00:00.000000", "é2024-01-05 1"]),
)


def table_of(rows: list[tuple], width: int) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE t ({', '.join(f'c{i}' for i in range(width))})")
    conn.executemany(f"INSERT INTO t VALUES ({', '.join('?' * width)})", rows)
    return conn


def read_all(statement, size: int = 7) -> list[tuple]:
    out = []
    while batch := statement.fetch(size):
        out.extend(batch)
    return out


@settings(max_examples=150, deadline=None)
@given(width=st.integers(min_value=1, max_value=4), data=st.data())
def test_rows_are_the_cursor_s(width, data):
    rows = data.draw(st.lists(st.tuples(*[VALUE] * width), max_size=25))
    conn = table_of(rows, width)
    statement = native.Statement(conn, "SELECT * FROM t ORDER BY rowid", ())
    assert statement.columns == tuple(f"c{i}" for i in range(width))
    assert read_all(statement) == conn.execute("SELECT * FROM t ORDER BY rowid").fetchall()
    assert statement.fetch(5) == []  # and stays at the end


ISO_VALUE = st.one_of(VALUE, st.sampled_from(["2024-01-05 13:45:00é", "é024-01-05 13:45:00", "aaaaaaaaaa bbbbbbbbb",
                                              "2024-01-05 13:45:00 +01:00", "2024-01-05T13:45:00"]),
                     st.text(alphabet=" 0é-:T", min_size=17, max_size=21))


@settings(max_examples=150, deadline=None)
@given(width=st.integers(min_value=1, max_value=3), data=st.data())
def test_iso_text_columns_encode_as_the_cursor_s_rows(width, data):
    # The reader's ISO-8601 temporal text (iso_text) is what encode_rows writes from the cursor's rows.
    from core.query.results import encode_rows

    rows = data.draw(st.lists(st.tuples(*[ISO_VALUE] * width), min_size=1, max_size=25))
    temporal = data.draw(st.lists(st.integers(min_value=0, max_value=width - 1), unique=True))
    cols = [{"base_type": "type/DateTime" if i in temporal else "type/Text"} for i in range(width)]
    conn = table_of(rows, width)
    statement = native.Statement(conn, "SELECT * FROM t ORDER BY rowid", ())
    statement.iso_text(temporal)
    expected = encode_rows(cols, conn.execute("SELECT * FROM t ORDER BY rowid").fetchall())
    assert encode_rows(cols, read_all(statement), iso_columns=frozenset(temporal)) == expected


JSON_VALUE = st.one_of(
    ISO_VALUE, st.floats(allow_nan=True, allow_infinity=True), st.floats(min_value=-1e-4, max_value=1e-4),
    st.sampled_from([1e-5, -1.5e-5, 1e-6, 1e16, -1e16, 1e22, 1e-300, 5e-324, -0.0, 2**53, -(2**53), 2**53 - 1]),
    st.text(alphabet=st.characters(max_codepoint=0x2030, exclude_categories=("Cs",)), max_size=10),
)


@settings(max_examples=200, deadline=None)
@given(width=st.integers(min_value=1, max_value=4), js_int_to_string=st.booleans(), data=st.data())
def test_json_text_is_what_encode_rows_writes_from_the_cursor_s_rows(width, js_int_to_string, data):
    # Byte for byte: orjson's escapes and float form, big integers as text when JavaScript would lose
    # them, blobs through the Python callable, ISO temporal text, NaN and infinities as null.
    from core.query.results import JS_MAX_SAFE_INT, cell_json, encode_rows

    rows = data.draw(st.lists(st.tuples(*[JSON_VALUE] * width), max_size=25))
    temporal = data.draw(st.lists(st.integers(min_value=0, max_value=width - 1), unique=True))
    cols = [{"base_type": "type/DateTime" if i in temporal else "type/*"} for i in range(width)]
    conn = table_of(rows, width)
    expected = encode_rows(cols, conn.execute("SELECT * FROM t ORDER BY rowid").fetchall(), js_int_to_string)
    statement = native.Statement(conn, "SELECT * FROM t ORDER BY rowid", ())
    statement.iso_text(temporal)
    text, count, more, firsts = statement.json(None, JS_MAX_SAFE_INT if js_int_to_string else 0,
                                               cell_json(js_int_to_string))
    assert (text, count, more) == (expected, len(rows), False)
    cursor_rows = conn.execute("SELECT * FROM t ORDER BY rowid").fetchall()
    assert firsts == tuple(next((row[i] for row in cursor_rows if row[i] is not None), None) for i in range(width))


def test_json_stops_at_the_row_limit_and_says_whether_rows_remain():
    conn = table_of([(i, f"r{i}") for i in range(5)], 2)
    statement = native.Statement(conn, "SELECT * FROM t ORDER BY rowid", ())
    assert statement.json(3, 0, bytes) == (b'[[0,"r0"],[1,"r1"],[2,"r2"]]', 3, True, (0, "r0"))
    assert native.Statement(conn, "SELECT * FROM t", ()).json(5, 0, bytes)[1:3] == (5, False)
    assert native.Statement(conn, "SELECT * FROM t WHERE 0", ()).json(None, 0, bytes) == (b"[]", 0, False, (None, None))


def test_json_fails_on_text_that_is_not_utf8_as_the_cursor_does():
    conn = sqlite3.connect(":memory:")
    sql = "SELECT CAST(x'ff' AS TEXT)"
    with pytest.raises(sqlite3.OperationalError, match="Could not decode to UTF-8"):
        conn.execute(sql).fetchall()
    with pytest.raises(sqlite3.OperationalError, match="Could not decode to UTF-8"):
        native.Statement(conn, sql, ()).json(None, 0, bytes)


def test_parameters_are_bound_as_the_cursor_binds_them():
    conn = sqlite3.connect(":memory:")
    values = (None, 2**63 - 1, -1.5, "x'); DROP TABLE t; --", b"\x00\xff", True)
    sql = "SELECT ?, ?, ?, ?, ?, ?, typeof(?)"
    statement = native.Statement(conn, sql, values + (values[4],))
    assert statement.fetch(2) == conn.execute(sql, values + (values[4],)).fetchall()
    with pytest.raises(OverflowError):
        native.Statement(conn, "SELECT ?", (2**64,))
    with pytest.raises(sqlite3.ProgrammingError, match="not supported"):
        native.Statement(conn, "SELECT ?", (object(),))
    with pytest.raises(sqlite3.ProgrammingError, match="Incorrect number of bindings"):
        native.Statement(conn, "SELECT ?, ?", (1,))


@pytest.mark.parametrize("sql", ["SELECT * FROM missing", "SELECT 1 +", "SELECT nosuchfunction(1)"])
def test_errors_are_the_cursor_s(sql):
    conn = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.Error) as expected:
        conn.execute(sql)
    with pytest.raises(type(expected.value)) as got:
        native.Statement(conn, sql, ())
    assert str(got.value) == str(expected.value)


def test_one_statement_only_and_never_on_a_closed_connection():
    conn = sqlite3.connect(":memory:")
    assert native.Statement(conn, "SELECT 1; -- a comment\n/* and another */ ;", ()).fetch(3) == [(1,)]
    with pytest.raises(sqlite3.ProgrammingError, match="one statement at a time"):
        native.Statement(conn, "SELECT 1; SELECT 2", ())
    conn.close()
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        native.Statement(conn, "SELECT 1", ())


def test_text_that_is_not_utf8_fails_as_with_the_cursor():
    conn = sqlite3.connect(":memory:")
    sql = "SELECT CAST(X'61FF62' AS TEXT)"
    with pytest.raises(sqlite3.OperationalError, match="Could not decode to UTF-8"):
        conn.execute(sql).fetchall()
    with pytest.raises(sqlite3.OperationalError, match="Could not decode to UTF-8"):
        native.Statement(conn, sql, ()).fetch(1)
    statement = native.Statement(conn, sql, ())
    statement.layout(",", False, (0,), (None,))
    with pytest.raises(sqlite3.OperationalError, match="Could not decode to UTF-8"):
        statement.csv(1000, None)


# ---- CSV text ----------------------------------------------------------------------------------


def csv_text(statement, layout: CsvLayout, max_bytes: int = 50, max_rows=None) -> bytes:
    statement.layout(layout.separator, layout.quote_cr, tuple(sqlite_rows.KIND_CODES[k] for k in layout.kinds),
                     layout.calls)
    out = []
    while True:
        text, count, more = statement.csv(max_bytes, max_rows)
        assert text.count(b"\n") >= count  # a quoted cell may hold more newlines
        out.append(text)
        if not more:
            return b"".join(out)


@settings(max_examples=200, deadline=None)
@given(width=st.integers(min_value=1, max_value=4), separator=st.sampled_from([",", ";", "\t", "|", "o", "%"]),
       format_rows=st.booleans(), data=st.data())
def test_csv_is_the_export_writer_s(width, separator, format_rows, data):
    """For any values SQLite may hold, the C text is what core.export.csv writes from the cursor's values."""
    rows = data.draw(st.lists(st.tuples(*[VALUE] * width), max_size=25))
    temporal = data.draw(st.lists(st.booleans(), min_size=width, max_size=width))
    columns = [{"name": f"c{i}", "display_name": f"C{i}",
                "base_type": "type/DateTime" if temporal[i] else data.draw(st.sampled_from(["type/Text", "type/Float"]))}
               for i in range(width)]
    options = {"separator": separator, "format_rows": format_rows}
    conn = table_of(rows, width)
    layout = csv_export.layout(columns, options)
    assert layout.separator == separator
    text = csv_text(native.Statement(conn, "SELECT * FROM t ORDER BY rowid", ()), layout)
    fetched = conn.execute("SELECT * FROM t ORDER BY rowid").fetchall()
    for batch_format in (True, False):
        csv_export.BATCH_FORMAT = batch_format
        try:
            reference = b"".join(csv_export.write(columns, iter(fetched), options))
        finally:
            csv_export.BATCH_FORMAT = True
        header, _, body = reference.partition(b"\n")
        assert text == body, (header, rows)


def test_csv_chunks_stop_at_the_byte_and_row_limits():
    conn = table_of([(i, f"name {i}") for i in range(100)], 2)
    statement = native.Statement(conn, "SELECT * FROM t ORDER BY rowid", ())
    statement.layout(",", False, (0, 0), (None, None))
    text, count, more = statement.csv(20, None)
    assert (text, count, more) == (b"0,name 0\n1,name 1\n2,name 2\n", 3, True)  # stops once past 20 bytes
    text, count, more = statement.csv(10**6, 5)
    assert count == 5 and text.startswith(b"3,name 3\n") and text.endswith(b"7,name 7\n") and more
    text, count, more = statement.csv(10**6, None)
    assert count == 92 and text.endswith(b"99,name 99\n") and not more
    assert statement.csv(10**6, None) == (b"", 0, False)


def test_layouts_that_cannot_be_written_are_refused():
    conn = table_of([(1,)], 1)
    statement = native.Statement(conn, "SELECT * FROM t", ())
    for separator in ('"', "\n", "ab", "é"):
        with pytest.raises(ValueError):
            statement.layout(separator, False, (0,), (None,))
    with pytest.raises(ValueError):
        statement.layout(",", False, (0, 0), (None, None))
    with pytest.raises(ValueError):
        statement.layout(",", False, (7,), (None,))
    with pytest.raises(RuntimeError):
        native.Statement(conn, "SELECT * FROM t", ()).csv(100, None)
    assert csv_export.layout([{"name": "a"}], {"separator": "ab"}) is None


# ---- through the driver: lockdown, timeout, fallback -----------------------------------------------


@pytest.fixture
def engine(tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    db = sqlite3.connect(files / "numbers.db")
    db.execute("CREATE TABLE numbers (n INTEGER, label TEXT)")
    db.executemany("INSERT INTO numbers VALUES (?, ?)", [(i, f"n{i}") for i in range(5000)])
    db.commit()
    db.close()
    app_db = tmp_path / "app.db"
    sqlite3.connect(app_db).close()
    policy = ConnectionPolicy(file_dirs=(files,), app_db_url=f"sqlite:///{app_db}", forbidden_files=(app_db,))
    details = connections.check(SQLiteDriver, {"db": str(files / "numbers.db")}, policy)
    engine = connections.build_engine(SQLiteDriver, details)
    yield engine
    engine.dispose()


SLOW = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000) "
        "SELECT x, x * 2 FROM c")


def test_the_timeout_stops_the_reader_at_its_first_row_and_later(engine):
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        with SQLiteDriver.execute(engine, "SELECT count(*) FROM (" + SLOW + ")", timeout=0.3):
            pass
    assert time.monotonic() - started < 5
    layout = CsvLayout(",", False, ("plain", "plain"), (None, None))
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        with SQLiteDriver.execute(engine, SLOW, timeout=0.3) as result:
            assert result.csv is not None
            while result.csv(layout, 1 << 16, None)[2]:
                pass
    assert time.monotonic() - started < 5
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        with SQLiteDriver.execute(engine, SLOW, timeout=0.3) as result:
            assert result.json is not None  # a card query's rows are written as JSON by the reader
            result.json(None, 0, bytes)
    assert time.monotonic() - started < 5
    with SQLiteDriver.execute(engine, "SELECT count(*) FROM numbers", timeout=5) as result:
        assert list(result.rows) == [(5000,)]  # the handler is gone once the statement is done


def test_the_lockdown_holds_for_the_reader(engine, tmp_path):
    with pytest.raises(QueryError):
        with SQLiteDriver.execute(engine, f"ATTACH DATABASE '{tmp_path / 'x.db'}' AS x"):
            pass
    with pytest.raises(QueryError):
        with SQLiteDriver.execute(engine, "SELECT load_extension('x')"):
            pass
    assert not (tmp_path / "x.db").exists()


def test_named_parameters_and_escaped_colons(engine):
    sql = r"SELECT :a AS a, '\:b' AS b, :a + n AS c FROM numbers WHERE label = :label"
    with SQLiteDriver.execute(engine, sql, {"a": 10, "label": "n7"}) as result:
        assert [c.name for c in result.columns] == ["a", "b", "c"]
        assert list(result.rows) == [(10, ":b", 17)]
    with pytest.raises(QueryError, match="bind parameter 'label'"):
        with SQLiteDriver.execute(engine, sql, {"a": 1}):
            pass


def test_max_rows_and_an_abandoned_result(engine):
    with SQLiteDriver.execute(engine, "SELECT n FROM numbers ORDER BY n", max_rows=3) as result:
        assert list(result.rows) == [(0,), (1,), (2,)]
    with SQLiteDriver.execute(engine, "SELECT n FROM numbers ORDER BY n") as result:
        assert next(iter(result.rows)) == (0,)
    with SQLiteDriver.execute(engine, "SELECT count(*) FROM numbers") as result:
        assert list(result.rows) == [(5000,)]


def test_the_cursor_reads_when_the_reader_is_missing(engine, monkeypatch):
    queries = ["SELECT n, label, n * 0.5 FROM numbers ORDER BY n", "SELECT NULL, X'00', 'é' || label FROM numbers"]
    with_reader = []
    for sql in queries:
        with SQLiteDriver.execute(engine, sql) as result:
            assert result.csv is not None
            with_reader.append(([c.name for c in result.columns], list(result.rows)))
    monkeypatch.setattr(sqlite_rows, "native", None)
    for sql, expected in zip(queries, with_reader):
        with SQLiteDriver.execute(engine, sql) as result:
            assert result.csv is None
            assert ([c.name for c in result.columns], list(result.rows)) == expected
