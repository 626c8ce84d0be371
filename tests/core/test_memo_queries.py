"""Query runs kept per process (core.query.plans: prepared queries and compiled statements;
core.appdb.rows: the card, dashboard, dashcard and database rows) follow every commit and the clock.

Each test first runs a query twice (the second run is answered from the memo: no app-DB statement but
the generation read), then changes the app DB through the API, or moves the clock, and checks that
the next run sees it, on the SQLite file and on PostgreSQL.
"""
from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from core.testing import make_user, setup_admin
from tests.core.test_memo import set_access
from tests.plugins.cards.fixtures import card_body, make_warehouse, mbql_query, register_warehouse
from tests.test_reads_write_nothing import AppDbStatements

# Rows of the events table: one a year, mid-year.
YEARS = (2023, 2024, 2025, 2026)


def add_events(app, warehouse_path, db_id: int) -> int:
    """An `events` table (one timestamp a year) in the warehouse and its metadata; the field's id."""
    from core.appdb.models import Field, Table

    con = sqlite3.connect(warehouse_path)
    con.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, happened_at TIMESTAMP)")
    con.executemany("INSERT INTO events VALUES (?, ?)", [(y, f"{y}-06-15 12:00:00") for y in YEARS])
    con.commit()
    con.close()
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        table = Table(db_id=db_id, name="events", display_name="Events", initial_sync_status="complete")
        session.add(table)
        session.flush()
        field = Field(table_id=table.id, name="happened_at", display_name="Happened At", database_type="TIMESTAMP",
                      base_type="type/DateTime", effective_type="type/DateTime", position=1, database_position=1)
        session.add(Field(table_id=table.id, name="id", display_name="ID", database_type="INTEGER",
                          base_type="type/Integer", effective_type="type/Integer", semantic_type="type/PK",
                          position=0, database_position=0))
        session.add(field)
        session.commit()
        return field.id


@pytest.fixture
def world(any_app, tmp_path):
    admin = setup_admin(any_app)
    user = make_user(any_app)
    path = make_warehouse(tmp_path)
    warehouse = register_warehouse(any_app, path)
    happened_at = add_events(any_app, path, warehouse["db"])
    collection = admin.post("/api/collection", json={"name": "Shared"}).json["id"]
    set_access(admin, collection, "read")
    query = mbql_query(warehouse["db"], **{"source-table": warehouse["people"]})
    card = admin.post("/api/card", json=card_body("People", query, collection_id=collection)).json["id"]
    return {"app": any_app, "admin": admin, "user": user, "warehouse": warehouse, "collection": collection,
            "card": card, "happened_at": happened_at}


def run_twice(world, client, path: str, body: dict | None = None) -> dict:
    """The query's result from a run answered without an app-DB statement but the generation read, so
    that what follows tests the memo, not a first read. A commit between two runs (the write-behind
    buffer's, another test's on a shared PostgreSQL) is another generation: a few runs are allowed.
    On PostgreSQL any commit of the cluster counts, so there a hit is not required."""
    app = world["app"]
    generation = app.extensions["tessera"].db.changes.sql
    first = client.post(path, json=body or {})
    assert first.status_code == 202, first.json
    for _ in range(5):
        with AppDbStatements(app) as seen:
            again = client.post(path, json=body or {})
        assert again.status_code == 202, again.json
        if [s for s in seen.statements if s != generation] == []:
            return again.json
    assert app.extensions["tessera"].db.url.startswith("postgresql"), seen.statements
    return again.json


def test_an_edited_card_query_runs_at_the_next_request(world):
    admin, user = world["admin"], world["user"]
    path = f"/api/card/{world['card']}/query"
    assert run_twice(world, user, path)["row_count"] == 3
    query = mbql_query(world["warehouse"]["db"], **{"source-table": world["warehouse"]["people"], "limit": 1})
    assert admin.put(f"/api/card/{world['card']}", json={"dataset_query": query}).status_code == 200
    assert user.post(path, json={}).json["row_count"] == 1


def test_a_revoked_permission_and_a_logout_refuse_the_next_query(world):
    admin, user = world["admin"], world["user"]
    path = f"/api/card/{world['card']}/query"
    run_twice(world, user, path)
    set_access(admin, world["collection"], "none")
    assert user.post(path, json={}).status_code == 403
    set_access(admin, world["collection"], "read")
    run_twice(world, user, path)
    assert user.delete("/api/session").status_code == 204
    assert user.post(path, json={}).status_code == 401


