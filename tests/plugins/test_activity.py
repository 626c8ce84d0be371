"""/api/activity/recent_views and /api/activity/popular_items: Metabase's shapes, the caller's own runs for
recent items and everyone's view counts for popular ones, and only items the caller may read."""
from __future__ import annotations

import datetime as dt
import random

from sqlalchemy import insert, inspect

from core.appdb.counters import flush
from core.appdb.models import Card, QueryExecution
from core.testing import make_user, setup_admin
from tests.plugins.cards.fixtures import card_body, mbql_query

RECENT_KEYS = {"id", "name", "model", "description", "timestamp", "can_write", "parent_collection"}


def world(app, admin, warehouse) -> dict:
    """A question and a model in Our analytics, a question in the administrator's personal collection,
    and a dashboard showing the first question."""
    query = mbql_query(warehouse["db"], **{"source-table": warehouse["orders"]})
    ids = {
        "open": admin.post("/api/card", json=card_body("Open orders", query, description="everyone's")).json["id"],
        "model": admin.post("/api/card", json=card_body("Orders model", query, type="model")).json["id"],
        "private": admin.post("/api/card", json=card_body("Admin private orders", query, collection_id=admin.user[
            "personal_collection_id"])).json["id"],
    }
    dashboard = admin.post("/api/dashboard", json={"name": "Sales board"}).json
    saved = admin.put(f"/api/dashboard/{dashboard['id']}", json={"dashcards": [
        {"id": -1, "card_id": ids["open"], "size_x": 4, "size_y": 3, "row": 0, "col": 0}]}).json
    ids["dashboard"], ids["dashcard"] = dashboard["id"], saved["dashcards"][0]["id"]
    return ids


def run(client, card_id: int) -> None:
    assert client.post(f"/api/card/{card_id}/query", json={}).status_code in (200, 202)


def test_recent_views_are_the_callers_own_runs_newest_first(app, admin, user, warehouse):
    ids = world(app, admin, warehouse)
    assert admin.get("/api/activity/recent_views").json == {"recent_views": []}
    run(admin, ids["private"])
    run(admin, ids["model"])
    ran = admin.post(f"/api/dashboard/{ids['dashboard']}/dashcard/{ids['dashcard']}/card/{ids['open']}/query",
                     json={})
    assert ran.status_code in (200, 202)
    run(user, ids["open"])
    flush(app)

    recent = admin.get("/api/activity/recent_views").json["recent_views"]
    # The dashboard's card run counts as the dashboard, not as the question.
    assert [(r["model"], r["id"]) for r in recent] == [("dashboard", ids["dashboard"]), ("dataset", ids["model"]),
                                                       ("card", ids["private"])]
    assert all(RECENT_KEYS <= set(r) for r in recent)
    assert [r["timestamp"] for r in recent] == sorted((r["timestamp"] for r in recent), reverse=True)
    private = recent[2]
    assert private["name"] == "Admin private orders" and private["can_write"] is True
    assert private["parent_collection"]["id"] == admin.user["personal_collection_id"]
    assert private["database_id"] == warehouse["db"] and private["display"] == "table"
    assert recent[0]["parent_collection"] == {"id": None, "name": "Our analytics", "authority_level": None}

    mine = user.get("/api/activity/recent_views").json["recent_views"]
    assert [(r["model"], r["id"], r["name"]) for r in mine] == [("card", ids["open"], "Open orders")]
    assert mine[0]["can_write"] is True and mine[0]["description"] == "everyone's"

    # In the trash: gone from the list.
    assert admin.put(f"/api/card/{ids['model']}", json={"archived": True}).status_code == 200
    assert ("dataset", ids["model"]) not in [(r["model"], r["id"]) for r in
                                             admin.get("/api/activity/recent_views").json["recent_views"]]


