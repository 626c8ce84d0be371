"""Issue 29's figures: reads as many people make them. 100 users, each with their own login session, 40
cached MBQL cards over the Sample Database and 8 dashboards of 5 cards; every request picks a random
session and a random object. Tessera under gunicorn (2 gthread workers x 8 threads, the production
configuration) against a bare Flask hello app under the same settings, driven by wrk in one run:

- GET /api/card/:id >= 0.5x, GET /api/dashboard/:id >= 0.35x, the cached card query and the cached
  dashcard query >= 0.35x, GET /api/collection/root/items >= 0.25x, GET /api/search?q= >= 0.1x;
- p99 <= 50 ms (card, dashboard, cached queries) and <= 150 ms (collection items, search) at 32 connections;
- a 5-card dashboard opened as a browser opens it (GET the dashboard, then its dashcard queries 6 at a
  time) by a random user: p50 <= 15 ms;
- no non-2xx response in any run, and every warmed query answered from the result cache;
- for information, a page's start and a dashboard opened as Metabase's frontend opens them
  (bench.people_opens), p50.

`--appdb postgresql` puts the app DB on the loopback PostgreSQL server (a new database, dropped at the
end); `--instances 2` serves from two instances on that app DB at once, the connections shared out.
Run: .venv/bin/python -m bench.http_people (the headline of `make bench-http`).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import uuid
from dataclasses import dataclass

import orjson

from bench.common import cpu_note
from bench.http_bench import Outcome, Scenario, _Driver, load_arguments, measure, ready_to_drive
from bench.http_load import Load
from bench.http_people_setup import SEARCH_TERMS, PeopleContent, prepare_people, server_env
from bench.http_setup import Server, request
from bench.people_opens import DASHCARD_BODY, dashcard_path, open_dashboards, open_pages
from bench.report import Target, info, report

CACHED_BODY = b'{"ignore_cache":false,"parameters":[]}'


def people_scenarios(content: PeopleContent) -> list[Scenario]:
    people = {"random": True, "sessions": content.tokens}
    post = {"Content-Type": "application/json"}
    return [
        Scenario("GET /api/card/:id", Load("GET", tuple(f"/api/card/{c}" for c in content.cards), **people),
                 "hello", 0.5, 50),
        Scenario("GET /api/dashboard/:id", Load("GET", tuple(f"/api/dashboard/{d}" for d in content.dashboards),
                                                **people), "hello", 0.35, 50),
        Scenario("POST /api/card/:id/query cached", Load("POST", tuple(f"/api/card/{c}/query" for c in content.cards),
                                                         CACHED_BODY, post, **people), "hello", 0.35, 50),
        Scenario("POST dashcard query cached", Load("POST", tuple(dashcard_path(*dc) for dc in content.dashcards),
                                                    DASHCARD_BODY, post, **people), "hello", 0.35, 50),
        Scenario("GET /api/collection/root/items", Load("GET", ("/api/collection/root/items",), **people),
                 "hello", 0.25, 150),
        Scenario("GET /api/search?q=", Load("GET", tuple(f"/api/search?q={t}" for t in SEARCH_TERMS), **people),
                 "hello", 0.1, 150),
    ]


def warm(url: str, content: PeopleContent, outcome: Outcome) -> None:
    """Every path of every scenario once as the first user (2xx or the run stops), every query twice: the
    second answer of each must come from the result cache."""
    for scenario in people_scenarios(content):
        load = scenario.load
        repeats = 2 if load.method == "POST" else 1
        for path in load.paths:
            for attempt in range(repeats):
                headers = {**load.headers, "X-Metabase-Session": content.tokens[0]}
                status, body = request(url, load.method, path, load.body, headers)
                outcome.checks[f"{load.method} {path}"] = status
                if not 200 <= status < 300:
                    raise RuntimeError(f"{scenario.name}: {path} answered {status}: {body[:300]!r}")
                if attempt:
                    outcome.cache_repeats += 1
                    outcome.cache_hits += orjson.loads(body).get("cached") is not None


def _spread(timings: list[float]) -> str:
    return f"{len(timings)} opens by random users; p90 {statistics.quantiles(timings, n=10)[-1]:.1f} ms"


@dataclass
class Cluster:
    """Instances serving one app DB, measured as one server (bench.http_bench._Driver shares the
    connections out between them)."""

    name: str
    members: tuple[Server, ...]

    @property
    def url(self) -> str:
        return self.members[0].url

    def cpu_seconds(self) -> float:
        return sum(member.cpu_seconds() for member in self.members)


def run_tessera(options: argparse.Namespace, content: PeopleContent, hello: Server, logs) -> Outcome:
    """The Tessera instances started, warmed, loaded and stopped."""
    outcome = Outcome()
    members = tuple(Server(f"tessera-{n}", "wsgi:app", server_env(content), logs, options.workers,
                           options.worker_threads)
                    for n in range(options.instances))
    try:
        for member in members:
            member.start()
        for member in members:
            member.wait_ready("/api/health")
        for member in members:
            warm(member.url, content, outcome)
        tessera = members[0] if len(members) == 1 else Cluster("tessera", members)
        servers = {"tessera": tessera, "hello": hello}
        plan = people_scenarios(content)
        measure(outcome, _Driver(options, content.data_dir, servers), servers, plan, options.rounds)
        timings = []
        pages: dict[str, list[float]] = {}
        for member in members:
            timings += open_dashboards(member.url, content, options.opens)
            for name, taken in open_pages(member.url, content, options.opens).items():
                pages.setdefault(name, []).extend(taken)
        outcome.targets.append(Target("5-card dashboard opened like a browser, p50", statistics.median(timings), 15,
                                      unit=" ms", detail=_spread(timings)))
        for name, taken in pages.items():
            outcome.latencies.append((f"{name} as Metabase's frontend opens it, p50", statistics.median(taken),
                                      _spread(taken)))
        return outcome
    except Exception:
        for member in members:
            print(f"-- {member.name} log tail:\n{member.log_tail()}", file=sys.stderr)
        raise
    finally:
        for member in members:
            member.stop()
            if member.process is not None:
                outcome.pids[member.name] = member.process.pid


def _postgres_database() -> tuple[str, callable]:
    """A new database on the loopback PostgreSQL server, and the function that drops it."""
    from sqlalchemy import create_engine, text

    from core.testing.services import require_postgres

    admin_url = require_postgres()
    name = f"tessera_people_{uuid.uuid4().hex[:10]}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"), {"n": name})
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        engine.dispose()

    return admin_url.rsplit("/", 1)[0] + "/" + name, drop


def run(options: argparse.Namespace) -> Outcome:
    """Prepare the content, start the hello app, then measure Tessera; everything is stopped and
    removed at the end."""
    db_url, drop = _postgres_database() if options.appdb == "postgresql" else (None, None)
    content = None
    hello = None
    try:
        content = prepare_people(options.users, db_url)
        logs = content.data_dir / "logs"
        logs.mkdir()
        hello = Server("hello", "bench.http_refapps:hello_app()", {}, logs, options.workers, options.worker_threads)
        hello.start()
        hello.wait_ready("/")
        return run_tessera(options, content, hello, logs)
    finally:
        if hello is not None:
            hello.stop()
        if content is not None:
            if options.keep:
                print(f"kept {content.data_dir}")
            else:
                shutil.rmtree(content.data_dir, ignore_errors=True)
        if drop is not None:
            drop()


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.http_people", description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=100, help="users, each logged in with their own session")
    parser.add_argument("--opens", type=int, default=200, help="dashboards opened like a browser, per instance")
    parser.add_argument("--appdb", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--instances", type=int, default=1, help="instances serving the app DB (2 needs postgresql)")
    load_arguments(parser)
    options = parser.parse_args(argv)
    if options.instances > 1 and options.appdb != "postgresql":
        parser.error("--instances 2 shares one app DB between instances: use --appdb postgresql")
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)
    client = ready_to_drive(options)
    if client is None:
        return 2
    print(f"Many-people bench: {options.users} users with their own sessions, 40 cards, 8 dashboards of 5 cards, "
          f"{options.appdb} app DB, {options.instances} instance(s); {client} -c{options.connections} "
          f"{options.duration:g} s per run, random user and object per request; gunicorn {options.workers} gthread "
          f"workers x {options.worker_threads} threads for every server; {cpu_note()}", flush=True)
    try:
        outcome = run(options)
    except KeyboardInterrupt:
        print("interrupted: servers stopped, temporary folders removed")
        return 130
    met = report(outcome.targets, "many people")
    for name, ratio, detail in outcome.infos:
        if detail:
            info(name, ratio, detail)
    for name, ms, detail in outcome.latencies:
        info(name, ms, detail, unit=" ms")
    if outcome.failures:
        print(f"FAILED: {outcome.failures} requests were non-2xx or socket errors")
        return 1
    print("all targets met" if met else "some targets MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
