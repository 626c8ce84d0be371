"""An x-ray of a 20-column table: GET /api/automagic-dashboards/table/:id through the Flask test client,
the median of repeated requests after a warm-up. The table (orders with amounts, categories, places,
times and keys to a people and a products table) is a generated SQLite file registered and synced as a
user would; the x-ray reads only app-DB metadata, so the row count does not matter.
Target (issue 20): under 300 ms. Run: .venv/bin/python bench/bench_xrays.py [repeat]
"""
from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script as well as with -m
    sys.path.insert(0, str(ROOT))

from bench.common import cpu_note, timed  # noqa: E402
from bench.report import Target, report  # noqa: E402

ORDER_COLUMNS = (
    "id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES people(id), product_id INTEGER REFERENCES products(id), "
    "subtotal REAL, tax REAL, total REAL, discount REAL, quantity INTEGER, created_at TIMESTAMP, "
    "shipped_at TIMESTAMP, status TEXT, channel TEXT, state TEXT, city TEXT, country TEXT, coupon TEXT, "
    "weight REAL, rating INTEGER, note TEXT, updated_at TIMESTAMP")


def make(path: Path, rows: int = 2000) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(f"""
        CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, email TEXT, state TEXT, source TEXT,
                             created_at TIMESTAMP);
        CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT, category TEXT, price REAL, created_at TIMESTAMP);
        CREATE TABLE orders ({ORDER_COLUMNS});""")
    states = ("CA", "NY", "TX", "WA", "OR", "IL")
    conn.executemany("INSERT INTO people VALUES (?, ?, ?, ?, ?, ?)",
                     [(i, f"Person {i}", f"p{i}@example.com", states[i % 6], ("Web", "Ads", "Friend")[i % 3],
                       f"2023-{i % 12 + 1:02d}-{i % 28 + 1:02d} 10:00:00") for i in range(1, 301)])
    conn.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?)",
                     [(i, f"Product {i}", ("Widget", "Gizmo", "Gadget")[i % 3], 10.0 + i,
                       f"2022-{i % 12 + 1:02d}-01 00:00:00") for i in range(1, 51)])
    conn.executemany(f"INSERT INTO orders VALUES ({', '.join('?' * 20)})", [
        (i, i % 300 + 1, i % 50 + 1, 10.0 + i % 90, 1.0 + i % 7, 11.0 + i % 97, None if i % 5 else 2.5, i % 9 + 1,
         f"2023-{i % 12 + 1:02d}-{i % 28 + 1:02d} {i % 24:02d}:00:00", f"2023-{i % 12 + 1:02d}-{i % 28 + 1:02d} 12:00:00",
         ("new", "paid", "shipped")[i % 3], ("web", "store")[i % 2], states[i % 6], f"City {i % 40}",
         ("US", "CA", "MX")[i % 3], None, 0.1 * (i % 50), i % 5 + 1, f"note {i}",
         f"2024-01-{i % 28 + 1:02d} 00:00:00") for i in range(1, rows + 1)])
    conn.commit()
    conn.close()


def main(repeat: int = 20) -> bool:
    from core.assembly.app import create_app
    from core.testing import FAST_HASHING, setup_admin, wait_for_sync

    folder = Path(tempfile.mkdtemp(prefix="tessera-bench-xrays-"))
    (folder / "files").mkdir()
    make(folder / "files" / "shop.db")
    app = create_app({"TESSERA_DATA_DIR": str(folder), "TESSERA_PLUGINS_AUTOLOAD": False, **FAST_HASHING})
    try:
        admin = setup_admin(app)
        db = admin.post("/api/database", json={"name": "Shop", "engine": "sqlite",
                                               "details": {"db": str(folder / "files" / "shop.db")}}).json
        wait_for_sync(app)
        tables = {t["name"]: t for t in admin.get(f"/api/database/{db['id']}/metadata").json["tables"]}
        orders = tables["orders"]
        assert len(orders["fields"]) == 20, len(orders["fields"])
        path = f"/api/automagic-dashboards/table/{orders['id']}"
        first = admin.get(path)
        assert first.status_code == 200, first.json
        cards = sum(1 for d in first.json["dashcards"] if d["card"])
        seconds = timed(lambda: admin.get(path), repeat=repeat, warmup=2)
        return report([Target("x-ray of a 20-column table", seconds * 1000, 300, unit=" ms",
                              detail=f"{cards} cards, median of {repeat}; {cpu_note()}")],
                      "automatic dashboards (issue 20)")
    finally:
        app.extensions["tessera"].db.dispose()


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