def test_popular_items_follow_view_counts_and_hide_what_the_caller_may_not_read(app, admin, user, warehouse):
    ids = world(app, admin, warehouse)
    assert user.get("/api/activity/popular_items").json == {"popular_items": []}
    for _ in range(4):
        assert admin.get(f"/api/card/{ids['private']}").status_code == 200
    for _ in range(3):
        assert admin.get(f"/api/dashboard/{ids['dashboard']}").status_code == 200
    for _ in range(2):
        assert user.get(f"/api/card/{ids['open']}").status_code == 200
    flush(app)

    popular = admin.get("/api/activity/popular_items").json["popular_items"]
    assert [(p["model"], p["id"]) for p in popular] == [("card", ids["private"]), ("dashboard", ids["dashboard"]),
                                                        ("card", ids["open"])]
    assert all(RECENT_KEYS <= set(p) for p in popular)
    # A plain user: the administrator's personal question is not theirs to see, however often it was viewed.
    shown = user.get("/api/activity/popular_items").json["popular_items"]
    assert [(p["model"], p["id"]) for p in shown] == [("dashboard", ids["dashboard"]), ("card", ids["open"])]
    assert "Admin private" not in str(shown)
    assert "Admin private" not in str(user.get("/api/activity/recent_views").json)

    # A collection All Users may not read takes its items off their list too.
    hidden = admin.post("/api/collection", json={"name": "Board room"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    assert admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                                    "groups": {"1": {str(hidden): "none"}}}).status_code == 200
    assert admin.put(f"/api/dashboard/{ids['dashboard']}", json={"collection_id": hidden}).status_code == 200
    shown = user.get("/api/activity/popular_items").json["popular_items"]
    assert [(p["model"], p["id"]) for p in shown] == [("card", ids["open"])]


def test_activity_needs_a_signed_in_user(client):
    assert client.get("/api/activity/recent_views").status_code == 401
    assert client.get("/api/activity/popular_items").status_code == 401


def _cards(app, names) -> list[int]:
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        cards = [Card(name=name, display="table", creator_id=1) for name in names]
        session.add_all(cards)
        session.commit()
        return [card.id for card in cards]


def _log(app, runs) -> None:
    """Query-log rows written straight to the app DB, in one transaction."""
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        session.execute(insert(QueryExecution), [{"hash": "0" * 64, **run} for run in runs])
        session.commit()


def _newest(runs) -> list[tuple[str, int, dt.datetime]]:
    """What recent_views lists for these runs of its caller, worked out from the rows: each card run as a
    question and each dashboard at its newest run, newest first (ties: the higher id first, then a card
    before a dashboard)."""
    newest: dict[tuple[str, int], dt.datetime] = {}
    for run in runs:
        if run["context"] == "question" and run.get("card_id") is not None and run.get("dashboard_id") is None:
            item = ("card", run["card_id"])
        elif run["context"] == "dashboard" and run.get("dashboard_id") is not None:
            item = ("dashboard", run["dashboard_id"])
        else:
            continue
        newest[item] = max(newest.get(item, run["started_at"]), run["started_at"])
    return sorted(sorted((kind, item_id, at) for (kind, item_id), at in newest.items()),
                  key=lambda item: (item[2], item[1]), reverse=True)


def _listed(client) -> list[tuple[str, int, dt.datetime]]:
    response = client.get("/api/activity/recent_views")
    assert response.status_code == 200, response.json
    return [(r["model"], r["id"], dt.datetime.fromisoformat(r["timestamp"])) for r in response.json["recent_views"]]


