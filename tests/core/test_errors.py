"""Metabase's error bodies and status codes, and JSON on every response."""


def test_health_is_open_and_json(client):
    response = client.get("/api/health")
    assert response.status_code == 200
    assert response.json == {"status": "ok"}


def test_unknown_api_path_is_404_with_metabase_text(client):
    response = client.get("/api/no-such-thing/42")
    assert response.status_code == 404
    assert response.mimetype == "application/json"
    assert response.json == "API endpoint does not exist."


def test_wrong_method_is_treated_as_unknown_endpoint(client):
    response = client.delete("/api/health")
    assert response.status_code == 404
    assert response.json == "API endpoint does not exist."


def test_unauthenticated_body(client):
    response = client.get("/api/user/current")
    assert response.status_code == 401
    assert response.json == "Unauthenticated"


def test_forbidden_body(user):
    response = user.get("/api/setting")
    assert response.status_code == 403
    assert response.json == "You don't have permissions to do that."


def test_unknown_setting_is_404(admin):
    response = admin.get("/api/setting/no-such-setting")
    assert response.status_code == 404


def test_trailing_slash_accepted(admin):
    assert admin.get("/api/user/current/").status_code == 200
    assert admin.get("/api/setting/").status_code == 200


def test_malformed_json_body_is_400(client):
    response = client.post("/api/session", data="{not json", content_type="application/json")
    assert response.status_code == 400
    assert "errors" in response.json


def test_unexpected_exception_is_json_500(app, client, monkeypatch):
    from plugins.session import views

    def explode():
        raise RuntimeError("boom")

    monkeypatch.setattr(views.db, "session", explode)
    response = client.get("/api/health")
    assert response.status_code == 500
    assert response.json["message"] == "Internal server error."
