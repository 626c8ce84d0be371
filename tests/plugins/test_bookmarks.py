"""/api/bookmark: create, list (shape and order), delete, ordering; what archived and unreadable
items do to bookmarks; GET /api/card?f=bookmarked and the `bookmark` flag of search results."""
from sqlalchemy import update

from core.appdb.models import ALL_USERS_GROUP_ID, Card
from core.testing import make_user
from tests.plugins.test_collections import add_card, create, set_perm, store


def archive_card(app, card_id, archived=True):
    with app.app_context(), store(app).session() as session:
        session.execute(update(Card).where(Card.id == card_id).values(archived=archived, archived_directly=archived))


def test_create_list_and_delete(app, admin, user):
    shelf = create(admin, "Shelf", description="Things to keep")
    question = add_card(app, "Question", shelf["id"])
    model = add_card(app, "A model", type="model")
    made = user.post(f"/api/bookmark/card/{question}")
    assert made.status_code == 200, made.json
    assert set(made.json) == {"id", "user_id", "card_id", "created_at"}
    assert made.json["card_id"] == question and made.json["user_id"] == user.user["id"]
    assert user.post(f"/api/bookmark/card/{model}").status_code == 200
    shelf_mark = user.post(f"/api/bookmark/collection/{shelf['id']}").json
    assert set(shelf_mark) == {"id", "user_id", "collection_id", "created_at"}
    again = user.post(f"/api/bookmark/card/{question}")
    assert again.status_code == 400 and again.json == "Bookmark already exists"

    listed = user.get("/api/bookmark").json
    # Without an ordering the newest comes first.
    assert [b["id"] for b in listed] == [f"collection-{shelf['id']}", f"card-{model}", f"card-{question}"]
    assert listed[0] == {"id": f"collection-{shelf['id']}", "type": "collection", "item_id": shelf["id"],
                         "name": "Shelf", "description": "Things to keep"}
    assert listed[1] == {"id": f"card-{model}", "type": "card", "item_id": model, "name": "A model",
                         "card_type": "model", "dataset": True, "display": "table"}
    # Bookmarks are per user.
    assert admin.get("/api/bookmark").json == []

    assert user.delete(f"/api/bookmark/card/{model}").status_code == 204
    assert user.delete(f"/api/bookmark/card/{model}").status_code == 204  # nothing left to delete: still 204
    assert [b["item_id"] for b in user.get("/api/bookmark").json] == [shelf["id"], question]
    assert user.post(f"/api/bookmark/card/{model}").status_code == 200  # can bookmark again


def test_bad_requests(app, admin, user):
    card = add_card(app, "Card")
    assert user.post("/api/bookmark/card/999999").status_code == 404
    assert user.post("/api/bookmark/collection/999999").status_code == 404
    assert user.post("/api/bookmark/dashboard/1").status_code == 404  # there are no dashboards
    assert user.delete("/api/bookmark/dashboard/1").status_code == 204
    wrong_model = user.post(f"/api/bookmark/pulse/{card}")
    assert wrong_model.status_code == 400 and "model" in wrong_model.json["errors"]
    assert user.post("/api/bookmark/card/0").status_code == 400
    assert user.post(f"/api/bookmark/card/{2**40}").status_code == 400
    assert user.put("/api/bookmark/ordering", json={}).status_code == 400
    bad_item = user.put("/api/bookmark/ordering", json={"orderings": [{"type": "card", "item_id": "x"}]})
    assert bad_item.status_code == 400
    client = app.test_client()
    assert client.get("/api/bookmark").status_code == 401


def test_ordering(app, admin, user):
    a, b, c = (add_card(app, name) for name in ("a", "b", "c"))
    shelf = create(admin, "Shelf")
    for card in (a, b, c):
        user.post(f"/api/bookmark/card/{card}")
    user.post(f"/api/bookmark/collection/{shelf['id']}")
    order = [{"type": "card", "item_id": b}, {"type": "collection", "item_id": shelf["id"]},
             {"type": "card", "item_id": a}]
    assert user.put("/api/bookmark/ordering", json={"orderings": order}).status_code == 204
    # Ordered bookmarks first in their order, the unordered one (c) after them.
    assert [b_["id"] for b_ in user.get("/api/bookmark").json] == [
        f"card-{b}", f"collection-{shelf['id']}", f"card-{a}", f"card-{c}"]
    # A new ordering replaces the old one entirely.
    order = [{"type": "card", "item_id": c}, {"type": "card", "item_id": a}]
    assert user.put("/api/bookmark/ordering", json={"orderings": order}).status_code == 204
    assert [x["item_id"] for x in user.get("/api/bookmark").json][:2] == [c, a]
    duplicate = user.put("/api/bookmark/ordering", json={"orderings": order + order[:1]})
    assert duplicate.status_code == 400
    assert [x["item_id"] for x in user.get("/api/bookmark").json][:2] == [c, a]  # unchanged
    assert user.put("/api/bookmark/ordering", json={"orderings": []}).status_code == 204
    # Another user's ordering is their own.
    assert admin.put("/api/bookmark/ordering", json={"orderings": order}).status_code == 204
    assert [x["item_id"] for x in user.get("/api/bookmark").json] == [shelf["id"], c, b, a]


