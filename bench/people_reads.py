"""One read of the many-people bench (bench.http_people) in one process: CPU and wall milliseconds,
app-DB statements and round trips per request, over requests by random users, optionally under cProfile.

The machine running the bench is often loaded by other work, so the figures to compare are CPU time
(time.process_time) and the counts, which load does not change; wall time adds the app DB's own work
and the waits for its answers (on PostgreSQL, a round trip each). cProfile roughly doubles the CPU
time, so compare profiled runs only with profiled runs.
Round trips are counted where the DBAPI meets the database, so that what SQLAlchemy's statement events
never see is counted too (BEGIN, COMMIT and ROLLBACK, pool pings, the change counters' own reads): on
PostgreSQL libpq's protocol trace (each simple Query or extended-protocol Sync the client sends is one
wait for an answer), on SQLite the connection's trace callback (each statement the library runs, each
row of an executemany too: the write-behind's batched inserts of the query log show there as inserts).
They are counted over a first pass of requests; the times over a second pass, untraced, on `--threads`
threads at once (a gthread worker's way: they share the process, its GIL and its app-DB connections);
on PostgreSQL on this machine the server's CPU for this database is measured too (the backends'
scheduler time), which in a server on the same cores competes with the app's (a backend that ends
during the run drops out of the sum: a low or negative figure says the pool closed and reopened connections).
The two query reads post what bench.http_people posts and are warmed until every query's result is in
the result cache: the measured answers are cached ones (each must say so).
`--appdb postgresql` puts the app DB in a new database on the loopback PostgreSQL server (dropped at the end).
Run: python -m bench.people_reads search|items|card|dashboard|card-query|dashcard-query [--requests N]
[--appdb sqlite|postgresql] [--threads N] [--profile [--profile-out FILE]] [--show-sql]
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script as well as with -m
    sys.path.insert(0, str(ROOT))

from bench.http_people import CACHED_BODY, _postgres_database  # noqa: E402
from bench.http_people_setup import SEARCH_TERMS, prepare_people, server_env  # noqa: E402
from bench.people_opens import DASHCARD_BODY, dashcard_path  # noqa: E402

READS = ("search", "items", "card", "dashboard", "card-query", "dashcard-query")


def _paths(read: str, content) -> tuple[str, ...]:
    """Every path a query read may ask, for warming the result cache."""
    if read == "card-query":
        return tuple(f"/api/card/{card}/query" for card in content.cards)
    return tuple(dashcard_path(*dashcard) for dashcard in content.dashcards)


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


def _kind(sql: str) -> str:
    """What a statement the DBAPI sent is, for the round trips' breakdown."""
    text = sql.strip().lower()
    if "appdb_change" in text and text.startswith("select") or text.startswith("pragma data_version"):
        return "counters"
    if text in ("select 1", "select 1;"):
        return "ping"
    first = text.split(None, 1)[0] if text else "?"
    return first if first in ("begin", "commit", "rollback", "select", "insert", "update", "delete") else "other"


