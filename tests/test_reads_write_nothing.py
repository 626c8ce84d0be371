"""Reads write nothing to the app DB while they are served and run a bounded number of app-DB queries.

Every statement the app DB's engine executes on the test's thread is recorded while a request runs
(the Flask test client serves the request, its teardown included, on that thread; the write-behind
buffer writes on its own thread, core.appdb.counters). A GET of a card or a dashboard and a card or
dashcard query must execute no INSERT, UPDATE or DELETE and no COMMIT; the number of statements of a
dashboard's GET must not grow with its dashcards (no N+1), nor that of a collection's items with
its items. What the reads count (views, the query log) still reaches the app DB once the buffer is
written: the test checks that too, so that it cannot pass by counting nothing.
"""
from __future__ import annotations

import threading

import pytest
from sqlalchemy import event, select

from core.appdb.counters import flush
from tests.plugins.cards.fixtures import card_body, mbql_query

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


class AppDbStatements:
    """The statements and commits of the app DB engine on this thread while the block runs (the
change counters' read included, as one statement)."""

    def __init__(self, app):
        self.engine = app.extensions["tessera"].db.engine
        self.changes = app.extensions["tessera"].db.changes
        self.thread = threading.get_ident()
        self.statements: list[str] = []
        self.commits = 0

    def _statement(self, conn, cursor, statement, parameters, context, executemany):
        if threading.get_ident() == self.thread:
            self.statements.append(statement)

    def _commit(self, conn):
        if threading.get_ident() == self.thread:
            self.commits += 1

    def __enter__(self):
        event.listen(self.engine, "before_cursor_execute", self._statement)
        event.listen(self.engine, "commit", self._commit)
        # The counters are read on the DBAPI connection, out of the engine's sight: recorded here.
        read = self.changes.read

        def recorded():
            self._statement(None, None, self.changes.sql, None, None, False)
            return read()

        self.changes.read = recorded
        return self

    def __exit__(self, *exc):
        del self.changes.read
        event.remove(self.engine, "before_cursor_execute", self._statement)
        event.remove(self.engine, "commit", self._commit)

    @property
    def writes(self) -> list[str]:
        return [s for s in self.statements if s.lstrip().split(None, 1)[0].upper() in WRITES]


def served(app, client, method: str, path: str, **kwargs) -> AppDbStatements:
    """Run one request and return what it did to the app DB; the request must succeed."""
    with AppDbStatements(app) as seen:
        response = client.request(method, path, **kwargs)
    assert response.status_code in (200, 202), (path, response.status_code, response.json)
    return seen


def assert_read_only(seen: AppDbStatements, what: str) -> None:
    assert seen.statements, f"{what}: no app-DB statement seen at all, the recorder is not listening"
    assert seen.writes == [], f"{what} wrote to the app DB in the request: {seen.writes}"
    assert seen.commits == 0, f"{what} committed the app DB in the request"


@pytest.fixture
def flushed_by_hand(app):
    """The write-behind's thread stopped (what is pending is written now): buffered views are then written
    only by `flush(app)`. Its once-a-second flush would otherwise move the view counters between two
    measured reads when the machine is slow, and the second read would read the counts again."""
    app.extensions["tessera"].db.write_behind.close()


@pytest.fixture
def content(app, admin, user, warehouse):
    """Cards on the warehouse in a collection All Users may read, and dashboards of 2 and 10 of them,
    each dashcard with a filter mapped onto it and the first with a series."""
    collection = admin.post("/api/collection", json={"name": "Reports"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    assert admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                                    "groups": {"1": {str(collection): "read"}}}).status_code == 200
    cards = []
    for i in range(11):
        query = mbql_query(warehouse["db"], **{"source-table": warehouse["people"], "aggregation": [["count"]],
                                               "breakout": [["field", warehouse["people.last_name"], None]]})
        response = admin.post("/api/card", json=card_body(f"People {i}", query, collection_id=collection))
        assert response.status_code == 200, response.json
        cards.append(response.json["id"])
    parameter = {"id": "name", "name": "Name", "slug": "name", "type": "string/="}

    def dashboard(size: int) -> dict:
        dash = admin.post("/api/dashboard", json={"name": f"{size} cards", "collection_id": collection,
                                                  "parameters": [parameter]}).json
        dashcards = [{"id": -(i + 1), "card_id": card, "row": i * 4, "col": 0, "size_x": 6, "size_y": 4,
                      "series": [{"id": cards[10]}] if i == 0 else [],
                      "parameter_mappings": [{"parameter_id": "name", "card_id": card, "target": [
                          "dimension", ["field", warehouse["people.last_name"], None]]}]}
                     for i, card in enumerate(cards[:size])]
        dashcards.append({"id": -100, "card_id": None, "row": 99, "col": 0, "size_x": 4, "size_y": 2,
                          "visualization_settings": {"text": "A note"}})
        saved = admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": dashcards})
        assert saved.status_code == 200, saved.json
        return saved.json

    return {"collection": collection, "cards": cards, "small": dashboard(2), "big": dashboard(10)}