def test_recent_views_of_a_long_query_log_are_each_items_newest_run_and_only_the_callers(any_app):
    """1,200 logged runs of a few items: each item is listed at its newest run however deep in the log
    that is (the oldest row is the only run of one card), in the order of the newest runs, and what
    another user ran is neither listed nor dates the caller's items."""
    admin, other = setup_admin(any_app), make_user(any_app)
    cards = _cards(any_app, [f"Card {i}" for i in range(6)] + ["Oldest run", "Ad hoc only", "On boards only",
                                                               "Others only"])
    *ran, oldest, ad_hoc, on_boards, theirs = cards
    dashboards = [admin.post("/api/dashboard", json={"name": f"Board {i}"}).json["id"] for i in range(4)]
    start, pick = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc), random.Random(30)
    runs = [{"started_at": start, "context": "question", "card_id": oldest}]
    while len(runs) < 1200:
        at = start + dt.timedelta(seconds=len(runs) // 3)  # runs three to a second: ties on started_at
        shape = pick.random()
        if shape < 0.45:
            runs.append({"started_at": at, "context": "question", "card_id": pick.choice(ran)})
        elif shape < 0.9:
            # A dashboard's cards run together; even as a question, a card run on a dashboard is not the card's.
            board = pick.choice(dashboards)
            runs += [{"started_at": at, "context": "dashboard", "card_id": card, "dashboard_id": board}
                     for card in ran[:3]]
            runs.append({"started_at": at, "context": "question", "card_id": on_boards, "dashboard_id": board})
        else:
            runs.append({"started_at": at, "context": "ad-hoc", "card_id": ad_hoc})
    for run in runs:
        run["executor_id"] = admin.user["id"]
    # The same instant for a card and a dashboard, newest of all: the higher id is listed first.
    last = start + dt.timedelta(hours=1)
    assert ran[0] < dashboards[-1]
    runs += [{"executor_id": admin.user["id"], "started_at": last, "context": "question", "card_id": ran[0]},
             {"executor_id": admin.user["id"], "started_at": last, "context": "dashboard", "card_id": ran[0],
              "dashboard_id": dashboards[-1]}]
    # Someone else's runs, newer than all of the caller's, of the caller's items and of one of their own.
    later = last + dt.timedelta(days=1)
    others = [{"executor_id": other.user["id"], "started_at": later, "context": "question", "card_id": card}
              for card in (ran[1], theirs)]
    others.append({"executor_id": other.user["id"], "started_at": later, "context": "dashboard",
                   "card_id": ran[0], "dashboard_id": dashboards[1]})
    _log(any_app, runs + others)

    expected = _newest(runs)
    assert len(runs) > 1200 and len(expected) == len(ran) + len(dashboards) + 1
    listed = _listed(admin)
    assert listed == expected
    assert listed[:2] == [("dashboard", dashboards[-1], last), ("card", ran[0], last)]
    assert listed[-1] == ("card", oldest, start)
    assert {("card", ad_hoc), ("card", on_boards), ("card", theirs)}.isdisjoint(
        (kind, item_id) for kind, item_id, _ in listed)
    assert _listed(other) == _newest(others)


def test_the_migrated_query_log_indexes_lead_with_the_caller_and_the_item(app):
    """The app DB's migrations give query_execution the two indexes the recent read seeks in: the caller,
    the context and the item ahead of started_at; the executor_id index they make redundant is gone."""
    indexes = {index["name"]: index["column_names"]
               for index in inspect(app.extensions["tessera"].db.engine).get_indexes("query_execution")}
    assert indexes["ix_query_execution_recent_cards"] == ["executor_id", "context", "card_id", "started_at",
                                                         "dashboard_id"]
    assert indexes["ix_query_execution_recent_dashboards"] == ["executor_id", "context", "dashboard_id", "started_at"]
    assert ["executor_id"] not in indexes.values()


def test_recent_items_are_read_by_seeks_not_by_reading_the_callers_runs(app):
    """Each statement finds the next item above the last one and that item's newest run by index seeks
    (SQLite's plan), rather than grouping every run the caller logged."""
    from plugins.activity.service import _RECENT_CARDS, _RECENT_DASHBOARDS

    with app.extensions["tessera"].db.engine.connect() as conn:
        for statement, index, item in ((_RECENT_CARDS, "ix_query_execution_recent_cards", "card_id"),
                                       (_RECENT_DASHBOARDS, "ix_query_execution_recent_dashboards", "dashboard_id")):
            compiled = statement.compile(dialect=conn.dialect)
            plan = [row[-1] for row in conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN " + str(compiled), tuple(compiled.params[name] for name in compiled.positiontup))]
            reads = [step for step in plan if "query_execution" in step]
            assert len(reads) == 3 and all(step.startswith(f"SEARCH query_execution USING COVERING INDEX {index} ")
                                           for step in reads), plan
            assert [f"{item}>?" in reads[1], f"{item}=?" in reads[2]] == [True, True], plan
