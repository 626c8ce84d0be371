"""Cancelling a query on its database when the client that asked for it has gone away.

A request's socket is known from the WSGI environ (gunicorn's `gunicorn.socket`, Werkzeug's
`werkzeug.socket`); `watch_requests` wraps the WSGI app and keeps it in a ContextVar while the view
runs. `SQLDriver.execute` calls `on_disconnect(cancel)` around each statement: while the statement runs
(and, for a streamed download, while its rows are written), one watcher thread per process polls the
sockets of such requests; a socket that reads end-of-file (or fails) means the client closed it, and the
driver's cancel runs (PostgreSQL's cancel request, MySQL's KILL QUERY, SQLite's and DuckDB's
interrupt()). The statement then fails as a cancelled query, which nobody reads.

This covers the JSON responses that run the query before sending anything (POST /api/dataset): no
write can fail there, so the socket is read instead. A client may only close or keep waiting while its
request runs; a socket that turns readable with data (a pipelined request) cannot tell, so it is
no longer watched. Without a socket (the test client, another server) nothing is watched.
`Watch.cancel()` returns only once the callback cannot run any more, so a cancel never reaches the
next query on a pooled connection.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import select
import socket
import threading
import time
from typing import Callable, Iterator

log = logging.getLogger("tessera.disconnects")
POLL_SECONDS = 0.25
GRACE_SECONDS = 0.5  # statements shorter than this are never looked at
SOCKET_KEYS = ("gunicorn.socket", "werkzeug.socket")

_request_socket: contextvars.ContextVar[socket.socket | None] = contextvars.ContextVar("request_socket", default=None)
# Statements cancelled because their client left (read by tests and diagnostics).
stats = {"cancelled": 0}


def watch_requests(wsgi_app):
    """WSGI middleware: remember the request's socket while the application handles it."""
    def app(environ, start_response):
        sock = next((environ[key] for key in SOCKET_KEYS if isinstance(environ.get(key), socket.socket)), None)
        token = _request_socket.set(sock)
        try:
            return wsgi_app(environ, start_response)
        finally:
            _request_socket.reset(token)

    return app


class Watch:
    def __init__(self, sock: socket.socket, cancel: Callable[[], object]):
        self.sock = sock
        self._cancel = cancel
        self._lock = threading.Lock()
        self.done = False
        self.since = time.monotonic()

    def cancel(self) -> None:
        """Stop watching; waits for a running callback to return."""
        with self._lock:
            self.done = True
        _watcher.forget(self)

    def fire(self) -> None:
        with self._lock:
            if self.done:
                return
            self.done = True
            try:
                self._cancel()
                stats["cancelled"] += 1
                log.info("client disconnected: its query was cancelled")
            except Exception:  # the statement may have just ended: nothing to stop
                log.debug("cancel after disconnect failed", exc_info=True)


def client_gone(sock: socket.socket) -> bool | None:
    """True: the peer closed; False: data waiting (cannot tell); None: nothing to read yet."""
    try:
        data = sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, InterruptedError):
        return None
    except ValueError:  # a TLS socket cannot peek: this client cannot be watched
        return False
    except OSError:
        return True
    return not data


class Watcher:
    """One thread per process. It sleeps without a timeout while nothing is watched, and is woken only
    then; while statements run it looks every POLL_SECONDS at those older than GRACE_SECONDS, so quick
    queries cost a set insertion and never a thread switch (see core.driver.deadlines for why that matters)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._watches: set[Watch] = set()
        self._thread: threading.Thread | None = None
        self._idle = False

    def add(self, watch: Watch) -> None:
        with self._cond:
            self._watches.add(watch)
            if self._thread is None or not self._thread.is_alive():  # first use, or after a fork
                self._thread = threading.Thread(target=self._run, name="tessera-disconnects", daemon=True)
                self._thread.start()
            elif self._idle:
                self._cond.notify()

    def forget(self, watch: Watch) -> None:
        with self._cond:
            self._watches.discard(watch)

    def _run(self) -> None:
        while True:
            try:
                self._round()
            except Exception:  # the thread must outlive any one socket's surprise
                log.exception("disconnect watcher round failed")

    def _round(self) -> None:
        """One look at the sockets of the statements that have run for a while."""
        with self._cond:
            while not self._watches:
                self._idle = True
                self._cond.wait()
            self._idle = False
            self._cond.wait(POLL_SECONDS)
            now = time.monotonic()
            watches = [w for w in self._watches if now - w.since >= GRACE_SECONDS]
        if not watches:
            return
        poller = select.poll()
        by_fd = {}
        for watch in watches:
            try:
                fd = watch.sock.fileno()
            except OSError:
                continue
            if fd >= 0:
                by_fd[fd] = watch
                poller.register(fd, select.POLLIN | select.POLLPRI)
        for fd, _events in poller.poll(0):
            watch = by_fd[fd]
            gone = client_gone(watch.sock)
            if gone is not None:
                self.forget(watch)
            if gone:
                watch.fire()


_watcher = Watcher()


@contextlib.contextmanager
def on_disconnect(canceller: Callable[[], Callable[[], object] | None]) -> Iterator[None]:
    """Run the callable `canceller()` gives (from the watcher thread) if the current request's client
    disconnects meanwhile; `canceller` is only asked when there is a client socket to watch."""
    sock = _request_socket.get()
    cancel = canceller() if sock is not None else None
    if cancel is None:
        yield
        return
    watch = Watch(sock, cancel)
    _watcher.add(watch)
    try:
        yield
    finally:
        watch.cancel()
