"""Bad input never produces a 500: every declared endpoint, called as an administrator with hostile
path values, query strings and bodies, answers with a status below 500.

The walk reads the endpoint declarations, so routes that plugins add later are covered without
touching this file.
"""

import pytest

from core.testing import ApiClient, setup_admin

PATH_VALUES = ("0", "-1", "abc", "99999999", "1.5", "%00", "card__x", "root")
QUERY_VALUES = ("", "-1", "abc", "[", "{\"a\":", "true", "null", "0")
JUNK = (None, "", "   ", -1, 0, 10**30, 1.5, True, [], {}, [None], {"a": None}, "x" * 5000, "{\"unterminated")
BODIES = ({}, [], "text", 12, None, {"unexpected": {"deeply": [1, {"nested": None}]}})


def field_names(model) -> list[str]:
    if model is None or not hasattr(model, "model_fields"):
        return []
    return [info.alias or name for name, info in model.model_fields.items()]


def path_params(rule: str) -> list[str]:
    import re

    return re.findall(r"<(?:[a-z_]+:)?([A-Za-z0-9_-]+)>", rule)


def fill(rule: str, value: str) -> str:
    import re

    return re.sub(r"<(?:[a-z_]+:)?([A-Za-z0-9_-]+)>", value, rule)


def logged_in(app, token: str) -> bool:
    """Whether the session token still authenticates its user, asked in the app DB as a request's
    authentication asks it (core.http.auth.user_for_token): a GET /api/user/current after every call
    was half of the walk's requests."""
    from core.http.auth import user_for_token

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        return user_for_token(session, token, state.config["TESSERA_MAX_SESSION_AGE"]) is not None


@pytest.fixture
def admin_app(app):
    return app, setup_admin(app)


def test_no_endpoint_answers_500_to_bad_input(admin_app):
    app, admin = admin_app
    token = admin.headers["X-Metabase-Session"]
    endpoints = [e for e in app.extensions["tessera"].endpoints if e.full_rule != "/api/session"]
    failures = []

    def call(method, url, **kwargs):
        nonlocal admin
        response = admin.request(method, url, **kwargs)
        if response.status_code >= 500:
            failures.append((method, url, kwargs.get("json", kwargs.get("data")), response.status_code,
                             response.get_data(as_text=True)[:200]))
        if not logged_in(app, admin.headers["X-Metabase-Session"]):  # a call logged us out: log in again
            login = ApiClient(app).post("/api/session", json={"username": "admin@example.com",
                                                              "password": "Sup3r-Secret-Admin"})
            admin = ApiClient(app, {"X-Metabase-Session": login.json["id"]})

    for endpoint in endpoints:
        urls = [fill(endpoint.full_rule, v) for v in PATH_VALUES] if path_params(endpoint.full_rule) else [
            endpoint.full_rule]
        for url in urls:
            call(endpoint.method, url)
        base = fill(endpoint.full_rule, "1")
        for name in field_names(endpoint.query):
            for value in QUERY_VALUES:
                call(endpoint.method, base, query_string={name: value})
        if endpoint.method in ("POST", "PUT"):
            for body in BODIES:
                call(endpoint.method, base, json=body)
            call(endpoint.method, base, data="{broken json", content_type="application/json")
            call(endpoint.method, base, data={"a": "b"})
            for name in field_names(endpoint.body):
                for value in JUNK:
                    call(endpoint.method, base, json={name: value})
    assert not failures, failures[:10]
    assert token  # the admin session existed for the walk
