"""A reduced copy of the Sample Database (PRODUCTS, PEOPLE, ORDERS) loaded into one engine, and the
Database/Table/Field rows a sync would write, for compiler and conformance tests.

The rows come from core.sync.sample_data's seeded generator (every 50th order and what it references)
plus a few crafted rows, so every engine gets the same values and Python can compute expected
answers from `ROWS`. Refs in test queries are written "$ORDERS.TOTAL" (field id) and
"$$ORDERS" (table id) and resolved per engine by `resolve`.
"""
from __future__ import annotations

import datetime as dt
import random
import uuid

import sqlalchemy as sa

from core.appdb.models.database import Database, Field, Table

# name -> (sqlalchemy type, base type, semantic type, fk "TABLE.COLUMN" or None)
COLUMNS = {
    "PRODUCTS": [
        ("ID", sa.Integer, "type/Integer", "type/PK", None),
        ("TITLE", sa.String(200), "type/Text", "type/Title", None),
        ("CATEGORY", sa.String(50), "type/Text", "type/Category", None),
        ("VENDOR", sa.String(200), "type/Text", "type/Company", None),
        ("PRICE", sa.Double, "type/Float", None, None),
        ("RATING", sa.Double, "type/Float", "type/Score", None),
        ("CREATED_AT", sa.DateTime, "type/DateTime", "type/CreationTimestamp", None),
    ],
    "PEOPLE": [
        ("ID", sa.Integer, "type/Integer", "type/PK", None),
        ("NAME", sa.String(200), "type/Text", "type/Name", None),
        ("EMAIL", sa.String(200), "type/Text", "type/Email", None),
        ("STATE", sa.String(10), "type/Text", "type/State", None),
        ("SOURCE", sa.String(20), "type/Text", "type/Source", None),
        ("LATITUDE", sa.Double, "type/Float", "type/Latitude", None),
        ("LONGITUDE", sa.Double, "type/Float", "type/Longitude", None),
        ("BIRTH_DATE", sa.Date, "type/Date", None, None),
        ("CREATED_AT", sa.DateTime, "type/DateTime", "type/CreationTimestamp", None),
    ],
    "ORDERS": [
        ("ID", sa.Integer, "type/Integer", "type/PK", None),
        ("USER_ID", sa.Integer, "type/Integer", "type/FK", "PEOPLE.ID"),
        ("PRODUCT_ID", sa.Integer, "type/Integer", "type/FK", "PRODUCTS.ID"),
        ("SUBTOTAL", sa.Double, "type/Float", None, None),
        ("TAX", sa.Double, "type/Float", None, None),
        ("TOTAL", sa.Double, "type/Float", None, None),
        ("DISCOUNT", sa.Double, "type/Float", "type/Discount", None),
        ("QUANTITY", sa.Integer, "type/Integer", "type/Quantity", None),
        ("CREATED_AT", sa.DateTime, "type/DateTime", "type/CreationTimestamp", None),
    ],
}
COLUMNS["EVENTS"] = [
    ("ID", sa.Integer, "type/Integer", "type/PK", None),
    ("AT_SECONDS", sa.BigInteger, "type/BigInteger", None, None),
    ("AT_MILLIS", sa.BigInteger, "type/BigInteger", None, None),
    ("AT_ISO", sa.String(40), "type/Text", None, None),
    ("DAY_ISO", sa.String(20), "type/Text", None, None),
    ("STAMP", sa.String(14), "type/Text", None, None),
    ("COUNT_TEXT", sa.String(20), "type/Text", None, None),
    ("PRICE_TEXT", sa.String(20), "type/Text", None, None),
    ("SCORE", sa.Double, "type/Float", None, None),
    ("HAPPENED_AT", sa.DateTime, "type/DateTime", None, None),
]
TABLE_ORDER = ["PRODUCTS", "PEOPLE", "ORDERS", "EVENTS"]
# The coercion strategies EVENTS' columns carry (set as PUT /api/field/:id would: effective type too).
COERCED = {
    "EVENTS.AT_SECONDS": "Coercion/UNIXSeconds->DateTime",
    "EVENTS.AT_MILLIS": "Coercion/UNIXMilliSeconds->DateTime",
    "EVENTS.AT_ISO": "Coercion/ISO8601->DateTime",
    "EVENTS.DAY_ISO": "Coercion/ISO8601->Date",
    "EVENTS.STAMP": "Coercion/YYYYMMDDHHMMSSString->Temporal",
    "EVENTS.COUNT_TEXT": "Coercion/String->Integer",
    "EVENTS.PRICE_TEXT": "Coercion/String->Float",
    "EVENTS.SCORE": "Coercion/Float->Integer",
    "EVENTS.HAPPENED_AT": "Coercion/DateTime->Date",
}
NOW = dt.datetime(2025, 6, 18, 15, 30, 0)  # a Wednesday: the clock relative filters are compiled with


