"""The SQLite driver (stdlib sqlite3), locked down as compat/security.md section 2 says.

A file opens read-only (`mode=ro`), with no attached databases allowed (which also stops VACUUM
INTO), `query_only`, `trusted_schema=OFF` and an authorizer that refuses ATTACH/DETACH, every
PRAGMA outside a read-only allowlist and file- or extension-touching functions. Timeouts use a
progress handler, which SQLite calls while it steps through the statement, fetches included.
"""
from __future__ import annotations

import contextlib
import sqlite3
import time
from urllib.parse import quote

from pydantic import Field
from sqlalchemy.engine import URL

from core import hookimpl
from core.driver import FileDetails, LockdownError, SQLDriver

READ_PRAGMAS = frozenset({"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list"})
DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})
PROGRESS_STEPS = 1000


def authorizer(action: int, arg1, arg2, dbname, source) -> int:
    """The SQLite authorizer every data connection carries (see module docstring)."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() not in READ_PRAGMAS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect_read_only(path: str) -> sqlite3.Connection:
    # Pooled connections move between request and sync threads; each is used by one at a time.
    return sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, check_same_thread=False)


class SQLiteDetails(FileDetails):
    db: str = Field(title="Filename", json_schema_extra={"placeholder": "/home/camsaul/toucan_sightings.sqlite 😋"})


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
        "foreign-keys", "regex",
    })
    timeout_markers = ("interrupted",)
    probe_sql = "SELECT count(*) FROM sqlite_master"

    @classmethod
    def url(cls, details: SQLiteDetails) -> URL:
        # The file is opened by `creator`, read-only; the URL only names the dialect.
        return URL.create("sqlite")

    @classmethod
    def engine_options(cls, details: SQLiteDetails) -> dict:
        path = details.db
        return {"creator": lambda: connect_read_only(path)}

    @classmethod
    def lockdown(cls, dbapi_connection, details) -> None:
        try:
            dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
            dbapi_connection.execute("PRAGMA trusted_schema=OFF")
            dbapi_connection.execute("PRAGMA query_only=1")
        except sqlite3.Error as exc:
            raise LockdownError(f"cannot lock the SQLite connection down: {exc}") from exc
        dbapi_connection.set_authorizer(authorizer)

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


@hookimpl
def register_drivers():
    return [SQLiteDriver]
