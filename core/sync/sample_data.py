"""The Sample Database: a deterministic generator of Metabase-like shop data in a SQLite file.

PEOPLE (2,500), PRODUCTS (200), ORDERS (18,760) and REVIEWS (1,112), with real foreign keys,
categories, US cities and states, e-mails and timestamps. The stdlib random generator is seeded,
so every run writes the same rows; the file is written beside the final path and renamed into
place, so a reader never sees half a file.
"""
from __future__ import annotations

import datetime as dt
import os
import random
import sqlite3
import threading
from pathlib import Path

SEED = 20261121
FILE_NAME = "sample-database.db"
NAME = "Sample Database"
PEOPLE_ROWS, PRODUCT_ROWS, ORDER_ROWS, REVIEW_ROWS = 2500, 200, 18760, 1112

SCHEMA = """
CREATE TABLE PRODUCTS (
  ID INTEGER PRIMARY KEY, EAN TEXT, TITLE TEXT, CATEGORY TEXT, VENDOR TEXT,
  PRICE FLOAT, RATING FLOAT, CREATED_AT DATETIME);
CREATE TABLE PEOPLE (
  ID INTEGER PRIMARY KEY, ADDRESS TEXT, EMAIL TEXT, PASSWORD TEXT, NAME TEXT, CITY TEXT,
  LONGITUDE FLOAT, STATE TEXT, SOURCE TEXT, BIRTH_DATE DATE, ZIP TEXT, LATITUDE FLOAT,
  CREATED_AT DATETIME);
CREATE TABLE ORDERS (
  ID INTEGER PRIMARY KEY, USER_ID INTEGER REFERENCES PEOPLE(ID), PRODUCT_ID INTEGER REFERENCES PRODUCTS(ID),
  SUBTOTAL FLOAT, TAX FLOAT, TOTAL FLOAT, DISCOUNT FLOAT, CREATED_AT DATETIME, QUANTITY INTEGER);
CREATE TABLE REVIEWS (
  ID INTEGER PRIMARY KEY, PRODUCT_ID INTEGER REFERENCES PRODUCTS(ID), REVIEWER TEXT, RATING INTEGER,
  BODY TEXT, CREATED_AT DATETIME);
"""

CATEGORIES = {
    "Doohickey": ("Clock", "Knife", "Lamp", "Bottle", "Wallet"),
    "Gadget": ("Computer", "Keyboard", "Shoes", "Hat", "Bag"),
    "Gizmo": ("Chair", "Table", "Coat", "Gloves", "Pants"),
    "Widget": ("Car", "Bench", "Plate", "Shirt", "Toucan"),
}
ADJECTIVES = ("Rustic", "Sleek", "Ergonomic", "Durable", "Heavy-Duty", "Lightweight", "Synergistic",
              "Enormous", "Small", "Practical", "Mediocre", "Intelligent", "Fantastic", "Incredible",
              "Aerodynamic", "Awesome", "Gorgeous", "Minimalist")
MATERIALS = ("Paper", "Wool", "Cotton", "Steel", "Marble", "Granite", "Plastic", "Leather", "Silk",
             "Bronze", "Rubber", "Copper", "Wooden", "Concrete", "Linen", "Aluminum", "Iron", "Wax")
FIRST_NAMES = ("Hudson", "Domenica", "Lina", "Arnold", "Dominique", "Rene", "Roselyn", "Aracely", "Anais",
               "Tressa", "Lolita", "Gregory", "Alvera", "Nellie", "Xavier", "Simone", "Kaleigh", "Bertram",
               "Casey", "Mittie", "Zoie", "Annie", "Leonard", "Bessie", "Terrence", "Margarita", "Penelope",
               "Quinn", "Ruthie", "Sven", "Tamia", "Ulises", "Verna", "Wilton", "Yadira", "Zackary")
LAST_NAMES = ("Borer", "Williamson", "Stokes", "Hamill", "Gutmann", "Mueller", "Rogahn", "Kub", "Ruecker",
              "Nolan", "Wolff", "Schmitt", "Kuhlman", "Lehner", "Bahringer", "Upton", "Frami", "Dach",
              "Considine", "Hermiston", "Pollich", "Greenholt", "Jacobi", "Kertzmann", "Lind", "Moen",
              "Orn", "Price", "Quigley", "Reichert", "Senger", "Toy", "Vandervort", "Weber", "Yost", "Zulauf")
VENDOR_SUFFIXES = ("Group", "LLC", "Inc", "and Sons", "Co")
STREETS = ("Main", "Oak", "Pine", "Maple", "Cedar", "Elm", "Washington", "Lake", "Hill", "Park", "Sunset",
           "Ridge", "Meadow", "Forest", "River", "Spring", "Valley", "Highland")