class RoundTrips:
    """The waits for the app DB at each DBAPI connection of `engine`, counted between start() and
    stop(): on PostgreSQL from libpq's protocol trace (each simple Query, each extended-protocol Sync),
    on SQLite from the connection's trace callback (each statement the library runs). The connections
    create_app opened are closed, so that every connection a request uses is opened under this; a
    PostgreSQL connection is traced from its opening (its prepared statements' texts are read from the
    trace: psycopg prepares a statement run often and then sends only its name)."""

    _MESSAGE = re.compile(r'^([FB])\t\d+\t(\w+)(?:\t ?(.*))?$', re.DOTALL)
    _QUOTED = re.compile(r'"((?:[^"]|"")*)"')

    def __init__(self, engine):
        from sqlalchemy import event

        self.postgres = engine.dialect.name == "postgresql"
        self.counting = self.done = False
        self.kinds: Counter = Counter()
        self._connections: list = []  # [DBAPI connection, its trace file, its prepared statements' texts]
        self._directory = Path(tempfile.mkdtemp(prefix="tessera-roundtrips-"))
        event.listen(engine, "connect", self._connected)
        engine.dispose()

    def _connected(self, dbapi_connection, _record) -> None:
        if self.done:
            return
        traced = [dbapi_connection, None, {}]
        self._connections.append(traced)
        if self.postgres:
            self._trace(traced)
        else:
            dbapi_connection.set_trace_callback(self._statement)

    def _statement(self, sql: str) -> None:
        if self.counting:
            self.kinds[_kind(sql)] += 1

    def _trace(self, traced: list) -> None:
        import psycopg

        traced[1] = self._directory / f"{len(os.listdir(self._directory))}.trace"
        # libpq owns (and closes at untrace) the descriptor it is given
        traced[0].pgconn.trace(os.open(traced[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
        traced[0].pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)

    def _read(self, traced: list, count: bool) -> None:
        """The trace written so far: its prepared statements named, its waits counted when `count`."""
        dbapi_connection, path, named = traced
        if not dbapi_connection.closed:
            dbapi_connection.pgconn.untrace()
        messages: list[str] = []
        for line in path.read_text(errors="replace").splitlines():
            if line[:2] in ("F\t", "B\t"):
                messages.append(line)
            elif messages:  # a statement's text goes on over lines
                messages[-1] += "\n" + line
        pending = "?"
        for message in messages:
            found = self._MESSAGE.match(message)
            if found is None or found.group(1) != "F":
                continue
            kind, rest = found.group(2), found.group(3) or ""
            quoted = [q.replace('""', '"') for q in self._QUOTED.findall(rest)]
            if kind == "Query" and count:
                self.kinds["ping" if quoted and quoted[0].strip() in ("", ";") else _kind(quoted[0] if quoted else "?")] += 1
            elif kind == "Parse" and len(quoted) >= 2:
                pending = quoted[1]
                if quoted[0]:
                    named[quoted[0]] = quoted[1]
            elif kind == "Bind" and len(quoted) >= 2 and quoted[1]:
                pending = named.get(quoted[1], "?")
            elif kind == "Sync" and count:
                self.kinds[_kind(pending)] += 1

    def start(self) -> None:
        if self.postgres:  # what was traced before: its prepared statements' names only
            for traced in self._connections:
                if not traced[0].closed:
                    self._read(traced, count=False)
                    self._trace(traced)
        self.counting = True

    def stop(self) -> Counter:
        """The waits counted since start(), by kind; nothing is traced after."""
        self.counting, self.done = False, True
        for traced in self._connections:
            if self.postgres:
                if traced[1] is not None and traced[1].exists():
                    self._read(traced, count=True)
            else:
                traced[0].set_trace_callback(None)
        shutil.rmtree(self._directory, ignore_errors=True)
        return self.kinds


def _server_cpu(engine) -> float | None:
    """Seconds of CPU the server's processes of this database have run (PostgreSQL on this machine:
    the scheduler's nanosecond count of each backend); None on SQLite, which runs in this process."""
    if engine.dialect.name != "postgresql":
        return None
    from sqlalchemy import text

    with engine.connect() as conn:
        pids = conn.execute(text("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")).scalars()
        total = 0
        for pid in pids:
            try:
                total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
            except (OSError, ValueError):  # not on this machine, or gone
                return None
    return total / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("read", choices=READS)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--warm", type=int, default=50, help="requests by random users before measuring")
    parser.add_argument("--profile", action="store_true", help="run under cProfile and print the top functions")
    parser.add_argument("--profile-out", type=Path, help="with --profile: also write the stats here (for pstats)")
    parser.add_argument("--show-sql", action="store_true", help="print the statements of one request")
    parser.add_argument("--appdb", choices=("sqlite", "postgresql"), default="sqlite",
                        help="the app DB: the SQLite file, or a new database on the loopback PostgreSQL server")
    parser.add_argument("--count-requests", type=int, default=100, help="requests whose round trips are counted")
    parser.add_argument("--threads", type=int, default=1, help="threads making the measured requests at once")
    args = parser.parse_args()

    from sqlalchemy import event

    from core.assembly.app import create_app

    db_url, drop = _postgres_database() if args.appdb == "postgresql" else (None, None)
    content = None
    try:
        content = prepare_people(users=args.users, db_url=db_url)
        config = {**server_env(content), "TESSERA_PLUGINS_AUTOLOAD": False, "TESSERA_RUN_MIGRATIONS": False}
        app = create_app(config)
        client = app.test_client()
        statements: list[str] = []
        engine = app.extensions["tessera"].db.engine
        event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
        round_trips = RoundTrips(engine)
        body = {"card-query": CACHED_BODY, "dashcard-query": DASHCARD_BODY}.get(args.read)
        method = "POST" if body is not None else "GET"

        def one(check_cached: bool = False, client=client, rng=random.Random(1)) -> None:
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
        round_trips.start()
        for _ in range(args.count_requests):
            one()
        waits = round_trips.stop()
        statements.clear()
        profile = None
        if args.profile:
            import cProfile

            profile = cProfile.Profile(time.process_time)  # CPU time: other work on the machine does not count
            profile.enable()
        server = _server_cpu(engine)
        started, started_wall = time.process_time(), time.perf_counter()
        if args.threads == 1:
            for _ in range(args.requests):
                one()
        else:  # as a gthread worker serves: requests of several threads at once in one process
            def serve(number: int) -> None:
                client, rng = app.test_client(), random.Random(number)
                for _ in range(args.requests // args.threads):
                    one(client=client, rng=rng)

            threads = [threading.Thread(target=serve, args=(number,)) for number in range(args.threads)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        done = args.requests // args.threads * args.threads
        cpu = (time.process_time() - started) * 1000 / done
        wall = (time.perf_counter() - started_wall) * 1000 / done
        server = (_server_cpu(engine) - server) * 1000 / done if server is not None else None
        if profile is not None:
            import pstats

            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
            if args.profile_out:
                profile.dump_stats(args.profile_out)
        per_request = ", ".join(f"{kind} {count / args.count_requests:.2f}" for kind, count in waits.most_common())
        print(f"{args.read} ({args.appdb}{f', {args.threads} threads' if args.threads > 1 else ''}): "
              f"{cpu:.2f} CPU ms/request, {wall:.2f} wall ms/request"
              f"{f', {server:.3f} server CPU ms/request' if server is not None else ''}"
              f"{' (profiled)' if profile else ''}, {len(statements) / args.requests:.1f} statements/request, "
              f"{sum(waits.values()) / args.count_requests:.2f} round trips/request ({per_request})")
    finally:
        if content is not None:
            shutil.rmtree(content.data_dir, ignore_errors=True)
        if drop is not None:
            drop()


if __name__ == "__main__":
    main()