def _generated() -> dict[str, list[dict]]:
    """A reduced, deterministic subset of the Sample Database (core.sync.sample_data): every 50th order,
    with the people and products it references."""
    import sqlite3
    import tempfile
    from pathlib import Path

    from core.sync import sample_data

    with tempfile.TemporaryDirectory() as directory:
        path = sample_data.generate(Path(directory) / "sample.db")
        conn = sqlite3.connect(path)
        conn.row_factory = sqlite3.Row
        try:
            orders = [dict(r) for r in conn.execute(
                "SELECT ID, USER_ID, PRODUCT_ID, SUBTOTAL, TAX, TOTAL, DISCOUNT, QUANTITY, CREATED_AT "
                "FROM ORDERS WHERE ID % 50 = 0 ORDER BY ID")]
            users = sorted({o["USER_ID"] for o in orders})
            products = sorted({o["PRODUCT_ID"] for o in orders})
            people = [dict(r) for r in conn.execute(
                "SELECT ID, NAME, EMAIL, STATE, SOURCE, LATITUDE, LONGITUDE, BIRTH_DATE, CREATED_AT FROM PEOPLE "
                f"WHERE ID IN ({','.join(map(str, users))}) ORDER BY ID")]
            goods = [dict(r) for r in conn.execute(
                "SELECT ID, TITLE, CATEGORY, VENDOR, PRICE, RATING, CREATED_AT FROM PRODUCTS "
                f"WHERE ID IN ({','.join(map(str, products))}) ORDER BY ID")]
        finally:
            conn.close()
    for row in [*orders, *people, *goods]:
        row["CREATED_AT"] = dt.datetime.fromisoformat(row["CREATED_AT"])
    for person in people:
        person["BIRTH_DATE"] = dt.date.fromisoformat(person["BIRTH_DATE"])
    return {"PRODUCTS": goods, "PEOPLE": people, "ORDERS": orders}


