"""Data (v1, v2), execution and collection permission graphs: shapes, fragments, 409 and 402."""
import threading

from core.testing import add_collection, add_database, make_user


def test_new_database_defaults_and_v2_shape(app, admin):
    gid = admin.post("/api/permissions/group", json={"name": "Analysts"}).json["id"]
    db_id, _ = add_database(app)
    graph = admin.get("/api/permissions/graph-v2").json
    assert graph["revision"] == 0
    groups = graph["groups"]
    assert groups["1"][str(db_id)] == {"view-data": "unrestricted", "create-queries": "query-builder-and-native",
                                       "download": {"schemas": "full"}, "data-model": {"schemas": "none"},
                                       "details": "no"}
    assert groups["2"][str(db_id)] == {"view-data": "unrestricted", "create-queries": "query-builder-and-native",
                                       "download": {"schemas": "full"}, "data-model": {"schemas": "all"},
                                       "details": "yes"}
    assert groups[str(gid)][str(db_id)]["view-data"] == "unrestricted"
    assert groups[str(gid)][str(db_id)]["create-queries"] == "no"
    v1 = admin.get("/api/permissions/graph").json["groups"]["1"][str(db_id)]
    assert v1["data"] == {"native": "write", "schemas": "all"}
    assert v1["download"] == {"native": "full", "schemas": "full"}
    assert set(admin.get(f"/api/permissions/graph/db/{db_id}").json["groups"]) == {"1", "2", str(gid)}
    assert set(admin.get(f"/api/permissions/graph/group/{gid}").json["groups"]) == {str(gid)}
    assert admin.get("/api/permissions/graph/db/999").status_code == 404
    assert admin.get("/api/permissions/graph/group/999").status_code == 404


def test_v2_put_fragment_granular_and_revision(app, admin, user):
    db_id, (orders, people, logs) = add_database(app, tables=(("PUBLIC", "ORDERS"), ("PUBLIC", "PEOPLE"),
                                                              ("AUDIT", "LOGS")))
    gid = admin.post("/api/permissions/group", json={"name": "Analysts"}).json["id"]
    body = {"revision": 0, "groups": {
        "1": {str(db_id): {"create-queries": "no", "download": {"schemas": "none"}}},
        str(gid): {str(db_id): {"create-queries": {"PUBLIC": {str(orders): "query-builder"}},
                                "download": {"schemas": {"PUBLIC": "limited"}}}},
    }}
    response = admin.put("/api/permissions/graph", json=body)
    assert response.status_code == 200, response.json
    assert response.json["revision"] == 1
    assert set(response.json["groups"]) == {"1", str(gid)}  # only the groups sent
    entry = response.json["groups"][str(gid)][str(db_id)]
    assert entry["create-queries"] == {"PUBLIC": {str(orders): "query-builder", str(people): "no"}, "AUDIT": "no"}
    assert entry["download"] == {"schemas": {"PUBLIC": "limited", "AUDIT": "none"}}
    assert entry["view-data"] == "unrestricted"  # not sent, kept
    all_users = response.json["groups"]["1"][str(db_id)]
    assert all_users["view-data"] == "unrestricted" and all_users["create-queries"] == "no"

    # a second fragment changes only the table named
    second = admin.put("/api/permissions/graph", json={"revision": 1, "groups": {
        str(gid): {str(db_id): {"create-queries": {"AUDIT": {str(logs): "query-builder"}}}}}})
    assert second.status_code == 200
    assert second.json["groups"][str(gid)][str(db_id)]["create-queries"] == {
        "PUBLIC": {str(orders): "query-builder", str(people): "no"}, "AUDIT": "query-builder"}
    assert admin.get("/api/permissions/graph-v2").json["revision"] == 2

    # the policy follows: the user in the group may query ORDERS, not PEOPLE, never native
    admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": user.user["id"]})
    from core.appdb.models import User
    from core.policy import permissions

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        member = session.get(User, user.user["id"])
        assert permissions.can_query(session, member, db_id, table_id=orders)
        assert not permissions.can_query(session, member, db_id, table_id=people)
        assert not permissions.can_query(session, member, db_id, native=True)
        assert permissions.download_level(session, member, db_id, orders) == "limited"
        assert permissions.download_level(session, member, db_id, logs) == "none"


