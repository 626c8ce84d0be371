"""An app with a registered SQLite `orders` database whose metadata rows are written directly
(sync is another plugin's concern), and an admin client."""
from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

CATEGORIES = ["Widget", "Gizmo", "Gadget", "Doohickey"]


def order_rows(count: int):
    start = dt.datetime(2024, 1, 1)
    for i in range(1, count + 1):
        yield (i, CATEGORIES[i % 4], round(i * 1.25, 2), (start + dt.timedelta(hours=7 * i)).isoformat(sep=" "))


@dataclass
class Orders:
    database_id: int
    table_id: int
    fields: dict
    path: str
    count: int


def make_orders(app, count: int = 2500, name: str = "orders.db") -> Orders:
    from core.appdb.models import Database, Field, Table
    from core.driver import crypto

    files = Path(app.config["TESSERA_DATA_DIR"]) / "files"
    files.mkdir(exist_ok=True)
    path = files / name
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, category TEXT, price REAL, created_at TIMESTAMP)")
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", order_rows(count))
    conn.commit()
    conn.close()
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        database = Database(name="Orders", engine="sqlite", details=crypto.encrypt_details({"db": str(path)}),
                            initial_sync_status="complete")
        session.add(database)
        session.flush()
        table = Table(db_id=database.id, name="orders", display_name="Orders", initial_sync_status="complete")
        session.add(table)
        session.flush()
        fields = {}
        for position, (column, db_type, base, semantic, display) in enumerate([
            ("id", "INTEGER", "type/Integer", "type/PK", "ID"),
            ("category", "TEXT", "type/Text", "type/Category", "Category"),
            ("price", "REAL", "type/Float", None, "Price"),
            ("created_at", "TIMESTAMP", "type/DateTime", "type/CreationTimestamp", "Created At"),
        ]):
            field = Field(table_id=table.id, name=column, display_name=display, database_type=db_type,
                          base_type=base, effective_type=base, semantic_type=semantic, position=position,
                          database_position=position)
            session.add(field)
            session.flush()
            fields[column] = field.id
        return Orders(database.id, table.id, fields, str(path), count)


@pytest.fixture
def orders(app, admin) -> Orders:
    return make_orders(app)


def sample_sql(sample: dict, text: str) -> list[tuple]:
    """Rows of plain SQL on a registered sample database's file (`sample["file"]`): what a test
    compares the API's answer with."""
    conn = sqlite3.connect(sample["file"])
    try:
        return conn.execute(text).fetchall()
    finally:
        conn.close()
