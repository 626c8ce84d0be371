"""core.policy.permissions: the policy every plugin asks, including the check_permission hook and the
sandboxed-user rules of /api/user."""
from core import hookimpl
from core.appdb.models import DataPermission, User
from core.policy import permissions
from core.testing import add_collection, add_database, make_user


def _user(session, client):
    return session.get(User, client.user["id"])


def test_most_permissive_group_wins_and_defaults(app, admin, user):
    db_id, (table_id,) = add_database(app)
    gid = admin.post("/api/permissions/group", json={"name": "Natives"}).json["id"]
    admin.put("/api/permissions/graph", json={"revision": 0, "groups": {
        "1": {str(db_id): {"create-queries": "query-builder", "download": {"schemas": "limited"}}},
        str(gid): {str(db_id): {"create-queries": "query-builder-and-native", "data-model": {"schemas": "all"},
                                "details": "yes"}}}})
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        member = _user(session, user)
        assert permissions.can_query(session, member, db_id, table_id=table_id)
        assert not permissions.can_query(session, member, db_id, native=True)
        assert permissions.download_level(session, member, db_id) == "limited"
        assert not permissions.can_edit_data_model(session, member, db_id)
        assert not permissions.can_manage_database(session, member, db_id)
        assert not permissions.can_execute_actions(session, member, db_id)
    admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": user.user["id"]})
    with app.app_context(), state.db.session() as session:
        member = _user(session, user)
        assert permissions.can_query(session, member, db_id, native=True)
        assert permissions.can_edit_data_model(session, member, db_id, table_id)
        assert permissions.can_manage_database(session, member, db_id)
        # nobody: no rights at all; a deactivated user: none either
        assert not permissions.can_query(session, None, db_id)
        member.is_active = False
        assert permissions.data_access(session, member, db_id) == "blocked"
        assert not permissions.can_read_collection(session, member, None)
        session.rollback()


def test_check_permission_hook_overrules(app, admin, user):
    db_id, _ = add_database(app)
    collection_id = add_collection(app, "Shared")

    class Deny:
        @hookimpl
        def check_permission(self, user, action, obj):
            if action in ("native", "write") or (action == "download" and obj["id"] == db_id):
                return False
            return None

    class Grant:
        @hookimpl
        def check_permission(self, user, action, obj):
            return True if action == "data-model" else None

    state = app.extensions["tessera"]
    state.pm.register(Deny(), name="test.deny")
    state.pm.register(Grant(), name="test.grant")
    with app.app_context(), state.db.session() as session:
        member = _user(session, user)
        assert not permissions.can_query(session, member, db_id, native=True)
        assert permissions.can_query(session, member, db_id)
        assert permissions.download_level(session, member, db_id) == "none"
        assert not permissions.can_write_collection(session, member, collection_id)
        assert permissions.can_read_collection(session, member, collection_id)
        assert permissions.can_edit_data_model(session, member, db_id)


def test_a_failing_policy_denies(app, admin, user, monkeypatch):
    db_id, _ = add_database(app)

    def broken(*args, **kwargs):
        raise RuntimeError("permission rows unreadable")

    monkeypatch.setattr(permissions, "data_permission", broken)
    monkeypatch.setattr(permissions, "collection_level", broken)
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        member = _user(session, user)
        assert permissions.data_access(session, member, db_id) == "blocked"
        assert not permissions.can_query(session, member, db_id)
        assert permissions.download_level(session, member, db_id) == "none"
        assert not permissions.can_read_collection(session, member, None)


def test_sandboxed_user_sees_only_self(app, admin, user):
    """Tessera refuses to write sandboxes (402); an extension that writes such rows gets the
    spec's rules for sandboxed users."""
    db_id, _ = add_database(app)
    make_user(app, "other@example.com", "Otto", "Other")
    gid = admin.post("/api/permissions/group", json={"name": "Sandboxed"}).json["id"]
    admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": user.user["id"]})
    admin.put("/api/permissions/graph", json={"revision": 0, "groups": {"1": {str(db_id): {
        "view-data": "blocked", "create-queries": "no"}}}})
    assert len(user.get("/api/user/recipients").json["data"]) == 3
    state = app.extensions["tessera"]
    with state.db.session() as session:
        session.query(DataPermission).filter_by(group_id=gid, perm_type="view-data").delete()
        session.add(DataPermission(group_id=gid, db_id=db_id, perm_type="view-data", perm_value="sandboxed"))
    listed = user.get("/api/user").json
    assert [u["email"] for u in listed["data"]] == ["user@example.com"] and listed["total"] == 1
    assert [u["email"] for u in user.get("/api/user/recipients").json["data"]] == ["user@example.com"]
    with app.app_context(), state.db.session() as session:
        assert permissions.is_sandboxed(session, _user(session, user))
        assert not permissions.can_query(session, _user(session, user), db_id, native=True)


def test_cached_answers_follow_membership_and_commits(app, admin, user):
    from core.identity import users

    db_id, (table_id,) = add_database(app)
    gid = admin.post("/api/permissions/group", json={"name": "Natives"}).json["id"]
    admin.put("/api/permissions/graph", json={"revision": 0, "groups": {
        "1": {str(db_id): {"create-queries": "no"}},
        str(gid): {str(db_id): {"create-queries": "query-builder-and-native"}}}})
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        member = _user(session, user)
        assert not permissions.can_query(session, member, db_id, table_id=table_id)
        users.add_membership(session, member, gid)
        assert permissions.can_query(session, member, db_id, native=True)
        session.rollback()
        assert not permissions.can_query(session, member, db_id, native=True)
        # a change committed by someone else is seen after this session's transaction ends
        admin.put("/api/permissions/graph", json={"revision": 1, "groups": {"1": {str(db_id): {
            "create-queries": "query-builder"}}}})
        session.commit()
        assert permissions.can_query(session, member, db_id, table_id=table_id)
