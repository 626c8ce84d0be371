"""The SQLite driver (stdlib sqlite3), locked down as compat/security.md section 2 says.

A file opens read-only (`mode=ro`), with no attached databases allowed (which also stops VACUUM
INTO), `query_only`, `trusted_schema=OFF` and an authorizer that refuses ATTACH/DETACH, every
PRAGMA outside a read-only allowlist and file- or extension-touching functions. Timeouts use a
progress handler, which SQLite calls while it steps through the statement, fetches included.
Rows are read by drivers.sqlite_rows' C reader on the same connection when it was built.
"""
from __future__ import annotations

import contextlib
import sqlite3
import time
from urllib.parse import quote

from pydantic import Field
from sqlalchemy.engine import URL
from sqlglot import exp

from core import hookimpl
from core.driver import FileDetails, LockdownError, SQLDriver, urls
from core.driver.dialect import SUNDAY, lit
from drivers import sqlite_rows

READ_PRAGMAS = frozenset({"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list"})
DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})
PROGRESS_STEPS = 1000
URL_PART_FUNCTION = "TESSERA_URL_PART"
CONVERT_TZ_FUNCTION = "TESSERA_CONVERT_TZ"


def authorizer(action: int, arg1, arg2, dbname, source) -> int:
    """The SQLite authorizer every data connection carries (see module docstring)."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() not in READ_PRAGMAS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def floor(value):
    """FLOOR for SQL: NULL for NULL (binning a nullable column), else the largest integer not above it."""
    import math

    return None if value is None else math.floor(value)


def writer_authorizer(action: int, *args) -> int:
    """The authorizer of the connection writing Tessera's own tables: this file only."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def convert_tz(value, source, target):
    """Wall-clock text `value` in zone `source` as wall-clock text in zone `target` (DST included); NULL for
    NULL, an unreadable value or an unknown zone."""
    import datetime as dt
    from zoneinfo import ZoneInfo

    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip())
        zones = ZoneInfo(source), ZoneInfo(target)
    except (ValueError, KeyError, OSError):
        return None
    converted = parsed.replace(tzinfo=zones[0]).astimezone(zones[1]).replace(tzinfo=None)
    return converted.isoformat(sep=" ")


def connect_read_only(path: str) -> sqlite3.Connection:
    # Pooled connections move between request and sync threads; each is used by one at a time.
    return sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, check_same_thread=False)


class SQLiteDetails(FileDetails):
    db: str = Field(title="Filename", description="A SQLite file inside one of the directories in TESSERA_FILE_DB_DIRS; "
                    "it is opened read-only.", json_schema_extra={"placeholder": "/srv/tessera/files/sales.sqlite"})


