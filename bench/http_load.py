"""Driving HTTP load for the HTTP benchmark: wrk (a generated Lua script carries the method, body, headers
and, for a mixed load, the rotation of paths), the parsing of its report, and a small Python client loop
that stands in for wrk where it is missing or in tests.

A Load is a request shape; a Measure is what one run of it gave: requests per second, p50 and p99 latency,
and the failures (non-2xx responses and socket errors) that make a run invalid.
"""
from __future__ import annotations

import http.client
import random
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

SESSION_HEADER = "X-Metabase-Session"

@dataclass(frozen=True)
class Load:
    """Requests to send: one method and body, paths taken in turn (one path for all but the mixed load);
    `random`: each request picks its path at random instead; `sessions`: each request sends one of these
    session tokens, picked at random (many people, each with their own session)."""

    method: str
    paths: tuple[str, ...]
    body: bytes | None = None
    headers: dict = field(default_factory=dict)
    random: bool = False
    sessions: tuple[str, ...] = ()

    def pick(self, rng, turn: int) -> tuple[str, dict]:
        """The path and headers of one request of the Python client (wrk's Lua script does the same)."""
        path = rng.choice(self.paths) if self.random else self.paths[turn % len(self.paths)]
        if not self.sessions:
            return path, self.headers
        return path, {**self.headers, SESSION_HEADER: rng.choice(self.sessions)}


@dataclass(frozen=True)
class Measure:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    socket_errors: int
    statuses: tuple[int, ...] = ()  # the distinct statuses seen (the Python client only; wrk does not say)
    server_cpu_ms: float | None = None  # the server's CPU time per request (all its processes), when known

    @property
    def failures(self) -> int:
        return self.non_2xx + self.socket_errors

    def summary(self) -> str:
        text = f"{self.rps:,.0f} rps p50 {self.p50_ms:.1f} ms p99 {self.p99_ms:.1f} ms"
        if self.server_cpu_ms is not None:
            text += f" cpu {self.server_cpu_ms:.2f} ms/req"
        return f"{text}, {self.failures} FAILED" if self.failures else text


def wrk_available() -> bool:
    return shutil.which("wrk") is not None


def lua_script(load: Load) -> str:
    """wrk's request setup: a long-bracket string keeps the JSON body verbatim."""
    lines = [f'wrk.method = "{load.method}"']
    if load.body is not None:
        lines.append(f"wrk.body = [==[{load.body.decode()}]==]")
    for name, value in load.headers.items():
        lines.append(f'wrk.headers["{name}"] = "{value}"')
    if load.random or load.sessions:
        # Each wrk thread has its own Lua state: setup() numbers them, so that their random sequences differ.
        lines.append("local paths = {" + ", ".join(f'"{p}"' for p in load.paths) + "}")
        lines.append("local sessions = {" + ", ".join(f'"{t}"' for t in load.sessions) + "}")
        lines.append("local threads = 0\n"
                     "function setup(thread)\n  threads = threads + 1\n  thread:set(\"number\", threads)\nend\n"
                     "function init(args)\n  math.randomseed(os.time() * 1000 + number * 7919)\nend")
        pick_path = "paths[math.random(#paths)]" if load.random else "paths[turn]"
        lines.append("local turn = 0\n"
                     "request = function()\n  turn = turn % #paths + 1\n"
                     "  local headers = {}\n  for name, value in pairs(wrk.headers) do headers[name] = value end\n"
                     f"  if #sessions > 0 then headers[\"{SESSION_HEADER}\"] = sessions[math.random(#sessions)] end\n"
                     f"  return wrk.format(nil, {pick_path}, headers)\nend")
    elif len(load.paths) > 1:
        lines.append("local paths = {" + ", ".join(f'"{p}"' for p in load.paths) + "}")
        lines.append("local turn = 0")
        lines.append("request = function()\n  turn = turn % #paths + 1\n"
                     "  return wrk.format(nil, paths[turn])\nend")
    return "\n".join(lines) + "\n"


UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(number) * UNITS_MS[unit]


def parse_wrk(output: str) -> Measure:
    """wrk --latency's report: Requests/sec, the 50% and 99% lines, the request count and the failures."""
    def find(pattern: str, default: str | None = None) -> str:
        match = re.search(pattern, output)
        if match is None:
            if default is None:
                raise ValueError(f"wrk output has no {pattern!r}:\n{output}")
            return default
        return match.group(1)

    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    return Measure(rps=float(find(r"Requests/sec:\s+([\d.]+)")),
                   p50_ms=_ms(find(r"\n\s+50%\s+(\S+)")), p99_ms=_ms(find(r"\n\s+99%\s+(\S+)")),
                   requests=int(find(r"(\d+) requests in")),
                   non_2xx=int(find(r"Non-2xx or 3xx responses: (\d+)", "0")),
                   socket_errors=sum(int(n) for n in socket.groups()) if socket else 0)


def run_wrk(base_url: str, load: Load, seconds: float, connections: int, threads: int, script: Path) -> Measure:
    """One wrk run; `script` is where its Lua file is written."""
    script.write_text(lua_script(load))
    # A slow answer is a latency figure, not an error: wrk's 2 s default would count it as a timeout.
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency",
               "--timeout", "30s", "-s", str(script), base_url + load.paths[0]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr or done.stdout}")
    return parse_wrk(done.stdout)


def run_python(base_url: str, load: Load, seconds: float, connections: int) -> Measure:
    """A keep-alive loop per connection for `seconds` (at least one request each): figures comparable
    with one another, not with wrk's; every status is kept so that a caller can assert on them."""
    host, port = base_url.removeprefix("http://").split(":")
    latencies: list[float] = []
    statuses: list[int] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def worker(offset: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        turn = offset
        rng = random.Random(offset)
        try:
            while True:
                path, headers = load.pick(rng, turn)
                turn += 1
                start = time.perf_counter()
                try:
                    conn.request(load.method, path, body=load.body, headers=headers)
                    response = conn.getresponse()
                    response.read()
                    status = response.status
                except OSError:
                    status = None
                    conn.close()
                    conn = http.client.HTTPConnection(host, int(port), timeout=60)
                elapsed = time.perf_counter() - start
                with lock:
                    if status is None:
                        errors[0] += 1
                    else:
                        latencies.append(elapsed)
                        statuses.append(status)
                if time.perf_counter() >= deadline:
                    return
        finally:
            conn.close()

    started = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    wall = time.perf_counter() - started
    ordered = sorted(latencies)

    def percentile(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0

    return Measure(rps=len(latencies) / wall, p50_ms=percentile(0.5), p99_ms=percentile(0.99),
                   requests=len(latencies), non_2xx=sum(1 for s in statuses if not 200 <= s < 300),
                   socket_errors=errors[0], statuses=tuple(sorted(set(statuses))))


def combine(measures: list[Measure]) -> Measure:
    """The figures of simultaneous runs against several instances as one: requests and failures added
    up, p50 the mean of theirs weighted by requests, p99 the worst."""
    requests = sum(m.requests for m in measures)
    return Measure(rps=sum(m.rps for m in measures),
                   p50_ms=sum(m.p50_ms * m.requests for m in measures) / requests if requests else 0.0,
                   p99_ms=max(m.p99_ms for m in measures), requests=requests,
                   non_2xx=sum(m.non_2xx for m in measures), socket_errors=sum(m.socket_errors for m in measures),
                   statuses=tuple(sorted({s for m in measures for s in m.statuses})))
