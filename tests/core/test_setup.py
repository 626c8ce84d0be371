"""First-run setup: the token, the first superuser, and the token's death afterwards."""
import threading

import pytest

from core.testing import ApiClient


def setup_body(token, email="first@example.com", password="Str0ng-Enough-Pw"):
    return {"token": token, "user": {"email": email, "password": password, "first_name": "F", "last_name": "L"},
            "prefs": {"site_name": "Acme", "site_locale": "fr"}}


@pytest.mark.security_row(1)
def test_properties_before_and_after_setup(client):
    before = client.get("/api/session/properties").json
    assert isinstance(before["setup-token"], str) and len(before["setup-token"]) == 36
    assert before["has-user-setup"] is False
    assert before["version"]["tag"].startswith("v0.")
    assert before["password-complexity"] == {"total": 6, "digit": 1}
    assert "available-locales" in before and "engines" in before
    response = client.post("/api/setup", json=setup_body(before["setup-token"]))
    assert response.status_code == 200
    assert set(response.json) == {"id"}
    after = client.get("/api/session/properties").json
    assert after["setup-token"] is None
    assert after["has-user-setup"] is True
    assert after["site-name"] == "Acme"
    assert after["site-locale"] == "fr"


def test_setup_creates_a_superuser_with_a_session(client):
    token = client.get("/api/session/properties").json["setup-token"]
    session_id = client.post("/api/setup", json=setup_body(token)).json["id"]
    me = client.get("/api/user/current", headers={"X-Metabase-Session": session_id}).json
    assert me["email"] == "first@example.com"
    assert me["is_superuser"] is True
    assert me["group_ids"] == [1, 2]
    assert isinstance(me["personal_collection_id"], int)


def test_wrong_token_is_400_on_token(client):
    response = client.post("/api/setup", json=setup_body("00000000-0000-0000-0000-000000000000"))
    assert response.status_code == 400
    assert response.json == {"errors": {"token": "Token does not match the setup token."}}


def test_weak_password_is_rejected(client):
    token = client.get("/api/session/properties").json["setup-token"]
    response = client.post("/api/setup", json=setup_body(token, password="password1"))
    assert response.status_code == 400
    assert response.json["errors"] == {"password": "password is too common."}
    assert client.get("/api/session/properties").json["has-user-setup"] is False


def test_invalid_email_and_missing_site_name(client):
    token = client.get("/api/session/properties").json["setup-token"]
    body = setup_body(token, email="not-an-email")
    del body["prefs"]["site_name"]
    response = client.post("/api/setup", json=body)
    assert response.status_code == 400
    assert response.json["errors"]["user"] == {"email": "value must be a valid email address."}
    assert response.json["errors"]["prefs"] == {"site_name": "value must be a non-blank string."}


@pytest.mark.security_row(1)
def test_token_is_dead_after_setup(client):
    token = client.get("/api/session/properties").json["setup-token"]
    assert client.post("/api/setup", json=setup_body(token)).status_code == 200
    replay = client.post("/api/setup", json=setup_body(token, email="second@example.com"))
    assert replay.status_code == 403
    assert replay.json.startswith("The /api/setup route can only be used to create the first user")


@pytest.mark.security_row(1)
def test_concurrent_setups_have_one_winner(app):
    token = app.test_client().get("/api/session/properties").json["setup-token"]
    statuses = []
    barrier = threading.Barrier(4)

    def attempt(i):
        client = ApiClient(app)
        barrier.wait()
        statuses.append(client.post("/api/setup", json=setup_body(token, email=f"racer{i}@example.com")).status_code)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200, 403, 403, 403]


def test_landing_page_embeds_the_setup_token(client):
    token = client.get("/api/session/properties").json["setup-token"]
    page = client.get("/")
    assert page.status_code == 200
    assert f'"setup-token":"{token}"' in page.get_data(as_text=True)
