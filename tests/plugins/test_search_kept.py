"""GET /api/search while its results are kept between requests (core.appdb.memo): users of the same
groups share them, and each still gets only what they may see (their own personal collection, their
bookmarks); an edit, an archive or a revoked permission is seen by the next search."""
from sqlalchemy import event

from core import hookimpl
from core.appdb.models import ALL_USERS_GROUP_ID, PermissionsGroup, PermissionsGroupMembership
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


def test_kept_results_answer_as_each_users_own_search(app, admin):
    """The same answers, for users of different groups and personal collections, whether the kept
    results of their groups serve them or (a hook that abstains registered) each search reads its own."""
    ulla = make_user(app, "ulla@example.com", "Ulla", "User")
    olga = make_user(app, "olga@example.com", "Olga", "Other")
    open_team, closed = create(admin, "Otter team"), create(admin, "Otter vault")
    nested = create(admin, "Otter subteam", parent_id=open_team["id"])
    set_perm(app, ALL_USERS_GROUP_ID, closed["id"], "none")
    set_perm(app, ALL_USERS_GROUP_ID, nested["id"], "read")
    with app.app_context(), store(app).session() as session:
        group = PermissionsGroup(name="Vault readers")
        session.add(group)
        session.flush()
        session.add(PermissionsGroupMembership(group_id=group.id, user_id=olga.user["id"]))
        group_id = group.id
    set_perm(app, group_id, closed["id"], "read")
    ulla_home = ulla.user["personal_collection_id"]
    ulla_sub = create(ulla, "Otter drafts", parent_id=ulla_home)
    for name, collection in (("Otter counts", open_team["id"]), ("Otter nested", nested["id"]),
                             ("Otter secrets", closed["id"]), ("Otter at the root", None),
                             ("Otter of Ulla", ulla_home), ("Otter draft", ulla_sub["id"])):
        add_card(app, name, collection)
    add_card(app, "Otter model", open_team["id"], type="model", position=1)
    add_card(app, "Otter archived", open_team["id"], archived=True)
    dashboard = admin.post("/api/dashboard", json={"name": "Otter board", "collection_id": closed["id"]}).json
    assert olga.post(f"/api/bookmark/dashboard/{dashboard['id']}").status_code == 200
    assert ulla.post(f"/api/bookmark/collection/{ulla_sub['id']}").status_code == 200
    queries = ["q=otter", "q=otter%20draft", "q=ott", "q=otter&models=card&models=dataset", "q=otter&archived=true",
               "q=otter&filter_items_in_personal_collection=only",
               "q=otter&filter_items_in_personal_collection=only-mine",
               "q=otter&filter_items_in_personal_collection=exclude",
               "q=otter&filter_items_in_personal_collection=exclude-others", "q=otter&limit=2&offset=1", ""]
    clients = (admin, ulla, olga)

    def answers():
        return [[c.get(f"/api/search?{q}").json for q in queries] for c in clients]

    kept = answers()
    assert answers() == kept  # served from the kept results this time

    class Abstain:
        @hookimpl
        def check_permission(self, user, action, obj):
            return None

    state = app.extensions["tessera"]
    state.pm.register(Abstain(), name="test.abstain")
    try:
        assert answers() == kept
    finally:
        state.pm.unregister(name="test.abstain")
    found = {c.user["email"]: {r["name"] for r in kept[i][0]["data"]} for i, c in enumerate(clients)}
    assert {"Otter of Ulla", "Otter draft", "Otter drafts"} <= found["ulla@example.com"]
    assert "Otter secrets" not in found["ulla@example.com"]
    assert {"Otter secrets", "Otter board"} <= found["olga@example.com"] and "Otter draft" not in found["olga@example.com"]
    assert next(r for r in kept[2][0]["data"] if r["name"] == "Otter board")["bookmark"] is True
    assert "Otter draft" in found[admin.user["email"]]