class SQLiteDriver(SQLDriver):
    engine = "sqlite"
    display_name = "SQLite"
    sqlglot_dialect = "sqlite"
    sqlalchemy_dialect = "sqlite"
    Details = SQLiteDetails
    dbapi_modules = ("sqlite3",)
    features = frozenset({
        "basic-aggregations", "expressions", "native-parameters", "nested-queries", "binning",
        "case-sensitivity-string-filter-options", "left-join", "right-join", "inner-join", "full-join",
        "foreign-keys", "standard-deviation-aggregations", "convert-timezone", "persist-models",
        # Actions write through `writable` (plugins.actions).
        "actions",
        # Window functions (LAG/LEAD, running sums) arrived in SQLite 3.25.
        *(("window-functions/offset", "window-functions/cumulative") if sqlite3.sqlite_version_info >= (3, 25) else ()),
    })
    timeout_markers = ("interrupted",)
    probe_sql = "SELECT count(*) FROM sqlite_master"

    @classmethod
    def accelerations(cls) -> dict[str, bool]:
        # Off when drivers._sqlite_rows was not built (no compiler or sqlite3.h at install) or cannot share
        # the sqlite3 module's SQLite; rows are then read through the sqlite3 module.
        return {"C row reader": sqlite_rows.native is not None}

    @classmethod
    def url(cls, details: SQLiteDetails) -> URL:
        # The file is opened by `creator`, read-only; the URL only names the dialect.
        return URL.create("sqlite")

    @classmethod
    def engine_options(cls, details: SQLiteDetails) -> dict:
        from sqlalchemy.pool import QueuePool

        path = details.db
        # The URL names no file, so SQLAlchemy would pick its in-memory SingletonThreadPool, which
        # closes other threads' connections once more than five threads use it (a crash under
        # gunicorn's threads or parallel sync); a queue hands each connection to one thread at a time.
        return {"creator": lambda: connect_read_only(path), "poolclass": QueuePool}

    read_before_write = True

    # SQLite keeps no statistics a sync can read (sqlite_stat1 only after ANALYZE): a table's rows are
    # counted, up to this many; a bigger table has no estimate rather than costing a whole scan.
    COUNT_BOUND = 1_000_000

    @classmethod
    def estimate_row_counts(cls, engine, tables):
        counts = {}
        with engine.connect() as conn:
            kinds = dict(conn.exec_driver_sql("SELECT name, type FROM sqlite_master").all())
            quote = conn.dialect.identifier_preparer.quote
            for table in tables:
                if kinds.get(table.name) != "table":
                    continue  # a view's count is its query's cost
                count = conn.exec_driver_sql(f"SELECT COUNT(*) FROM (SELECT 1 FROM {quote(table.name)} "
                                             f"LIMIT {cls.COUNT_BOUND + 1})").scalar()
                if count <= cls.COUNT_BOUND:
                    counts[(table.schema or "", table.name)] = count
        return counts

    @classmethod
    @contextlib.contextmanager
    def writable(cls, engine, details, timeout=None):
        # The pooled connections are opened read-only (mode=ro, query_only): the writer opens the file
        # itself, still refusing ATTACH/DETACH so that it writes this file only.
        import sqlalchemy as sa

        def connect():
            con = sqlite3.connect(details.path(), check_same_thread=False)
            con.set_authorizer(writer_authorizer)
            if timeout is not None:
                deadline = time.monotonic() + timeout
                con.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, PROGRESS_STEPS)
            return con

        writer = sa.create_engine("sqlite://", creator=connect, poolclass=sa.pool.NullPool)
        try:
            with writer.begin() as conn:
                yield conn
        finally:
            writer.dispose()

    @classmethod
    def lockdown(cls, dbapi_connection, details) -> None:
        try:
            dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
            dbapi_connection.execute("PRAGMA trusted_schema=OFF")
            dbapi_connection.execute("PRAGMA query_only=1")
        except sqlite3.Error as exc:
            raise LockdownError(f"cannot lock the SQLite connection down: {exc}") from exc
        dbapi_connection.set_authorizer(authorizer)
        # SQLite has no regular expressions: URL and email parts (host, domain, ...) come from a fixed-pattern
        # function (the patterns are core.driver.urls', never the caller's: no regex of a user's choosing runs).
        dbapi_connection.create_function(URL_PART_FUNCTION, 2, urls.extract, deterministic=True)
        # Nor named time zones: convert-timezone's named zones go through Python's zoneinfo.
        dbapi_connection.create_function(CONVERT_TZ_FUNCTION, 3, convert_tz, deterministic=True)
        # SQLAlchemy's pysqlite dialect registers Python's math.floor as FLOOR on every connection (for SQLite
        # builds without math functions), and it raises on NULL; ours replaces it and keeps SQL's NULL rule.
        dbapi_connection.create_function("FLOOR", 1, floor, deterministic=True)

    @classmethod
    @contextlib.contextmanager
    def guard(cls, conn, timeout):
        raw = conn.connection.dbapi_connection
        if timeout is None:
            yield
            return
        deadline = time.monotonic() + timeout
        raw.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, PROGRESS_STEPS)
        try:
            yield
        finally:
            raw.set_progress_handler(None, 0)

    @classmethod
    def canceller(cls, conn):
        return conn.connection.dbapi_connection.interrupt

    @classmethod
    @contextlib.contextmanager
    def open_result(cls, conn, sql, params, max_rows):
        # The C reader when it was built (drivers.sqlite_rows); the sqlite3 module's cursor otherwise.
        if sqlite_rows.native is None:
            with super().open_result(conn, sql, params, max_rows) as result:
                yield result
            return
        with sqlite_rows.open_result(conn, sql, params, max_rows, cls.stream_batch, cls.translate_error) as result:
            yield result

    # SQLite keeps whatever type name a column was declared with; exact names first, then the
    # affinity rules of https://sqlite.org/datatype3.html section 3.1.
    EXACT_TYPES = {
        "BOOLEAN": "type/Boolean", "BOOL": "type/Boolean", "DATE": "type/Date", "DATETIME": "type/DateTime",
        "TIMESTAMP": "type/DateTime", "TIME": "type/Time", "DECIMAL": "type/Decimal", "NUMERIC": "type/Decimal",
        "BIGINT": "type/BigInteger", "JSON": "type/JSON", "UUID": "type/UUID",
    }

    @classmethod
    def base_type(cls, database_type: str) -> str:
        upper = database_type.upper().strip()
        exact = cls.EXACT_TYPES.get(upper.split("(")[0].strip())
        if exact:
            return exact
        if "INT" in upper:
            return "type/Integer"
        if any(part in upper for part in ("CHAR", "CLOB", "TEXT")):
            return "type/Text"
        if any(part in upper for part in ("REAL", "FLOA", "DOUB")):
            return "type/Float"
        return "type/*"

    # ---- compiled MBQL: SQLite has no date types, only text and its date functions ------------------

    _STRFTIME = {"second": "%S", "minute-of-hour": "%M", "hour-of-day": "%H", "day-of-month": "%d",
                 "day-of-year": "%j", "month-of-year": "%m", "year": "%Y"}
    _MODIFIERS = {"day": ("start of day",), "month": ("start of month",), "year": ("start of year",)}

    @classmethod
    def truncate_temporal(cls, expr, unit, week_start=SUNDAY):
        if unit == "millisecond":  # %f is seconds with three decimals
            return _fn("STRFTIME", lit("%Y-%m-%d %H:%M:%f"), expr)
        if unit == "second":
            return _fn("DATETIME", expr)
        if unit in ("minute", "hour"):
            pattern = "%Y-%m-%d %H:%M:00" if unit == "minute" else "%Y-%m-%d %H:00:00"
            return _fn("DATETIME", _fn("STRFTIME", lit(pattern), expr))
        if unit == "quarter":
            months_in = exp.Mod(this=exp.Paren(this=exp.Sub(this=_int_part("%m", expr), expression=lit(1))),
                                expression=lit(3))
            # || binds tighter than % in SQLite: the parentheses are needed.
            back = exp.DPipe(this=exp.DPipe(this=lit("-"), expression=exp.Paren(this=months_in)),
                             expression=lit(" months"))
            return _fn("DATETIME", expr, lit("start of month"), back)
        if unit == "week":
            # Back six days, then forward to the week's first day ("weekday N" counts Sunday as 0).
            return _fn("DATETIME", expr, lit("start of day"), lit("-6 days"), lit(f"weekday {(week_start + 1) % 7}"))
        return _fn("DATETIME", expr, *map(lit, cls._MODIFIERS[unit]))

    @classmethod
    def weekday_from_sunday(cls, expr):
        return exp.Add(this=_int_part("%w", expr), expression=lit(1))

    @classmethod
    def extract_temporal(cls, expr, unit, week_start=SUNDAY):
        if unit == "day-of-week":
            return super().extract_temporal(expr, unit, week_start)
        if unit == "quarter-of-year":
            return exp.IntDiv(this=exp.Paren(this=exp.Add(this=_int_part("%m", expr), expression=lit(2))),
                              expression=lit(3))
        if unit == "week-of-year":
            # ISO week: the week holding this date's Thursday, counted from that year's first Thursday.
            thursday = _fn("DATE", expr, lit("-3 days"), lit("weekday 4"))
            day = exp.Sub(this=_int_part("%j", thursday), expression=lit(1))
            return exp.Add(this=exp.IntDiv(this=exp.Paren(this=day), expression=lit(7)), expression=lit(1))
        return _int_part(cls._STRFTIME[unit], expr)

    @classmethod
    def date_add(cls, expr, amount, unit):
        number = _number(amount)
        if unit == "millisecond":
            # DATETIME() drops fractions of a second; STRFTIME's %f keeps milliseconds.
            seconds = (lit(f"{number / 1000} seconds") if number is not None else
                       exp.DPipe(this=exp.Cast(this=exp.Div(this=cls.to_float(amount), expression=lit(1000.0)),
                                               to=exp.DataType.build("text")), expression=lit(" seconds")))
            return _fn("STRFTIME", lit("%Y-%m-%d %H:%M:%f"), expr, seconds)
        if unit in ("month", "quarter", "year"):
            return cls._add_months(expr, amount, number, {"month": 1, "quarter": 3, "year": 12}[unit])
        if unit in ("week", "quarter"):
            factor = 7 if unit == "week" else 3
            number = number * factor if number is not None else None
            amount = exp.Mul(this=amount, expression=lit(factor))
            unit = "day" if unit == "week" else "month"
        if number is not None:
            modifier = lit(f"{number} {unit}s")
        else:
            modifier = exp.DPipe(this=exp.Cast(this=amount, to=exp.DataType.build("text")), expression=lit(f" {unit}s"))
        return _fn("DATETIME", expr, modifier)

    @classmethod
    def _add_months(cls, expr, amount, number, factor):
        """Month arithmetic clamped to the target month's last day, as other engines do (SQLite's
        '+1 months' turns January 31st into March 3rd)."""
        if number is not None:
            months = lit(f"{number * factor} months")
        else:
            scaled = exp.Mul(this=amount, expression=lit(factor)) if factor != 1 else amount
            months = exp.DPipe(this=exp.Cast(this=scaled, to=exp.DataType.build("text")), expression=lit(" months"))
        start = _fn("DATE", expr.copy(), lit("start of month"), months)
        last_day = _int_part("%d", _fn("DATE", start.copy(), lit("+1 month"), lit("-1 day")))
        day = _fn("MIN", _int_part("%d", expr.copy()), last_day)
        offset = exp.DPipe(this=exp.Cast(this=exp.Sub(this=day, expression=lit(1)), to=exp.DataType.build("text")),
                           expression=lit(" days"))
        date = _fn("DATE", start, offset)
        return _fn("DATETIME", exp.DPipe(this=exp.DPipe(this=date, expression=lit(" ")), expression=_fn("TIME", expr)))

    @classmethod
    def cast_date(cls, expr):
        return _fn("DATE", expr)

    @classmethod
    def days_between(cls, start, end):
        days = exp.Sub(this=_fn("JULIANDAY", _fn("DATE", end)), expression=_fn("JULIANDAY", _fn("DATE", start)))
        return exp.Cast(this=days, to=exp.DataType.build("int"))

    @classmethod
    def seconds_between(cls, start, end):
        return exp.Sub(this=_int_part("%s", end), expression=_int_part("%s", start))

    @classmethod
    def temporal_column(cls, expr, base_type):
        # Values are text in whatever form they were written ("T" or space, fractions, zones):
        # DATE()/DATETIME() give the one canonical form the literals below use.
        return _fn("DATE" if base_type == "type/Date" else "DATETIME", expr)

    @classmethod
    def temporal_literal(cls, value):
        if hasattr(value, "hour"):
            return lit(value.strftime("%Y-%m-%d %H:%M:%S"))
        return lit(value.isoformat())

    @classmethod
    def now(cls):
        return _fn("DATETIME", lit("now"))

    @classmethod
    def string_match(cls, expr, kind, value, case_sensitive, bind=lit):
        if not case_sensitive:
            return super().string_match(expr, kind, value, case_sensitive, bind)
        # LIKE ignores case in SQLite; GLOB does not. Its wildcards are escaped as one-character sets.
        escaped = "".join(f"[{ch}]" if ch in "*?[" else ch for ch in value)
        pattern = {"contains": f"*{escaped}*", "starts-with": f"{escaped}*", "ends-with": f"*{escaped}"}[kind]
        return exp.Glob(this=expr, expression=bind(pattern))

    url_parts_without_regex = True

    @classmethod
    def url_part(cls, expr, part):
        return _fn(URL_PART_FUNCTION, expr, lit(part))

    @classmethod
    def zone_to_utc(cls, expr, zone):
        return _fn(CONVERT_TZ_FUNCTION, _fn("DATETIME", expr), lit(zone), lit("UTC"))

    @classmethod
    def utc_to_zone(cls, expr, zone):
        return _fn(CONVERT_TZ_FUNCTION, _fn("DATETIME", expr), lit("UTC"), lit(zone))

    @classmethod
    def split_part(cls, expr, delimiter, position):
        # No SPLIT_PART: a recursive CTE peels one piece per step (text || delimiter, so the last piece
        # ends in one too), correlated to the row by `expr`; a missing piece is '' and NULL text stays NULL.
        rest = exp.column("rest")
        found = _fn("INSTR", rest.copy(), lit(delimiter))
        anchor = exp.select(lit(0).as_("i"), exp.Null().as_("part"),
                            exp.DPipe(this=expr.copy(), expression=lit(delimiter)).as_("rest"))
        step = (exp.select(exp.Add(this=exp.column("i"), expression=lit(1)),
                           _fn("SUBSTR", rest.copy(), lit(1), exp.Sub(this=found.copy(), expression=lit(1))),
                           _fn("SUBSTR", rest.copy(), exp.Add(this=found.copy(), expression=lit(len(delimiter)))))
                .from_("pieces")
                .where(exp.and_(exp.GT(this=found.copy(), expression=lit(0)),
                                exp.LT(this=exp.column("i"), expression=position.copy()))))
        cte = exp.CTE(this=exp.union(anchor, step, distinct=False),
                      alias=exp.TableAlias(this=exp.to_identifier("pieces"),
                                           columns=[exp.to_identifier(c) for c in ("i", "part", "rest")]))
        pick = (exp.select("part").from_("pieces").where(exp.EQ(this=exp.column("i"), expression=position.copy())))
        pick.set("with_", exp.With(expressions=[cte], recursive=True))
        missing = exp.Case(ifs=[exp.If(this=exp.Is(this=expr.copy(), expression=exp.Null()), true=exp.Null())],
                           default=lit(""))
        return exp.Coalesce(this=exp.Subquery(this=pick), expressions=[missing])

    @classmethod
    def cast_text(cls, expr, base_type):
        if base_type in ("type/Date", "type/DateTime"):
            return cls.temporal_column(expr, base_type)
        return super().cast_text(expr, base_type)

    @classmethod
    def parse_datetime(cls, expr):
        return _fn("DATETIME", expr)

    @classmethod
    def from_unix(cls, expr, divisor):
        # 'unixepoch' reads the number as seconds since 1970 UTC; STRFTIME's %f keeps the milliseconds
        # that DATETIME() would drop from a sub-second count.
        if divisor == 1:
            return _fn("DATETIME", expr, lit("unixepoch"))
        seconds = exp.Div(this=cls.to_float(expr), expression=lit(float(divisor)))
        return _fn("STRFTIME", lit("%Y-%m-%d %H:%M:%f"), seconds, lit("unixepoch"))

    @classmethod
    def parse_time(cls, expr):
        return _fn("TIME", expr)

    @classmethod
    def transform(cls, tree):
        # SQLite has no STDDEV/VARIANCE functions: rewrite them from sums, which it has.
        return tree.transform(_spread, copy=False)

