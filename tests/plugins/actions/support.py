"""A writable SQLite warehouse registered and synced through the API, a model over its table and actions
enabled on it, for the action tests."""
from __future__ import annotations

from core.testing import sqlite_file, wait_for_sync

SCRIPT = """
CREATE TABLE people (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, age INTEGER);
INSERT INTO people (name, age) VALUES ('Ada', 36), ('Alan', 41), ('Grace', 85);
CREATE TABLE twins (id INTEGER, name TEXT);
INSERT INTO twins VALUES (1, 'a'), (1, 'b');
"""


def register(app, admin, name: str = "Shop", details: dict | None = None, engine: str = "sqlite") -> int:
    if details is None:
        details = {"db": sqlite_file(app, f"{name.lower()}.sqlite", SCRIPT)}
    response = admin.post("/api/database", json={"name": name, "engine": engine, "details": details})
    assert response.status_code == 200, response.json
    wait_for_sync(app)
    return response.json["id"]


def enable_actions(admin, db_id: int, on: bool = True) -> None:
    response = admin.put(f"/api/database/{db_id}", json={"settings": {"database-enable-actions": on}})
    assert response.status_code == 200, response.json


def table_id(admin, db_id: int, name: str) -> int:
    tables = admin.get(f"/api/database/{db_id}/metadata").json["tables"]
    return next(t["id"] for t in tables if t["name"].lower() == name)


def make_model(client, db_id: int, table: int, name: str = "People model", collection_id=None) -> int:
    body = {"name": name, "type": "model", "display": "table", "visualization_settings": {},
            "collection_id": collection_id,
            "dataset_query": {"database": db_id, "type": "query", "query": {"source-table": table}}}
    response = client.post("/api/card", json=body)
    assert response.status_code == 200, response.json
    return response.json["id"]


def implicit(client, model_id: int, kind: str, name: str | None = None):
    return client.post("/api/action", json={"name": name or kind, "type": "implicit", "kind": kind,
                                            "model_id": model_id})


def query_action(client, model_id: int, db_id: int, sql: str, tags: dict, parameters: list, name: str = "Q"):
    return client.post("/api/action", json={
        "name": name, "type": "query", "model_id": model_id, "database_id": db_id, "parameters": parameters,
        "dataset_query": {"database": db_id, "type": "native", "native": {"query": sql, "template-tags": tags}}})


def tag(name: str, kind: str = "text", required: bool = False) -> dict:
    return {"id": name, "name": name, "display-name": name, "type": kind, "required": required}


def param(name: str, kind: str = "string/=") -> dict:
    return {"id": name, "slug": name, "type": kind, "target": ["variable", ["template-tag", name]]}


class Recorder:
    """A small HTTP server on a loopback address that records every request and answers with `reply`
    (status, JSON body, extra headers)."""

    def __init__(self, reply=(200, {"ok": True}, {}), host: str = "127.0.0.1"):
        import http.server
        import threading

        import orjson

        self.requests: list[dict] = []
        self.reply = reply
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                recorder.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers),
                                          "body": self.rfile.read(length).decode() if length else ""})
                status, body, headers = recorder.reply
                data = orjson.dumps(body) if body is not None else b""
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

            def log_message(self, *args):
                pass

        self.host = host
        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def http_action(client, model_id: int, template: dict, name: str = "Hook", **extra):
    return client.post("/api/action", json={"name": name, "type": "http", "model_id": model_id,
                                            "template": template, **extra})
