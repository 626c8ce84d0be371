"""Pure reads answered from the memo (core.appdb.memo) see every commit to the app DB at the next request.

Each test first reads twice (the second read is a memo hit), then changes the app DB through the API,
through another app instance on the same app DB, or through a session of its own, and checks that the
next read sees it, on the SQLite file and on PostgreSQL. A memo hit runs the change counters' read and no
other app-DB statement, and still counts its view.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from core.appdb.counters import flush
from core.testing import ApiClient, make_user, setup_admin
from core.testing.app import FAST_HASHING
from tests.plugins.cards.fixtures import card_body, make_warehouse, mbql_query, register_warehouse
from tests.test_reads_write_nothing import AppDbStatements, assert_read_only


@pytest.fixture
def world(any_app, tmp_path):
    return make_world(any_app, tmp_path)


def make_world(any_app, tmp_path) -> dict:
    """An admin, a user, a collection All Users may read and a card in it on a small warehouse."""
    admin = setup_admin(any_app)
    user = make_user(any_app)
    warehouse = register_warehouse(any_app, make_warehouse(tmp_path))
    collection = admin.post("/api/collection", json={"name": "Shared"}).json["id"]
    set_access(admin, collection, "read")
    query = mbql_query(warehouse["db"], **{"source-table": warehouse["people"]})
    card = admin.post("/api/card", json=card_body("People", query, collection_id=collection)).json["id"]
    dashboard = admin.post("/api/dashboard", json={"name": "Board", "collection_id": collection}).json["id"]
    return {"app": any_app, "admin": admin, "user": user, "collection": collection, "card": card,
            "dashboard": dashboard}


def set_access(admin, collection: int, access: str) -> None:
    graph = admin.get("/api/collection/graph").json
    response = admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                                        "groups": {"1": {str(collection): access}}})
    assert response.status_code == 200, response.json


def read_twice(client, path: str) -> dict:
    first, second = client.get(path), client.get(path)
    assert first.status_code == second.status_code == 200, (first.json, second.json)
    return second.json


def test_a_changed_card_and_dashboard_are_seen_by_the_next_get(world):
    admin, user = world["admin"], world["user"]
    card, dashboard = f"/api/card/{world['card']}", f"/api/dashboard/{world['dashboard']}"
    assert read_twice(user, card)["name"] == "People"
    assert read_twice(user, dashboard)["name"] == "Board"
    assert admin.put(card, json={"name": "Persons"}).status_code == 200
    assert admin.put(dashboard, json={"name": "Panel"}).status_code == 200
    assert user.get(card).json["name"] == "Persons"
    assert user.get(dashboard).json["name"] == "Panel"


def test_a_revoked_permission_refuses_the_next_get(world):
    user = world["user"]
    card, dashboard = f"/api/card/{world['card']}", f"/api/dashboard/{world['dashboard']}"
    read_twice(user, card)
    read_twice(user, dashboard)
    set_access(world["admin"], world["collection"], "none")
    assert user.get(card).status_code == 403
    assert user.get(dashboard).status_code == 403


def test_logout_and_deactivation_refuse_the_next_request(world):
    app, admin, user = world["app"], world["admin"], world["user"]
    read_twice(user, "/api/user/current")
    assert user.delete("/api/session").status_code == 204
    assert user.get("/api/user/current").status_code == 401
    other = make_user(app, email="other@example.com")
    read_twice(other, f"/api/card/{world['card']}")
    assert admin.delete(f"/api/user/{other.user['id']}").status_code == 200
    assert other.get(f"/api/card/{world['card']}").status_code == 401


def test_a_write_by_another_instance_on_the_same_app_db_is_seen(world, tmp_path):
    from core.assembly.app import create_app

    app, user = world["app"], world["user"]
    card = f"/api/card/{world['card']}"
    read_twice(user, card)
    # Instances share the encryption key (create_app refuses one that cannot read the stored details).
    key = (Path(app.config["TESSERA_DATA_DIR"]) / "encryption.key").read_text().strip()
    second = create_app({"TESSERA_DATA_DIR": str(tmp_path / "second"), "TESSERA_PLUGINS_AUTOLOAD": False,
                         "TESSERA_ENCRYPTION_KEY": key,
                         "TESSERA_DB_URL": app.extensions["tessera"].db.url, "TESSERA_RUN_MIGRATIONS": False,
                         **FAST_HASHING})
    try:
        other_admin = ApiClient(second, world["admin"].headers)  # sessions live in the app DB
        assert other_admin.put(card, json={"description": "Edited elsewhere"}).status_code == 200
    finally:
        second.extensions["tessera"].db.dispose()
    assert user.get(card).json["description"] == "Edited elsewhere"


def test_a_memo_hit_runs_only_the_counters_read_and_counts_its_view(world):
    app, user = world["app"], world["user"]
    card_id = world["card"]
    card_reads = 0
    for path in (f"/api/card/{card_id}", f"/api/dashboard/{world['dashboard']}"):
        # The write-behind thread may write views between two GETs: a GET that met a moved counter is
        # a miss, still read-only, and the next try is measured. Five misses in a row fail.
        for _ in range(5):
            before = read_twice(user, path)["view_count"]
            with AppDbStatements(app) as seen:
                response = user.get(path)
            card_reads += 3 if path.startswith("/api/card/") else 0
            assert response.status_code == 200
            assert_read_only(seen, f"GET {path}")
            assert "appdb_change" in seen.statements[0]
            assert response.json["view_count"] == before + 1
            if len(seen.statements) == 1:
                break
        assert len(seen.statements) == 1, seen.statements
    flush(app)
    # The counted views reached the app DB: the next read (moved counts) shows them from there.
    assert user.get(f"/api/card/{card_id}?ignore_view=true").json["view_count"] == card_reads
