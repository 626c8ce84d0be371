"""DriverConformance: the one suite every driver passes, built-in and third-party. Subclass it with
`driver = ...` and a class-scoped `conformance_target` fixture (tests/drivers/test_conformance.py,
contrib/tessera-driver-csv).

`register_synced` registers and syncs a data source as a user would, for suites that run MBQL on
synced metadata (the sample database of tests/core/query and the contrib drivers' MBQL tests).
"""
from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from types import SimpleNamespace
from typing import Any, Callable, ClassVar

import pytest

# --------------------------------------------------------------------------------------------------
# DriverConformance: one suite every driver passes (built-in and third-party)
# --------------------------------------------------------------------------------------------------


@dataclass
class ConformanceTarget:
    """What a driver's test gives the suite: an empty database it may fill through `admin_engine`
    (full rights; disposed once the fixed schema is in), the `details` Tessera registers it with,
    and the policy those details are checked against."""

    details: dict
    admin_engine: Any
    policy: Any = None
    # Called with the admin engine once the fixed schema is in (e.g. to export it to files).
    after_fill: Any = None
    # Called with the admin engine before the persist-models probe: grant what Tessera's own tables need.
    allow_tessera_tables: Any = None


PEOPLE = [
    (1, "Ada", 10**12, 1.5, Decimal("10.25"), True, dt.date(1990, 1, 2), dt.datetime(2020, 1, 2, 3, 4, 5),
     dt.time(6, 30), "Zoë 🦜 北京"),
    (2, "Bob", None, None, None, None, None, None, None, None),
    (3, "Cléo", -5, 2.25, Decimal("-3.50"), False, dt.date(2001, 12, 31), dt.datetime(1999, 12, 31, 23, 59, 59),
     dt.time(23, 0), "second line\nwith 'quotes' and \"doubles\""),
]
ORDERS = [(1, 1, Decimal("5.00"), "first"), (2, 1, Decimal("7.50"), None), (3, 3, Decimal("1.25"), "ünïcödé"),
          (4, None, Decimal("0.00"), "orphan")]


def conformance_schema():
    from sqlalchemy import (
        BigInteger,
        Boolean,
        Column,
        Date,
        DateTime,
        Float,
        ForeignKey,
        Integer,
        MetaData,
        Numeric,
        String,
        Table,
        Text,
        Time,
    )

    metadata = MetaData()
    people = Table(
        "conf_people", metadata,
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("name", String(50), nullable=False),
        Column("score", BigInteger), Column("height", Float), Column("balance", Numeric(10, 2)),
        Column("active", Boolean), Column("born", Date), Column("seen_at", DateTime), Column("wakes", Time),
        Column("bio", Text),
    )
    orders = Table(
        "conf_orders", metadata,
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("person_id", Integer, ForeignKey("conf_people.id")),
        Column("total", Numeric(10, 2)), Column("note", String(100)),
    )
    return metadata, people, orders


def _join_probe(kind: str):
    from sqlglot import exp

    return (exp.select(exp.column("id", "p"), exp.column("id", "o").as_("order_id"))
            .from_(exp.to_table("conf_people").as_("p"))
            .join(exp.to_table("conf_orders").as_("o"), on="o.person_id = p.id", join_type=kind))


