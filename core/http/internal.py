"""Calls of this server's own API in process, as the user of the request being served.

Server-rendered pages (plugins/app) read and change content through here: the call runs the API's own
view, with the caller's cookie or session header, so every permission decision, every serializer and
every error is the API's and a page can show nothing its user could not read through the API. Plugins
never import each other; this is where a page plugin meets the plugins that own the content, and where
it learns whether an API exists at all (`exists`: its plugin may be disabled).

Each call is a request of its own (a fresh app context: its own app-DB session and `g`), dispatched by
werkzeug without a socket. Its JSON comes back parsed; a streamed answer (a download) is not for this.
"""
from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import orjson
from flask import current_app, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect
from werkzeug.test import EnvironBuilder, run_wsgi_app

# What authenticates the outer request and what the inner one must see the same (the client address
# for throttles and audit, the scheme and host for links and cookies).
_CARRIED = ("HTTP_COOKIE", "HTTP_X_METABASE_SESSION", "HTTP_X_API_KEY", "REMOTE_ADDR", "wsgi.url_scheme",
            "HTTP_HOST", "HTTP_X_FORWARDED_PROTO", "HTTP_ACCEPT_LANGUAGE")


@dataclass(frozen=True)
class Answer:
    """What the API answered: the status, the parsed JSON body (or the text when it is not JSON), and
    the response's Set-Cookie headers (a login's session cookie goes on to the browser)."""

    status: int
    body: Any
    cookies: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def message(self) -> str:
        """The error's message, as Metabase's error bodies carry it (or the plain text body)."""
        if isinstance(self.body, dict):
            errors = self.body.get("errors")
            if isinstance(errors, dict) and errors and not self.body.get("message"):
                return "; ".join(f"{key}: {value}" for key, value in errors.items())
            return str(self.body.get("message") or "")
        return str(self.body or "")


def call(method: str, path: str, *, query: dict | None = None, json: Any = None) -> Answer:
    """Run `method path` (a path under /api) as the current request's user and return its answer."""
    if not path.startswith("/api/"):
        raise ValueError(f"not an API path: {path}")
    outer = request.environ
    # A write says it is JSON even without a body: the page's own request passed the cross-site rule
    # (core.http.auth.check_not_cross_site), and the API checks it again on this one.
    writes = method.upper() in ("POST", "PUT", "DELETE", "PATCH")
    builder = EnvironBuilder(path=path, method=method, query_string=_query(query),
                             data=None if json is None else orjson.dumps(json),
                             content_type="application/json" if json is not None or writes else None)
    environ = builder.get_environ()
    environ.update({key: outer[key] for key in _CARRIED if key in outer})
    # The client's socket, so the inner request's queries are cancelled when the browser goes away.
    environ.update({key: value for key, value in outer.items() if isinstance(value, socket.socket)})
    app = current_app._get_current_object()
    with app.app_context():  # the inner request's own `g` and app-DB session, closed as it ends
        body_iter, status, headers = run_wsgi_app(app.wsgi_app, environ, buffered=True)
        try:
            raw = b"".join(body_iter)
        finally:
            getattr(body_iter, "close", lambda: None)()
    code = int(status.split(" ", 1)[0])
    if headers.get("Content-Type", "").startswith("application/json") and raw:
        body = orjson.loads(raw)
    else:
        body = raw.decode("utf-8", "replace") if raw else None
    return Answer(code, body, headers.getlist("Set-Cookie"))


def exists(method: str, path: str) -> bool:
    """Whether this server has an API endpoint for `method path`: false when the plugin that owns it is
    disabled. A page shows a link to what reads that API only when it exists."""
    if not path.startswith("/api/"):
        raise ValueError(f"not an API path: {path}")
    try:
        current_app.url_map.bind("localhost").match(path, method=method.upper())
    except RequestRedirect:
        return True  # the endpoint, under its canonical URL
    except HTTPException:  # no rule (404) or not this method (405)
        return False
    return True


def _query(query: dict | None) -> str | None:
    """Query parameters with lists repeated (?type=card&type=dashboard) and booleans as the API reads them."""
    if not query:
        return None
    pairs = []
    for key, value in query.items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item is None:
                continue
            pairs.append((key, "true" if item is True else "false" if item is False else str(item)))
    return urlencode(pairs)
