"""Kept answers (core.http.kept) through the API: an exact repeat of a cached card or dashcard query is
answered before Flask, the same body but for its own started_at, logged as a cache hit each time; a
logout, an edit, another caller, other parameters or the end of the cache's time to live go through
the application again."""
from __future__ import annotations

import time

import orjson
import pytest

from core.assembly.app import create_app
from core.http import kept
from core.testing import make_user, setup_admin

from .conftest import make_orders
from .test_query_cache import _cache_hits, _caching_on, _table_card


@pytest.fixture
def orders(app, admin):
    return make_orders(app, count=50)


@pytest.fixture
def dispatched(app, monkeypatch):
    """The requests Flask dispatched (a kept answer is served without one). The write-behind buffer
    is written only when a test asks (core.appdb.counters.flush): its commit every second moves the
    app DB's generation, which would send a repeat through Flask at a moment the test cannot choose."""
    buffer = app.extensions["tessera"].db.write_behind
    monkeypatch.setattr(buffer, "interval", 3600)
    buffer._wake.set()  # a thread waiting out the old interval starts the long one now
    time.sleep(0.05)
    seen = []
    dispatch = app.full_dispatch_request

    def counting():
        seen.append(1)
        return dispatch()

    monkeypatch.setattr(app, "full_dispatch_request", counting)
    return seen


def _without_run_fields(body: bytes) -> dict:
    decoded = orjson.loads(body)
    return {k: v for k, v in decoded.items() if k not in ("started_at", "running_time")}


def test_a_repeated_cached_card_query_is_answered_before_flask_and_logged_each_time(app, admin, orders, dispatched):
    _caching_on(admin)
    card = _table_card(admin, orders)
    url = f"/api/card/{card}/query"
    assert admin.post(url).json["cached"] is None  # fills the cache
    hit = admin.post(url)  # answered from the cache by the application: kept
    assert hit.status_code == 202 and hit.json["cached"] is not None
    before = len(dispatched)
    again = [admin.post(url) for _ in range(3)]
    assert len(dispatched) == before  # none of them reached Flask
    for response in again:
        assert response.status_code == 202 and response.content_type == hit.content_type
        assert _without_run_fields(response.data) == _without_run_fields(hit.data)
        assert response.json["running_time"] == 0 and response.json["started_at"] >= hit.json["started_at"]
        assert int(response.headers["Content-Length"]) == len(response.data)
    ids = {r.headers["X-Request-Id"] for r in [hit, *again]}
    assert len(ids) == 4  # every response has its own request id
    assert _cache_hits(app)[-5:] == [False, True, True, True, True]


def test_the_same_card_on_a_dashboard_is_kept_as_well(app, admin, orders, dispatched):
    _caching_on(admin)
    card = _table_card(admin, orders)
    dashboard = admin.post("/api/dashboard", json={"name": "Board"}).json["id"]
    dashcard = admin.put(f"/api/dashboard/{dashboard}", json={"dashcards": [
        {"id": -1, "card_id": card, "size_x": 4, "size_y": 3, "row": 0, "col": 0}]}).json["dashcards"][0]["id"]
    url = f"/api/dashboard/{dashboard}/dashcard/{dashcard}/card/{card}/query"
    admin.post(url)
    hit = admin.post(url)
    before = len(dispatched)
    again = admin.post(url)
    assert len(dispatched) == before and again.json["cached"] is not None
    assert again.json["context"] == "dashboard" and _without_run_fields(again.data) == _without_run_fields(hit.data)


def test_a_logout_an_edit_or_a_moved_clock_sends_the_repeat_through_the_application(app, admin, orders, dispatched,
                                                                                     monkeypatch):
    _caching_on(admin)
    card = _table_card(admin, orders)
    url = f"/api/card/{card}/query"
    admin.post(url)
    admin.post(url)
    before = len(dispatched)
    assert admin.post(url).json["cached"] is not None and len(dispatched) == before

    # an edit is a commit: the app DB's generation moved, the application answers (from the cache)
    assert admin.put(f"/api/card/{card}", json={"description": "edited"}).status_code == 200
    before = len(dispatched)
    assert admin.post(url).json["cached"] is not None and len(dispatched) == before + 1
    assert admin.post(url).status_code == 202 and len(dispatched) == before + 1  # kept again

    # past the cache's time to live (one hour) by the kept answers' clock: the application answers
    moved = kept._now() + 3601
    monkeypatch.setattr(kept, "_now", lambda: moved)
    assert admin.post(url).status_code == 202 and len(dispatched) == before + 2
    monkeypatch.setattr(kept, "_now", time.time)
    assert admin.post(url).status_code == 202 and len(dispatched) == before + 2  # what that request kept

    # a logout is a commit too: the same request is refused by the application
    assert admin.delete("/api/session").status_code == 204
    assert admin.post(url).status_code == 401  # the same request, once its session has ended


