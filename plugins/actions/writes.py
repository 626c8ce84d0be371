"""The one way actions write to a data source: one transaction on the database's own connection pool,
opened writable by its driver (`SQLDriver.writable`: PostgreSQL lifts READ ONLY for that transaction,
MySQL for the session and restores it, SQLite opens its own writer that still refuses ATTACH). Every
other use of the pool stays read-only; nothing here names an engine.

An exception inside the block rolls the transaction back: `Rollback(error)` when the statement ran but
its outcome is refused (a row count other than one), an engine error (constraint, syntax) is re-raised
as a 400 with the engine's message."""
from __future__ import annotations

import contextlib
from typing import Iterator

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from core.driver import QueryError
from core.driver.connections import driver_for, engine_for, validate_details
from core.driver.crypto import decrypt_details
from core.driver.records import LockdownError
from core.http.errors import ApiError

from .errors import ActionFailed


class Rollback(Exception):
    """Undo the transaction, then answer with `error`."""

    def __init__(self, error: ApiError):
        super().__init__(error.message)
        self.error = error


@contextlib.contextmanager
def transaction(database, timeout: float | None = None) -> Iterator[Connection]:
    """The writable transaction; with `timeout` each statement is stopped after that many seconds."""
    driver = driver_for(database)
    details = validate_details(database.engine, decrypt_details(database.details))
    try:
        with driver.writable(engine_for(database), details, timeout=timeout) as conn:
            yield conn
    except Rollback as exc:
        raise exc.error from None
    except (DBAPIError, LockdownError, QueryError) as exc:
        error = driver.translate_error(exc)
        raise ActionFailed(_first_line(error.message if isinstance(error, QueryError) else str(exc))) from None
    except SQLAlchemyError as exc:
        raise ActionFailed(_first_line(str(exc))) from None
    except (OverflowError, TypeError, ValueError) as exc:
        # A value the DBAPI cannot bind (an integer past 64 bits, a map): the request's, not the server's.
        raise ActionFailed(f"Invalid value: {_first_line(str(exc))}") from None


def _first_line(text: str) -> str:
    return (text or "Error executing action.").strip().splitlines()[0]