def _rows() -> dict[str, list[dict]]:
    """The Sample Database subset, plus a few crafted rows for edges it lacks: LIKE wildcards and a
    quote in vendor names, a person without a source, lower-case and mixed-case text, and orders
    around NOW (the clock relative filters are compiled with)."""
    rows = _generated()
    rnd = random.Random(20241121)
    rows["PRODUCTS"] += [
        {"ID": 9001, "TITLE": "Small Steel Lamp", "CATEGORY": "Gizmo", "VENDOR": "Mc_Kenzie 100%", "PRICE": 19.99,
         "RATING": 4.5, "CREATED_AT": dt.datetime(2023, 2, 1, 8, 0)},
        {"ID": 9002, "TITLE": "Heavy-Duty Wool Clock", "CATEGORY": "Widget", "VENDOR": "O'Hara Ltd", "PRICE": 55.5,
         "RATING": 3.0, "CREATED_AT": dt.datetime(2023, 3, 1, 9, 0)},
        {"ID": 9003, "TITLE": "Sleek Paper Bottle", "CATEGORY": "Doohickey", "VENDOR": "Blaak Inc", "PRICE": 33.0,
         "RATING": 2.5, "CREATED_AT": dt.datetime(2023, 4, 1, 10, 0)},
    ]
    rows["PEOPLE"] += [
        {"ID": 9001, "NAME": "ed Lee", "EMAIL": "ed.lee@Mail.org", "STATE": "CA", "SOURCE": None, "LATITUDE": 34.05,
         "LONGITUDE": -118.25, "BIRTH_DATE": dt.date(1980, 2, 29), "CREATED_AT": dt.datetime(2023, 1, 31, 23, 59, 59)},
        {"ID": 9002, "NAME": "Ada LEE", "EMAIL": "ada@example.com", "STATE": "NY", "SOURCE": None, "LATITUDE": 40.7,
         "LONGITUDE": -74.0, "BIRTH_DATE": dt.date(1975, 12, 31), "CREATED_AT": dt.datetime(2024, 2, 29, 12, 0)},
    ]
    for i in range(12):
        user = rows["PEOPLE"][-1 - i % 2]["ID"]
        product = rows["PRODUCTS"][-1 - i % 3]
        quantity = i % 4 + 1
        subtotal = round(product["PRICE"] * quantity, 2)
        tax = round(subtotal * 0.08, 2)
        discount = round(rnd.uniform(1, 10), 2) if i % 3 == 0 else None
        rows["ORDERS"].append({
            "ID": 900001 + i, "USER_ID": user, "PRODUCT_ID": product["ID"], "SUBTOTAL": subtotal, "TAX": tax,
            "TOTAL": round(subtotal + tax - (discount or 0), 2), "DISCOUNT": discount, "QUANTITY": quantity,
            "CREATED_AT": NOW - dt.timedelta(days=rnd.randrange(0, 60), hours=rnd.randrange(10), minutes=i)})
    rows["EVENTS"] = _events()
    return rows


def _events() -> list[dict]:
    """Rows whose columns hold instants and numbers in the forms the coercion strategies read: UNIX
    seconds and milliseconds, ISO-8601 and YYYYMMDDHHMMSS text, numbers as text, floats with halves.
    `MOMENT` is the instant every temporal column of a row encodes (UTC); some sit a second either side
    of a month's end, where reading an instant in another zone would move the row to the next month."""
    rnd = random.Random(20261122)
    epoch = dt.datetime(1970, 1, 1)
    moments = [dt.datetime(2024, 1, 31, 23, 59, 59), dt.datetime(2024, 2, 1, 0, 0, 1),
               dt.datetime(2024, 2, 29, 23, 30, 0), dt.datetime(2023, 12, 31, 23, 59, 59)]
    moments += [dt.datetime(2023, 11, 1) + dt.timedelta(seconds=rnd.randrange(0, 200 * 86400)) for _ in range(36)]
    rows = []
    for i, moment in enumerate(moments, start=1):
        seconds = int((moment - epoch).total_seconds())
        rows.append({
            "ID": i, "MOMENT": moment, "AT_SECONDS": seconds, "AT_MILLIS": seconds * 1000 + i * 7 % 1000,
            "AT_ISO": moment.isoformat(sep="T" if i % 2 else " "), "DAY_ISO": moment.date().isoformat(),
            "STAMP": moment.strftime("%Y%m%d%H%M%S"), "COUNT_TEXT": str(rnd.randrange(-20, 200)),
            "PRICE_TEXT": f"{rnd.randrange(0, 100000) / 100}",
            # halves (rounded up, to the nearest integer, as Metabase rounds), near-halves and negatives
            "SCORE": [2.5, -1.5, 3.49, 7.51, -0.5, 10.0][i % 6] + rnd.randrange(0, 5),
            "HAPPENED_AT": moment,
        })
    return rows


ROWS = _rows()