def test_a_kept_answer_is_never_served_to_another_caller_nor_for_other_parameters(app, admin, orders, dispatched):
    _caching_on(admin)
    card = _table_card(admin, orders)
    url = f"/api/card/{card}/query"
    admin.post(url)
    admin.post(url)
    collection = admin.post("/api/collection", json={"name": "Private", "color": "#509EE3"}).json["id"]
    admin.put(f"/api/card/{card}", json={"collection_id": collection})
    group = admin.get("/api/permissions/group").json
    all_users = next(g["id"] for g in group if g["name"] == "All Users")
    graph = admin.get("/api/collection/graph").json
    graph["groups"][str(all_users)][str(collection)] = "none"
    assert admin.put("/api/collection/graph", json=graph).status_code == 200
    outsider = make_user(app, "outsider@example.com")
    admin.post(url)  # kept again after those commits
    before = len(dispatched)
    assert outsider.post(url).status_code == 403 and len(dispatched) == before + 1

    assert admin.post(url, json={"parameters": []}).status_code == 202 and len(dispatched) == before + 2
    assert admin.post(url).status_code == 202 and len(dispatched) == before + 2


def test_operators_can_turn_kept_answers_off(app_config):
    application = create_app({**app_config, "TESSERA_KEEP_ANSWERS": False})
    try:
        admin = setup_admin(application)
        _caching_on(admin)
        card = _table_card(admin, make_orders(application, count=50))
        seen = []
        dispatch = application.full_dispatch_request
        application.full_dispatch_request = lambda: seen.append(1) or dispatch()
        answers = [admin.post(f"/api/card/{card}/query") for _ in range(4)]
        assert [a.json["cached"] is not None for a in answers] == [False, True, True, True]
        assert len(seen) == 4
    finally:
        application.extensions["tessera"].db.dispose()


def test_a_run_whose_preparation_follows_the_clock_is_answered_by_the_application(app, admin, orders, dispatched):
    """A relative date parameter is resolved against the clock: tomorrow the same request is another
    cache key, so the application must be asked every time (a kept answer would outlive the day)."""
    _caching_on(admin)
    card = _table_card(admin, orders)
    created_at = ["field", orders.fields["created_at"], None]
    body = {"parameters": [{"type": "date/all-options", "target": ["dimension", created_at], "value": "past30years"}]}
    url = f"/api/card/{card}/query"
    assert admin.post(url, json=body).json["row_count"] == 50
    before = len(dispatched)
    again = [admin.post(url, json=body) for _ in range(2)]
    assert [a.json["cached"] is not None for a in again] == [True, True]
    assert len(dispatched) == before + 2


def test_a_repeated_get_of_a_card_or_dashboard_is_kept_and_still_counts_every_view(app, admin, orders, dispatched):
    from sqlalchemy import select

    from core.appdb.counters import flush
    from core.appdb.models import Card
    from plugins.dashboards.models import Dashboard

    card = _table_card(admin, orders)
    dashboard = admin.post("/api/dashboard", json={"name": "Board"}).json["id"]
    for path, table in ((f"/api/card/{card}", Card), (f"/api/dashboard/{dashboard}", Dashboard)):
        flush(app)
        first = admin.get(path).json
        before = len(dispatched)
        again = [admin.get(path).json for _ in range(3)]
        assert len(dispatched) == before  # answered before Flask
        assert [a["view_count"] for a in again] == [first["view_count"] + n for n in (1, 2, 3)]
        assert {k: v for k, v in again[-1].items() if k not in ("view_count", "last_used_at", "last_viewed_at")} \
            == {k: v for k, v in first.items() if k not in ("view_count", "last_used_at", "last_viewed_at")}
        flush(app)  # every copy's view reaches the app DB
        with app.extensions["tessera"].db.engine.connect() as conn:
            assert conn.scalar(select(table.view_count).where(table.id == int(path.rsplit("/", 1)[1]))) \
                == first["view_count"] + 3
    unseen = admin.get(f"/api/card/{card}?ignore_view=true").json["view_count"]
    assert admin.get(f"/api/card/{card}?ignore_view=true").json["view_count"] == unseen