@pytest.mark.parametrize("who", ["admin", "user"])
def test_a_dashboard_read_writes_nothing_and_its_queries_do_not_grow_with_its_dashcards(app, admin, user, content,
                                                                                          who, flushed_by_hand):
    client = {"admin": admin, "user": user}[who]
    small, big = content["small"]["id"], content["big"]["id"]
    for dash in (small, big):  # the first read of a process may fill caches; the budget is the steady state
        client.get(f"/api/dashboard/{dash}")
    read_small = served(app, client, "GET", f"/api/dashboard/{small}")
    read_big = served(app, client, "GET", f"/api/dashboard/{big}")
    assert_read_only(read_small, "GET /api/dashboard/:id (2 dashcards)")
    assert_read_only(read_big, "GET /api/dashboard/:id (10 dashcards)")
    assert len(read_big.statements) == len(read_small.statements), (
        "the dashboard's hydration grows with its dashcards:\n" + "\n".join(read_big.statements))
    big_json = client.get(f"/api/dashboard/{big}").json
    assert len(big_json["dashcards"]) == 11 and big_json["dashcards"][0]["series"]
    assert all(dc["card"]["name"].startswith("People") for dc in big_json["dashcards"] if dc["card_id"])
    flush(app)
    with app.app_context():
        from plugins.dashboards.models import Dashboard

        with app.extensions["tessera"].db.engine.connect() as conn:
            counts = dict(conn.execute(select(Dashboard.id, Dashboard.view_count)).all())
    assert counts[small] == 2 and counts[big] == 3, "the views were not counted once the buffer was written"


@pytest.mark.parametrize("who", ["admin", "user"])
def test_a_card_read_writes_nothing_and_costs_the_same_for_every_card(app, admin, user, content, who,
                                                                       flushed_by_hand):
    client = {"admin": admin, "user": user}[who]
    first, last = content["cards"][0], content["cards"][10]
    flush(app)  # the fixture's query runs, logged: not written between the two measured reads
    for card in (first, last):
        client.get(f"/api/card/{card}")
    reads = [served(app, client, "GET", f"/api/card/{card}") for card in (first, last)]
    for seen in reads:
        assert_read_only(seen, "GET /api/card/:id")
    assert len(reads[0].statements) == len(reads[1].statements)
    assert len(reads[0].statements) <= 11, "GET /api/card/:id:\n" + "\n".join(reads[0].statements)
    assert client.get(f"/api/card/{first}").json["view_count"] == 3  # this process's views show at once
    flush(app)
    from core.appdb.models import Card

    with app.extensions["tessera"].db.engine.connect() as conn:
        assert conn.scalar(select(Card.view_count).where(Card.id == first)) == 3


def test_card_and_dashcard_queries_write_nothing_in_the_request_and_are_logged_after(app, admin, content):
    from core.appdb.models import QueryExecution

    card = content["cards"][0]
    dash = content["small"]
    dashcard = next(dc for dc in dash["dashcards"] if dc["card_id"] == card)
    runs = [served(app, admin, "POST", f"/api/card/{card}/query", json={}),
            served(app, admin, "POST", f"/api/dashboard/{dash['id']}/dashcard/{dashcard['id']}/card/{card}/query",
                   json={"parameters": [{"id": "name", "type": "string/=", "value": ["Turing"]}]})]
    for seen in runs:
        assert_read_only(seen, "a card query")
    flush(app)
    with app.extensions["tessera"].db.engine.connect() as conn:
        logged = conn.execute(select(QueryExecution.card_id, QueryExecution.dashboard_id)
                              .where(QueryExecution.card_id == card)).all()
    assert sorted(logged, key=str) == sorted([(card, None), (card, dash["id"])], key=str)


def test_collection_items_search_and_databases_write_nothing_and_items_do_not_cost_per_item(app, admin, content,
                                                                                             warehouse):
    small = admin.post("/api/collection", json={"name": "Few"}).json["id"]
    query = mbql_query(warehouse["db"], **{"source-table": warehouse["people"]})
    assert admin.post("/api/card", json=card_body("Alone", query, collection_id=small)).status_code == 200
    assert admin.post("/api/dashboard", json={"name": "Alone", "collection_id": small}).status_code == 200
    for path in (f"/api/collection/{small}/items", f"/api/collection/{content['collection']}/items",
                 "/api/collection/root/items", "/api/search?q=people", "/api/database"):
        admin.get(path)
        seen = served(app, admin, "GET", path)
        assert_read_only(seen, path)
    few = served(app, admin, "GET", f"/api/collection/{small}/items")
    many = served(app, admin, "GET", f"/api/collection/{content['collection']}/items")
    assert len(many.statements) == len(few.statements), "\n".join(many.statements)
    # A statement per concern: keys of each kind (every card type at once), the collections below,
    # what they hold, and each kind's rows of the page; no per-kind or per-item repeats.
    assert len(few.statements) <= 9, "\n".join(few.statements)


def test_the_buffer_is_written_by_its_own_thread_within_seconds(app, admin, content):
    """No one calls flush here: the write-behind thread writes the view about a second later."""
    import time

    from core.appdb.models import Card

    card = content["cards"][0]
    assert admin.get(f"/api/card/{card}").status_code == 200
    deadline = time.monotonic() + 10
    with app.extensions["tessera"].db.engine.connect() as conn:
        while conn.scalar(select(Card.view_count).where(Card.id == card)) != 1:
            assert time.monotonic() < deadline, "the view was not written within 10 s"
            conn.rollback()
            time.sleep(0.1)