def test_archived_items_are_hidden_and_come_back(app, admin, user):
    shelf = create(admin, "Shelf")
    inside = add_card(app, "Inside", shelf["id"])
    loose = add_card(app, "Loose")
    for path in (f"card/{inside}", f"card/{loose}", f"collection/{shelf['id']}"):
        assert user.post(f"/api/bookmark/{path}").status_code == 200
    archive_card(app, loose)
    assert [b["id"] for b in user.get("/api/bookmark").json] == [f"collection-{shelf['id']}", f"card-{inside}"]
    assert [c["id"] for c in user.get("/api/card?f=bookmarked").json] == [inside]
    # Archiving the collection archives the card inside it too.
    assert admin.put(f"/api/collection/{shelf['id']}", json={"archived": True}).status_code == 200
    assert user.get("/api/bookmark").json == [] and user.get("/api/card?f=bookmarked").json == []
    assert admin.put(f"/api/collection/{shelf['id']}", json={"archived": False}).status_code == 200
    archive_card(app, loose, archived=False)
    assert len(user.get("/api/bookmark").json) == 3
    assert [c["name"] for c in user.get("/api/card?f=bookmarked").json] == ["Inside", "Loose"]


def test_lost_permission_hides_bookmarks(app, admin, user):
    secret = create(admin, "Secret")
    card = add_card(app, "Secret card", secret["id"])
    assert user.post(f"/api/bookmark/card/{card}").status_code == 200
    assert user.post(f"/api/bookmark/collection/{secret['id']}").status_code == 200
    set_perm(app, ALL_USERS_GROUP_ID, secret["id"], "none")
    assert user.get("/api/bookmark").json == []
    assert user.get("/api/card?f=bookmarked").json == []
    assert user.get("/api/search?q=secret").json["data"] == []
    # Nobody learns of an item they cannot read by bookmarking it.
    other = make_user(app, email="other@example.com")
    assert other.post(f"/api/bookmark/card/{card}").status_code == 403
    assert other.post(f"/api/bookmark/collection/{secret['id']}").status_code == 403
    # Read access back: the bookmarks were kept.
    set_perm(app, ALL_USERS_GROUP_ID, secret["id"], "read")
    assert {b["id"] for b in user.get("/api/bookmark").json} == {f"card-{card}", f"collection-{secret['id']}"}


def test_card_list_filter_bookmarked(app, admin, user):
    names = ["beta", "Alpha", "gamma", "delta"]
    ids = {name: add_card(app, name) for name in names}
    for name in ("beta", "Alpha", "gamma"):
        user.post(f"/api/bookmark/card/{ids[name]}")
    admin.post(f"/api/bookmark/card/{ids['delta']}")
    listed = user.get("/api/card?f=bookmarked")
    assert listed.status_code == 200
    # Metabase sorts bookmarked cards by name as it is (capitals first).
    assert [c["name"] for c in listed.json] == ["Alpha", "beta", "gamma"]
    assert listed.json[0]["collection"]["id"] == "root" and "creator" in listed.json[0]
    assert [c["name"] for c in admin.get("/api/card?f=bookmarked").json] == ["delta"]


def test_search_results_tell_the_callers_bookmarks(app, admin, user):
    shelf = create(admin, "Report shelf")
    marked = add_card(app, "Report one", shelf["id"])
    add_card(app, "Report two", shelf["id"])
    user.post(f"/api/bookmark/card/{marked}")
    user.post(f"/api/bookmark/collection/{shelf['id']}")

    def flags(client):
        return {(r["model"], r["name"]): r["bookmark"] for r in client.get("/api/search?q=report").json["data"]}

    assert flags(user) == {("collection", "Report shelf"): True, ("card", "Report one"): True,
                           ("card", "Report two"): False}
    assert set(flags(admin).values()) == {False}