def feature_probes() -> dict:
    """Feature name -> (sqlglot tree, check on the rows). Every declared feature with a probe must pass."""
    import sqlglot
    from sqlglot import exp

    people = exp.to_table("conf_people")
    name, height = exp.column("name"), exp.column("height")
    return {
        "basic-aggregations": (exp.select(exp.Count(this=exp.Star()), exp.Sum(this=exp.column("score"))).from_(people),
                               lambda rows: rows[0][0] == 3 and int(rows[0][1]) == 10**12 - 5),
        "standard-deviation-aggregations": (exp.select(exp.Stddev(this=height)).from_(people),
                                            lambda rows: abs(float(rows[0][0]) - 0.5303300858899106) < 1e-9),
        "percentile-aggregations": (sqlglot.parse_one(
            "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY height) FROM conf_people", read="postgres"),
            lambda rows: abs(float(rows[0][0]) - 1.875) < 1e-9),
        "expressions": (exp.select((exp.column("id") * 2 + 1).as_("x")).from_(people).order_by("id"),
                        lambda rows: [r[0] for r in rows] == [3, 5, 7]),
        "regex": (exp.select(name).from_(people).where(exp.RegexpLike(this=name, expression=exp.Literal.string("^A"))),
                  lambda rows: rows == [("Ada",)]),
        "case-sensitivity-string-filter-options": (
            exp.select(name).from_(people).where(exp.Lower(this=name).like(exp.Literal.string("%cl%"))),
            lambda rows: rows == [("Cléo",)]),
        "nested-queries": (exp.select(exp.Count(this=exp.Star())).from_(
            exp.select("id").from_(people).where("id > 1").subquery("s")), lambda rows: rows[0][0] == 2),
        "binning": (exp.select(exp.Floor(this=exp.Div(this=height, expression=exp.Literal.number(1))).as_("bin"))
                    .from_(people).where(height.is_(exp.null()).not_()).order_by("bin"),
                    lambda rows: [float(r[0]) for r in rows] == [1.0, 2.0]),
        "inner-join": (_join_probe("inner"), lambda rows: len(rows) == 3),
        "left-join": (_join_probe("left"), lambda rows: len(rows) == 4),
        "right-join": (_join_probe("right"), lambda rows: len(rows) == 4),
        "full-join": (_join_probe("full"), lambda rows: len(rows) == 5),
    }


WRITE_STATEMENTS = [
    "INSERT INTO conf_orders (id, person_id, total, note) VALUES (99, 1, 1, 'x')",
    "UPDATE conf_people SET name = 'pwned'",
    "DELETE FROM conf_orders",
    "CREATE TABLE conf_new (a INTEGER)",
    "DROP TABLE conf_orders",
    "SELECT 1; DROP TABLE conf_orders",
    "select 1; /* sneaky */ delete from conf_orders",
]