def test_stale_revision_is_409_and_changes_nothing(app, admin):
    db_id, _ = add_database(app)
    before = admin.get("/api/permissions/graph-v2").json
    ok = admin.put("/api/permissions/graph", json={"revision": 0, "groups": {"1": {str(db_id): {"details": "yes"}}}})
    assert ok.status_code == 200
    stale = admin.put("/api/permissions/graph", json={"revision": 0, "groups": {"1": {str(db_id): {"view-data": "blocked",
                                                                                                   "create-queries": "no"}}}})
    assert stale.status_code == 409
    assert stale.json == ("Looks like someone else edited the permissions and your data is out of date. "
                          "Please fetch new data and try again.")
    after = admin.get("/api/permissions/graph-v2").json
    assert after["revision"] == 1
    assert after["groups"]["1"][str(db_id)]["view-data"] == before["groups"]["1"][str(db_id)]["view-data"]
    forced = admin.put("/api/permissions/graph", query_string={"force": "true", "skip-graph": "true"},
                       json={"revision": 0, "groups": {"1": {str(db_id): {"details": "no"}}}})
    assert forced.status_code == 200 and forced.json == {"revision": 2}


def test_concurrent_puts_one_wins(app, admin):
    db_id, _ = add_database(app)
    results = []
    barrier = threading.Barrier(2)

    def put(value):
        client = app.test_client()
        barrier.wait()
        response = client.put("/api/permissions/graph", headers=admin.headers,
                              json={"revision": 0, "groups": {"1": {str(db_id): {"download": {"schemas": value}}}}})
        results.append(response.status_code)

    threads = [threading.Thread(target=put, args=(v,)) for v in ("limited", "none")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [200, 409]
    assert admin.get("/api/permissions/graph-v2").json["revision"] == 1


def test_sandboxes_402_and_invalid_graphs_change_nothing(app_config):
    """Without plugins.sandboxes the graph is Metabase's open edition: 402 for sandboxes."""
    from core.assembly.app import create_app
    from core.testing import setup_admin

    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.sandboxes"})
    admin = setup_admin(app)
    assert admin.get("/api/mt/gtap").status_code == 404
    assert admin.get("/api/session/properties").json["token-features"]["sandboxes"] is False
    db_id, (table_id,) = add_database(app)
    paid = admin.put("/api/permissions/graph", json={"revision": 0, "groups": {}, "sandboxes": []})
    assert paid.status_code == 402
    assert admin.put("/api/permissions/graph", json={"revision": 0, "groups": {}, "impersonations": [{}]}).status_code == 402
    third = admin.post("/api/permissions/group", json={"name": "Third"}).json["id"]
    assert third == 3
    sandboxed = admin.put("/api/permissions/graph", json={"revision": 0, "groups": {
        "1": {str(db_id): {"view-data": "sandboxed"}}}})
    assert sandboxed.status_code == 402
    segmented = admin.put("/api/permissions/graph", json={"revision": 0, "groups": {"1": {str(db_id): {
        "data": {"schemas": {"PUBLIC": {str(table_id): {"read": "all", "query": "segmented"}}}}}}}})
    assert segmented.status_code == 402
    for bad in (
        {"1": {str(db_id): {"view-data": "blocked"}}},  # native queries still granted: blocked + native
        {"1": {str(db_id): {"view-data": "everything"}}},
        {"1": {"999": {"details": "yes"}}},
        {"999": {str(db_id): {"details": "yes"}}},
        {"1": {str(db_id): {"create-queries": {"NOPE": "no"}}}},
        {"1": {str(db_id): {"create-queries": {"PUBLIC": "query-builder-and-native"}}}},
        {"1": {str(db_id): {"download": "full"}}},
        {"1": {str(db_id): {"data": {"native": "write", "schemas": "none"}}}},
        {"x": {}},
    ):
        response = admin.put("/api/permissions/graph", json={"revision": 0, "groups": bad})
        assert response.status_code == 400, (bad, response.json)
    assert admin.put("/api/permissions/graph", json={"groups": {}}).status_code == 400
    # one transaction: a valid entry next to an invalid one is not applied either
    mixed = admin.put("/api/permissions/graph", json={"revision": 0, "groups": {
        "1": {str(db_id): {"view-data": "blocked", "create-queries": "no"}},
        "2": {},
        "3": {str(db_id): {"details": "perhaps"}}}})
    assert mixed.status_code == 400
    graph = admin.get("/api/permissions/graph-v2").json
    assert graph["revision"] == 0
    assert graph["groups"]["1"][str(db_id)]["view-data"] == "unrestricted"


def test_v1_put_and_admin_group_untouchable(app, admin, user):
    db_id, _ = add_database(app)
    response = admin.put("/api/permissions/graph", json={"revision": 0, "groups": {
        "1": {str(db_id): {"data": {"native": "none", "schemas": "block"}}},
        "2": {str(db_id): {"data": {"native": "none", "schemas": "block"}}}}})
    assert response.status_code == 200, response.json
    assert response.json["groups"]["1"][str(db_id)]["data"] == {"native": "none", "schemas": "block"}
    assert response.json["groups"]["2"][str(db_id)]["data"] == {"native": "write", "schemas": "all"}
    v2 = admin.get("/api/permissions/graph-v2").json["groups"]["1"][str(db_id)]
    assert v2["view-data"] == "blocked" and v2["create-queries"] == "no"
    from core.appdb.models import User
    from core.policy import permissions

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        member = session.get(User, user.user["id"])
        boss = session.get(User, admin.user["id"])
        assert permissions.data_access(session, member, db_id) == "blocked"
        assert not permissions.can_query(session, member, db_id)
        assert permissions.download_level(session, member, db_id) == "none"
        assert permissions.data_access(session, boss, db_id) == "unrestricted"
        assert permissions.can_query(session, boss, db_id, native=True)
        assert permissions.restrict_blocked({"id": 1, "name": "W", "tables": [], "details": {}}) == {
            "id": 1, "name": "W", "tables": []}


def test_execution_graph(app, admin):
    db_id, _ = add_database(app)
    gid = admin.post("/api/permissions/group", json={"name": "Actors"}).json["id"]
    graph = admin.get("/api/permissions/execution/graph").json
    assert graph["groups"]["1"] == {str(db_id): "none"} and graph["groups"]["2"] == {str(db_id): "all"}
    updated = admin.put("/api/permissions/execution/graph", json={"revision": 0, "groups": {str(gid): "all"}})
    assert updated.status_code == 200 and updated.json["revision"] == 1
    assert updated.json["groups"][str(gid)] == {str(db_id): "all"}
    stale = admin.put("/api/permissions/execution/graph", json={"revision": 0, "groups": {str(gid): "none"}})
    assert stale.status_code == 409
    assert admin.get("/api/permissions/execution/graph").json["groups"][str(gid)] == {str(db_id): "all"}
    assert admin.put("/api/permissions/execution/graph", json={"revision": 1, "groups": {str(gid): "maybe"}}).status_code == 400


def test_collection_graph(app, admin, user):
    gid = admin.post("/api/permissions/group", json={"name": "Editors"}).json["id"]
    finance = add_collection(app, "Finance")
    sub = add_collection(app, "Budgets", parent_id=finance)
    snippets = add_collection(app, "Snippet folder", namespace="snippets")
    personal = user.user["personal_collection_id"]
    graph = admin.get("/api/collection/graph").json
    assert graph["revision"] == 0
    assert graph["groups"]["1"] == {"root": "write", str(finance): "write", str(sub): "write"}
    assert graph["groups"]["2"] == {"root": "write", str(finance): "write", str(sub): "write"}
    assert graph["groups"][str(gid)] == {"root": "none", str(finance): "none", str(sub): "none"}
    assert str(personal) not in graph["groups"]["1"]
    snippet_graph = admin.get("/api/collection/graph", query_string={"namespace": "snippets"}).json
    assert snippet_graph["groups"]["1"] == {"root": "write", str(snippets): "write"}

    body = {"revision": 0, "groups": {"1": {"root": "read", str(finance): "none", str(personal): "none"},
                                      str(gid): {str(finance): "write"}, "2": {"root": "none"}}}
    updated = admin.put("/api/collection/graph", json=body)
    assert updated.status_code == 200, updated.json
    groups = updated.json["groups"]
    assert updated.json["revision"] == 1
    assert groups["1"] == {"root": "read", str(finance): "none", str(sub): "write"}
    assert groups[str(gid)][str(finance)] == "write" and groups["2"]["root"] == "write"

    stale = admin.put("/api/collection/graph", json={**body, "revision": 0})
    assert stale.status_code == 409
    assert admin.put("/api/collection/graph", json={"revision": 1, "groups": {"1": {"root": "owner"}}}).status_code == 400
    assert admin.put("/api/collection/graph", json={"revision": 1, "groups": {"1": {"999": "read"}}}).status_code == 400
    assert admin.get("/api/collection/graph").json["revision"] == 1
    assert user.get("/api/collection/graph").status_code == 403

    from core.appdb.models import User
    from core.policy import permissions

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        member = session.get(User, user.user["id"])
        assert permissions.can_read_collection(session, member, None)
        assert not permissions.can_write_collection(session, member, None)
        assert not permissions.can_read_collection(session, member, finance)
        assert permissions.can_write_collection(session, member, sub)
        assert permissions.can_write_collection(session, member, personal)
        # a new collection under Finance starts with Finance's permissions
    child = add_collection(app, "Q1", parent_id=finance)
    assert admin.get("/api/collection/graph").json["groups"][str(gid)][str(child)] == "write"
    assert admin.get("/api/collection/graph").json["groups"]["1"][str(child)] == "none"
    other = make_user(app, "other@example.com", "Otto", "Other")
    with app.app_context(), state.db.session() as session:
        stranger = session.get(User, other.user["id"])
        assert not permissions.can_read_collection(session, stranger, personal)
        assert permissions.can_read_collection(session, session.get(User, admin.user["id"]), personal)
