"""A 2000-row card query (POST /api/card/:id/query) in one process, on a generated orders table (SQLite).

- Uncached, caching off: against fetching the same rows (the card's compiled SQL) with the sqlite3 module
  and encoding them with orjson. Target: at most 1.3x.
- Cached (enable-query-caching on, the card's cache_ttl set, so a fast query is kept: Metabase's rule
  caches a query without a cache_ttl only when it averages query-caching-min-ttl, 60 s, or more), and
  the same card on a dashboard (POST /api/dashboard/:d/dashcard/:dc/card/:c/query): requests per second
  against a minimal Flask app returning the same response held in memory. Target: at least 0.7x (issue
  15 measures this one over HTTP under gunicorn; this is its in-process counterpart).

Requests are made as a WSGI server makes them (wsgi_caller: an environ, start_response, the body read
and closed), not through Flask's test client, whose request building and response wrapping cost about
0.08 ms a request, which is the harness's time, not the app's; the response is checked all the same.

Each figure is the median of interleaved runs of the process's CPU time (all threads, so work a request
leaves to a background thread counts; wall time on a shared machine mostly measures other processes).
Run: python -m bench.bench_query [rows]
"""
from __future__ import annotations

import sqlite3
import statistics
import sys
import time

import orjson

try:
    from bench.common import Bench, cpu_note
    from bench.report import Target, report
except ImportError:  # run as a script from bench/
    from common import Bench, cpu_note
    from report import Target, report

CARD_ROWS = 2000
# CPU time of the whole process (every thread: the query log's writer too), not wall time: on a shared
# machine the wall clock mostly measures the other processes, and an in-process server is CPU-bound.
CLOCK = time.process_time


def _median_time(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = CLOCK()
        fn()
        samples.append(CLOCK() - start)
    return statistics.median(samples)


def _interleaved(pairs: dict, rounds: int, per_round: int) -> dict:
    """Median seconds per call of each function, measured in alternating rounds."""
    samples: dict[str, list[float]] = {name: [] for name in pairs}
    for _ in range(rounds):
        for name, fn in pairs.items():
            samples[name].append(_median_time(fn, per_round))
    return {name: statistics.median(values) for name, values in samples.items()}


def held_app(body: bytes):
    """The reference: a Flask app that returns a JSON body it holds in memory."""
    from flask import Flask, Response

    app = Flask("held")

    @app.post("/held")
    def held():
        return Response(body, status=202, mimetype="application/json")

    return app


def wsgi_caller(app, method: str, path: str, body: bytes, headers: dict):
    """A function making one request to `app` as a WSGI server does, returning (status, body bytes)."""
    import io

    base = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "3000", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1:3000", "wsgi.version": (1, 0), "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr, "wsgi.multithread": True, "wsgi.multiprocess": True, "wsgi.run_once": False,
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
            **{"HTTP_" + name.upper().replace("-", "_"): value for name, value in headers.items()}}
    status: list[str] = []

    def start_response(line, response_headers, exc_info=None):
        status.append(line)

    def call() -> tuple[int, bytes]:
        status.clear()
        answer = app({**base, "wsgi.input": io.BytesIO(body)}, start_response)
        try:
            data = b"".join(answer)
        finally:
            if hasattr(answer, "close"):
                answer.close()
        return int(status[0].split(" ", 1)[0]), data

    return call


def main(rows: int = 1_000_000, rounds: int = 7, per_round: int = 15) -> list[Target]:
    bench = Bench(rows)
    try:
        db = bench.databases["sqlite"]
        client = bench.client
        query = {"database": db["database"], "type": "query",
                 "query": {"source-table": db["table"], "limit": CARD_ROWS}}
        card = client.post("/api/card", json={"name": "Orders", "display": "table", "visualization_settings": {},
                                              "dataset_query": query})
        assert card.status_code == 200, card.json
        card_id = card.json["id"]
        dashboard = client.post("/api/dashboard", json={"name": "Orders"}).json["id"]
        dashcards = client.put(f"/api/dashboard/{dashboard}", json={"dashcards": [
            {"id": -1, "card_id": card_id, "size_x": 4, "size_y": 3, "row": 0, "col": 0}]}).json["dashcards"]
        card_url = f"/api/card/{card_id}/query"
        dashcard_url = f"/api/dashboard/{dashboard}/dashcard/{dashcards[0]['id']}/card/{card_id}/query"
        sql = client.post("/api/dataset/native", json={**query, "pretty": False}).json["query"]
        conn = sqlite3.connect(str(bench.paths["sqlite"]))

        def raw():
            return orjson.dumps(conn.execute(sql).fetchall())

        auth = {"X-Metabase-Session": client.headers["X-Metabase-Session"]}

        def post(url):
            call = wsgi_caller(bench.app, "POST", url, b"{}", auth)

            def run():
                status, data = call()
                assert status == 202, data[:500]
                return data
            return run

        uncached = post(card_url)
        first = orjson.loads(uncached())
        assert first["row_count"] == CARD_ROWS == len(orjson.loads(raw())), "card and raw fetch disagree"
        assert first["cached"] is None
        fetch = _interleaved({"raw": raw, "api": uncached}, rounds, per_round)

        client.put("/api/setting/enable-query-caching", json={"value": True})
        client.put(f"/api/card/{card_id}", json={"cache_ttl": 1})
        cached, on_dashboard = post(card_url), post(dashcard_url)
        cached()  # fills the cache
        hit = cached()
        assert orjson.loads(hit)["cached"] is not None and orjson.loads(on_dashboard())["cached"] is not None, \
            "the cache was not hit"
        held = wsgi_caller(held_app(hit), "POST", "/held", b"{}", {})

        def reference():
            assert held() == (202, hit)

        served = _interleaved({"held": reference, "card": cached, "dashcard": on_dashboard}, rounds, per_round)
        conn.close()
    finally:
        bench.close()
    size = f"{CARD_ROWS} of {rows:,} rows"
    targets = [
        Target("uncached card query vs sqlite3 fetch + orjson (time)", fetch["api"] / fetch["raw"], 1.3,
               detail=f"{size}; {fetch['api'] * 1000:.1f} vs {fetch['raw'] * 1000:.1f} ms"),
        Target("cached card query vs held-JSON Flask app (req/s)", served["held"] / served["card"], 0.7,
               at_most=False, detail=f"{served['card'] * 1000:.2f} vs {served['held'] * 1000:.2f} ms a request"),
        Target("cached dashcard query vs held-JSON Flask app (req/s)", served["held"] / served["dashcard"], 0.7,
               at_most=False, detail=f"{served['dashcard'] * 1000:.2f} vs {served['held'] * 1000:.2f} ms a request"),
    ]
    print(f"card query bench, {rows:,} rows, {cpu_note()}")
    report(targets, "POST /api/card/:id/query, in one process")
    return targets


if __name__ == "__main__":
    sys.exit(0 if all(t.met for t in main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)) else 1)