STREET_KINDS = ("Street", "Avenue", "Road", "Lane", "Drive", "Court", "Way", "Place")
SOURCES = (("Affiliate", 8), ("Facebook", 8), ("Google", 8), ("Organic", 7), ("Twitter", 8))
DOMAINS = ("gmail.com", "hotmail.com", "yahoo.com", "example.com", "mail.com")
# (city, state, zip, latitude, longitude)
CITIES = (
    ("Wilder", "ID", "83676", 43.6, -116.9), ("Dayton", "OH", "45402", 39.76, -84.19),
    ("Austin", "TX", "78701", 30.27, -97.74), ("Portland", "OR", "97201", 45.52, -122.68),
    ("Denver", "CO", "80202", 39.74, -104.99), ("Madison", "WI", "53703", 43.07, -89.4),
    ("Savannah", "GA", "31401", 32.08, -81.09), ("Burlington", "VT", "05401", 44.48, -73.21),
    ("Tucson", "AZ", "85701", 32.22, -110.97), ("Omaha", "NE", "68102", 41.26, -95.93),
    ("Boise", "ID", "83702", 43.62, -116.2), ("Lexington", "KY", "40507", 38.04, -84.5),
    ("Albany", "NY", "12207", 42.65, -73.75), ("Fresno", "CA", "93721", 36.74, -119.79),
    ("Tulsa", "OK", "74103", 36.15, -95.99), ("Raleigh", "NC", "27601", 35.78, -78.64),
    ("Spokane", "WA", "99201", 47.66, -117.43), ("Billings", "MT", "59101", 45.78, -108.5),
    ("Fargo", "ND", "58102", 46.88, -96.79), ("Sioux Falls", "SD", "57104", 43.55, -96.73),
    ("Wichita", "KS", "67202", 37.69, -97.34), ("Des Moines", "IA", "50309", 41.59, -93.62),
    ("Little Rock", "AR", "72201", 34.75, -92.29), ("Jackson", "MS", "39201", 32.3, -90.18),
    ("Mobile", "AL", "36602", 30.69, -88.04), ("Baton Rouge", "LA", "70801", 30.45, -91.19),
    ("Tampa", "FL", "33602", 27.95, -82.46), ("Charleston", "SC", "29401", 32.78, -79.93),
    ("Richmond", "VA", "23219", 37.54, -77.44), ("Annapolis", "MD", "21401", 38.98, -76.49),
    ("Dover", "DE", "19901", 39.16, -75.52), ("Trenton", "NJ", "08608", 40.22, -74.76),
    ("Erie", "PA", "16501", 42.13, -80.09), ("Hartford", "CT", "06103", 41.76, -72.68),
    ("Providence", "RI", "02903", 41.82, -71.41), ("Worcester", "MA", "01608", 42.26, -71.8),
    ("Concord", "NH", "03301", 43.21, -71.54), ("Bangor", "ME", "04401", 44.8, -68.77),
    ("Duluth", "MN", "55802", 46.79, -92.1), ("Peoria", "IL", "61602", 40.69, -89.59),
    ("Fort Wayne", "IN", "46802", 41.08, -85.14), ("Lansing", "MI", "48933", 42.73, -84.56),
    ("Knoxville", "TN", "37902", 35.96, -83.92), ("Springfield", "MO", "65806", 37.21, -93.29),
    ("Reno", "NV", "89501", 39.53, -119.81), ("Provo", "UT", "84601", 40.23, -111.66),
    ("Santa Fe", "NM", "87501", 35.69, -105.94), ("Casper", "WY", "82601", 42.87, -106.31),
    ("Anchorage", "AK", "99501", 61.22, -149.9), ("Hilo", "HI", "96720", 19.72, -155.09),
    ("Morgantown", "WV", "26501", 39.63, -79.96),
)
TAX_RATES = {state: 0.04 + (i % 7) * 0.005 for i, state in enumerate(sorted({c[1] for c in CITIES}))}
REVIEW_WORDS = ("this", "product", "works", "great", "and", "arrived", "quickly", "but", "the", "color",
                "was", "not", "what", "I", "expected", "would", "buy", "again", "my", "kids", "love", "it",
                "quality", "is", "fine", "for", "price", "broke", "after", "a", "week", "very", "happy",
                "with", "purchase", "packaging", "could", "be", "better", "highly", "recommend")

START = dt.datetime(2022, 4, 30)
END = dt.datetime(2026, 4, 19)

_lock = threading.Lock()


def _timestamp(rng: random.Random, start: dt.datetime, end: dt.datetime = END) -> str:
    span = max(int((end - start).total_seconds()), 1)
    return (start + dt.timedelta(seconds=rng.randrange(span))).isoformat(" ")


