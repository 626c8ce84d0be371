"""Serving an app with gunicorn from inside the `tessera run` command."""
from __future__ import annotations

import os

from gunicorn.app.base import BaseApplication


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


def serve(app, host: str, port: int, workers: int = 2, threads: int = 8) -> None:
    TesseraServer(app, {
        "control_socket": control_socket(app.config),
        "post_fork": lambda server, worker: _forget_inherited_connections(app),
        "bind": f"{host}:{port}",
        "workers": workers,
        "worker_class": "gthread",
        "threads": threads,
        # Long exports stream for minutes; the per-query timeout is the engine's business.
        "timeout": 300,
        "accesslog": "-",
    }).run()
