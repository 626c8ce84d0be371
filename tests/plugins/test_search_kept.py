"""GET /api/search while its results are kept between requests (core.appdb.memo): users of the same
groups share them, and each still gets only what they may see (their own personal collection, their
bookmarks); an edit, an archive or a revoked permission is seen by the next search."""
from sqlalchemy import event

from core import hookimpl
from core.appdb.models import ALL_USERS_GROUP_ID
from core.testing import make_user
from tests.plugins.test_collections import add_card, create, set_perm, store


def names(client, q):
    response = client.get(f"/api/search?q={q}")
    assert response.status_code == 200, response.json
    return sorted((r["model"], r["name"], r["bookmark"], r["can_write"]) for r in response.json["data"])


def test_users_of_the_same_groups_share_results_but_not_personal_items_or_bookmarks(app, admin):
    ulla = make_user(app, "ulla@example.com", "Ulla", "User")
    olga = make_user(app, "olga@example.com", "Olga", "Other")
    team = create(admin, "Zebra team")
    shared = add_card(app, "Zebra counts", team["id"])
    add_card(app, "Zebra notes of Ulla", ulla.user["personal_collection_id"])
    assert ulla.post(f"/api/bookmark/card/{shared}").status_code == 200

    assert names(ulla, "zebra") == [("card", "Zebra counts", True, True), ("card", "Zebra notes of Ulla", False, True),
                                    ("collection", "Zebra team", False, True)]
    statements = []
    engine = store(app).engine
    listener = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listener)
    try:
        assert names(olga, "zebra") == [("card", "Zebra counts", False, True), ("collection", "Zebra team", False, True)]
    finally:
        event.remove(engine, "before_cursor_execute", listener)
    # Olga's search reads no card, dashboard or collection: Ulla's kept results served it.
    assert not [sql for sql in statements if "FROM report_card" in sql or "FROM report_dashboard" in sql]
    assert names(admin, "zebra") == [("card", "Zebra counts", False, True), ("card", "Zebra notes of Ulla", False, True),
                                     ("collection", "Zebra team", False, True)]
    assert names(ulla, "zebra")[0] == ("card", "Zebra counts", True, True)


def test_an_edit_is_seen_by_the_next_search(app, admin, user):
    team = create(admin, "Analytics team")
    card = add_card(app, "Weekly numbers", team["id"])
    assert names(user, "quokka") == []

    assert admin.put(f"/api/card/{card}", json={"name": "Quokka sightings"}).status_code == 200
    assert names(user, "quokka") == [("card", "Quokka sightings", False, True)]

    assert admin.put(f"/api/card/{card}", json={"archived": True}).status_code == 200
    assert names(user, "quokka") == []

    assert admin.put(f"/api/card/{card}", json={"archived": False}).status_code == 200
    assert names(user, "quokka") == [("card", "Quokka sightings", False, True)]
    set_perm(app, ALL_USERS_GROUP_ID, team["id"], "read")
    assert names(user, "quokka") == [("card", "Quokka sightings", False, False)]
    set_perm(app, ALL_USERS_GROUP_ID, team["id"], "none")
    assert names(user, "quokka") == []
    assert names(admin, "quokka") == [("card", "Quokka sightings", False, True)]


def test_a_check_permission_hook_decides_each_search(app, admin, user):
    hidden = create(admin, "Hidden wombats")
    add_card(app, "Wombat census", hidden["id"])
    add_card(app, "Wombat sightings")
    everything = [("card", "Wombat census", False, True), ("card", "Wombat sightings", False, True),
                  ("collection", "Hidden wombats", False, True)]
    assert names(user, "wombat") == everything

    class Deny:
        @hookimpl
        def check_permission(self, user, action, obj):
            return False if obj.get("model") == "collection" and obj.get("id") == hidden["id"] else None

    state = app.extensions["tessera"]
    state.pm.register(Deny(), name="test.deny-hidden")
    try:
        # The kept results of the same query and groups are not used: the hook decides.
        assert names(user, "wombat") == [("card", "Wombat sightings", False, True)]
    finally:
        state.pm.unregister(name="test.deny-hidden")
    assert names(user, "wombat") == everything
