"""The two reference apps the HTTP benchmark measures Tessera against, served by gunicorn with the same
settings as Tessera (`gunicorn -c contrib/gunicorn.conf.py 'bench.http_refapps:hello_app()'`):

- hello_app: a Flask app answering every GET with a short text, the ceiling of a Flask request;
- held_app: a Flask app answering every request with one JSON document read at startup from the file
  named by HTTPBENCH_HELD_JSON, encoded once with orjson and returned as bytes: a result that costs
  nothing to produce, the ceiling of a query endpoint serving the same payload.
"""
from __future__ import annotations

import os
from pathlib import Path

import orjson
from flask import Flask, Response

HELD_JSON_ENV = "HTTPBENCH_HELD_JSON"


def hello_app() -> Flask:
    app = Flask("hello")

    @app.get("/", defaults={"path": ""})
    @app.get("/<path:path>")
    def hello(path: str):
        return "Hello, World!"

    return app


def held_app() -> Flask:
    app = Flask("held")
    # Decoded and encoded once, so that the bytes are what orjson makes of the document, as a server
    # that built the result in memory would send them.
    body = orjson.dumps(orjson.loads(Path(os.environ[HELD_JSON_ENV]).read_bytes()))

    @app.route("/", defaults={"path": ""}, methods=["GET", "POST"])
    @app.route("/<path:path>", methods=["GET", "POST"])
    def held(path: str):
        return Response(body, mimetype="application/json")

    return app
