"""The app database: one SQLAlchemy engine and session factory per app, and the request's session.

The app DB is a SQLite file in TESSERA_DATA_DIR by default and PostgreSQL in production
(TESSERA_DB_URL=postgresql+psycopg://...). Alembic migrations (core/migrations) own the schema.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

from flask import current_app, g
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


class AppDatabase:
    def __init__(self, url: str):
        self.url = url
        options: dict = {"future": True}
        if url.startswith("sqlite"):
            path = url.split("///", 1)[-1]
            if path and path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            # Background sync threads and gunicorn threads share the file: wait instead of failing.
            options["connect_args"] = {"timeout": 30, "check_same_thread": False}
        else:
            options["pool_pre_ping"] = True
        self.engine: Engine = create_engine(url, **options)
        if url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.Session = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @contextlib.contextmanager
    def session(self):
        """A session for work outside a request (CLI, background jobs): commit on success."""
        session = self.Session()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def migrate(self) -> None:
        from alembic import command

        command.upgrade(alembic_config(self.url, self.engine), "heads")

    def dispose(self) -> None:
        self.engine.dispose()


def _sqlite_pragmas(dbapi_connection, _record):
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def alembic_config(url: str, engine: Engine | None = None):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["engine"] = engine
    return cfg


def app_db() -> AppDatabase:
    return current_app.extensions["tessera"].db


def session() -> Session:
    """The request's app-DB session, opened on first use and closed when the request ends."""
    if "db_session" not in g:
        g.db_session = app_db().Session()
    return g.db_session


def close_request_session(exc=None) -> None:
    db_session = g.pop("db_session", None)
    if db_session is not None:
        if exc is not None:
            db_session.rollback()
        db_session.close()
