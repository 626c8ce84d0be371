"""The MySQL and MariaDB driver (PyMySQL), locked down as compat/security.md section 2 says.

`local_infile` is off (and checked on every connection), so a rogue server cannot ask for a client
file. No user option reaches PyMySQL: the Details allowlist is all there is (no init_command,
read_default_file, client_flag or ssl paths). A read-only transaction does not stop
`SELECT ... INTO OUTFILE` or `LOAD_FILE()`, so users holding FILE (or SUPER, which can switch the
server's settings) are refused, as PostgreSQL's server-file roles are. Each statement runs in
`START TRANSACTION READ ONLY` after the session is set read-only again (a previous query may have
changed it), with MariaDB's `max_statement_time` or MySQL's `max_execution_time` as its timeout.
Actions' writes are bounded too: by `max_statement_time` on MariaDB, and on MySQL (whose timeout stops
SELECTs only) by a KILL QUERY sent when a statement passes its deadline.
"""
from __future__ import annotations

import contextlib
import ssl
import threading

from sqlalchemy import event
from sqlglot import exp
from sqlglot.dialects.mysql import MySQL

from core import hookimpl
from core.driver import LockdownError, NetworkDetails, SQLDriver, deadlines
from core.driver.dialect import SUNDAY, lit

REFUSED_PRIVILEGES = ("FILE", "SUPER")
PRIVILEGE_CHECK = """
SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES
 WHERE GRANTEE = CONCAT("'", SUBSTRING_INDEX(CURRENT_USER(), '@', 1), "'@'",
                        SUBSTRING_INDEX(CURRENT_USER(), '@', -1), "'")
"""

# cursor.description type codes (pymysql.constants.FIELD_TYPE) -> the names base_type understands;
# numbers, so that this module imports without PyMySQL (the driver is then hidden).
RESULT_TYPES = {
    0: "DECIMAL", 246: "DECIMAL", 1: "TINYINT", 2: "SMALLINT", 3: "INT", 9: "MEDIUMINT", 8: "BIGINT",
    4: "FLOAT", 5: "DOUBLE", 7: "TIMESTAMP", 12: "DATETIME", 10: "DATE", 14: "DATE", 11: "TIME", 13: "YEAR",
    16: "BIT", 245: "JSON", 15: "VARCHAR", 253: "VARCHAR", 254: "CHAR", 247: "ENUM", 248: "SET",
    249: "TEXT", 250: "TEXT", 251: "TEXT", 252: "TEXT", 255: "GEOMETRY", 6: "NULL",
}
CLIENT_LOCAL_FILES = 128  # pymysql.constants.CLIENT.LOCAL_FILES


class MySQLDetails(NetworkDetails):
    pass


class MySQLAndMariaDB(MySQL):
    """MySQL as both servers read it: MariaDB has no REGEXP_LIKE(), both have the REGEXP operator."""

    class Generator(MySQL.Generator):
        TRANSFORMS = {**MySQL.Generator.TRANSFORMS,
                      exp.RegexpLike: lambda self, e: self.binary(e, "REGEXP")}


