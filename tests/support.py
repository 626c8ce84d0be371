"""Helpers for tests that build apps with extra plugins written on the fly."""
import textwrap
import uuid


def write_plugin(tmp_path, monkeypatch, source: str) -> str:
    """Write a plugin module into an importable folder and return its module name."""
    name = f"tessera_test_plugin_{uuid.uuid4().hex[:8]}"
    folder = tmp_path / "plugin_path"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(folder))
    return name


def module_app(folder, app_db_template):
    """An app on a copy of the migrated app DB template in `folder`, for a module-scoped fixture that
    builds its content once."""
    import shutil

    from core.assembly.app import create_app
    from core.testing import FAST_HASHING

    shutil.copy(app_db_template, folder / "tessera.db")
    return create_app({"TESSERA_DATA_DIR": str(folder), "TESSERA_DB_URL": f"sqlite:///{folder / 'tessera.db'}",
                       "TESSERA_PLUGINS_AUTOLOAD": False, "TESSERA_RUN_MIGRATIONS": False, **FAST_HASHING})


# --------------------------------------------------------------------------------------------------
# Content of every kind, for the walks over all routes (fuzzing, access): ids that resolve, and
# objects a plain user must not see, each carrying a marker string that must never reach that user.
# --------------------------------------------------------------------------------------------------

MARKER = "SECRET-MARKER"


def recorded_events(app) -> list:
    """The events (core.assembly.events) the app tracks from now on, as a plugin listening to track_event sees them."""
    from core import hookimpl

    seen = []

    class Recorder:
        @hookimpl
        def track_event(self, event):
            seen.append(event)

    app.extensions["tessera"].pm.register(Recorder(), name=f"test.recorder.{id(seen)}")
    return seen


def _ok(response):
    assert response.status_code in (200, 202), (response.request.method, response.request.path, response.json)
    return response.json


def _native(db_id: int, sql: str) -> dict:
    return {"database": db_id, "type": "native", "native": {"query": sql}}


def _card(admin, name: str, dataset_query: dict, collection_id: int | None, **extra) -> int:
    return _ok(admin.post("/api/card", json={"name": name, "display": "table", "visualization_settings": {},
                                             "dataset_query": dataset_query, "collection_id": collection_id,
                                             "description": f"{name} description", **extra}))["id"]


