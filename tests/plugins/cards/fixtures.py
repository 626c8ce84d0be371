"""A small SQLite warehouse registered in the app DB (rows written directly, as a sync would), and the
card and query bodies over it; the `warehouse` fixture (tests/conftest.py) builds it for one test."""
from __future__ import annotations

import sqlite3
from pathlib import Path

PEOPLE = [(1, "Ada", "Lovelace", 36), (2, "Alan", "Turing", 41), (3, "Grace", "Hopper", 85)]
ORDERS = [(1, 1, 10.5), (2, 1, 20.0), (3, 2, 7.25), (4, 3, 100.0)]


def make_warehouse(data_dir: Path) -> Path:
    folder = Path(data_dir) / "files"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "warehouse.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE people (id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT, age INTEGER);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, person_id INTEGER REFERENCES people(id), total REAL);
    """)
    con.executemany("INSERT INTO people VALUES (?, ?, ?, ?)", PEOPLE)
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)", ORDERS)
    con.commit()
    con.close()
    return path


def register_warehouse(app, path: Path) -> dict:
    """Database, Table and Field rows for the warehouse; returns their ids by name."""
    from core.appdb.models import Database, Field, Table
    from core.driver.crypto import encrypt_details

    state = app.extensions["tessera"]
    ids: dict = {}
    with app.app_context(), state.db.session() as session:
        database = Database(name="Warehouse", engine="sqlite", details=encrypt_details({"db": str(path)}),
                            initial_sync_status="complete")
        session.add(database)
        session.flush()
        ids["db"] = database.id
        columns = {
            "people": [("id", "INTEGER", "type/Integer", "type/PK"), ("first_name", "TEXT", "type/Text", "type/Name"),
                       ("last_name", "TEXT", "type/Text", "type/Name"), ("age", "INTEGER", "type/Integer", None)],
            "orders": [("id", "INTEGER", "type/Integer", "type/PK"), ("person_id", "INTEGER", "type/Integer", "type/FK"),
                       ("total", "REAL", "type/Float", None)],
        }
        for table_name, fields in columns.items():
            table = Table(db_id=database.id, name=table_name, display_name=table_name.title(),
                          initial_sync_status="complete")
            session.add(table)
            session.flush()
            ids[table_name] = table.id
            for position, (name, db_type, base, semantic) in enumerate(fields):
                f = Field(table_id=table.id, name=name, display_name=name.replace("_", " ").title(),
                          database_type=db_type, base_type=base, effective_type=base, semantic_type=semantic,
                          position=position, database_position=position)
                session.add(f)
                session.flush()
                ids[f"{table_name}.{name}"] = f.id
        session.get(Field, ids["orders.person_id"]).fk_target_field_id = ids["people.id"]
        session.commit()
    return ids


def native_query(db_id: int, sql: str, **tags) -> dict:
    return {"database": db_id, "type": "native", "native": {"query": sql, **({"template-tags": tags} if tags else {})}}


def mbql_query(db_id: int, **inner) -> dict:
    return {"database": db_id, "type": "query", "query": inner}


def card_body(name: str, dataset_query: dict, **extra) -> dict:
    return {"name": name, "display": "table", "dataset_query": dataset_query, "visualization_settings": {}, **extra}
