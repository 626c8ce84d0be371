"""Template tags on the four engines: each case gives the same ids on SQLite, DuckDB, PostgreSQL and
MariaDB, and equals what Python computes from the rows. Values are always bound: hostile text finds
nothing and breaks nothing."""
from __future__ import annotations

import datetime as dt
import sqlite3
import uuid

import pytest
from sqlglot import exp

from core.query import native
from core.query.errors import QueryFailed
from core.testing import require_mariadb, require_postgres
from drivers.duckdb import DuckDBDriver
from drivers.mysql import MySQLDriver
from drivers.postgres import PostgresDriver
from drivers.sqlite import SQLiteDriver

# One xdist worker runs this module (make test: --dist loadgroup): its module-scoped sample on each engine is loaded once.
pytestmark = pytest.mark.xdist_group("query-native-engines")

ROWS = [
    # id, category, price, created_at, active
    (1, "Widget", 10.5, dt.datetime(2024, 1, 5, 13, 45), True),
    (2, "Gizmo", 25.0, dt.datetime(2024, 1, 31, 23, 59), False),
    (3, "widget", 7.25, dt.datetime(2024, 2, 1, 0, 0), True),
    (4, "Gadget_x", 99.0, dt.datetime(2024, 4, 15, 8, 0), False),
    (5, "Doohickey", 42.0, dt.datetime(2023, 12, 31, 12, 0), True),
    (6, "Wid%get", 1.0, dt.datetime(2024, 3, 1, 0, 0), True),
]
NOW = dt.datetime(2024, 2, 10, 12, 0)


class Engine:
    def __init__(self, name, driver, paramstyle, connect, table, cleanup=None):
        self.name, self.driver, self.paramstyle = name, driver, paramstyle
        self.conn, self.table, self.cleanup = connect, table, cleanup

    def run(self, sql, tags=None, params=None):
        resolvers = native.Resolvers(
            field=lambda dim: native.FieldInfo(self.column(dim[1]), {"price": "type/Float", "id": "type/Integer",
                                                                      "created_at": "type/DateTime"}.get(dim[1], "type/Text")),
            snippet=lambda _id, name: {"active_only": "active = {{flag}}"}[name],
            card=lambda card_id: native.NativeSQL([f"SELECT id FROM {self.table} WHERE id <= ", native.Bound(card_id)]),
        )
        query = native.substitute(sql.replace("{T}", self.table), tags or {}, params or [],
                                  resolvers, driver=self.driver, now=NOW)
        text, values = query.render(self.paramstyle)
        cursor = self.conn.cursor()
        cursor.execute(text, values) if values is not None else cursor.execute(text)
        return sorted(row[0] for row in cursor.fetchall())

    def column(self, name):
        parts = self.table.split(".")
        return exp.column(name, table=parts[-1], db=parts[0] if len(parts) > 1 else None, quoted=True)


def _sqlite():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE orders (id INTEGER, category TEXT, price REAL, created_at TEXT, active BOOLEAN)")
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
                     [(i, c, p, d.isoformat(sep=" "), a) for i, c, p, d, a in ROWS])
    return Engine("sqlite", SQLiteDriver, "qmark", conn, "orders")


def _duckdb():
    duckdb = pytest.importorskip("duckdb")
    conn = duckdb.connect()
    conn.execute("CREATE TABLE orders (id INTEGER, category VARCHAR, price DOUBLE, created_at TIMESTAMP, active BOOLEAN)")
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", ROWS)
    return Engine("duckdb", DuckDBDriver, "qmark", conn, "orders")


def _postgres():
    import psycopg

    url = require_postgres().replace("postgresql+psycopg://", "postgresql://")
    conn = psycopg.connect(url, autocommit=True)
    schema = f"tessera_native_{uuid.uuid4().hex[:8]}"
    conn.execute(f'CREATE SCHEMA "{schema}"')
    conn.execute(f'CREATE TABLE "{schema}".orders (id INTEGER, category TEXT, price DOUBLE PRECISION, '
                 f'created_at TIMESTAMP, active BOOLEAN)')
    with conn.cursor() as cursor:
        cursor.executemany(f'INSERT INTO "{schema}".orders VALUES (%s, %s, %s, %s, %s)', ROWS)

    def cleanup():
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        conn.close()

    return Engine("postgres", PostgresDriver, "pyformat", conn, f"{schema}.orders", cleanup)


