"""The Sample Database generator: deterministic, fast, Metabase-sized, with consistent foreign keys."""
import hashlib
import sqlite3
import time

from core.sync import sample_data


def content_digest(path) -> str:
    conn = sqlite3.connect(path)
    digest = hashlib.sha256()
    for table in ("PRODUCTS", "PEOPLE", "ORDERS", "REVIEWS"):
        for row in conn.execute(f"SELECT * FROM {table} ORDER BY ID"):
            digest.update(repr(row).encode())
    conn.close()
    return digest.hexdigest()


def test_generation_is_deterministic_and_fast(tmp_path, sample_database_template):
    started = time.monotonic()
    path = sample_data.generate(tmp_path / "again.db")
    assert time.monotonic() - started < 3
    assert content_digest(path) == content_digest(sample_database_template)


def test_sizes_and_shape(sample_database_template):
    conn = sqlite3.connect(sample_database_template)
    counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("ORDERS", "PEOPLE", "PRODUCTS", "REVIEWS")}
    assert counts == {"ORDERS": 18760, "PEOPLE": 2500, "PRODUCTS": 200, "REVIEWS": 1112}
    # every foreign key resolves
    assert conn.execute("SELECT count(*) FROM ORDERS o LEFT JOIN PEOPLE p ON p.ID = o.USER_ID WHERE p.ID IS NULL").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM ORDERS o LEFT JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID WHERE p.ID IS NULL").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM REVIEWS r LEFT JOIN PRODUCTS p ON p.ID = r.PRODUCT_ID WHERE p.ID IS NULL").fetchone()[0] == 0
    categories = [r[0] for r in conn.execute("SELECT DISTINCT CATEGORY FROM PRODUCTS ORDER BY 1")]
    assert categories == ["Doohickey", "Gadget", "Gizmo", "Widget"]
    sources = {r[0] for r in conn.execute("SELECT DISTINCT SOURCE FROM PEOPLE")}
    assert sources == {"Affiliate", "Facebook", "Google", "Organic", "Twitter"}
    # totals add up and orders never predate their customer
    assert conn.execute("SELECT count(*) FROM ORDERS WHERE abs(TOTAL - SUBTOTAL - TAX) > 0.011").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM ORDERS o JOIN PEOPLE p ON p.ID = o.USER_ID "
                        "WHERE o.CREATED_AT < p.CREATED_AT").fetchone()[0] == 0
    share_discounted = conn.execute("SELECT avg(DISCOUNT IS NOT NULL) FROM ORDERS").fetchone()[0]
    assert 0.05 < share_discounted < 0.15
    conn.close()


def test_ensure_generates_once(tmp_path, monkeypatch):
    calls = []
    real = sample_data.generate
    monkeypatch.setattr(sample_data, "generate", lambda path: calls.append(path) or real(path))
    first = sample_data.ensure(tmp_path)
    second = sample_data.ensure(tmp_path)
    assert first == second == tmp_path / "sample" / sample_data.FILE_NAME
    assert len(calls) == 1
