"""Issue 15's HTTP figures: Tessera under gunicorn (the production configuration, 2 gthread workers x 8
threads) against two reference Flask apps under the same settings, all driven by wrk in one run.

- GET /api/card/:id, GET /api/dashboard/:id (8 cards): requests/s vs the hello-world app, target >= 0.5;
- POST /api/card/:id/query (2000 rows, cached) and the same card's dashcard query: vs the held-JSON app
  (the card's own response bytes held in memory), target >= 0.7; the uncached card query (ignore_cache)
  vs the held-JSON app, informational;
- GET /api/collection/root/items, GET /api/search?q=orders and the mixed read load (card, root items,
  database list, in turn): vs hello-world, informational;
- no non-2xx response and no socket error in any run; a repeated card query served from the result cache.

Each reference is measured right before and right after each round of the scenarios compared with it,
and the mean is that round's reference, so that a change in the machine's load shows in both; a figure
is the median of its rounds (--rounds, 3). Every run starts once all servers are idle. p50/p99 and the
server's CPU time per request (its whole process group: robust to other load on the machine) are in
each line's detail.
Run: .venv/bin/python -m bench.http_bench [--rows N] [--duration S] (make bench-http).
"""
from __future__ import annotations

import argparse
import dataclasses
import shutil
import signal
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from bench.common import Bench, cpu_note, make_duckdb, make_sqlite
from bench.http_load import Load, Measure, combine, run_python, run_wrk, wrk_available
from bench.http_refapps import HELD_JSON_ENV
from bench.http_setup import CARD_ROWS, Content, Server, prepare, request, settle, tessera_env
from bench.report import Target, info, report


@dataclass(frozen=True)
class Scenario:
    name: str
    load: Load
    reference: str  # "hello" or "held"
    target: float | None = None  # the least ratio of requests/s; None: informational
    p99_ms: float | None = None  # the most p99 latency of the median round, in ms; None: none


@dataclass
class Outcome:
    measures: dict[str, Measure] = field(default_factory=dict)  # scenario or reference run -> its figures
    targets: list[Target] = field(default_factory=list)
    infos: list[tuple[str, float, str]] = field(default_factory=list)
    latencies: list[tuple[str, float, str]] = field(default_factory=list)  # (name, ms, detail), no target
    checks: dict[str, int] = field(default_factory=dict)  # scenario -> status of its single checked request
    cache_hits: int = 0
    cache_repeats: int = 0
    failures: int = 0
    held_bytes: int = 0
    pids: dict[str, int] = field(default_factory=dict)  # each gunicorn master, stopped when run() returns


def scenarios(content: Content) -> list[Scenario]:
    auth = {"X-Metabase-Session": content.token}
    post = {**auth, "Content-Type": "application/json"}
    card, dash = content.card, content.dashboard
    dashcard_query = f"/api/dashboard/{dash}/dashcard/{content.dashcard}/card/{card}/query"
    return [
        Scenario("GET /api/card/:id", Load("GET", (f"/api/card/{card}",), headers=auth), "hello", 0.5),
        Scenario("GET /api/dashboard/:id (8 cards)", Load("GET", (f"/api/dashboard/{dash}",), headers=auth),
                 "hello", 0.5),
        Scenario("GET /api/collection/root/items", Load("GET", ("/api/collection/root/items",), headers=auth),
                 "hello"),
        Scenario("GET /api/search?q=orders", Load("GET", ("/api/search?q=orders",), headers=auth), "hello"),
        Scenario("mixed reads (card, root items, database list)",
                 Load("GET", (f"/api/card/{card}", "/api/collection/root/items", "/api/database"), headers=auth),
                 "hello"),
        Scenario(f"POST /api/card/:id/query {CARD_ROWS} rows cached",
                 Load("POST", (f"/api/card/{card}/query",), b'{"ignore_cache":false,"parameters":[]}', post),
                 "held", 0.7),
        Scenario(f"POST dashcard query {CARD_ROWS} rows cached",
                 Load("POST", (dashcard_query,), b'{"parameters":[]}', post), "held", 0.7),
        Scenario(f"POST /api/card/:id/query {CARD_ROWS} rows uncached",
                 Load("POST", (f"/api/card/{card}/query",), b'{"ignore_cache":true,"parameters":[]}', post), "held"),
    ]


