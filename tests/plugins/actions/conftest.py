"""The `shop` fixture of the actions tests: the same small writable warehouse on SQLite, PostgreSQL and
MariaDB (the server ones skip when their loopback server does not answer), registered and synced through the
API with actions enabled, plus a direct reader of its rows that goes around Tessera."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable

import pytest
from sqlalchemy import create_engine, text

from core.testing import mariadb_data_source, postgres_data_source, sqlite_file

from .support import SCRIPT, enable_actions, make_model, register, table_id

SERVER_SCRIPT = {
    "postgres": """
        CREATE TABLE people (id SERIAL PRIMARY KEY, name TEXT NOT NULL, age INTEGER);
        INSERT INTO people (name, age) VALUES ('Ada', 36), ('Alan', 41), ('Grace', 85);
        CREATE TABLE twins (id INTEGER, name TEXT);
        INSERT INTO twins VALUES (1, 'a'), (1, 'b');
    """,
    "mysql": """
        CREATE TABLE people (id INTEGER AUTO_INCREMENT PRIMARY KEY, name VARCHAR(100) NOT NULL, age INTEGER);
        INSERT INTO people (name, age) VALUES ('Ada', 36), ('Alan', 41), ('Grace', 85);
        CREATE TABLE twins (id INTEGER, name VARCHAR(10));
        INSERT INTO twins VALUES (1, 'a'), (1, 'b');
    """,
}


@dataclass
class Shop:
    engine: str
    db: int
    model: int
    rows: Callable[[str], list[tuple]]
    tables: dict
    url: str = ""  # the warehouse as its owner reaches it, around Tessera


def _sources(app, kind: str):
    if kind == "sqlite":
        path = sqlite_file(app, "shop.sqlite", SCRIPT)
        return contextlib.nullcontext((({"db": path}), f"sqlite:///{path}"))
    factory = postgres_data_source if kind == "postgres" else mariadb_data_source

    @contextlib.contextmanager
    def server():
        with factory("tessera_act") as source:
            engine = create_engine(source.admin_url)
            with engine.begin() as conn:
                for statement in filter(str.strip, SERVER_SCRIPT[kind].split(";")):
                    conn.execute(text(statement))
                if kind == "postgres":
                    # Tables carry the default grants; a SERIAL's sequence needs its own.
                    conn.execute(text(f'GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "{source.details["user"]}"'))
            engine.dispose()
            yield source.details, source.admin_url
    return server()


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def shop(request, app, admin):
    with _sources(app, request.param) as (details, url):
        db = register(app, admin, name=f"Shop {request.param}", details=details, engine=request.param)
        enable_actions(admin, db)
        tables = {name: table_id(admin, db, name) for name in ("people", "twins")}
        model = make_model(admin, db, tables["people"])
        reader = create_engine(url)

        def rows(sql: str) -> list[tuple]:
            with reader.connect() as conn:
                return [tuple(r) for r in conn.execute(text(sql))]

        try:
            yield Shop(request.param, db, model, rows, tables, url)
        finally:
            reader.dispose()
