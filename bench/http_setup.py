"""What the HTTP benchmark runs against: the bench content in a fresh TESSERA_DATA_DIR (cards, a dashboard
of eight cards, a collection, result caching on) and the gunicorn servers (Tessera and the reference
apps, one production configuration for all), each in its own process group so that it can be stopped
whole, however the benchmark ends.
"""
from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import ROOT, Bench

GUNICORN_CONF = ROOT / "contrib" / "gunicorn.conf.py"
CARD_ROWS = 2000


class ServerDidNotStart(RuntimeError):
    def __init__(self, server: str, message: str):
        super().__init__(message)
        self.server = server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`gunicorn -c contrib/gunicorn.conf.py TARGET` with 2 gthread workers x `threads` on a free port."""

    def __init__(self, name: str, target: str, env: dict, log_dir: Path, workers: int = 2, threads: int = 8):
        self.name, self.target = name, target
        self.port = free_port()
        self.log = log_dir / f"{name}.log"
        self.env = {**os.environ, **env, "TESSERA_BIND": f"127.0.0.1:{self.port}",
                    "TESSERA_WORKERS": str(workers), "TESSERA_THREADS": str(threads)}
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF), self.target],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, path: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                if request(self.url, "GET", path)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise ServerDidNotStart(self.name, f"{self.name} did not answer GET {path}; log tail:\n{self.log_tail()}")

    def cpu_seconds(self) -> float:
        """CPU time (user + system) used so far by the server's process group: its master, workers and
        their children (Tessera's scheduler process). Read from /proc; 0.0 where there is none."""
        if self.process is None:
            return 0.0
        ticks = 0
        for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:  # gone between the listing and the read
                continue
            if int(fields[2]) == self.process.pid:  # fields[2]: the process group
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's log that are not access-log lines (errors, tracebacks)."""
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join([line for line in text if not line.startswith("127.0.0.1 - ")][-lines:])

    def stop(self) -> None:
        """SIGTERM to the whole group (master and workers), SIGKILL if it lingers."""
        if self.process is None or self.process.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue


def settle(servers, seconds: float = 0.5, busy: float = 0.05, timeout: float = 15) -> None:
    """Wait until no server used more than `busy` of a CPU over `seconds` (or `timeout` passed): a run
    must not start while a server still answers the previous run's queued requests, which the last
    run's slow endpoints leave behind, or the next figure measures both."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = [server.cpu_seconds() for server in servers]
        time.sleep(seconds)
        used = max(server.cpu_seconds() - start for server, start in zip(servers, before))
        if used <= busy * seconds:
            return


def request(base_url: str, method: str, path: str, body: bytes | None = None,
            headers: dict | None = None) -> tuple[int, bytes]:
    host, port = base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@dataclass
class Content:
    token: str
    card: int  # the 2000-row card on SQLite, also on the dashboard
    aggregate: int
    dashboard: int
    dashcard: int  # the 2000-row card's dashcard
    collection: int


def _ok(response, what: str) -> dict:
    if response.status_code not in (200, 202, 204):
        raise RuntimeError(f"setting up {what}: {response.status_code} {response.get_data(as_text=True)[:500]}")
    return response.json if response.status_code != 204 else {}


def _cards(bench: Bench) -> list[tuple[str, str, dict]]:
    """(name, engine, MBQL inner query) of the dashboard's eight cards; the first is the 2000-row one."""
    out = []
    for engine in ("sqlite", "duckdb"):
        db = bench.databases[engine]
        f = {name: ["field", field_id, None] for name, field_id in db["fields"].items()}
        source = {"source-table": db["table"]}
        label = "SQLite" if engine == "sqlite" else "DuckDB"
        out += [
            (f"Orders, {CARD_ROWS} rows ({label})" if engine == "sqlite" else f"Orders, 100 rows ({label})", engine,
             {**source, "limit": CARD_ROWS if engine == "sqlite" else 100}),
            (f"Orders by category ({label})", engine,
             {**source, "aggregation": [["count"], ["sum", f["price"]]], "breakout": [f["category"]]}),
            (f"Orders per month ({label})", engine,
             {**source, "aggregation": [["count"]],
              "breakout": [["field", db["fields"]["created_at"], {"temporal-unit": "month"}]]}),
            (f"Average price by quantity ({label})", engine,
             {**source, "aggregation": [["avg", f["price"]]], "breakout": [f["quantity"]]}),
        ]
    return out


def prepare(bench: Bench, cache_hours: int = 24) -> Content:
    """Caching on; eight cards in the root collection (cache_ttl on each, so that repeating a card's query
    is served from the result cache), a dashboard holding them, and a collection with four more cards."""
    client = bench.client
    _ok(client.put("/api/setting/enable-query-caching", json={"value": True}), "caching")
    ids = []
    for name, engine, query in _cards(bench):
        body = {"name": name, "display": "table", "visualization_settings": {}, "cache_ttl": cache_hours,
                "dataset_query": {"database": bench.databases[engine]["database"], "type": "query", "query": query}}
        ids.append(_ok(client.post("/api/card", json=body), name)["id"])
    collection = _ok(client.post("/api/collection", json={"name": "Orders analysis", "color": "#509EE3"}),
                     "collection")["id"]
    for engine in ("sqlite", "duckdb"):
        db = bench.databases[engine]
        for category in ("Widget", "Gizmo"):
            query = {"source-table": db["table"], "aggregation": [["count"]],
                     "filter": ["=", ["field", db["fields"]["category"], None], category]}
            _ok(client.post("/api/card", json={
                "name": f"Orders of {category}s ({engine})", "display": "scalar", "visualization_settings": {},
                "collection_id": collection,
                "dataset_query": {"database": db["database"], "type": "query", "query": query}}), "card")
    dashboard = _ok(client.post("/api/dashboard", json={"name": "Orders overview"}), "dashboard")["id"]
    dashcards = [{"id": -(i + 1), "card_id": card_id, "size_x": 6, "size_y": 4, "row": (i // 4) * 4, "col": (i % 4) * 6}
                 for i, card_id in enumerate(ids)]
    saved = _ok(client.put(f"/api/dashboard/{dashboard}", json={"dashcards": dashcards}), "dashcards")
    dashcard = next(dc["id"] for dc in saved["dashcards"] if dc["card_id"] == ids[0])
    return Content(token=client.headers["X-Metabase-Session"], card=ids[0], aggregate=ids[1], dashboard=dashboard,
                   dashcard=dashcard, collection=collection)


def tessera_env(bench: Bench) -> dict:
    """The configuration the bench app was made with, for the gunicorn workers' create_app(); that app
    migrated the app DB already, so the workers skip the check and start sooner."""
    from core.testing import FAST_HASHING

    return {"TESSERA_DATA_DIR": str(bench.dir), "TESSERA_PLUGINS_AUTOLOAD": "false", "TESSERA_RUN_MIGRATIONS": "false",
            **{key: str(value) for key, value in FAST_HASHING.items()}}