def _mariadb():
    import pymysql

    require_mariadb()
    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", database="test", autocommit=True)
    table = f"tessera_native_{uuid.uuid4().hex[:8]}"
    with conn.cursor() as cursor:
        cursor.execute(f"CREATE TABLE `{table}` (id INTEGER, category VARCHAR(50), price DOUBLE, "
                       f"created_at DATETIME, active BOOLEAN)")
        cursor.executemany(f"INSERT INTO `{table}` VALUES (%s, %s, %s, %s, %s)", ROWS)

    def cleanup():
        with conn.cursor() as cursor:
            cursor.execute(f"DROP TABLE `{table}`")
        conn.close()

    return Engine("mariadb", MySQLDriver, "pyformat", conn, table, cleanup)


@pytest.fixture(scope="module", params=["sqlite", "duckdb", "postgres", "mariadb"])
def engine(request):
    made = {"sqlite": _sqlite, "duckdb": _duckdb, "postgres": _postgres, "mariadb": _mariadb}[request.param]()
    yield made
    if made.cleanup:
        made.cleanup()


def ff(name, widget, column):
    return {name: {"id": f"id-{name}", "name": name, "display-name": name.title(), "type": "dimension",
                   "dimension": ["field", column, None], "widget-type": widget}}


def param(name, kind, value, target="dimension", **extra):
    return {"type": kind, "target": [target, ["template-tag", name]], "value": value, **extra}


def ids(predicate):
    return sorted(r[0] for r in ROWS if predicate(r))


TEXT_TAG = {"cat": {"id": "c1", "name": "cat", "display-name": "Cat", "type": "text"}}
NUM_TAG = {"n": {"id": "n1", "name": "n", "display-name": "N", "type": "number"}}
DATE_TAG = {"d": {"id": "d1", "name": "d", "display-name": "D", "type": "date"}}

