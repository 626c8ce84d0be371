"""Reads in one process: GET /api/card/:id, GET /api/dashboard/:id (8 cards), the root collection's
items, search and the database list, each a loop of authenticated GETs through the Flask test client,
against a hello-world Flask app answered through its own test client in the same run.

The ratio is hello-world time / Tessera time per request (the share of a bare app's speed a read
keeps); the per-request CPU milliseconds are printed beside it for the issue note. `--profile NAME` runs
that read under cProfile instead and prints the top functions by cumulative time.
Run: .venv/bin/python bench/bench_reads.py [requests] [--profile card|dashboard|items|search|databases]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script as well as with -m
    sys.path.insert(0, str(ROOT))

from bench.common import Bench, cpu_note  # noqa: E402

CARDS_ON_DASHBOARD = 8


def build(bench: Bench) -> dict[str, str]:
    """A card, a dashboard of eight cards with a filter mapped onto each, and the paths to read."""
    db = bench.databases["sqlite"]
    client = bench.client
    cards = []
    for i in range(CARDS_ON_DASHBOARD):
        query = {"database": db["database"], "type": "query",
                 "query": {"source-table": db["table"], "aggregation": [["count"]],
                           "breakout": [["field", db["fields"]["category"], None]]}}
        response = client.post("/api/card", json={"name": f"Orders by category {i}", "display": "bar",
                                                  "visualization_settings": {}, "dataset_query": query})
        assert response.status_code == 200, response.json
        cards.append(response.json["id"])
    parameter = {"id": "cat", "name": "Category", "slug": "category", "type": "string/="}
    dashboard = client.post("/api/dashboard", json={"name": "Orders", "parameters": [parameter]}).json
    dashcards = [{"id": -(i + 1), "card_id": card, "row": i * 4, "col": 0, "size_x": 6, "size_y": 4,
                  "parameter_mappings": [{"parameter_id": "cat", "card_id": card,
                                          "target": ["dimension", ["field", db["fields"]["category"], None]]}]}
                 for i, card in enumerate(cards)]
    response = client.put(f"/api/dashboard/{dashboard['id']}", json={"dashcards": dashcards})
    assert response.status_code == 200, response.json
    return {"card": f"/api/card/{cards[0]}", "dashboard": f"/api/dashboard/{dashboard['id']}",
            "items": "/api/collection/root/items", "search": "/api/search?q=orders",
            "databases": "/api/database"}


def hello_world():
    from flask import Flask

    app = Flask("hello")

    @app.get("/")
    def hello():
        return "Hello, World!"

    return app.test_client()


def per_request(get, path: str, requests: int) -> float:
    for _ in range(20):
        assert get(path).status_code == 200
    # CPU time of the process: other work on the machine stretches wall time, much less this.
    start = time.process_time()
    for _ in range(requests):
        get(path)
    return (time.process_time() - start) / requests


def main(requests: int = 2000, profile: str | None = None) -> dict:
    bench = Bench(1000)
    try:
        paths = build(bench)
        if profile:
            import cProfile
            import pstats

            get = bench.client.get
            per_request(get, paths[profile], 50)
            profiler = cProfile.Profile()
            profiler.enable()
            per_request(get, paths[profile], requests)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
            return {}
        hello = hello_world()
        out = {"hello": per_request(hello.get, "/", requests)}
        for name, path in paths.items():
            out[name] = per_request(bench.client.get, path, requests)
        return out
    finally:
        bench.close()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    profile = sys.argv[sys.argv.index("--profile") + 1] if "--profile" in sys.argv else None
    if profile:
        args.remove(profile)
    count = int(args[0]) if args else 2000
    result = main(count, profile)
    if result:
        print(f"reads in one process, {count} GETs each (CPU time per request), {cpu_note()}")
        hello = result.pop("hello")
        print(f"  hello-world Flask: {hello * 1000:.3f} ms per request")
        # No target here: the 0.5x is over HTTP under gunicorn (bench/http_bench.py), where the
        # server's own cost per request is added to both sides; in one process the ratio is much stricter.
        for name, seconds in result.items():
            print(f"  GET {name:<10} {seconds * 1000:8.3f} ms per request   {hello / seconds:6.3f}x hello-world")
