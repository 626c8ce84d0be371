"""/api/activity/recent_views and /api/activity/popular_items: Metabase's shapes, the caller's own runs for
recent items and everyone's view counts for popular ones, and only items the caller may read."""
from __future__ import annotations

from core.appdb.counters import flush
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
