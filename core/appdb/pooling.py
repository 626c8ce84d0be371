"""What a pooled app-DB connection costs a request in round trips besides its own statements.

On a server each of them is a wait for the server (and, on a machine whose CPU is busy, for the
server's process to be scheduled). A read that answers from core.appdb.memo after one statement paid
for three more: the pool's ping at checkout, BEGIN before the first statement and ROLLBACK when the
session closed (psycopg also forgets its prepared statements at every ROLLBACK, so none lasted past
a request). Two mechanisms, each one a backend asks for (core.appdb.db.AppBackend):

- `reads_outside_transactions(engine)`: a connection runs its plain reads in autocommit, as SQLite's
  driver does by itself: the first statement after a checkout, when it is a plain SELECT, puts the
  DBAPI connection in autocommit (no BEGIN is sent, and nothing is left to roll back), and the first
  statement that is not (a write, DDL, SAVEPOINT, SET, a row lock, a server-side cursor) puts it back
  in the engine's isolation level before it runs, so it and everything after it run in a transaction
  as before. Under READ COMMITTED every statement of a transaction sees its own snapshot anyway, so
  reads before the first write see what they saw inside one. A caller that chose an isolation level
  (execution option `isolation_level`) keeps it. A write on the DBAPI cursor itself, past
  SQLAlchemy's events, must follow a statement through them (core.appdb.changes writes its counters
  so, inside the transaction a write began) or be alone on its connection.
- `ping_when_doubtful(engine, idle_seconds)`: instead of `pool_pre_ping` (a round trip at every
  checkout), a connection back from a use less than `idle_seconds` ago is pinged only when its socket
  has something to say (a server that ends a session, by a restart, a termination or a timeout, says
  so and closes the socket, which a poll sees at no cost); one idle longer, or with no socket to
  poll, is pinged as before. A failed ping makes the pool open a new connection (DisconnectionError),
  as pool_pre_ping does.
"""
from __future__ import annotations

import re
import select
import time

from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

OUTSIDE = "tessera.outside"  # in a connection record's info: in autocommit for reads, set here
FRESH = "tessera.fresh"  # in a connection record's info: no statement has run since its checkout
RETURNED = "tessera.returned"  # in a connection record's info: time.monotonic() when it was checked in

_LOCKING = re.compile(r"\bFOR\s+(?:NO\s+KEY\s+UPDATE|UPDATE|KEY\s+SHARE|SHARE)\b"
                      r"|\b(?:pg_advisory_xact_lock|pg_try_advisory_xact_lock|set_config|nextval|setval)\b",
                      re.IGNORECASE)
_WRITE_IN_CTE = re.compile(r"\b(?:INSERT|UPDATE|DELETE|MERGE)\b", re.IGNORECASE)
_FIRST_WORD = re.compile(r"\s*\(*\s*([A-Za-z]+)")
_plain: dict[str, bool] = {}


def plain_read(sql: str) -> bool:
    """Whether a statement only reads and holds nothing past itself: a SELECT (or a WITH of SELECTs)
    without row locks or transaction-scoped functions."""
    known = _plain.get(sql)
    if known is not None:
        return known
    first = _FIRST_WORD.match(sql)
    word = first.group(1).upper() if first else ""
    known = (word == "SELECT" or word == "WITH" and not _WRITE_IN_CTE.search(sql)) and not _LOCKING.search(sql)
    if len(_plain) > 20000:  # statements with values in their text: bounded
        _plain.clear()
    _plain[sql] = known
    return known


def reads_outside_transactions(engine: Engine) -> None:
    """Plain reads in autocommit until a statement needs a transaction (see the module's docstring)."""
    dialect = engine.dialect

    @event.listens_for(engine, "checkout")
    def _checkout(_dbapi_connection, record, _proxy) -> None:
        record.info[FRESH] = True

    @event.listens_for(engine, "checkin")
    def _checkin(dbapi_connection, record) -> None:
        if record.info.pop(OUTSIDE, False) and dbapi_connection is not None:
            # The next holder (a write on the DBAPI cursor, a caller's isolation level) finds the
            # engine's own setting.
            dialect.set_isolation_level(dbapi_connection, dialect.default_isolation_level)

    @event.listens_for(engine, "before_cursor_execute")
    def _before(conn, _cursor, statement, _parameters, context, _executemany) -> None:
        info = conn.info
        fresh = info.pop(FRESH, False)
        outside = info.get(OUTSIDE, False)
        if not fresh and not outside:
            return
        options = context.execution_options if context is not None else {}
        if "isolation_level" in options:  # the caller's choice, which SQLAlchemy has set
            info.pop(OUTSIDE, None)
            return
        plain = plain_read(statement) and not options.get("stream_results") and not options.get("yield_per")
        if fresh and plain and not outside:
            try:
                dialect.set_isolation_level(conn.connection.dbapi_connection, "AUTOCOMMIT")
            except dialect.loaded_dbapi.Error:  # a transaction already begun on the DBAPI cursor: it stays
                return
            info[OUTSIDE] = True
        elif outside and not plain:
            # This statement begins the transaction (the driver sends BEGIN before it).
            dialect.set_isolation_level(conn.connection.dbapi_connection, dialect.default_isolation_level)
            del info[OUTSIDE]


def _socket_speaks(dbapi_connection) -> bool:
    """Whether the connection's socket has something to read (or cannot be polled): an idle session's
    server says nothing unless it is ending the session."""
    fileno = getattr(dbapi_connection, "fileno", None)
    if fileno is None:
        return True
    try:
        poll = select.poll()
        poll.register(fileno(), select.POLLIN | select.POLLPRI)
        return bool(poll.poll(0))
    except Exception:  # closed (the driver's own error), or no socket: the ping decides
        return True


def ping_when_doubtful(engine: Engine, idle_seconds: float) -> None:
    """The pool's check at checkout, with a round trip only when in doubt (see the module's docstring)."""
    dialect = engine.dialect

    @event.listens_for(engine, "connect")
    @event.listens_for(engine, "checkin")
    def _used(_dbapi_connection, record) -> None:  # a new connection needs no ping either
        record.info[RETURNED] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection, record, _proxy) -> None:
        returned = record.info.get(RETURNED)
        if returned is not None and time.monotonic() - returned < idle_seconds \
                and not _socket_speaks(dbapi_connection):
            return
        try:
            alive = dialect.do_ping(dbapi_connection)
        except Exception as error:
            raise exc.DisconnectionError("app-DB connection failed its ping") from error
        if not alive:
            raise exc.DisconnectionError("app-DB connection failed its ping")