def check_cache(base_url: str, load: Load, repeats: int, expected_rows: int) -> tuple[int, bytes]:
    """Repeat a cached scenario's request on new connections (either worker may answer): how many repeats
    after the first came from the result cache, and the last response's body."""
    hits, body = 0, b""
    for attempt in range(repeats + 1):
        status, body = request(base_url, load.method, load.paths[0], load.body, load.headers)
        answer = orjson.loads(body)
        if not 200 <= status < 300 or answer.get("row_count") != expected_rows:
            raise RuntimeError(f"{load.paths[0]}: {status}, row_count {answer.get('row_count')}: {body[:300]!r}")
        hits += attempt > 0 and answer.get("cached") is not None
    return hits, body


def _detail(measure: Measure, reference: str, before: Measure, after: Measure) -> str:
    return (f"tessera {measure.summary()}; {reference} {(before.rps + after.rps) / 2:,.0f} rps "
            f"= mean of before {before.summary()} and after {after.summary()}")


def check(outcome: Outcome, tessera: str, plan: list[Scenario], options: argparse.Namespace) -> bytes:
    """One request to every path (2xx or the run stops); the cached queries repeated, the uncached one
    not served from the cache. Returns the cached card query's response body, the held app's payload."""
    for scenario in plan:
        for path in scenario.load.paths:
            status, body = request(tessera, scenario.load.method, path, scenario.load.body, scenario.load.headers)
            outcome.checks[f"{scenario.load.method} {path}"] = status
            if not 200 <= status < 300:
                raise RuntimeError(f"{scenario.name}: {status} {body[:300]!r}")
            if scenario.reference == "held" and scenario.target is None and orjson.loads(body).get("cached"):
                raise RuntimeError(f"{scenario.name} was answered from the result cache")
    held_body = b""
    for scenario in plan:
        if scenario.reference == "held" and scenario.target is not None:
            hits, body = check_cache(tessera, scenario.load, options.cache_repeats, min(CARD_ROWS, options.rows))
            held_body = held_body or body
            outcome.cache_hits += hits
            outcome.cache_repeats += options.cache_repeats
    return held_body


