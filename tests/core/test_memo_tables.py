"""Memo answers (core.appdb.memo) end when a table they read is written, and only then (core.appdb.changes).

On the SQLite file and on PostgreSQL: a flush of view counts or of the query log leaves the card's,
the dashboard's and the permission answers kept (a GET then runs the counters' read and the read of
what changed, nothing else), while an edit of the card, a permission change, a write on a plain
connection, in text() SQL or by another instance ends them. Statements are counted on the app DB's
engine (tests.test_reads_write_nothing.AppDbStatements).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text, update

from core.appdb import changes
from core.appdb.counters import flush
from core.appdb.models import Card
from core.testing import ApiClient
from core.testing.app import FAST_HASHING
from tests.core.test_memo import make_world, read_twice, set_access
from tests.test_reads_write_nothing import AppDbStatements, assert_read_only

PERMISSION_TABLES = ("collection_permission", "permissions_group_membership", "data_permission")


@pytest.fixture
def world(any_app, tmp_path):
    return make_world(any_app, tmp_path)


def get(app, client, path: str) -> tuple[dict, list[str]]:
    with AppDbStatements(app) as seen:
        response = client.get(path)
    assert response.status_code == 200, response.json
    assert_read_only(seen, f"GET {path}")
    assert "appdb_change" in seen.statements[0]
    return response.json, seen.statements[1:]


def reading(statements: list[str], *tables: str) -> list[str]:
    return [s for s in statements if any(t in changes.classify(s)[0] for t in tables)]


def test_a_flush_of_view_counts_keeps_the_card_dashboard_and_permission_answers(world):
    app, user = world["app"], world["user"]
    card, dashboard = f"/api/card/{world['card']}", f"/api/dashboard/{world['dashboard']}"
    flush(app)  # what creating the card logged (its query's run)
    for path in (card, dashboard):
        read_twice(user, path)
        flush(app)  # the views counted so far: report_card#counts / report_dashboard#counts move
        shown, statements = get(app, user, path)
        # Only the stored counts are read again: no permission, no hydration, no login-session read.
        assert len(statements) == 1 and "view_count" in statements[0], statements
        assert reading(statements, *PERMISSION_TABLES, "core_session", "collection") == []
        assert shown["view_count"] == 3  # two stored by the flush, this one pending
    flush(app)
    assert user.get(f"{card}?ignore_view=true").json["view_count"] == 3


def test_a_flush_of_the_query_log_keeps_the_card_answer_and_reads_its_run_statistics_again(world):
    app, user = world["app"], world["user"]
    card = f"/api/card/{world['card']}"
    flush(app)
    read_twice(user, f"{card}?ignore_view=true")
    assert user.post(f"{card}/query", json={}).status_code == 202
    flush(app)  # query_execution rows and the query's running average
    shown, statements = get(app, user, f"{card}?ignore_view=true")
    assert len(statements) == 1 and reading(statements, "query_execution") == statements, statements
    assert shown["last_query_start"] is not None


def test_a_card_edit_and_a_permission_change_end_the_answers_that_read_them(world):
    app, admin, user = world["app"], world["admin"], world["user"]
    card = f"/api/card/{world['card']}?ignore_view=true"
    read_twice(user, card)
    assert admin.put(f"/api/card/{world['card']}", json={"description": "Edited"}).status_code == 200
    shown, statements = get(app, user, card)
    assert shown["description"] == "Edited" and reading(statements, "report_card"), statements

    read_twice(user, card)
    assert shown["can_write"] is False
    set_access(admin, world["collection"], "write")
    shown, statements = get(app, user, card)
    assert shown["can_write"] is True and reading(statements, "collection_permission"), statements
    set_access(admin, world["collection"], "none")
    assert user.get(card).status_code == 403


@pytest.mark.parametrize("how", ["core", "text", "cte"])
def test_a_write_on_a_plain_connection_ends_the_answer(world, how):
    app, user = world["app"], world["user"]
    card = f"/api/card/{world['card']}?ignore_view=true"
    read_twice(user, card)
    database = app.extensions["tessera"].db
    before = database.changes.read()
    with database.engine.begin() as conn:
        if how == "core":
            conn.execute(update(Card).where(Card.id == world["card"]).values(name="Written"))
        elif how == "text":
            conn.execute(text("UPDATE report_card SET name = 'Written' WHERE id = :id"), {"id": world["card"]})
        else:  # a write no table can be named for: the catch-all, which every answer depends on
            conn.execute(text("WITH chosen AS (SELECT :id AS id) UPDATE report_card SET name = 'Written' "
                              "WHERE id IN (SELECT id FROM chosen)"), {"id": world["card"]})
    after = database.changes.read()
    moved = {name for name in after if after[name] != before.get(name, 0)}
    # The card's search-index row is written by the card's trigger (core.appdb.search_index).
    assert moved == ({"*"} if how == "cte" else {"report_card", "search_index"})
    assert get(app, user, card)[0]["name"] == "Written"


def test_another_instance_s_view_flush_keeps_the_answers_and_its_edit_ends_them(world, tmp_path):
    from core.assembly.app import create_app

    app, user = world["app"], world["user"]
    card = f"/api/card/{world['card']}"
    flush(app)
    read_twice(user, f"{card}?ignore_view=true")
    key = (Path(app.config["TESSERA_DATA_DIR"]) / "encryption.key").read_text().strip()
    second = create_app({"TESSERA_DATA_DIR": str(tmp_path / "second"), "TESSERA_PLUGINS_AUTOLOAD": False,
                         "TESSERA_ENCRYPTION_KEY": key,
                         "TESSERA_DB_URL": app.extensions["tessera"].db.url, "TESSERA_RUN_MIGRATIONS": False,
                         **FAST_HASHING})
    try:
        elsewhere = ApiClient(second, user.headers)  # sessions live in the app DB
        assert elsewhere.get(card).status_code == 200
        assert elsewhere.get(card).status_code == 200
        flush(second)
        shown, statements = get(app, user, f"{card}?ignore_view=true")
        assert len(statements) == 1 and "view_count" in statements[0], statements
        assert shown["view_count"] == 2
        other_admin = ApiClient(second, world["admin"].headers)
        assert other_admin.put(card, json={"description": "Edited elsewhere"}).status_code == 200
    finally:
        second.extensions["tessera"].db.dispose()
    shown, statements = get(app, user, f"{card}?ignore_view=true")
    assert shown["description"] == "Edited elsewhere" and reading(statements, "report_card")
