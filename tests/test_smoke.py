def test_setup_login_current(client, admin):
    response = admin.get("/api/user/current")
    assert response.status_code == 200
    assert response.json["is_superuser"] is True
    assert client.get("/api/session/properties").json["setup-token"] is None