def create_content(app, admin, owner=None) -> dict:
    """One object of every kind the API has, owned by `owner` (a client; default `admin`), and hidden
    from All Users: a collection without All Users' permission and the owner's personal collection
    holding a card, a model, a timeline and its event; a database (with its table, field
    and a segment and a metric on that table) blocked for All Users, whose only cell value is a marker;
    a group with an API key, a bookmark and a snippet (open to all); a dashboard in the hidden collection
    holding the secret card, with a filter mapped to the secret field; a pulse and an alert on the secret card; a
    webhook destination whose details (hidden from non-administrators) carry the marker.
    Names, descriptions, native SQL and cell values carry "SECRET-MARKER-<kind>". Returns the ids."""
    from core.testing import sqlite_file, wait_for_sync

    owner = owner or admin
    path = sqlite_file(app, "secret.db", f"CREATE TABLE secret_table (secret_id INTEGER PRIMARY KEY, secret_col TEXT);"
                                         f"INSERT INTO secret_table VALUES (1, '{MARKER}-cell');")
    # A blocked database still shows its name and id (API-SPEC, GET /api/database/:id): no marker there.
    db_id = _ok(admin.post("/api/database", json={"name": "blocked database", "engine": "sqlite",
                                                  "details": {"db": path}}))["id"]
    wait_for_sync(app)
    metadata = _ok(admin.get(f"/api/database/{db_id}/metadata"))
    table = metadata["tables"][0]
    field_id = next(f["id"] for f in table["fields"] if f["name"].lower() == "secret_col")
    _ok(admin.put(f"/api/table/{table['id']}", json={"description": f"{MARKER}-table"}))
    _ok(admin.put(f"/api/field/{field_id}", json={"description": f"{MARKER}-field"}))
    graph = _ok(admin.get("/api/permissions/graph"))
    _ok(admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(db_id): {"view-data": "blocked", "create-queries": "no"}}}}))

    collection_id = _ok(owner.post("/api/collection", json={"name": f"{MARKER}-collection",
                                                            "description": f"{MARKER}-collection"}))["id"]
    graph = _ok(admin.get("/api/collection/graph"))
    _ok(admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                                 "groups": {"1": {str(collection_id): "none"}}}))
    personal_id = owner.user["personal_collection_id"]
    sql = f"SELECT secret_col AS \"{MARKER}-column\", '{MARKER}-sql' AS literal FROM secret_table"
    query = {"database": db_id, "type": "query", "query": {"source-table": table["id"]}}
    ids = {"db": db_id, "table": table["id"], "field": field_id, "collection": collection_id,
           "personal_collection": personal_id, "user": owner.user["id"]}
    ids["card"] = _card(owner, f"{MARKER}-card", _native(db_id, sql), collection_id)
    ids["personal_card"] = _card(owner, f"{MARKER}-personal-card", query, personal_id)
    ids["model"] = _card(owner, f"{MARKER}-model", query, collection_id, type="model")
    if app.extensions["tessera"].pm.get_plugin("plugins.actions") is not None:
        _ok(admin.put(f"/api/database/{db_id}", json={"settings": {"database-enable-actions": True}}))
        ids["action"] = _ok(owner.post("/api/action", json={
            "name": f"{MARKER}-action", "type": "query", "model_id": ids["model"], "database_id": db_id,
            "description": f"{MARKER}-action",
            "dataset_query": _native(db_id, f"UPDATE secret_table SET secret_col = '{MARKER}-action-sql'")}))["id"]
    # Snippets in the root snippet collection are readable by every user (as in Metabase): no marker.
    ids["snippet"] = _ok(owner.post("/api/native-query-snippet", json={
        "name": "open snippet", "content": "1", "collection_id": None}))["id"]
    ids["timeline"] = _ok(owner.post("/api/timeline", json={"name": f"{MARKER}-timeline",
                                                            "description": f"{MARKER}-timeline",
                                                            "collection_id": collection_id}))["id"]
    ids["timeline_event"] = _ok(owner.post("/api/timeline-event", json={
        "name": f"{MARKER}-event", "description": f"{MARKER}-event", "timestamp": "2024-01-01", "timezone": "UTC",
        "timeline_id": ids["timeline"]}))["id"]
    definition = {"source-table": table["id"], "filter": ["not-null", ["field", field_id, None]]}
    ids["segment"] = _ok(admin.post("/api/segment", json={"name": f"{MARKER}-segment", "table_id": table["id"],
                                                           "description": f"{MARKER}-segment",
                                                           "definition": definition}))["id"]
    ids["metric"] = _ok(admin.post("/api/metric", json={
        "name": f"{MARKER}-metric", "table_id": table["id"], "description": f"{MARKER}-metric",
        "definition": {**definition, "aggregation": [["count"]]}}))["id"]
    group = _ok(admin.post("/api/permissions/group", json={"name": f"{MARKER}-group"}))
    ids["group"] = group["id"]
    key = _ok(admin.post("/api/api-key", json={"name": f"{MARKER}-key", "group_id": group["id"]}))
    ids["api_key"] = key["id"]
    ids["api_key_user"] = key["user_id"]
    ids["bookmark"] = ids["card"]
    _ok(owner.post(f"/api/bookmark/card/{ids['card']}"))
    ids["dashboard"], ids["dashcard"] = _dashboard(owner, ids, collection_id)
    ids["pulse"] = _ok(owner.post("/api/pulse", json={
        "name": f"{MARKER}-pulse", "collection_id": collection_id,
        "cards": [{"id": ids["card"], "include_csv": False, "include_xls": False}],
        "channels": [{"channel_type": "email", "enabled": True, "schedule_type": "daily", "schedule_hour": 8,
                      "recipients": [{"email": "secret-recipient@example.com"}]}]}))["id"]
    ids["alert"] = _ok(owner.post("/api/alert", json={
        "card": {"id": ids["card"]}, "alert_condition": "rows", "alert_first_only": False,
        "channels": [{"channel_type": "email", "enabled": True, "schedule_type": "daily", "schedule_hour": 8,
                      "recipients": [{"email": "secret-recipient@example.com"}]}]}))["id"]
    # A webhook destination: every user sees its name, only administrators its details (URL, secrets).
    # An IP literal, so saving it resolves nothing; it is never sent to.
    ids["channel"] = _ok(admin.post("/api/channel", json={
        "name": "webhook", "type": "channel/http", "details": {
            "url": f"https://8.8.8.8/{MARKER}-channel-url",
            "auth-method": "header", "auth-info": {"X-Secret": f"{MARKER}-channel-secret"}}}))["id"]
    return ids


def _dashboard(owner, ids: dict, collection_id: int) -> tuple[int, int]:
    """A dashboard in the hidden collection showing the secret card and the model, with filter "p" wired to
    the secret column on the model; returns its id and the secret card's dashcard id."""
    parameter = {"id": "p", "type": "category", "name": f"{MARKER}-parameter", "slug": "p"}
    dashboard_id = _ok(owner.post("/api/dashboard", json={"name": f"{MARKER}-dashboard", "collection_id": collection_id,
                                                           "description": f"{MARKER}-dashboard",
                                                           "parameters": [parameter]}))["id"]
    target = ["dimension", ["field", ids["field"], None]]
    dashboard = _ok(owner.put(f"/api/dashboard/{dashboard_id}", json={"dashcards": [
        {"id": -1, "card_id": ids["card"], "size_x": 4, "size_y": 4, "row": 0, "col": 0},
        {"id": -2, "card_id": ids["model"], "size_x": 4, "size_y": 4, "row": 4, "col": 0,
         "parameter_mappings": [{"parameter_id": "p", "card_id": ids["model"], "target": target}]}]}))
    return dashboard_id, next(d["id"] for d in dashboard["dashcards"] if d["card_id"] == ids["card"])
