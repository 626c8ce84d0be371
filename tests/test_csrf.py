"""Cross-site requests: a state-changing request authenticated only by the session cookie must carry a
JSON content type or the X-Metabase-Session header (compat/security.md row 25); a browser form or a
text/plain fetch from another site can send neither, so it gets a 403 and changes nothing."""
import json

import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, make_user

COOKIE = "metabase.SESSION"


@pytest.fixture
def browser(app, admin):
    """A test client holding only the administrator's session cookie, as a browser would."""
    client = app.test_client()
    response = client.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert response.status_code == 200
    assert client.get_cookie(COOKIE) is not None
    return client


def _form(client, method, url, body):
    return client.open(url, method=method, data=body)


def _plain(client, method, url, body):
    return client.open(url, method=method, data=json.dumps(body), content_type="text/plain")


SENDERS = [_form, _plain]


@pytest.mark.parametrize("send", SENDERS)
@pytest.mark.security_row(25)
def test_cookie_only_membership_post_cannot_make_a_superuser(app, admin, browser, send):
    victim = make_user(app)
    uid = victim.user["id"]
    response = send(browser, "POST", "/api/permissions/membership", {"group_id": 2, "user_id": uid})
    assert response.status_code == 403
    assert admin.get(f"/api/user/{uid}").json["is_superuser"] is False


@pytest.mark.parametrize("send", SENDERS)
@pytest.mark.security_row(25)
def test_cookie_only_setting_put_is_refused(admin, browser, send):
    response = send(browser, "PUT", "/api/setting/site-name", {"value": "Pwned"})
    assert response.status_code == 403
    assert admin.get("/api/setting/site-name").json == "Test Co"


@pytest.mark.parametrize("send", SENDERS)
@pytest.mark.security_row(25)
def test_cookie_only_user_and_collection_posts_are_refused(admin, browser, send):
    users_before = admin.get("/api/user").json["total"]
    assert send(browser, "POST", "/api/user", {"first_name": "Eve", "last_name": "X",
                                                "email": "eve@example.com"}).status_code == 403
    assert admin.get("/api/user").json["total"] == users_before
    assert send(browser, "POST", "/api/collection", {"name": "Evil"}).status_code == 403
    assert "Evil" not in [c["name"] for c in admin.get("/api/collection").json]


@pytest.mark.security_row(25)
def test_cookie_only_delete_without_json_is_refused(admin, browser):
    card_free = browser.open("/api/session", method="DELETE")
    assert card_free.status_code == 403
    assert browser.get("/api/user/current").status_code == 200


def test_cookie_with_json_content_type_works(admin, browser):
    response = browser.put("/api/setting/site-name", json={"value": "Renamed"})
    assert response.status_code == 204
    assert admin.get("/api/setting/site-name").json == "Renamed"
    assert browser.post("/api/collection", json={"name": "Mine"}).status_code == 200


def test_session_header_with_form_body_works(admin):
    response = admin.put("/api/setting/site-name", data={"value": "Via header"})
    assert response.status_code == 204
    assert admin.get("/api/setting/site-name").json == "Via header"


def test_api_key_with_form_body_works(app, admin):
    key = admin.post("/api/api-key", json={"name": "Robot", "group_id": 2}).json["unmasked_key"]
    client = app.test_client()
    response = client.post("/api/collection", data={"name": "By key"}, headers={"X-API-KEY": key})
    assert response.status_code == 200, response.json
    assert "By key" in [c["name"] for c in admin.get("/api/collection").json]


def test_export_form_post_stays_open_to_cookie_sessions(admin, browser, sample_database_file):
    db_id = admin.post("/api/database", json={"engine": "sqlite", "name": "S",
                                              "details": {"db": str(sample_database_file)}}).json["id"]
    query = {"database": db_id, "type": "native", "native": {"query": "select 1 as one"}}
    response = browser.post("/api/dataset/csv", data={"query": json.dumps(query)})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_data(as_text=True).splitlines()[0].lstrip("\ufeff") == "one"


def test_login_form_without_cookie_is_not_a_csrf_case(app, admin):
    # No cookie: nothing to forge. The login route reads the body as usual (JSON here, as clients send).
    fresh = app.test_client()
    response = fresh.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert response.status_code == 200


def test_no_cors_headers_are_sent(browser):
    response = browser.open("/api/user/current", method="OPTIONS", headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert not [h for h in response.headers.keys() if h.lower().startswith("access-control-")]
    response = browser.get("/api/user/current", headers={"Origin": "https://evil.example"})
    assert not [h for h in response.headers.keys() if h.lower().startswith("access-control-")]