def measure(outcome: Outcome, drive: _Driver, servers: dict[str, Server], plan: list[Scenario],
            rounds: int) -> None:
    """Each reference, then `rounds` rounds of the scenarios compared with it, each round followed by the
    reference again; a scenario's ratio in a round is against the mean of the reference runs on either
    side of it, and its figure is the median of its rounds, so that a burst of load on the machine moves
    one round, not the figure."""
    for reference in dict.fromkeys(s.reference for s in plan):
        group = [s for s in plan if s.reference == reference]
        ref_load = Load(group[0].load.method, ("/",), group[0].load.body)
        rounds_of: dict[str, list[tuple[float, Measure, Measure, Measure]]] = {s.name: [] for s in group}
        before = drive(servers[reference], ref_load, f"{reference} 0")
        for turn in range(1, rounds + 1):
            runs = [(s, drive(servers["tessera"], s.load, f"{s.name} {turn}")) for s in group]
            after = drive(servers[reference], ref_load, f"{reference} {turn}")
            reference_rps = (before.rps + after.rps) / 2
            for scenario, figures in runs:
                ratio = figures.rps / reference_rps if reference_rps else 0.0
                rounds_of[scenario.name].append((ratio, figures, before, after))
            before = after
        for scenario in group:
            ordered = sorted(rounds_of[scenario.name], key=lambda entry: entry[0])
            ratio, figures, ref_before, ref_after = ordered[len(ordered) // 2]
            name = f"{scenario.name} vs {reference}"
            detail = _detail(figures, "hello-world" if reference == "hello" else "held-JSON", ref_before, ref_after)
            if len(ordered) > 1:
                detail = (f"median of {len(ordered)} rounds: "
                          f"{', '.join(f'{entry[0]:.3f}' for entry in rounds_of[scenario.name])}; {detail}")
            if scenario.target is None:
                outcome.infos.append((name, ratio, detail))
            else:
                outcome.targets.append(Target(name, ratio, scenario.target, at_most=False, detail=detail))
            if scenario.p99_ms is not None:
                outcome.targets.append(Target(f"{scenario.name} p99", figures.p99_ms, scenario.p99_ms, unit=" ms",
                                              detail=f"p50 {figures.p50_ms:.1f} ms, {figures.rps:,.0f} rps"))
    outcome.measures.update(drive.measures)
    outcome.failures = sum(m.failures for m in drive.measures.values()) + drive.warmup_failures
    repeats = max(1, outcome.cache_repeats)
    outcome.targets.append(Target(
        "repeated cached queries served from the result cache", outcome.cache_hits / repeats, 1.0, at_most=False,
        unit="", detail=f"{outcome.cache_hits} of {outcome.cache_repeats} repeats on new connections"))
    outcome.targets.append(Target("failed requests (non-2xx, socket errors) in all runs", outcome.failures, 0,
                                  unit="", detail=f"{len(drive.measures)} runs and their warm-ups"))


def run(options: argparse.Namespace) -> Outcome:
    """Set up, start the servers, check each endpoint once, then load them; everything is torn down."""
    outcome = Outcome()
    # The tables are generated in a folder of ours, so that an interrupted generation leaves nothing behind.
    data = Path(tempfile.mkdtemp(prefix="tessera-httpbench-"))
    bench: Bench | None = None
    servers: dict[str, Server] = {}
    try:
        make_sqlite(data / "orders.sqlite", options.rows)
        make_duckdb(data / "orders.duckdb", options.rows)
        bench = Bench(options.rows, engines=("sqlite", "duckdb"), data_files=data)
        content = prepare(bench)
        bench.app.extensions["tessera"].db.dispose()
        logs = bench.dir / "logs"
        logs.mkdir()
        sizes = {"workers": options.workers, "threads": options.worker_threads}
        servers["tessera"] = Server("tessera", "wsgi:app", tessera_env(bench), logs, **sizes)
        servers["hello"] = Server("hello", "bench.http_refapps:hello_app()", {}, logs, **sizes)
        for name in ("hello", "tessera"):
            servers[name].start()
        servers["hello"].wait_ready("/")
        servers["tessera"].wait_ready("/api/health")
        plan = scenarios(content)
        held_body = check(outcome, servers["tessera"].url, plan, options)
        outcome.held_bytes = len(held_body)
        held_file = bench.dir / "held.json"
        held_file.write_bytes(held_body)
        servers["held"] = Server("held", "bench.http_refapps:held_app()", {HELD_JSON_ENV: str(held_file)}, logs,
                                 **sizes)
        servers["held"].start()
        servers["held"].wait_ready("/")
        measure(outcome, _Driver(options, bench.dir, servers), servers, plan, options.rounds)
        return outcome
    except Exception:
        for server in servers.values():
            if server.name == "tessera" or server.process is None or server.process.poll() is not None:
                print(f"-- {server.name} log tail:\n{server.log_tail()}", file=sys.stderr)
        raise
    finally:
        for server in servers.values():
            server.stop()
            if server.process is not None:
                outcome.pids[server.name] = server.process.pid
        if options.keep:
            print(f"kept {bench.dir if bench else ''} {data}")
        else:
            if bench is not None:
                bench.close()
            shutil.rmtree(data, ignore_errors=True)


class _Driver:
    """Runs a load (warm-up, then the measured run) with wrk or the Python client once every server is
    idle (bench.http_setup.settle); keeps every Measure, with the server's CPU time per request."""

    def __init__(self, options: argparse.Namespace, workdir: Path, servers: dict[str, Server]):
        self.options, self.dir, self.servers = options, workdir, servers
        self.measures: dict[str, Measure] = {}
        self.warmup_failures = 0

    def __call__(self, server: Server, load: Load, label: str) -> Measure:
        o = self.options
        settle(list(self.servers.values()))
        if o.warmup > 0:
            self.warmup_failures += self._run(server, load, o.warmup, "warmup").failures
        cpu = server.cpu_seconds()
        measure = self._run(server, load, o.duration, str(len(self.measures)))
        used = server.cpu_seconds() - cpu
        if measure.requests:
            measure = dataclasses.replace(measure, server_cpu_ms=used * 1000 / measure.requests)
        self.measures[label] = measure
        return measure

    def _run(self, server, load: Load, seconds: float, name: str) -> Measure:
        """One run against the server, or against every instance of a cluster at once with the
        connections shared out (bench.http_load.combine adds their figures up)."""
        o = self.options
        members = getattr(server, "members", (server,))
        connections = max(1, o.connections // len(members))

        def one(number: int, member) -> Measure:
            if o.client == "wrk":
                script = self.dir / f"load-{name}-{number}.lua"
                return run_wrk(member.url, load, seconds, connections, o.threads, script)
            return run_python(member.url, load, seconds, connections)

        if len(members) == 1:
            return one(0, members[0])
        with ThreadPoolExecutor(len(members)) as pool:
            return combine(list(pool.map(one, range(len(members)), members)))


def load_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of how the load is driven, the same for every HTTP bench."""
    parser.add_argument("--duration", type=float, default=6, help="seconds of each measured run")
    parser.add_argument("--warmup", type=float, default=2, help="seconds of the unmeasured run before each")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each group; each figure is their median")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="wrk's threads")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers of every server")
    parser.add_argument("--worker-threads", type=int, default=8, help="gunicorn threads per worker")
    parser.add_argument("--client", choices=("wrk", "python"), default="wrk",
                        help="python: a keep-alive loop per connection instead of wrk (figures not comparable)")
    parser.add_argument("--keep", action="store_true", help="keep the data directory and server logs")


def ready_to_drive(options: argparse.Namespace) -> str | None:
    """The load generator's name for the heading, None (with the reason printed) when wrk is missing.
    gunicorn's process groups are stopped in the benches' finally blocks: SIGTERM, and SIGINT even where
    a shell started us with it ignored (a background job), unwind to them as Ctrl-C does."""
    if options.client == "wrk" and not wrk_available():
        print("wrk is not on PATH: install it (Debian/Ubuntu: apt-get install wrk), or pass --client python")
        return None
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.default_int_handler)
    return f"wrk -t{options.threads}" if options.client == "wrk" else "Python client"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.http_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the generated orders table")
    parser.add_argument("--cache-repeats", type=int, default=6, help="repeats of each cached query checked")
    load_arguments(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)
    client = ready_to_drive(options)
    if client is None:
        return 2
    print(f"HTTP bench: {options.rows:,} rows, {client} -c{options.connections} {options.duration:g} s per run, "
          f"gunicorn {options.workers} gthread workers x {options.worker_threads} threads for every server, "
          f"{cpu_note()}", flush=True)
    try:
        outcome = run(options)
    except KeyboardInterrupt:
        print("interrupted: servers stopped, temporary folders removed")
        return 130
    met = report(outcome.targets, "targets")
    print("-- informational")
    for name, ratio, detail in outcome.infos:
        info(name, ratio, detail)
    print(f"held-JSON body: {outcome.held_bytes:,} bytes (the cached card query's response)")
    if outcome.failures:
        print(f"FAILED: {outcome.failures} requests were non-2xx or socket errors")
        return 1
    print("all targets met" if met else "some targets MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
