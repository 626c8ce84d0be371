"""The many-people bench's openings, as a browser makes them: a random user's requests on up to six
keep-alive connections to the server (a browser's connections to one host), each step's requests at
once, the next step when the last answer of the step is in. Each opening is timed end to end, in ms.

- a dashboard as issue 29 defines it: GET the dashboard, then its dashcard queries;
- a page's start as Metabase's frontend makes it: the settings map, the current user, the collection tree,
  the bookmarks, and the home page's recent and popular items;
- a dashboard as Metabase's frontend opens it: the dashboard and its query metadata, then its dashcard
  queries.
"""
from __future__ import annotations

import http.client
import random
import time
from concurrent.futures import ThreadPoolExecutor

import orjson

from bench.http_people_setup import PeopleContent

PARALLEL = 6  # a browser's connections to one host
DASHCARD_BODY = b'{"parameters":[]}'
PAGE_START = ("/api/session/properties", "/api/user/current", "/api/collection/tree?exclude-archived=true",
              "/api/bookmark", "/api/activity/recent_views", "/api/activity/popular_items")


def dashcard_path(dashboard: int, dashcard: int, card: int) -> str:
    return f"/api/dashboard/{dashboard}/dashcard/{dashcard}/card/{card}/query"


class Browser:
    """Six keep-alive connections to one server and the threads that use them, one user at a time."""

    def __init__(self, url: str):
        host, port = url.removeprefix("http://").split(":")
        self.connections = [http.client.HTTPConnection(host, int(port), timeout=60) for _ in range(PARALLEL)]
        self.pool = ThreadPoolExecutor(PARALLEL)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.pool.shutdown()
        for conn in self.connections:
            conn.close()

    def step(self, token: str, requests: list[tuple[str, str, bytes | None]]) -> list[bytes]:
        """The answers of `requests` ((method, path, body)) sent at once, each on its own connection
        while there are six or fewer; any non-2xx answer stops the run."""
        def send(numbered) -> bytes:
            number, (method, path, body) = numbered
            conn = self.connections[number % PARALLEL]
            conn.request(method, path, body=body, headers={"X-Metabase-Session": token,
                                                           "Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
            if not 200 <= response.status < 300:
                raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
            return data

        return list(self.pool.map(send, enumerate(requests)))


def _dashcard_queries(dashboard: int, shown: bytes) -> list[tuple[str, str, bytes]]:
    return [("POST", dashcard_path(dashboard, d["id"], d["card_id"]), DASHCARD_BODY)
            for d in orjson.loads(shown)["dashcards"]]


def open_dashboards(url: str, content: PeopleContent, opens: int, seed: int = 29) -> list[float]:
    """Milliseconds of each of `opens` dashboard views by random users: the dashboard, then its dashcard
    queries."""
    return _timed(url, content, opens, seed, _dashboard)


def open_pages(url: str, content: PeopleContent, opens: int, seed: int = 31) -> dict[str, list[float]]:
    """Milliseconds of `opens` page starts and of `opens` dashboards opened as Metabase's frontend opens
    them (with the query metadata), by random users."""
    return {"page start": _timed(url, content, opens, seed, _page_start),
            "dashboard with its metadata": _timed(url, content, opens, seed + 1, _dashboard_with_metadata)}


def _dashboard(browser: Browser, token: str, dashboard: int) -> None:
    shown, = browser.step(token, [("GET", f"/api/dashboard/{dashboard}", None)])
    browser.step(token, _dashcard_queries(dashboard, shown))


def _page_start(browser: Browser, token: str, _dashboard: int) -> None:
    browser.step(token, [("GET", path, None) for path in PAGE_START])


def _dashboard_with_metadata(browser: Browser, token: str, dashboard: int) -> None:
    shown, _ = browser.step(token, [("GET", f"/api/dashboard/{dashboard}", None),
                                    ("GET", f"/api/dashboard/{dashboard}/query_metadata", None)])
    browser.step(token, _dashcard_queries(dashboard, shown))


def _timed(url: str, content: PeopleContent, opens: int, seed: int, opening) -> list[float]:
    rng = random.Random(seed)
    timings = []
    with Browser(url) as browser:
        for _ in range(opens):
            token, dashboard = rng.choice(content.tokens), rng.choice(content.dashboards)
            started = time.perf_counter()
            opening(browser, token, dashboard)
            timings.append((time.perf_counter() - started) * 1000)
    return timings