def _fn(name: str, *args) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


_SPREAD = {exp.Stddev: (True, True), exp.StddevSamp: (True, True), exp.StddevPop: (True, False),
           exp.Variance: (False, True), exp.VariancePop: (False, False)}


def _spread(node):
    """STDDEV/VARIANCE (sample or population) as (SUM(x*x) - SUM(x)*SUM(x)/n) / (n or n-1)."""
    kind = _SPREAD.get(type(node))
    if kind is None:
        return node
    root, sample = kind
    x = exp.Cast(this=node.this, to=exp.DataType.build("double"))
    n = exp.Count(this=node.this.copy())
    total = exp.Sum(this=x.copy())
    squares = exp.Sum(this=exp.Mul(this=x.copy(), expression=x.copy()))
    spread = exp.Sub(this=squares, expression=exp.Div(this=exp.Mul(this=total, expression=total.copy()),
                                                      expression=exp.Nullif(this=n, expression=lit(0))))
    divisor = exp.Sub(this=n.copy(), expression=lit(1)) if sample else n.copy()
    value = exp.Div(this=exp.Paren(this=spread), expression=exp.Nullif(this=divisor, expression=lit(0)))
    return exp.Sqrt(this=value) if root else value


def _number(expr):
    """The value of a numeric literal (possibly negated), or None when expr is not one."""
    sign = 1
    if isinstance(expr, exp.Neg):
        sign, expr = -1, expr.this
    if isinstance(expr, exp.Literal) and not expr.is_string:
        value = float(expr.this) * sign
        return int(value) if value.is_integer() else value
    return None


def _int_part(pattern: str, expr) -> exp.Expression:
    return exp.Cast(this=_fn("STRFTIME", lit(pattern), expr), to=exp.DataType.build("int"))


@hookimpl
def register_drivers():
    return [SQLiteDriver]