class MySQLDriver(SQLDriver):
    engine = "mysql"
    display_name = "MySQL"
    sqlglot_dialect = "mysql"
    sqlalchemy_dialect = "mysql+pymysql"
    default_port = 3306
    Details = MySQLDetails
    dbapi_modules = ("pymysql",)
    features = frozenset({
        "basic-aggregations", "standard-deviation-aggregations", "expressions", "native-parameters",
        "nested-queries", "binning", "case-sensitivity-string-filter-options", "left-join", "right-join",
        "inner-join", "foreign-keys", "regex", "convert-timezone", "window-functions/offset",
        "window-functions/cumulative", "persist-models", "actions",
    })
    # 1317 (query interrupted): a write stopped at its deadline by KILL QUERY (MySQL).
    timeout_markers = ("max_statement_time exceeded", "maximum statement execution time exceeded", "(1969,", "(3024,",
                       "(1317,")
    type_map = (
        ("tinyint(1)", "type/Boolean"), ("bool", "type/Boolean"), ("bit(1)", "type/Boolean"),
        ("bigint", "type/BigInteger"), ("int", "type/Integer"), ("mediumint", "type/Integer"),
        ("smallint", "type/Integer"), ("tinyint", "type/Integer"), ("year", "type/Integer"),
        ("decimal", "type/Decimal"), ("numeric", "type/Decimal"),
        ("double", "type/Float"), ("float", "type/Float"), ("real", "type/Float"),
        ("varchar", "type/Text"), ("char", "type/Text"), ("tinytext", "type/Text"), ("mediumtext", "type/Text"),
        ("longtext", "type/Text"), ("text", "type/Text"), ("enum", "type/Text"), ("set", "type/Text"),
        ("datetime", "type/DateTime"), ("timestamp", "type/DateTimeWithLocalTZ"), ("date", "type/Date"),
        ("time", "type/Time"), ("json", "type/JSON"),
    )

    @classmethod
    def sql_dialect(cls):
        return MySQLAndMariaDB

    @classmethod
    def url(cls, details: MySQLDetails):
        return super().url(details).update_query_dict({"charset": "utf8mb4"})

    @classmethod
    def engine_options(cls, details: MySQLDetails) -> dict:
        # With SSL the server certificate is verified against the system CAs (PyMySQL's dict form
        # without a CA would skip verification).
        return {"connect_args": {"local_infile": False, "connect_timeout": 10,
                                 "ssl": ssl.create_default_context() if details.ssl else None},
                "pool_recycle": 1800}

    @classmethod
    def lockdown(cls, dbapi_connection, details) -> None:
        if dbapi_connection.client_flag & CLIENT_LOCAL_FILES or getattr(dbapi_connection, "_local_infile", False):
            raise LockdownError("MySQL connections must not allow LOAD DATA LOCAL (local_infile)")
        with dbapi_connection.cursor() as cursor:
            cursor.execute(PRIVILEGE_CHECK)
            held = {row[0].upper() for row in cursor.fetchall()}
            refused = [p for p in REFUSED_PRIVILEGES if p in held]
            if refused:
                raise LockdownError(
                    f"The user {details.user!r} holds the {', '.join(refused)} privilege; "
                    "connect Tessera with a user that can only read.")
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
        dbapi_connection.commit()

    @classmethod
    def is_mariadb(cls, dbapi_connection) -> bool:
        return "mariadb" in dbapi_connection.get_server_info().lower()

    @classmethod
    def server_stops_writes(cls, dbapi_connection) -> bool:
        """MariaDB's max_statement_time stops any statement; MySQL's max_execution_time only SELECTs."""
        return cls.is_mariadb(dbapi_connection)

    @classmethod
    @contextlib.contextmanager
    def writable(cls, engine, details, timeout=None):
        with engine.connect() as conn:
            # A session characteristic (the lockdown set READ ONLY), restored before the connection
            # goes back to the pool.
            conn.exec_driver_sql("SET SESSION TRANSACTION READ WRITE")
            server_side = timeout is not None and cls.server_stops_writes(conn.connection.dbapi_connection)
            if server_side:
                conn.exec_driver_sql(f"SET SESSION max_statement_time = {max(timeout, 0.001)}")
            conn.commit()
            try:
                with conn.begin():
                    if timeout is None or server_side:
                        yield conn
                    else:
                        with cls._statement_deadlines(conn, timeout):
                            yield conn
            finally:
                if server_side:
                    conn.exec_driver_sql("SET SESSION max_statement_time = 0")
                conn.exec_driver_sql("SET SESSION TRANSACTION READ ONLY")
                conn.commit()

    @classmethod
    @contextlib.contextmanager
    def _statement_deadlines(cls, conn, timeout: float):
        """MySQL has no timeout for writes (nor for their row-lock waits below innodb_lock_wait_timeout's
        whole seconds): each statement of the block is stopped by KILL QUERY once it has run `timeout`
        seconds. A statement's deadline is withdrawn when it returns, and a kill not yet sent by then is
        never sent, so no later statement (nor the connection's next user) is stopped by mistake."""
        thread_id = int(conn.connection.dbapi_connection.thread_id())
        engine = conn.engine
        armed: list[tuple[threading.Lock, list, object]] = []

        def kill(lock: threading.Lock, withdrawn: list) -> None:
            # On its own thread: taking a pooled connection may wait, the shared timer thread must not.
            with contextlib.suppress(Exception), engine.connect() as other, lock:  # failed: the write runs on
                if not withdrawn:
                    other.exec_driver_sql(f"KILL QUERY {thread_id}")

        def off(*_args) -> None:
            while armed:
                lock, withdrawn, handle = armed.pop()
                handle.cancel()
                with lock:  # waits for a KILL being sent now
                    withdrawn.append(True)

        def arm(*_args) -> None:
            off()
            lock, withdrawn = threading.Lock(), []
            handle = deadlines.call_later(max(timeout, 0.001), lambda: threading.Thread(
                target=kill, args=(lock, withdrawn), daemon=True, name="tessera-mysql-kill").start())
            armed.append((lock, withdrawn, handle))

        event.listen(conn, "before_cursor_execute", arm)
        event.listen(conn, "after_cursor_execute", off)
        try:
            yield
        finally:
            event.remove(conn, "before_cursor_execute", arm)
            event.remove(conn, "after_cursor_execute", off)
            off()

    @classmethod
    @contextlib.contextmanager
    def guard(cls, conn, timeout):
        raw = conn.connection.dbapi_connection
        variable = "max_statement_time" if cls.is_mariadb(raw) else "max_execution_time"
        seconds = 0 if timeout is None else max(timeout, 0.001)
        value = seconds if variable == "max_statement_time" else int(seconds * 1000)
        conn.exec_driver_sql("SET SESSION TRANSACTION READ ONLY")
        conn.exec_driver_sql(f"SET SESSION {variable} = {value}")
        conn.exec_driver_sql("START TRANSACTION READ ONLY")
        try:
            yield
        finally:
            # Sync and other callers share the pool: no statement timeout outlives its statement.
            with contextlib.suppress(Exception):
                raw.query(f"SET SESSION {variable} = 0")

    @classmethod
    def canceller(cls, conn):
        # KILL QUERY from another pooled connection of the same (locked-down) user, who may stop its own
        # threads; the connection itself stays usable.
        thread_id = int(conn.connection.dbapi_connection.thread_id())
        engine = conn.engine

        def kill():
            with engine.connect() as other:
                other.exec_driver_sql(f"KILL QUERY {thread_id}")

        return kill

    @classmethod
    def abandon(cls, conn, result) -> None:
        # PyMySQL would read an unbuffered result to its end before the connection is usable (3M
        # rows: 7 s). Dropping the connection is instant, and the server stops the query when its
        # next write to the closed socket fails.
        raw = conn.connection.dbapi_connection
        if getattr(raw, "_result", None) is not None:
            raw._result.unbuffered_active = False
        result.cursor._result = None
        conn.invalidate()

    @classmethod
    def column_type_name(cls, column: dict) -> str:
        # MySQL's BOOLEAN is TINYINT(1); SQLAlchemy's str() drops the display width that says so.
        name = str(column["type"])
        if name == "TINYINT" and getattr(column["type"], "display_width", None) == 1:
            return "TINYINT(1)"
        return name

    @classmethod
    def result_type_name(cls, entry, cursor) -> str:
        name = RESULT_TYPES.get(entry[1], "")
        if name == "TINYINT" and entry[3] == 1:
            return "TINYINT(1)"
        return name

    @classmethod
    def estimate_row_counts(cls, engine, tables):
        # The storage engine's estimate (InnoDB samples it; exact for MyISAM), of this connection's database.
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
                "AND TABLE_TYPE = 'BASE TABLE' AND TABLE_ROWS IS NOT NULL").all()
        return {("", name): int(count) for name, count in rows}

    @classmethod
    def dbms_version(cls, engine) -> dict:
        with engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            version = raw.get_server_info()
            flavor = "MariaDB" if "mariadb" in version.lower() else "MySQL"
        numbers = [int(p) for p in version.split("-")[0].split(".") if p.isdigit()]
        return {"flavor": flavor, "version": version, "semantic-version": numbers[:3]}


    # ---- compiled MBQL: no DATE_TRUNC, function-style date parts, case-insensitive collations --------

    _FORMATS = {"second": "%Y-%m-%d %H:%i:%s",
                "minute": "%Y-%m-%d %H:%i:00", "hour": "%Y-%m-%d %H:00:00", "day": "%Y-%m-%d",
                "month": "%Y-%m-01", "year": "%Y-01-01"}
    _PARTS = {"second": "SECOND", "minute-of-hour": "MINUTE", "hour-of-day": "HOUR",
              "day-of-month": "DAYOFMONTH", "day-of-year": "DAYOFYEAR", "month-of-year": "MONTH",
              "quarter-of-year": "QUARTER", "year": "YEAR"}

    @classmethod
    def truncate_temporal(cls, expr, unit, week_start=SUNDAY):
        if unit == "millisecond":  # drop the microseconds below the millisecond
            below = exp.Mod(this=_fn("MICROSECOND", expr.copy()), expression=lit(1000))
            return cls.date_add(expr, exp.Neg(this=exp.Paren(this=below)), "microsecond")
        if unit in cls._FORMATS:
            start = _fn("DATE_FORMAT", expr, lit(cls._FORMATS[unit]))
        elif unit == "week":
            first = (week_start + 1) % 7  # the week's first day as DAYOFWEEK() - 1 counts it (Sunday 0)
            if not first:
                back = exp.Sub(this=lit(1), expression=_fn("DAYOFWEEK", expr.copy()))
            else:  # days since the first day; + 6 - first keeps % non-negative
                since = exp.Add(this=_fn("DAYOFWEEK", expr.copy()), expression=lit(6 - first))
                back = exp.Neg(this=exp.Paren(this=exp.Mod(this=exp.Paren(this=since), expression=lit(7))))
            start = cls.date_add(_fn("DATE", expr), back, "day")
        else:  # quarter
            quarter = exp.Sub(this=_fn("QUARTER", expr.copy()), expression=lit(1))
            start = cls.date_add(_fn("MAKEDATE", _fn("YEAR", expr), lit(1)), quarter, "quarter")
        return _fn("TIMESTAMP", start)

    @classmethod
    def date_add(cls, expr, amount, unit):
        # MySQL has a QUARTER interval; INTERVAL takes a parenthesised expression as its amount.
        if unit == "millisecond":
            amount, unit = exp.Mul(this=exp.Paren(this=amount), expression=lit(1000)), "microsecond"
        if not isinstance(amount, (exp.Literal, exp.Neg)):
            amount = exp.Paren(this=amount)
        return exp.DateAdd(this=expr, expression=amount, unit=exp.var(unit.upper()))

    # AVG, STDDEV_POP and VAR_POP of an integer column are DECIMAL with four places on MySQL and
    # MariaDB; every other engine answers a double. Aggregating doubles keeps the answers equal.
    @classmethod
    def average(cls, expr):
        return exp.Avg(this=cls.to_float(expr))

    @classmethod
    def stddev(cls, expr):
        return exp.StddevPop(this=cls.to_float(expr))

    @classmethod
    def variance(cls, expr):
        return exp.VariancePop(this=cls.to_float(expr))

    @classmethod
    def regex_match_first(cls, expr, pattern):
        # MariaDB's REGEXP_SUBSTR answers '' when nothing matches (NULL elsewhere), and follows the
        # column's case-insensitive collation unless the pattern turns that off with (?-i).
        return exp.Nullif(this=_fn("REGEXP_SUBSTR", expr, lit("(?-i)" + pattern)), expression=lit(""))

    @classmethod
    def url_part(cls, expr, part):
        # REGEXP_SUBSTR has no capture groups: Metabase's own lookaround patterns match the part itself;
        # MariaDB refuses path's variable-length lookbehind, so path is cut from its match at the first '/'.
        from core.driver import urls

        if part != "path":
            return cls.regex_match_first(expr, urls.WHOLE[part])
        match = cls.regex_match_first(expr, urls.PATH_MATCH)
        return _fn("SUBSTRING", match, _fn("LOCATE", lit("/"), match.copy()))

    @classmethod
    def split_part(cls, expr, delimiter, position):
        # SUBSTRING_INDEX answers the last piece for a position past the end: count the pieces first.
        from core.driver.dialect import position_guard

        without = _fn("REPLACE", expr.copy(), lit(delimiter), lit(""))
        removed = exp.Sub(this=_fn("CHAR_LENGTH", expr.copy()), expression=_fn("CHAR_LENGTH", without))
        pieces = exp.Add(this=exp.Div(this=exp.Paren(this=removed), expression=lit(len(delimiter)), typed=True),
                         expression=lit(1))
        first = _fn("SUBSTRING_INDEX", expr, lit(delimiter), position.copy())
        part = _fn("SUBSTRING_INDEX", first, lit(delimiter), lit(-1))
        beyond = exp.GT(this=position.copy(), expression=pieces)
        return position_guard(exp.Case(ifs=[exp.If(this=beyond, true=lit(""))], default=part), position)

    @classmethod
    def zoned_to_utc(cls, expr):
        # A TIMESTAMP column reads in the session's zone.
        return _fn("CONVERT_TZ", expr, exp.var("@@session.time_zone"), lit("+00:00"))

    @classmethod
    def zone_to_utc(cls, expr, zone):
        # Named zones need the server's time zone tables (mysql_tzinfo_to_sql); without them MySQL answers NULL.
        return _fn("CONVERT_TZ", expr, lit(zone), lit("+00:00"))

    @classmethod
    def utc_to_zone(cls, expr, zone):
        return _fn("CONVERT_TZ", expr, lit("+00:00"), lit(zone))

    @classmethod
    def days_between(cls, start, end):
        return _fn("DATEDIFF", end, start)

    @classmethod
    def seconds_between(cls, start, end):
        return _fn("TIMESTAMPDIFF", exp.var("SECOND"), start, end)

    @classmethod
    def weekday_from_sunday(cls, expr):
        return _fn("DAYOFWEEK", expr)

    @classmethod
    def extract_temporal(cls, expr, unit, week_start=SUNDAY):
        if unit == "day-of-week":
            return super().extract_temporal(expr, unit, week_start)
        if unit == "week-of-year":
            return _fn("WEEK", expr, lit(3))  # mode 3: ISO weeks
        return _fn(cls._PARTS[unit], expr)

    @classmethod
    def exact_text(cls, value):
        # Default collations ignore case: a binary value makes = and LIKE compare bytes.
        return exp.Cast(this=value, to=exp.DataType.build("binary"))


def _fn(name: str, *args) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


@hookimpl
def register_drivers():
    return [MySQLDriver]