CASES = [
    # (sql, tags, parameters, expected ids)
    ("SELECT id FROM {T} WHERE category = {{cat}}", TEXT_TAG, [param("cat", "category", "Gizmo", "variable")],
     ids(lambda r: r[1] == "Gizmo")),
    ("SELECT id FROM {T} WHERE id IN ({{n}})", NUM_TAG, [param("n", "number", "1,3", "variable")], [1, 3]),
    ("SELECT id FROM {T} WHERE id IN ({{n}})", NUM_TAG, [param("n", "number/=", [2, 4], "variable")], [2, 4]),
    ("SELECT id FROM {T} WHERE created_at < {{d}}", DATE_TAG, [param("d", "date/single", "2024-01-06", "variable")],
     [1, 5]),
    ("SELECT id FROM {T} WHERE 1 = 1 [[AND price > {{n}}]]", NUM_TAG, [], [1, 2, 3, 4, 5, 6]),
    ("SELECT id FROM {T} WHERE 1 = 1 [[AND price > {{n}}]]", NUM_TAG, [param("n", "number", 20, "variable")],
     ids(lambda r: r[2] > 20)),
    ("SELECT id FROM {T} WHERE 1 = 1 [[AND price > {{n}}]]", {"n": {**NUM_TAG["n"], "default": "40"}}, [],
     ids(lambda r: r[2] > 40)),
    ("SELECT id FROM {T} WHERE {{snippet: active_only}}",
     {"flag": {"name": "flag", "type": "boolean", "display-name": "Flag"},
      "snippet: active_only": {"name": "snippet: active_only", "type": "snippet", "snippet-name": "active_only"}},
     [param("flag", "boolean", True, "variable")], ids(lambda r: r[4])),
    ("SELECT id FROM {T} WHERE id IN {{#7-small}}", {"#7-small": {"name": "#7-small", "type": "card", "card-id": 3}}, [],
     [1, 2, 3]),
    # field filters
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "category", "category"), [param("f", "category", ["Widget", "Gizmo"])],
     [1, 2]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "category", "category"), [], [1, 2, 3, 4, 5, 6]),
    ("SELECT id FROM {T} WHERE 1 = 1 [[AND {{f}}]]", ff("f", "category", "category"), [], [1, 2, 3, 4, 5, 6]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "id", "id"), [param("f", "id", ["2", "5"])], [2, 5]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "string/=", "category"), [param("f", "string/=", ["widget"])], [3]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "string/contains", "category"),
     [param("f", "string/contains", ["idg"])], ids(lambda r: "idg" in r[1])),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "string/contains", "category"),
     [param("f", "string/contains", ["WIDG"], options={"case-sensitive": False})],
     ids(lambda r: "widg" in r[1].lower())),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "string/contains", "category"),
     [param("f", "string/contains", ["d%g"])], [6]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "string/contains", "category"),
     [param("f", "string/contains", ["t_x"])], [4]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "string/starts-with", "category"),
     [param("f", "string/starts-with", ["W"])], ids(lambda r: r[1].startswith("W"))),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "string/starts-with", "category"),
     [param("f", "string/starts-with", ["w"], options={"case-sensitive": False})],
     ids(lambda r: r[1].lower().startswith("w"))),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "string/ends-with", "category"),
     [param("f", "string/ends-with", ["et"])], ids(lambda r: r[1].endswith("et"))),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "string/does-not-contain", "category"),
     [param("f", "string/does-not-contain", ["idg"])], ids(lambda r: "idg" not in r[1])),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "number/=", "price"), [param("f", "number/=", ["25", 99])], [2, 4]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "number/between", "price"), [param("f", "number/between", [7.25, 25])],
     [1, 2, 3]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "number/between", "price"), [param("f", "number/between", [None, 10.5])],
     [1, 3, 6]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/single", "created_at"), [param("f", "date/single", "2024-01-31")],
     [2]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/range", "created_at"),
     [param("f", "date/range", "2024-01-05~2024-01-31")], [1, 2]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/month-year", "created_at"),
     [param("f", "date/month-year", "2024-01")], [1, 2]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/quarter-year", "created_at"),
     [param("f", "date/quarter-year", "Q1-2024")], [1, 2, 3, 6]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/relative", "created_at"),
     [param("f", "date/relative", "lastmonth")], [1, 2]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/relative", "created_at"),
     [param("f", "date/relative", "past2months~")], [1, 2, 3, 5]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/all-options", "created_at"),
     [param("f", "date/all-options", "~2024-01-05")], [1, 5]),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/all-options", "created_at"),
     [param("f", "date/all-options", "2024-02-01~")], [3, 4, 6]),
    # excluded date parts: the driver's extract_temporal, days numbered from the week start (Sunday)
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/all-options", "created_at"),
     [param("f", "date/all-options", "exclude-days-Fri-Sun")], ids(lambda r: r[3].weekday() not in (4, 6))),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/all-options", "created_at"),
     [param("f", "date/all-options", "exclude-months-Jan")], ids(lambda r: r[3].month != 1)),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "date/all-options", "created_at"),
     [param("f", "date/all-options", "exclude-hours-0")], ids(lambda r: r[3].hour != 0)),
    # hostile values are data, never SQL
    ("SELECT id FROM {T} WHERE category = {{cat}}", TEXT_TAG,
     [param("cat", "category", "x' OR '1'='1", "variable")], []),
    ("SELECT id FROM {T} WHERE {{f}}", ff("f", "category", "category"),
     [param("f", "category", ["Widget'); DROP TABLE orders; --"])], []),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_tag_case_on_engine(engine, case):
    sql, tags, params, expected = CASES[case]
    assert engine.run(sql, tags, params) == expected
    # The table survived whatever the values said.
    assert engine.run("SELECT id FROM {T}") == [1, 2, 3, 4, 5, 6]


def test_missing_value_outside_optional_fails(engine):
    with pytest.raises(QueryFailed) as info:
        engine.run("SELECT id FROM {T} WHERE category = {{cat}}", TEXT_TAG, [])
    assert info.value.error_type == "missing-required-parameter"
    assert "Cat" in info.value.message


def test_required_tag_fails_even_in_optional(engine):
    tags = {"cat": {**TEXT_TAG["cat"], "required": True}}
    with pytest.raises(QueryFailed) as info:
        engine.run("SELECT id FROM T [[WHERE category = {{cat}}]]", tags, [])
    assert info.value.error_type == "missing-required-parameter"
    assert 'missing required parameters: #{"cat"}' in info.value.message
