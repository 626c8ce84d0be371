"""The identity features on each app-DB backend (SQLite and, when it answers, PostgreSQL)."""
import threading

from core.testing import USER_PASSWORD, add_database, make_user, setup_admin


def test_graph_revision_race_keys_and_deactivation(any_app):
    app = any_app
    admin = setup_admin(app)
    user = make_user(app)
    db_id, _ = add_database(app)
    results = []
    barrier = threading.Barrier(2)

    def put(value):
        client = app.test_client()
        barrier.wait()
        results.append(client.put("/api/permissions/graph", headers=admin.headers, json={
            "revision": 0, "groups": {"1": {str(db_id): {"download": {"schemas": value}}}}}).status_code)

    threads = [threading.Thread(target=put, args=(v,)) for v in ("limited", "none")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [200, 409]
    assert admin.get("/api/permissions/graph-v2").json["revision"] == 1
    stale = admin.put("/api/collection/graph", json={"revision": 5, "groups": {"1": {"root": "read"}}})
    assert stale.status_code == 409

    key = admin.post("/api/api-key", json={"name": "CI", "group_id": 1}).json["unmasked_key"]
    assert app.test_client().get("/api/user/current", headers={"X-API-KEY": key}).status_code == 200

    assert admin.delete(f"/api/user/{user.user['id']}").json == {"success": True}
    assert user.get("/api/user/current").status_code == 401
    assert app.test_client().post("/api/session", json={"username": "user@example.com",
                                                         "password": USER_PASSWORD}).status_code == 401