def load(engine: sa.Engine, schema: str | None = None) -> None:
    """Create and fill the three tables on `engine` (in `schema` when given)."""
    metadata = sa.MetaData(schema=schema)
    tables = {}
    for name in TABLE_ORDER:
        columns = []
        for column, kind, _, semantic, fk in COLUMNS[name]:
            args = [sa.ForeignKey(f"{schema + '.' if schema else ''}{fk}")] if fk else []
            columns.append(sa.Column(column, kind, *args, primary_key=semantic == "type/PK", autoincrement=False))
        tables[name] = sa.Table(name, metadata, *columns)
    metadata.create_all(engine)
    with engine.begin() as conn:
        for name in TABLE_ORDER:
            columns = [c[0] for c in COLUMNS[name]]
            conn.execute(tables[name].insert(), [{k: row[k] for k in columns} for row in ROWS[name]])


def _fingerprint(values: list) -> dict | None:
    numbers = [v for v in values if isinstance(v, (int, float))]
    if not numbers:
        return None
    return {"global": {"distinct-count": len(set(values)), "nil%": values.count(None) / len(values)},
            "type": {"type/Number": {"min": min(numbers), "max": max(numbers),
                                     "avg": sum(numbers) / len(numbers)}}}


def register(session, engine_name: str, schema: str | None) -> dict[str, int]:
    """Database, Table and Field rows as sync would write them; returns "$T.C"/"$$T" -> id."""
    database = Database(name=f"sample {engine_name} {uuid.uuid4().hex[:6]}", engine=engine_name, details="")
    session.add(database)
    session.flush()
    ids: dict[str, int] = {}
    fields: dict[str, Field] = {}
    for name in TABLE_ORDER:
        table = Table(db_id=database.id, schema=schema, name=name, display_name=name.capitalize(), active=True)
        session.add(table)
        session.flush()
        ids[f"$${name}"] = table.id
        for position, (column, _, base_type, semantic, _) in enumerate(COLUMNS[name]):
            values = [row[column] for row in ROWS[name]]
            f = Field(table_id=table.id, name=column, display_name=" ".join(w if w == "ID" else w.capitalize() for w in column.split("_")),
                      base_type=base_type, effective_type=base_type, semantic_type=semantic,
                      database_type=base_type.split("/")[1].upper(), position=position, database_position=position,
                      fingerprint=_fingerprint(values) if base_type in ("type/Integer", "type/Float") else None)
            coerce(f, COERCED.get(f"{name}.{column}"))
            session.add(f)
            session.flush()
            ids[f"${name}.{column}"] = f.id
            fields[f"{name}.{column}"] = f
    for name in TABLE_ORDER:
        for column, _, _, _, fk in COLUMNS[name]:
            if fk:
                fields[f"{name}.{column}"].fk_target_field_id = fields[fk].id
    session.flush()
    ids["database"] = database.id
    return ids


def coerce(field: Field, strategy: str | None) -> None:
    """Give a field a coercion strategy and the effective type it produces (core.sync.semantic_types)."""
    from core.sync.semantic_types import COERCIONS

    if strategy:
        field.coercion_strategy = strategy
        field.effective_type = COERCIONS[strategy]


def coerce_synced(session, ids: dict[str, int]) -> None:
    """Give the synced sample's fields their COERCED strategies (core.testing.register_synced's adjust)."""
    for ref, strategy in COERCED.items():
        coerce(session.get(Field, ids[f"${ref}"]), strategy)


def resolve(template, ids: dict[str, int]):
    """The template with "$T.C" and "$$T" strings (and "database": "$db") replaced by ids."""
    if isinstance(template, dict):
        return {k: resolve(v, ids) for k, v in template.items()}
    if isinstance(template, list):
        return [resolve(v, ids) for v in template]
    if isinstance(template, str) and template.startswith("$"):
        if template == "$db":
            return ids["database"]
        return ids[template]
    return template