class DriverConformance:
    """The suite every driver passes. Subclass it with `driver = MyDriver` and a class-scoped fixture
    `conformance_target` returning a ConformanceTarget for an empty database. Engine extras:
    `escape_statements` (must fail and leave `{out}` absent), `extra_write_statements`,
    `teeth_sql` (refused when locked, succeeds once `remove_guards` has run) and `slow_sql`.
    """

    driver: ClassVar[type]
    slow_sql: ClassVar[str] = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                               "SELECT count(*) FROM c")
    series_sql: ClassVar[str] = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < :n) "
                                 "SELECT x, 'padding-to-make-rows-bigger' AS pad FROM c")
    escape_statements: ClassVar[list[str]] = []
    extra_write_statements: ClassVar[list[str]] = []
    teeth_sql: ClassVar[str] = "CREATE TABLE conf_teeth (a INTEGER)"
    teeth_cleanup_sql: ClassVar[str | None] = "DROP TABLE IF EXISTS conf_teeth"
    # Whether the engine knows primary keys and NOT NULL (a CSV file does not).
    reports_constraints: ClassVar[bool] = True
    expected_base_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "id": ("type/Integer", "type/BigInteger"), "name": ("type/Text",), "score": ("type/BigInteger",),
        "height": ("type/Float",), "balance": ("type/Decimal",), "active": ("type/Boolean",),
        "born": ("type/Date",), "seen_at": ("type/DateTime",), "wakes": ("type/Time",), "bio": ("type/Text",),
    }

    # ---- fixtures --------------------------------------------------------------------------------

    def pytest_generate_tests(self, metafunc):
        # One probe per feature the driver declares; features it does not declare are not tested.
        if "feature" in metafunc.fixturenames:
            metafunc.parametrize("feature", sorted(set(feature_probes()) & set(self.driver.features)))
        if "persisting" in metafunc.fixturenames:
            metafunc.parametrize("persisting", ["declared" if "persist-models" in self.driver.features else "undeclared"])

    @pytest.fixture(scope="class")
    @classmethod
    def conformance(cls, conformance_target):
        from core.driver.connections import build_engine, check
        from core.driver.sources import ConnectionPolicy

        metadata, people, orders = conformance_schema()
        admin = conformance_target.admin_engine
        with admin.begin() as conn:
            metadata.create_all(conn, checkfirst=False)
            conn.execute(people.insert(), [dict(zip(people.c.keys(), row)) for row in PEOPLE])
            conn.execute(orders.insert(), [dict(zip(orders.c.keys(), row)) for row in ORDERS])
        if conformance_target.after_fill:
            conformance_target.after_fill(admin)
        admin.dispose()  # file engines: the locked engine must be the only one on the file
        policy = conformance_target.policy or ConnectionPolicy()
        details = check(cls.driver, conformance_target.details, policy)
        engine = build_engine(cls.driver, details)
        yield SimpleNamespace(engine=engine, details=details, raw=conformance_target.details, policy=policy,
                              target=conformance_target)
        engine.dispose()

    def run(self, engine, sql, params=None, **kwargs) -> list[tuple]:
        with self.driver.execute(engine, sql, params, **kwargs) as result:
            return list(result.rows)

    def count(self, conformance, table="conf_orders") -> int:
        return self.run(conformance.engine, f"SELECT count(*) FROM {table}")[0][0]

    def remove_guards(self, monkeypatch) -> None:
        """Switch the engine's lockdown off (for the teeth test); engines with more guards add them."""
        monkeypatch.setattr(self.driver, "lockdown", classmethod(lambda cls, conn, details: None))
        monkeypatch.setattr(self.driver, "guard", classmethod(contextlib.contextmanager(lambda cls, conn, t: (yield))))

    # ---- declaration -----------------------------------------------------------------------------

    def test_declaration(self):
        from core.driver.sql import SQLDriver

        assert issubclass(self.driver, SQLDriver) and self.driver.available()
        info = self.driver.engine_info()
        assert info["driver-name"] == self.driver.display_name
        names = [p["name"] for p in info["details-fields"]]
        assert len(names) == len(set(names)) and names
        for prop in info["details-fields"]:
            assert prop["type"] in {"string", "password", "integer", "boolean"}, prop
        secrets_ = set(self.driver.Details.model_construct().secret_keys())
        assert {p["name"] for p in info["details-fields"] if p["type"] == "password"} == secrets_
        import sqlglot.dialects

        assert sqlglot.Dialect.get_or_raise(self.driver.sqlglot_dialect)

    def test_unknown_detail_keys_are_refused(self, conformance):
        from core.driver.connections import check
        from core.http.errors import Invalid

        for key in ("connection-uri", "subprotocol", "classname", "init_command", "local_infile", "options"):
            with pytest.raises(Invalid) as error:
                check(self.driver, {**conformance.raw, key: "x"}, conformance.policy)
            assert key in error.value.body["errors"], key

    def test_secrets_are_masked(self, conformance):
        from core.driver.crypto import MASK, mask_details

        for key in conformance.details.secret_keys():
            masked = mask_details(self.driver, {**conformance.raw, key: "s3cret"})
            assert masked[key] == MASK

    # ---- introspection ---------------------------------------------------------------------------

    def test_dbms_version(self, conformance):
        version = self.driver.dbms_version(conformance.engine)
        assert version["flavor"] and version["version"]
        assert version["semantic-version"] and all(isinstance(p, int) for p in version["semantic-version"])

    def _table(self, conformance, name):
        tables = {t.name: t for t in self.driver.describe_tables(conformance.engine)}
        assert name in tables, sorted(tables)
        return tables[name]

    def test_tables(self, conformance):
        names = {t.name for t in self.driver.describe_tables(conformance.engine)}
        assert {"conf_people", "conf_orders"} <= names
        if "schemas" in self.driver.features:
            assert all(isinstance(s, str) for s in self.driver.syncable_schemas(conformance.engine))

    def test_fields_and_base_types(self, conformance):
        fields = self.driver.describe_fields(conformance.engine, self._table(conformance, "conf_people"))
        assert [f.name for f in fields] == list(self.expected_base_types)
        assert [f.position for f in fields] == list(range(len(fields)))
        for f in fields:
            assert f.base_type in self.expected_base_types[f.name], (f.name, f.database_type, f.base_type)
            assert f.database_type
        by_name = {f.name: f for f in fields}
        if self.reports_constraints:
            assert by_name["id"].pk and not by_name["name"].pk
            assert by_name["name"].required and not by_name["bio"].required
        else:
            assert not any(f.pk or f.required for f in fields)

    def test_foreign_keys(self, conformance):
        fks = self.driver.describe_fks(conformance.engine, self._table(conformance, "conf_orders"))
        expected = [("person_id", "conf_people", "id")] if "foreign-keys" in self.driver.features else []
        assert [(fk.column, fk.target_table, fk.target_column) for fk in fks] == expected

    # ---- SQL and execution -----------------------------------------------------------------------

    def test_to_sql_of_a_select_runs(self, conformance):
        from sqlglot import exp

        tree = (exp.select("name").from_(exp.to_table("conf_people"))
                .where(exp.column("id").eq(exp.Literal.number(3))))
        sql = self.driver.to_sql(tree)
        assert isinstance(sql, str) and "conf_people" in sql
        assert self.run(conformance.engine, sql) == [("Cléo",)]

    def test_named_parameters_and_values(self, conformance):
        rows = self.run(conformance.engine, "SELECT id, name, bio, score FROM conf_people WHERE id IN (:a, :b) "
                        "ORDER BY id", {"a": 1, "b": 2})
        assert rows == [(1, "Ada", "Zoë 🦜 北京", 10**12), (2, "Bob", None, None)]
        assert self.run(conformance.engine, "SELECT '%' AS pct, 'a:b' AS colon") == [("%", "a:b")]

    def test_result_columns(self, conformance):
        with self.driver.execute(conformance.engine, "SELECT id, name, height FROM conf_people ORDER BY id") as result:
            assert [c.name for c in result.columns] == ["id", "name", "height"]
            assert all(c.base_type.startswith("type/") for c in result.columns)
            assert len(list(result.rows)) == 3

    def test_streams_rows(self, conformance):
        import tracemalloc

        with self.driver.execute(conformance.engine, self.series_sql, {"n": 5}, max_rows=3) as result:
            assert not isinstance(result.rows, (list, tuple))
            assert [row[0] for row in result.rows] == [1, 2, 3]
        tracemalloc.start()
        try:
            with self.driver.execute(conformance.engine, self.series_sql, {"n": 50_000}) as result:
                total = sum(1 for _ in result.rows)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert total == 50_000
        # All 50k rows held at once would take about 8 MB; batches of 1000 take a few hundred KB.
        assert peak < 4 * 1024 * 1024, f"peak {peak} bytes for 50k rows: rows are not streamed"

    def test_abandoned_stream_is_cheap(self, conformance):
        """Leaving after one row of a million neither reads the rest nor spoils the connection.

        Timed against leaving the same statement's one-row series just before, so that a machine
        busy with other work (parallel test workers) slows both alike; reading the million would not."""
        import time

        def first_row_then_leave(n: int) -> float:
            started = time.monotonic()
            with self.driver.execute(conformance.engine, self.series_sql, {"n": n}) as result:
                assert next(result.rows)[0] == 1
            return time.monotonic() - started

        one = first_row_then_leave(1)
        million = first_row_then_leave(1_000_000)
        assert million < 1.0 + 3 * one, f"{million:.2f} s after one row of a million, {one:.2f} s of one"
        assert self.run(conformance.engine, "SELECT 1") == [(1,)]

    @pytest.mark.security_row(24)
    def test_timeout_stops_the_statement(self, conformance):
        import time

        from core.driver.records import QueryTimeout

        started = time.monotonic()
        with pytest.raises(QueryTimeout):
            self.run(conformance.engine, self.slow_sql, timeout=0.5)
        assert time.monotonic() - started < 2.5
        assert self.run(conformance.engine, "SELECT 1") == [(1,)]  # the connection is usable again

    def test_engine_errors_are_query_errors(self, conformance):
        from core.driver.records import QueryError, QueryTimeout

        with pytest.raises(QueryError) as error:
            self.run(conformance.engine, "SELECT no_such_column FROM conf_people")
        assert not isinstance(error.value, QueryTimeout) and error.value.message

    def test_declared_feature_works(self, conformance, feature):
        tree, check_rows = feature_probes()[feature]
        rows = self.run(conformance.engine, self.driver.to_sql(tree))
        assert check_rows(rows), (feature, self.driver.to_sql(tree), rows)

    def test_persist_models_probe(self, conformance, persisting):
        """A driver declaring persist-models: its `writable` transaction creates and fills a table where
        `owned_schema` says, the read-only engine reads it, and is read-only again afterwards. A driver
        that does not declare it cannot write even through `writable`."""
        import sqlalchemy as sa
        from sqlglot import exp

        from core.driver.records import LockdownError, QueryError

        schema = self.driver.owned_schema
        table = sa.Table("tessera_cache_conf_probe", sa.MetaData(), sa.Column("id", sa.BigInteger),
                         sa.Column("name", sa.Text), sa.Column("born", sa.Date), schema=schema, quote=True)
        if persisting == "undeclared":
            with pytest.raises((sa.exc.SQLAlchemyError, LockdownError, QueryError)):
                with self.driver.writable(conformance.engine, conformance.details) as conn:
                    table.create(conn)
            return
        if conformance.target.allow_tessera_tables is not None:
            conformance.target.allow_tessera_tables(conformance.target.admin_engine)
        with self.driver.writable(conformance.engine, conformance.details) as conn:
            if schema is not None:
                conn.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
            table.drop(conn, checkfirst=True)
            table.create(conn)
            conn.execute(table.insert(), [{"id": 1, "name": "Ada", "born": dt.date(1815, 12, 10)},
                                          {"id": 2, "name": "Cléo", "born": None}])
        source = exp.Table(this=exp.to_identifier(table.name, quoted=True),
                           db=exp.to_identifier(schema, quoted=True) if schema else None)
        read = self.driver.to_sql(exp.select("id", "name").from_(source).order_by("id"))
        assert self.run(conformance.engine, read) == [(1, "Ada"), (2, "Cléo")]
        with pytest.raises(QueryError):  # the data connections went back read-only
            self.run(conformance.engine, f"DELETE FROM {self.driver.to_sql(source)}")
        assert len(self.run(conformance.engine, read)) == 2
        with self.driver.writable(conformance.engine, conformance.details) as conn:
            table.drop(conn)
        with pytest.raises(QueryError):
            self.run(conformance.engine, read)

    # ---- compiled-MBQL forms (core.driver.dialect methods) ------------------------------------------

    TRUNCATE_UNITS = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")
    EXTRACT_UNITS = ("second", "minute-of-hour", "hour-of-day", "day-of-week", "day-of-month", "day-of-year",
                     "week-of-year", "month-of-year", "quarter-of-year", "year")
    WEEK_STARTS = (0, 3, 4, 5, 6)  # Python weekdays: Monday, Thursday (seen_at's own day), Friday, Saturday, Sunday

    @staticmethod
    def _timestamp_text(value) -> str:
        if isinstance(value, dt.datetime):
            return value.strftime("%Y-%m-%d %H:%M:%S")
        if isinstance(value, dt.date):
            return value.isoformat() + " 00:00:00"
        return str(value)[:19]

    @staticmethod
    def expected_truncation(value: dt.datetime, unit: str, week_start: int) -> str:
        day = value.replace(hour=0, minute=0, second=0)
        start = {"second": value, "minute": value.replace(second=0), "hour": value.replace(minute=0, second=0),
                 "day": day, "week": day - dt.timedelta(days=(value.weekday() - week_start) % 7),
                 "month": day.replace(day=1), "quarter": day.replace(month=(value.month - 1) // 3 * 3 + 1, day=1),
                 "year": day.replace(month=1, day=1)}[unit]
        return start.strftime("%Y-%m-%d %H:%M:%S")

    @staticmethod
    def expected_extraction(value: dt.datetime, unit: str, week_start: int) -> int:
        return {"second": value.second, "minute-of-hour": value.minute, "hour-of-day": value.hour,
                "day-of-week": (value.weekday() - week_start) % 7 + 1, "day-of-month": value.day,
                "day-of-year": value.timetuple().tm_yday, "week-of-year": value.isocalendar()[1],
                "month-of-year": value.month, "quarter-of-year": (value.month - 1) // 3 + 1,
                "year": value.year}[unit]

    def test_temporal_buckets_honour_the_week_start(self, conformance):
        """truncate_temporal and extract_temporal, every unit and several week starts, against Python."""
        from sqlglot import exp

        seen_at = exp.column("seen_at")
        cases = [("truncate", unit, start) for unit in self.TRUNCATE_UNITS
                 for start in (self.WEEK_STARTS if unit == "week" else (6,))]
        cases += [("extract", unit, start) for unit in self.EXTRACT_UNITS
                  for start in (self.WEEK_STARTS if unit == "day-of-week" else (6,))]
        columns = [(self.driver.truncate_temporal if kind == "truncate" else self.driver.extract_temporal)(
            seen_at.copy(), unit, start).as_(f"c{i}") for i, (kind, unit, start) in enumerate(cases)]
        for person in (PEOPLE[0], PEOPLE[2]):  # a Thursday early in a year, a Friday late in one
            tree = exp.select(*columns).from_("conf_people").where(exp.column("id").eq(exp.Literal.number(person[0])))
            sql = self.driver.to_sql(tree)
            row = self.run(conformance.engine, sql)[0]
            for (kind, unit, start), got in zip(cases, row):
                if kind == "truncate":
                    expected, actual = self.expected_truncation(person[7], unit, start), self._timestamp_text(got)
                else:
                    expected, actual = self.expected_extraction(person[7], unit, start), int(float(got))
                assert actual == expected, (kind, unit, start, person[7], actual, sql)

    def test_whole_number_math_gives_integers(self, conformance):
        """ceil, floor and round through to_integer (as the compiler sends them, declared type/Integer):
        Python integers on every engine, from a double, a decimal and an integer column; NULL stays NULL."""
        import math

        from sqlglot import exp

        functions = {"ceil": (exp.Ceil, math.ceil), "floor": (exp.Floor, math.floor),
                     "round": (exp.Round, lambda x: int(Decimal(str(x)).quantize(Decimal(1), "ROUND_HALF_UP")))}
        columns = ("height", "balance", "score")
        cases = [(name, column) for name in functions for column in columns]
        tree = exp.select(*[self.driver.to_integer(functions[name][0](this=exp.column(column))).as_(f"c{i}")
                            for i, (name, column) in enumerate(cases)]).from_("conf_people").order_by("id")
        sql = self.driver.to_sql(tree)
        rows = self.run(conformance.engine, sql)
        for person, row in zip(PEOPLE, rows):
            for (name, column), got in zip(cases, row):
                value = person[{"height": 3, "balance": 4, "score": 2}[column]]
                expected = None if value is None else functions[name][1](value)
                assert got == expected and type(got) is type(expected), (name, column, value, got, sql)

    # (kind, value, case-sensitive, names matched): LIKE and GLOB wildcards and the escape character
    # are matched literally; case-sensitive matching is exact even where collations ignore case.
    STRING_MATCHES = (
        ("contains", "d", True, {"Ada"}), ("contains", "D", True, set()), ("contains", "D", False, {"Ada"}),
        ("starts-with", "b", True, set()), ("starts-with", "b", False, {"Bob"}), ("ends-with", "éo", True, {"Cléo"}),
        ("ends-with", "A", False, {"Ada"}), ("contains", "a_a", False, set()), ("contains", "A%", True, set()),
        ("contains", "%", False, set()), ("contains", "!", True, set()), ("contains", "A*", True, set()),
        ("contains", "?", True, set()), ("starts-with", "[A]", True, set()), ("starts-with", "[AB]", False, set()),
    )

    def test_string_match_and_exact_text(self, conformance):
        from sqlglot import exp

        name = exp.column("name")
        for kind, value, case_sensitive, expected in self.STRING_MATCHES:
            condition = self.driver.string_match(name.copy(), kind, value, case_sensitive)
            sql = self.driver.to_sql(exp.select("name").from_("conf_people").where(condition))
            assert {row[0] for row in self.run(conformance.engine, sql)} == expected, (kind, value, case_sensitive, sql)
        for value, expected in (("Ada", {"Ada"}), ("ada", set()), ("ADA", set())):
            exact = self.driver.exact_text(exp.Literal.string(value))
            sql = self.driver.to_sql(exp.select("name").from_("conf_people").where(name.copy().eq(exact)))
            assert {row[0] for row in self.run(conformance.engine, sql)} == expected, (value, sql)

    # ---- read-only and lockdown ------------------------------------------------------------------

    @pytest.mark.security_row(8)
    def test_writes_are_refused_by_the_engine(self, conformance):
        from core.driver.records import QueryError

        before = (self.count(conformance), self.count(conformance, "conf_people"))
        for statement in WRITE_STATEMENTS + self.extra_write_statements:
            with pytest.raises(QueryError):
                self.run(conformance.engine, statement)
            assert (self.count(conformance), self.count(conformance, "conf_people")) == before, statement
        assert self.run(conformance.engine, "SELECT name FROM conf_people WHERE id = 1") == [("Ada",)]

    @pytest.mark.security_row(4, 5, 6)
    def test_escapes_fail_without_touching_disk(self, conformance, tmp_path):
        from core.driver.records import QueryError

        out = tmp_path / "escape.out"
        for statement in self.escape_statements:
            with pytest.raises(QueryError):
                self.run(conformance.engine, statement.format(out=out))
            assert not out.exists(), statement

    @pytest.mark.security_row(4, 5, 6, 8)
    def test_guards_have_teeth(self, conformance, monkeypatch, tmp_path):
        """The same statement succeeds once the lockdown is removed: the guard, nothing else, stops it."""
        from core.driver.connections import build_engine
        from core.driver.records import QueryError

        out = tmp_path / "teeth.out"
        sql = self.teeth_sql.format(out=out)
        with pytest.raises(QueryError):
            self.run(conformance.engine, sql)
        assert not out.exists()
        conformance.engine.dispose()
        with monkeypatch.context() as patch:
            self.remove_guards(patch)
            unguarded = build_engine(self.driver, conformance.details)
            try:
                self.run(unguarded, sql)
                if "{out}" in self.teeth_sql:
                    assert out.exists()
                if self.teeth_cleanup_sql:
                    self.run(unguarded, self.teeth_cleanup_sql)
            finally:
                unguarded.dispose()


# --------------------------------------------------------------------------------------------------
# Synced sources: a data source registered and synced as a user's registration does
# --------------------------------------------------------------------------------------------------


def synced_ids(session, database_id: int) -> dict:
    """"$T.C" / "$$T" -> id of the Table and Field rows sync wrote for the database, and "database"."""
    from sqlalchemy import select

    from core.appdb.models.database import Field, Table

    ids = {"database": database_id}
    for table in session.scalars(select(Table).where(Table.db_id == database_id)):
        ids[f"$${table.name}"] = table.id
        for field in session.scalars(select(Field).where(Field.table_id == table.id)):
            ids[f"${table.name}.{field.name}"] = field.id
    return ids


def register_synced(state, stack: contextlib.ExitStack, name: str, engine: str, details: dict,
                    adjust: Callable[[Any, dict], None] | None = None) -> tuple[Any, dict, Any]:
    """Register `details` as a data source (encrypted, as the API stores them) and sync it with
    core.sync.schema, inside the app's context. Returns (session, ids, engine): an app-DB session open
    until `stack` closes, the synced ids (`synced_ids`) and the locked-down engine Tessera runs queries
    on. `adjust(session, ids)` edits the synced metadata (coercions, FK targets) before it is committed,
    as an admin does in the data model."""
    from core.appdb.models.database import Database
    from core.driver import connections, crypto
    from core.sync import schema as sync

    with state.db.session() as session:
        database = Database(name=name, engine=engine, details=crypto.encrypt_details(details))
        session.add(database)
        session.flush()
        database_id = database.id
    assert sync.sync_database(state, database_id), f"sync of {name!r} failed"
    session = state.db.Session()
    stack.callback(session.close)
    ids = synced_ids(session, database_id)
    if adjust is not None:
        adjust(session, ids)
    session.commit()
    return session, ids, connections.engine_for(session.get(Database, database_id))