def _products(rng: random.Random) -> list[tuple]:
    vendors = [f"{rng.choice(LAST_NAMES)}-{rng.choice(LAST_NAMES)} {rng.choice(VENDOR_SUFFIXES)}" for _ in range(60)]
    rows = []
    for pid in range(1, PRODUCT_ROWS + 1):
        category = rng.choice(tuple(CATEGORIES))
        title = f"{rng.choice(ADJECTIVES)} {rng.choice(MATERIALS)} {rng.choice(CATEGORIES[category])}"
        ean = "".join(str(rng.randrange(10)) for _ in range(13))
        rows.append((pid, ean, title, category, rng.choice(vendors), round(rng.uniform(15, 100), 2),
                     round(rng.uniform(0, 5), 1), _timestamp(rng, START)))
    return rows


def _people(rng: random.Random) -> list[tuple]:
    sources = [s for s, _ in SOURCES]
    weights = [w for _, w in SOURCES]
    rows = []
    for pid in range(1, PEOPLE_ROWS + 1):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        city, state, zip_code, lat, lon = rng.choice(CITIES)
        email = f"{first.lower()}.{last.lower()}{pid}@{rng.choice(DOMAINS)}"
        password = "%08x-%04x-%04x-%04x-%012x" % tuple(rng.getrandbits(b) for b in (32, 16, 16, 16, 48))
        address = f"{rng.randrange(1, 9999)} {rng.choice(STREETS)} {rng.choice(STREET_KINDS)}"
        birth = dt.date(1958, 1, 1) + dt.timedelta(days=rng.randrange(46 * 365))
        rows.append((pid, address, email, password, f"{first} {last}", city,
                     round(lon + rng.uniform(-0.2, 0.2), 6), state, rng.choices(sources, weights)[0],
                     birth.isoformat(), zip_code, round(lat + rng.uniform(-0.2, 0.2), 6),
                     _timestamp(rng, START, dt.datetime(2025, 4, 19))))
    return rows


def _orders(rng: random.Random, people: list[tuple], products: list[tuple]) -> list[tuple]:
    # Some customers buy far more than others, as in a real shop.
    weights = [rng.paretovariate(1.5) for _ in people]
    buyers = rng.choices(people, weights, k=ORDER_ROWS)
    rows = []
    for oid, person in enumerate(buyers, start=1):
        product = rng.choice(products)
        quantity = rng.randint(1, 10) if rng.random() < 0.9 else rng.randint(11, 100)
        subtotal = round(product[5] * (1 + rng.uniform(-0.05, 0.05)), 2)
        tax = round(subtotal * TAX_RATES[person[7]], 2)
        discount = round(subtotal * rng.uniform(0.05, 0.3), 2) if rng.random() < 0.1 else None
        created = dt.datetime.fromisoformat(max(person[12], product[7]))
        rows.append((oid, person[0], product[0], subtotal, tax, round(subtotal + tax, 2), discount,
                     _timestamp(rng, created), quantity))
    rows.sort(key=lambda r: (r[7], r[0]))
    return [(i, *row[1:]) for i, row in enumerate(rows, start=1)]


def _reviews(rng: random.Random, products: list[tuple]) -> list[tuple]:
    rows = []
    for rid in range(1, REVIEW_ROWS + 1):
        product = rng.choice(products)
        reviewer = f"{rng.choice(FIRST_NAMES).lower()}.{rng.choice(LAST_NAMES).lower()}"
        body = " ".join(rng.choice(REVIEW_WORDS) for _ in range(rng.randint(12, 40))).capitalize() + "."
        created = dt.datetime.fromisoformat(product[7])
        rows.append((rid, product[0], reviewer, rng.choices((1, 2, 3, 4, 5), (1, 1, 2, 4, 5))[0], body,
                     _timestamp(rng, created)))
    return rows


def generate(path: str | Path) -> Path:
    """Write the sample database to `path` (replacing it), deterministically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    products = _products(rng)
    people = _people(rng)
    orders = _orders(rng, people, products)
    reviews = _reviews(rng, products)
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.partial")
    partial.unlink(missing_ok=True)
    conn = sqlite3.connect(partial)
    try:
        conn.executescript(SCHEMA)
        conn.executemany("INSERT INTO PRODUCTS VALUES (?,?,?,?,?,?,?,?)", products)
        conn.executemany("INSERT INTO PEOPLE VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", people)
        conn.executemany("INSERT INTO ORDERS VALUES (?,?,?,?,?,?,?,?,?)", orders)
        conn.executemany("INSERT INTO REVIEWS VALUES (?,?,?,?,?,?)", reviews)
        conn.commit()
    finally:
        conn.close()
    os.replace(partial, path)
    return path


def directory(data_dir: str | Path) -> Path:
    """Where the sample file lives: its own folder in the data dir, which data connections may read."""
    return Path(data_dir) / "sample"


def ensure(data_dir: str | Path) -> Path:
    """The sample database file under `data_dir`, generated on first use."""
    path = directory(data_dir) / FILE_NAME
    with _lock:
        if not path.exists():
            generate(path)
    return path
