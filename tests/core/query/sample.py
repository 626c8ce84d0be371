"""A small deterministic copy of the sample data (PRODUCTS, PEOPLE, ORDERS) loaded into one engine,
with the Database/Table/Field rows a sync would write, for compiler and conformance tests.

The rows come from a seeded generator, so every engine gets the same values and Python can compute
expected answers from `ROWS`. Refs in test queries are written "$ORDERS.TOTAL" (field id) and
"$$ORDERS" (table id) and resolved per engine by `resolve`.
"""
from __future__ import annotations

import datetime as dt
import random
import uuid

import sqlalchemy as sa

from core.models.database import Database, Field, Table

CATEGORIES = ["Doohickey", "Gadget", "Gizmo", "Widget"]
SOURCES = ["Affiliate", "Facebook", "Google", "Organic", "Twitter"]
STATES = ["CA", "NY", "TX", "WA", "OR"]
VENDORS = ["Acme Co", "Balistreri-Ankunding", "Zemlak & Sons", "Mc_Kenzie 100%", "O'Hara Ltd"]

# name -> (sqlalchemy type, base type, semantic type, fk "TABLE.COLUMN" or None)
COLUMNS = {
    "PRODUCTS": [
        ("ID", sa.Integer, "type/Integer", "type/PK", None),
        ("TITLE", sa.String(100), "type/Text", "type/Title", None),
        ("CATEGORY", sa.String(50), "type/Text", "type/Category", None),
        ("VENDOR", sa.String(100), "type/Text", "type/Company", None),
        ("PRICE", sa.Double, "type/Float", None, None),
        ("RATING", sa.Double, "type/Float", "type/Score", None),
        ("CREATED_AT", sa.DateTime, "type/DateTime", "type/CreationTimestamp", None),
    ],
    "PEOPLE": [
        ("ID", sa.Integer, "type/Integer", "type/PK", None),
        ("NAME", sa.String(100), "type/Text", "type/Name", None),
        ("EMAIL", sa.String(100), "type/Text", "type/Email", None),
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
TABLE_ORDER = ["PRODUCTS", "PEOPLE", "ORDERS"]
NOW = dt.datetime(2025, 6, 18, 15, 30, 0)  # a Wednesday: the clock relative filters are compiled with


def _rows() -> dict[str, list[dict]]:
    rnd = random.Random(20241121)
    start = dt.datetime(2023, 1, 1)

    def moment(days: int) -> dt.datetime:
        return start + dt.timedelta(days=rnd.randrange(days), hours=rnd.randrange(24), minutes=rnd.randrange(60),
                                    seconds=rnd.randrange(60))

    products = []
    for i in range(1, 13):
        products.append({
            "ID": i, "TITLE": f"{rnd.choice(['Rustic', 'Sleek', 'Heavy-Duty', 'Small'])} {rnd.choice(['Paper', 'Steel', 'Wool'])} "
                            f"{rnd.choice(['Lamp', 'Shoes', 'Clock', 'Bottle'])} {i}",
            "CATEGORY": CATEGORIES[i % 4], "VENDOR": VENDORS[i % len(VENDORS)],
            "PRICE": round(rnd.uniform(15, 99), 2), "RATING": round(rnd.uniform(1, 5), 1), "CREATED_AT": moment(700),
        })
    people = []
    for i in range(1, 16):
        people.append({
            "ID": i, "NAME": f"{rnd.choice(['Ada', 'Bo', 'Cy', 'Di', 'ed'])} {rnd.choice(['Lee', 'Kim', 'Ng', 'Roe'])}",
            "EMAIL": f"user{i}@{rnd.choice(['example.com', 'Mail.org'])}", "STATE": STATES[i % 5],
            "SOURCE": SOURCES[i % 5] if i % 7 else None,
            "LATITUDE": round(rnd.uniform(25, 49), 4), "LONGITUDE": round(rnd.uniform(-124, -67), 4),
            "BIRTH_DATE": dt.date(1960, 1, 1) + dt.timedelta(days=rnd.randrange(15000)), "CREATED_AT": moment(800),
        })
    orders = []
    for i in range(1, 121):
        product = products[rnd.randrange(len(products))]
        quantity = rnd.randrange(1, 6)
        subtotal = round(product["PRICE"] * quantity, 2)
        tax = round(subtotal * 0.08, 2)
        discount = round(rnd.uniform(1, 10), 2) if rnd.random() < 0.3 else None
        # The last orders fall around NOW so that relative filters have something to find.
        created = moment(880) if i <= 100 else NOW - dt.timedelta(days=rnd.randrange(0, 60), hours=rnd.randrange(10))
        orders.append({
            "ID": i, "USER_ID": rnd.randrange(1, 16), "PRODUCT_ID": product["ID"], "SUBTOTAL": subtotal, "TAX": tax,
            "TOTAL": round(subtotal + tax - (discount or 0), 2), "DISCOUNT": discount, "QUANTITY": quantity,
            "CREATED_AT": created,
        })
    return {"PRODUCTS": products, "PEOPLE": people, "ORDERS": orders}


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
            conn.execute(tables[name].insert(), ROWS[name])


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
