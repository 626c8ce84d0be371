"""One read of the many-people bench (bench.http_people) in one process: CPU milliseconds and app-DB
statements per request, over requests by random users, optionally under cProfile.

The machine running the bench is often loaded by other work, so the figures here are CPU time
(time.process_time) and statement counts, which load does not change; cProfile roughly doubles the
CPU time, so compare profiled runs only with profiled runs.
The two query reads post what bench.http_people posts and are warmed until every query's result is in
the result cache: the measured answers are cached ones (each must say so).
Run: python -m bench.people_reads search|items|card|dashboard|card-query|dashcard-query [--requests N]
[--profile [--profile-out FILE]] [--show-sql]
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script as well as with -m
    sys.path.insert(0, str(ROOT))

from bench.http_people import CACHED_BODY, DASHCARD_BODY, _dashcard_path  # noqa: E402
from bench.http_people_setup import SEARCH_TERMS, prepare_people, server_env  # noqa: E402

READS = ("search", "items", "card", "dashboard", "card-query", "dashcard-query")


def _paths(read: str, content) -> tuple[str, ...]:
    """Every path a query read may ask, for warming the result cache."""
    if read == "card-query":
        return tuple(f"/api/card/{card}/query" for card in content.cards)
    return tuple(_dashcard_path(*dashcard) for dashcard in content.dashcards)


def _path(read: str, content, rng: random.Random) -> str:
    if read in ("card-query", "dashcard-query"):
        return rng.choice(_paths(read, content))
    if read == "search":
        return f"/api/search?q={rng.choice(SEARCH_TERMS)}"
    if read == "items":
        return "/api/collection/root/items"
    if read == "card":
        return f"/api/card/{rng.choice(content.cards)}"
    return f"/api/dashboard/{rng.choice(content.dashboards)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("read", choices=READS)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--warm", type=int, default=50, help="requests by random users before measuring")
    parser.add_argument("--profile", action="store_true", help="run under cProfile and print the top functions")
    parser.add_argument("--profile-out", type=Path, help="with --profile: also write the stats here (for pstats)")
    parser.add_argument("--show-sql", action="store_true", help="print the statements of one request")
    args = parser.parse_args()

    from sqlalchemy import event

    from core.assembly.app import create_app

    content = prepare_people(users=args.users)
    try:
        config = {**server_env(content), "TESSERA_PLUGINS_AUTOLOAD": False, "TESSERA_RUN_MIGRATIONS": False}
        app = create_app(config)
        client = app.test_client()
        statements: list[str] = []
        engine = app.extensions["tessera"].db.engine
        event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
        rng = random.Random(1)

        body = {"card-query": CACHED_BODY, "dashcard-query": DASHCARD_BODY}.get(args.read)
        method = "POST" if body is not None else "GET"

        def one(check_cached: bool = False) -> None:
            path = _path(args.read, content, rng)
            response = client.open(path, method=method, data=body, content_type="application/json" if body else None,
                                   headers={"X-Metabase-Session": rng.choice(content.tokens)})
            assert response.status_code in (200, 202), response.data[:300]
            if check_cached and body is not None:  # not in the measured loop: parsing the answer costs CPU
                assert orjson.loads(response.data).get("cached") is not None, f"{path} not answered from the cache"

        if body is not None:
            for path in _paths(args.read, content):
                client.open(path, method="POST", data=body, content_type="application/json",
                            headers={"X-Metabase-Session": content.tokens[0]})
        for _ in range(args.warm):
            one(check_cached=True)
        if args.show_sql:
            statements.clear()
            one()
            for number, sql in enumerate(statements, 1):
                print(f"--- {number}\n{sql}")
        statements.clear()
        profile = None
        if args.profile:
            import cProfile

            profile = cProfile.Profile(time.process_time)  # CPU time: other work on the machine does not count
            profile.enable()
        started = time.process_time()
        for _ in range(args.requests):
            one()
        cpu = (time.process_time() - started) * 1000 / args.requests
        if profile is not None:
            import pstats

            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
            if args.profile_out:
                profile.dump_stats(args.profile_out)
        print(f"{args.read}: {cpu:.2f} CPU ms/request{' (profiled)' if profile else ''}, "
              f"{len(statements) / args.requests:.1f} statements/request")
    finally:
        shutil.rmtree(content.data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
