"""(a) An MBQL aggregate (category x month: count, sum of price) through POST /api/dataset against the
same SQL through the raw DBAPI, on a generated 1,000,000-row orders table.

Targets: at most 1.10x the raw time on SQLite; at most raw + 15 ms on DuckDB.
Run: .venv/bin/python bench/bench_aggregate.py [rows]
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script as well as with -m
    sys.path.insert(0, str(ROOT))

from bench.common import Bench, cpu_note, timed  # noqa: E402


def query(db: dict) -> dict:
    f = db["fields"]
    return {"database": db["database"], "type": "query",
            "query": {"source-table": db["table"],
                      "aggregation": [["count"], ["sum", ["field", f["price"], None]]],
                      "breakout": [["field", f["category"], None], ["field", f["created_at"], {"temporal-unit": "month"}]]}}


def main(rows: int = 1_000_000) -> dict:
    bench = Bench(rows, engines=("sqlite", "duckdb"))
    out = {}
    try:
        for engine in ("sqlite", "duckdb"):
            q = query(bench.databases[engine])
            native = bench.client.post("/api/dataset/native", json={**q, "pretty": False}).json
            sql = native["query"]

            def api():
                response = bench.client.post("/api/dataset", json=q)
                assert response.status_code == 202, response.json
                return response.json["row_count"]

            # The raw DBAPI connection (same file, same lock-down), outside SQLAlchemy and Tessera.
            from core.appdb.models import Database
            from core.driver import connections

            with bench.app.app_context():
                database = bench.app.extensions["tessera"].db.Session().get(Database, bench.databases[engine]["database"])
                pooled = connections.engine_for(database).raw_connection()
            conn = pooled.driver_connection

            def raw():
                cursor = conn.cursor()
                cursor.execute(sql)
                return len(cursor.fetchall())

            assert api() == raw(), "API and raw driver disagree"
            # Interleaved, so that both see the same machine load; best and median of 9 each.
            raws, apis = [], []
            for _ in range(9):
                raws.append(timed(raw, repeat=1, warmup=0))
                apis.append(timed(api, repeat=1, warmup=0))
            raw_time, api_time = statistics.median(raws), statistics.median(apis)
            out[engine] = {"raw_ms": raw_time * 1000, "api_ms": api_time * 1000, "ratio": api_time / raw_time,
                           "overhead_ms": (api_time - raw_time) * 1000, "groups": raw(),
                           "best_raw_ms": min(raws) * 1000, "best_api_ms": min(apis) * 1000}
            pooled.close()
    finally:
        bench.close()
    return out


if __name__ == "__main__":
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    result = main(rows)
    print(f"aggregate bench, {rows:,} rows, {cpu_note()}")
    for engine, r in result.items():
        print(f"  {engine:7s} median: raw {r['raw_ms']:8.1f} ms   api {r['api_ms']:8.1f} ms   "
              f"ratio {r['ratio']:.3f}   overhead {r['overhead_ms']:+.1f} ms   ({r['groups']} groups)")
        print(f"  {'':7s} best:   raw {r['best_raw_ms']:8.1f} ms   api {r['best_api_ms']:8.1f} ms   "
              f"ratio {r['best_api_ms'] / r['best_raw_ms']:.3f}   overhead {r['best_api_ms'] - r['best_raw_ms']:+.1f} ms")
    s, d = result["sqlite"], result["duckdb"]
    print(f"  SQLite target <= 1.10x: {'met' if s['ratio'] <= 1.10 else 'NOT met'}; "
          f"DuckDB target <= raw + 15 ms: {'met' if d['overhead_ms'] <= 15 else 'NOT met'}")
