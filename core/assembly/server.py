"""Serving an app with gunicorn: the settings every Tessera server runs with (`tessera run` and
contrib/gunicorn.conf.py), the `tessera run` command's server, and how every worker listens."""
from __future__ import annotations

import errno
import os
import socket

from gunicorn.app.base import BaseApplication
from gunicorn.util import parse_address
from gunicorn.workers.gthread import ThreadWorker


class TesseraServer(BaseApplication):
    def __init__(self, app, options: dict):
        self.application = app
        self.options = options
        super().__init__()

    def load_config(self):
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return self.application


def _forget_inherited_connections(app) -> None:
    """A forked worker must not reuse the master's pooled connections (SQLAlchemy's fork rule)."""
    state = app.extensions["tessera"]
    state.db.engine.dispose(close=False)
    for engine in state.extras.get("connection_pools", {}).values():
        engine.dispose(close=False)


def control_socket(config: dict) -> str:
    """gunicorn's control socket (for `gunicornc -s PATH`), in this instance's data dir: gunicorn's default
    is one path per user ($XDG_RUNTIME_DIR or ~/.gunicorn), which a second instance on the host would
    take over and, on stopping, delete from under the first."""
    return os.path.join(config["TESSERA_DATA_DIR"], "gunicorn.ctl")


def choose_listeners(server) -> None:
    """gunicorn's on_starting (`server` is its arbiter): give each of several gthread workers a listening
    socket of its own (SO_REUSEPORT, gunicorn's reuse_port) when every address is TCP, after making sure
    nothing listens there yet.

    On the master's one socket every worker races to accept, and a burst of connections (a proxy's
    keep-alive pool, a browser's six, a load tester's 32) often lands whole on one worker, which then
    serves all of them on one core for as long as they stay open while the other idles: measured, a
    third of the throughput in about half the runs of the many-people bench. With a socket per worker
    the kernel shares new connections out evenly. A gthread worker accepts whatever its threads are
    doing, so an even share costs nothing; a sync worker would leave connections waiting behind a busy
    one, a unix socket's path would be replaced by each worker, and sockets handed over by systemd are
    the master's: those keep the shared socket, as does a single worker."""
    cfg = server.cfg
    spread = (hasattr(socket, "SO_REUSEPORT") and cfg.workers > 1 and issubclass(cfg.worker_class, ThreadWorker)
              and "LISTEN_FDS" not in os.environ
              and not any(address.startswith(("unix:", "fd://")) for address in cfg.bind))
    if spread:
        for address in cfg.bind:
            if not server.master_pid:  # a re-executed master (USR2) starts beside the old one, on its port
                refuse_taken_address(address)
            # gunicorn names only the master's sockets, and it has none now
            server.log.info("Listening at: http://%s (a socket per worker)", address)
    cfg.set("reuse_port", spread)


def refuse_taken_address(address: str) -> None:
    """Stop with a clear message when something already listens on `address`. With SO_REUSEPORT a second
    instance started on the same port would otherwise join the first one's listeners (same user) and
    take half its connections; a plain bind, which any listener refuses, tells them apart."""
    host, port = parse_address(address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds: TIME_WAIT is no listener
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise SystemExit(f"tessera: {address} is already in use (another Tessera or another server "
                                 "listens there)") from None
            raise


# The app's pages keep an unsaved question in its link (/question/adhoc?q=<base64 of its query>), which a
# question with joins, custom columns and chart settings takes past gunicorn's default of 4094 bytes:
# 8190 is the most gunicorn takes short of no limit at all.
LIMIT_REQUEST_LINE = 8190


def _flush_buffers(server, worker) -> None:
    """Write the views, query-log rows and expired sessions a worker buffered (core.appdb.counters)."""
    from core.appdb.counters import flush_all

    flush_all()


def _freeze_loaded_heap(worker) -> None:
    """gunicorn's post_worker_init: the worker's app is loaded, its heap is set aside (core.assembly.heap)."""
    from core.assembly.heap import freeze_loaded_heap

    freeze_loaded_heap()


def settings(config: dict) -> dict:
    """The gunicorn settings every Tessera server runs with, `tessera run` and contrib/gunicorn.conf.py
    alike; each adds only where it listens, how many workers and threads, and who starts the scheduler."""
    return {
        "worker_class": "gthread",
        # Exports stream for minutes; statement timeouts are enforced per database by the engine.
        "timeout": 300,
        "graceful_timeout": 30,
        "limit_request_line": LIMIT_REQUEST_LINE,
        # One line per request on stdout. TESSERA_ACCESS_LOG names another file, or is set empty to turn
        # it off: gunicorn formats every atom of a line (each header included) per request, a measurable
        # share of a 0.2 ms read; the error log and X-Request-Id stay either way.
        "accesslog": os.environ.get("TESSERA_ACCESS_LOG", "-") or None,
        "errorlog": "-",
        "control_socket": control_socket(config),
        "on_starting": choose_listeners,
        "post_worker_init": _freeze_loaded_heap,
        "worker_exit": _flush_buffers,
    }


def serve(app, host: str, port: int, workers: int = 2, threads: int = 8) -> None:
    TesseraServer(app, settings(app.config) | {
        # The app was built in this process before forking (contrib's config loads it in each worker).
        "post_fork": lambda server, worker: _forget_inherited_connections(app),
        "bind": f"{host}:{port}",
        "workers": workers,
        "threads": threads,
    }).run()
