"""Kept answers: a request repeated exactly, while the app DB is unchanged, answered before Flask.

A cached card query is the same bytes for every repeat of the same request until the app DB changes
or its cache entry ages out, yet serving it through Flask (routing, authentication, the card's
checks, the cache lookup) cost three times a bare Flask app's whole request. Here the WSGI app is
wrapped: a request the application said may be kept is answered again, to a request identical in
every part (method, path, query string, every header, the body, the client address), from memory,
while the app DB's tables its request read are unchanged (core.appdb.changes) and before the
instant it was kept until.

What keeps this sound (docs/ARCHITECTURE.md, "Kept answers"):
- Keeping is opt-in: a service calls `allow(until, render)` when its answer depends on the app DB,
  the request and the clock only (a cache hit, never a warehouse read). `limit(until)` lets any
  step that checks the clock bound it (a login session's age).
- The key holds the whole request, credentials included: a different token, cookie or content type
  is another request, answered by the application. A commit, by any worker or instance, of a table
  the request read (a logout, a permission change, an edit, a new cache row, the view counts it
  shows) moves that table's counter, and the kept answer is never served again.
- The counters are read before the application reads anything (they are put in the environ for
  core.appdb.db.session), so nothing kept is older than the counters it is kept under.
- Side effects are replayed: a write-behind write (core.appdb.counters) made while the answer was
  computed must come from a `replayable` function, which runs again for every repeat (the query
  log's cache-hit row); any other such write, a non-2xx status, a Set-Cookie header or a streamed
  body, and the answer is not kept.
- What varies per response is made again: the body by `render()` (a fresh started_at), the
  request id, the Content-Length.
"""
from __future__ import annotations

import contextvars
import functools
import io
import time
from dataclasses import dataclass, field
from typing import Callable

from core.appdb import counters, memo
from core.appdb.changes import EVERYTHING
from core.appdb.memo import CHANGES, MISSING, Memo

MAX_REQUEST_BODY = 64 * 1024  # larger requests (uploads) are never kept: their body is not read twice
KEPT_SIZE = 1024
KEPT_BUDGET = 32 * 1024 * 1024
KEPT_METHODS = frozenset({"GET", "POST"})
_now = time.time  # the clock kept answers are served by (tests move it)


@dataclass
class Keeping:
    """What the request being answered said about keeping its answer."""
    until: float | None = None  # time.time() after which it is not served again
    render: Callable[[], bytes] | None = None
    replays: list = field(default_factory=list)
    sessions: list = field(default_factory=list)  # the app-DB sessions the answer was read on


_keeping: contextvars.ContextVar[Keeping | None] = contextvars.ContextVar("tessera.keeping", default=None)


def allow(session, until: float, render: Callable[[], bytes]) -> None:
    """The request's answer, read on the app-DB `session`, may be kept until `until` (time.time(); math.inf:
    while the app DB is unchanged); `render()` makes its body again, as the application sends it, with
    what varies per response made anew. Not kept if the session has written (its reads may show
    writes the counters do not know). It is kept while the tables the session's request read are unchanged."""
    keeping = _keeping.get()
    if keeping is not None:
        keeping.render = render
        keeping.sessions.append(session)
        keeping.until = until if keeping.until is None else min(keeping.until, until)


def limit(until: float) -> None:
    """Whatever is kept of this request is served no later than `until`."""
    keeping = _keeping.get()
    if keeping is not None:
        keeping.until = until if keeping.until is None else min(keeping.until, until)


def replayable(function: Callable) -> Callable:
    """A side effect of computing an answer that is made again, with the same arguments, whenever a
    kept copy of that answer is served (so it must read the clock itself, never carry a timestamp)."""
    @functools.wraps(function)
    def call(*args):
        keeping = _keeping.get()
        if keeping is None:
            return function(*args)
        keeping.replays.append((function, args))
        with counters.unwatched():
            return function(*args)

    return call


@dataclass
class Kept:
    """A kept answer: its status and headers as first sent, how to make its body again, its side
    effects, and the instant after which it is not served."""
    status: str
    headers: list[tuple[str, str]]
    render: Callable[[], bytes]
    replays: list
    until: float


class KeptAnswers:
    """The WSGI middleware: answers repeats from its store, keeps what the application allows."""

    def __init__(self, wsgi_app, app_db, request_id_header: str, new_request_id: Callable[[], str]):
        self.wsgi_app = wsgi_app
        self.app_db = app_db
        self.store = Memo(KEPT_SIZE, KEPT_BUDGET)
        self.request_id_header = request_id_header
        self.new_request_id = new_request_id
        self._own_headers = {"content-length", request_id_header.lower()}

    def __call__(self, environ, start_response):
        key = self._key(environ)
        changed = self.app_db.changes.read() if key is not None else None
        if changed is None:
            return self.wsgi_app(environ, start_response)
        environ[CHANGES] = changed
        found = self.store.get(changed, key)
        if found is not MISSING and _now() < found[0].until:
            return self._serve(found[0], start_response)
        return self._answer(environ, start_response, changed, key)

    def _key(self, environ) -> tuple | None:
        """The whole request, or None when it is not one to keep (its body is put back to be read again)."""
        if environ.get("REQUEST_METHOD") not in KEPT_METHODS or "HTTP_TRANSFER_ENCODING" in environ:
            return None
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return None
        if length > MAX_REQUEST_BODY or length < 0:
            return None
        body = b""
        if length:
            body = environ["wsgi.input"].read(length)
            environ["wsgi.input"] = io.BytesIO(body)
        headers = tuple(sorted((name, value) for name, value in environ.items()
                               if name.startswith("HTTP_") and isinstance(value, str)))
        return (environ["REQUEST_METHOD"], environ.get("SCRIPT_NAME", ""), environ.get("PATH_INFO", ""),
                environ.get("QUERY_STRING", ""), environ.get("CONTENT_TYPE", ""), environ.get("wsgi.url_scheme"),
                environ.get("REMOTE_ADDR"), headers, body)

    def _serve(self, kept: Kept, start_response):
        for function, args in kept.replays:  # first: a body may show what they count (a view)
            function(*args)
        body = kept.render()
        start_response(kept.status, [*kept.headers, ("Content-Length", str(len(body))),
                                     (self.request_id_header, self.new_request_id())])
        return [body]

    def _answer(self, environ, start_response, changed, key):
        keeping = Keeping()
        said: list = []

        def recording_start_response(status, headers, exc_info=None):
            said[:] = [status, headers]
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        token = _keeping.set(keeping)
        try:
            with counters.watched() as unreplayed:
                answer = self.wsgi_app(environ, recording_start_response)
        finally:
            _keeping.reset(token)
        if keeping.render is None or unreplayed or not said or not said[0].startswith("2") \
                or any(name.lower() == "set-cookie" for name, _ in said[1]) \
                or any(memo.wrote(session) for session in keeping.sessions):
            return answer
        try:
            body = b"".join(answer)
        finally:
            if hasattr(answer, "close"):
                answer.close()
        headers = [(name, value) for name, value in said[1] if name.lower() not in self._own_headers]
        reads = set()
        for session in keeping.sessions:
            tables = memo.read_tables(session)
            # Read outside a request's session: what it read is not known, any commit ends it.
            reads |= {EVERYTHING} if tables is None else tables
        self.store.put(changed, key, Kept(said[0], headers, keeping.render, keeping.replays, keeping.until),
                       reads, weight=len(body) + len(key[-1]))
        return [body]