def test_a_renamed_field_and_a_moved_dashcard_show_in_the_next_result(world):
    admin, user = world["admin"], world["user"]
    card = world["card"]
    dashboard = admin.post("/api/dashboard", json={"name": "Board", "collection_id": world["collection"]}).json["id"]
    dashcards = admin.put(f"/api/dashboard/{dashboard}", json={"dashcards": [
        {"id": -1, "card_id": card, "row": 0, "col": 0, "size_x": 4, "size_y": 3}]}).json["dashcards"]
    path = f"/api/dashboard/{dashboard}/dashcard/{dashcards[0]['id']}/card/{card}/query"
    cols = run_twice(world, user, path)["data"]["cols"]
    assert [c["display_name"] for c in cols][1] == "First Name"
    field = world["warehouse"]["people.first_name"]
    assert admin.put(f"/api/field/{field}", json={"display_name": "Given name"}).status_code == 200
    assert user.post(path, json={}).json["data"]["cols"][1]["display_name"] == "Given name"
    # The dashcard removed from the dashboard: its query is no longer there to run.
    assert admin.put(f"/api/dashboard/{dashboard}", json={"dashcards": []}).status_code == 200
    assert user.post(path, json={}).status_code == 404


def _clock(monkeypatch, year: int) -> None:
    from core.query import dates

    monkeypatch.setattr(dates, "now_in", lambda timezone=None: dt.datetime(year, 7, 1, 12, 0))


def test_a_relative_date_filter_follows_the_clock(world, monkeypatch):
    """A statement whose SQL depends on the clock is compiled again by every run."""
    admin, user = world["admin"], world["user"]
    warehouse = world["warehouse"]
    events = next(t["id"] for t in admin.get(f"/api/database/{warehouse['db']}/metadata").json["tables"]
                  if t["name"] == "events")
    query = mbql_query(warehouse["db"], **{
        "source-table": events, "filter": ["time-interval", ["field", world["happened_at"], None], "current", "year"]})
    card = admin.post("/api/card", json=card_body("This year", query, collection_id=world["collection"])).json["id"]
    path = f"/api/card/{card}/query"
    _clock(monkeypatch, 2024)
    for _ in range(2):  # a statement kept by mistake would be kept from either run
        assert user.post(path, json={}).json["data"]["rows"] == [[2024, "2024-06-15T12:00:00"]]
    _clock(monkeypatch, 2025)
    assert user.post(path, json={}).json["data"]["rows"] == [[2025, "2025-06-15T12:00:00"]]


def test_a_relative_date_parameter_follows_the_clock(world, monkeypatch):
    """A prepared query whose parameters depend on the clock is prepared again by every run."""
    admin, user = world["admin"], world["user"]
    warehouse = world["warehouse"]
    query = {"database": warehouse["db"], "type": "native", "native": {
        "query": "SELECT id FROM events WHERE {{when}}",
        "template-tags": {"when": {"id": "w", "name": "when", "display-name": "When", "type": "dimension",
                                   "dimension": ["field", world["happened_at"], None],
                                   "widget-type": "date/all-options"}}}}
    card = admin.post("/api/card", json=card_body("When", query, collection_id=world["collection"])).json["id"]
    path = f"/api/card/{card}/query"
    body = {"parameters": [{"id": "w", "type": "date/all-options", "value": "thisyear",
                            "target": ["dimension", ["template-tag", "when"]]}]}
    _clock(monkeypatch, 2024)
    for _ in range(2):
        assert user.post(path, json=body).json["data"]["rows"] == [[2024]]
    _clock(monkeypatch, 2026)
    assert user.post(path, json=body).json["data"]["rows"] == [[2026]]


def test_after_a_commit_one_request_computes_and_the_others_wait_for_it(app):
    """After a commit every request in flight misses at once: one computes each answer, the others
    wait and get it (a stampede of the same computation never settled under load). On the SQLite app
    DB only: on a shared PostgreSQL cluster another client's commit gives the threads other generations."""
    import threading

    from core.appdb import db, memo

    started, release, computed, answers = threading.Event(), threading.Event(), [], []

    def compute():
        computed.append(threading.get_ident())
        started.set()
        release.wait(10)
        return "answer"

    def request_thread():
        with app.test_request_context("/"):
            answers.append(memo.get_or_compute(db.session(), ("flight test",), compute))

    threads = [threading.Thread(target=request_thread) for _ in range(4)]
    threads[0].start()
    assert started.wait(10)
    for thread in threads[1:]:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(10)
    assert answers == ["answer"] * 4 and len(computed) == 1


def test_a_waiting_request_computes_itself_when_the_leader_kept_nothing(app):
    import threading

    from core.appdb import db, memo

    started, release, computed, answers = threading.Event(), threading.Event(), [], []

    def compute():
        computed.append(1)
        started.set()
        release.wait(10)
        return len(computed)

    def request_thread():
        with app.test_request_context("/"):
            answers.append(memo.get_or_compute(db.session(), ("flight test",), compute, keep=lambda value: False))

    threads = [threading.Thread(target=request_thread) for _ in range(2)]
    threads[0].start()
    assert started.wait(10)
    threads[1].start()
    release.set()
    for thread in threads:
        thread.join(10)
    assert len(computed) == 2 and sorted(answers) == [1, 2]
