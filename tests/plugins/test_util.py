"""/api/util."""
import logging
import re


def test_random_token(client):
    first = client.get("/api/util/random_token").json["token"]
    second = client.get("/api/util/random_token").json["token"]
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert first != second


def test_password_check(client):
    assert client.post("/api/util/password_check", json={"password": "An0ther-Good-One"}).json == {"valid": True}
    for weak in ("short1", "nodigitshere", "password123", "qwerty1234"):
        response = client.post("/api/util/password_check", json={"password": weak})
        assert response.status_code == 400, weak
        assert response.json["errors"] == {"password": "password is too common."}


def test_common_password_list_is_large_and_lowercase():
    from core.identity.passwords import common_passwords

    words = common_passwords()
    assert len(words) >= 10_000
    assert all(w == w.lower() for w in list(words)[:500])


def test_strong_complexity_level():
    from core.identity.passwords import is_valid

    assert not is_valid("abcdefg1", "strong")
    assert is_valid("abCDefg1!", "strong")
    assert is_valid("password", "weak")


def test_logs_are_superuser_only_and_recent_first(app, admin, user):
    logging.getLogger("tessera.test").info("first line")
    logging.getLogger("tessera.test").info("second line")
    assert user.get("/api/util/logs").status_code == 403
    messages = [entry["msg"] for entry in admin.get("/api/util/logs").json]
    assert messages.index("second line") < messages.index("first line")


def test_bug_report_details(admin):
    details = admin.get("/api/util/bug_report_details").json
    assert details["metabase-info"]["application-database"] == "sqlite"
    assert "python.version" in details["system-info"]


def test_stats_count_rows(admin, user):
    stats = admin.get("/api/util/stats").json
    assert stats["core_user"] == 2
    assert stats["permissions_group"] >= 2


def test_connection_pool_info(admin):
    pools = admin.get("/api/util/diagnostic_info/connection_pool_info").json["connection-pools"]
    assert "app-db" in pools
    assert {"numConnections", "numIdleConnections", "numBusyConnections"} <= set(pools["app-db"])


def test_entity_id_translation(app, admin):
    from core.appdb.models import Collection

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        collection = Collection(name="Shared", entity_id="abcdefghijklmnopqrstu")
        session.add(collection)
        session.flush()
        collection_id = collection.id
    response = admin.post("/api/util/entity_id",
                          json={"entity_ids": {"collection": ["abcdefghijklmnopqrstu", "zzzzzzzzzzzzzzzzzzzzz"]}})
    assert response.status_code == 200
    assert response.json["entity_ids"]["abcdefghijklmnopqrstu"] == {
        "id": collection_id, "type": "collection", "status": "ok"}
    assert response.json["entity_ids"]["zzzzzzzzzzzzzzzzzzzzz"]["status"] == "not-found"


def test_product_feedback_is_logged(admin):
    response = admin.post("/api/util/product-feedback", json={"source": "test", "comments": "Lovely"})
    assert response.status_code == 204
    assert any("Lovely" in entry["msg"] for entry in admin.get("/api/util/logs").json)
    assert admin.post("/api/util/product-feedback", json={"comments": "x"}).status_code == 400


def test_superuser_only_util_routes(client, user):
    for path in ("/api/util/logs", "/api/util/stats", "/api/util/bug_report_details",
                 "/api/util/diagnostic_info/connection_pool_info"):
        assert client.get(path).status_code == 401
        assert user.get(path).status_code == 403
