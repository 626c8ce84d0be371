"""A real HTTP(S) server on a loopback address that keeps every request it receives, for tests of
what Tessera sends out (core.outbound.http, HTTP actions, webhooks).

`HttpSink(host="127.0.0.1", tls=None)` serves in a thread on a random port. By default each request
is answered 200 with a JSON echo of itself; `route(path, status=, headers=, body=)` sets a fixed
answer for a path (query ignored) and `route(path, handler=fn)` lets `fn(received, out)` write the
answer itself through the BaseHTTPRequestHandler `out` (for slow, dripping or broken answers).
`requests` is the list of `Received`; with `tls` (a server SSLContext) `server_names` holds the SNI
name of every handshake.
"""
from __future__ import annotations

import contextlib
import json
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class Received:
    method: str
    target: str  # the request target as sent: path and query
    headers: list[tuple[str, str]]
    body: bytes
    client: str

    def header(self, name: str) -> str | None:
        values = [v for k, v in self.headers if k.lower() == name.lower()]
        return ", ".join(values) if values else None

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


@dataclass
class _Route:
    status: int = 200
    headers: dict = field(default_factory=dict)
    body: bytes = b""
    handler: Callable | None = None


class HttpSink:
    def __init__(self, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None):
        self.host = host
        self.requests: list[Received] = []
        self.server_names: list[str | None] = []
        self.routes: dict[str, _Route] = {}
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def handle_one_request(self):
                self.raw_requestline = self.rfile.readline(65537)
                if not self.raw_requestline or not self.parse_request():
                    self.close_connection = True
                    return
                length = int(self.headers.get("Content-Length") or 0)
                received = Received(self.command, self.path, list(self.headers.items()),
                                    self.rfile.read(length) if length else b"", self.client_address[0])
                sink.requests.append(received)
                route = sink.routes.get(received.path)
                with contextlib.suppress(OSError):
                    if route is not None and route.handler is not None:
                        route.handler(received, self)
                    elif route is not None:
                        self.answer(route.status, route.headers, route.body)
                    else:
                        self.answer(200, {"Content-Type": "application/json"}, json.dumps({
                            "method": received.method, "target": received.target,
                            "headers": received.headers, "body": received.body.decode("latin-1")}).encode())
                    self.wfile.flush()
                self.close_connection = True

            def answer(self, status: int, headers: dict, body: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if not any(name.lower() == "content-length" for name in headers):
                    self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

        family = ThreadingHTTPServer.address_family
        if ":" in host:
            import socket

            family = socket.AF_INET6

        class Server(ThreadingHTTPServer):
            address_family = family
            daemon_threads = True

        self.server = Server((host, 0), Handler)
        if tls is not None:
            tls.sni_callback = lambda sock, name, context: self.server_names.append(name)
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.scheme = "https" if tls is not None else "http"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def route(self, path: str, status: int = 200, headers: dict | None = None, body: bytes | str = b"",
              handler: Callable | None = None) -> None:
        self.routes[path] = _Route(status, headers or {}, body.encode() if isinstance(body, str) else body, handler)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def make_http_server():
    """A factory of HttpSinks (`make_http_server(host=, tls=)`), all shut down after the test."""
    sinks: list[HttpSink] = []

    def make(host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> HttpSink:
        sinks.append(HttpSink(host, tls))
        return sinks[-1]

    yield make
    for sink in sinks:
        sink.close()


@pytest.fixture
def http_server(make_http_server):
    """One HttpSink on 127.0.0.1 (a random port), shut down after the test."""
    return make_http_server()
