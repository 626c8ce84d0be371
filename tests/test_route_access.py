"""The route walk: every registered endpoint, called anonymously, as a plain user and as a superuser.

ROUTE_ACCESS classifies every route; a route registered without an entry fails the test, so adding
an endpoint means deciding who may call it. Keys are (method, rule) with path parameters written
as "*" (so "/api/user/<id>" is "/api/user/*"). Classes:
- OPEN: no authentication (only the routes the spec leaves open, or listed in EXTRA_OPEN with why);
- USER: 401 anonymously; any authenticated user gets past the gate (the view may still say 403);
- SUPERUSER: 401 anonymously, 403 for a plain user.
Nothing may answer 500.
"""
from __future__ import annotations

import re

import pytest

from core.testing import make_user

OPEN, USER, SUPERUSER = "open", "user", "superuser"

ROUTE_ACCESS: dict[tuple[str, str], str] = {
    # plugins.session, plugins.setup (open by the spec)
    ("POST", "/api/setup"): OPEN,
    ("POST", "/api/session"): OPEN,
    ("DELETE", "/api/session"): OPEN,
    ("GET", "/api/session/properties"): OPEN,
    ("POST", "/api/session/password-check"): OPEN,
    ("POST", "/api/session/forgot_password"): OPEN,
    ("POST", "/api/session/reset_password"): OPEN,
    ("GET", "/api/session/password_reset_token_valid"): OPEN,
    ("GET", "/api/health"): OPEN,
    # plugins.docs
    ("GET", "/api/docs"): OPEN,
    ("GET", "/api/docs/openapi.json"): OPEN,
    # plugins.util
    ("GET", "/api/util/random_token"): OPEN,
    ("POST", "/api/util/password_check"): OPEN,
    ("POST", "/api/util/product-feedback"): OPEN,
    ("GET", "/api/util/bug_report_details"): SUPERUSER,
    ("GET", "/api/util/logs"): SUPERUSER,
    ("GET", "/api/util/stats"): SUPERUSER,
    ("GET", "/api/util/diagnostic_info/connection_pool_info"): SUPERUSER,
    ("POST", "/api/util/entity_id"): USER,
    # plugins.settings
    ("GET", "/api/setting"): SUPERUSER,
    ("PUT", "/api/setting"): SUPERUSER,
    ("GET", "/api/setting/*"): SUPERUSER,
    ("PUT", "/api/setting/*"): SUPERUSER,
    # plugins.users
    ("GET", "/api/user"): USER,
    ("GET", "/api/user/current"): USER,
    ("GET", "/api/user/recipients"): USER,
    ("GET", "/api/user/*"): USER,
    ("POST", "/api/user"): SUPERUSER,
    ("POST", "/api/user/*/send_invite"): SUPERUSER,
    ("PUT", "/api/user/*"): USER,
    ("PUT", "/api/user/*/modal/*"): USER,
    ("PUT", "/api/user/*/password"): USER,
    ("PUT", "/api/user/*/reactivate"): SUPERUSER,
    ("DELETE", "/api/user/*"): SUPERUSER,
    # plugins.api_keys
    ("GET", "/api/api-key"): SUPERUSER,
    ("GET", "/api/api-key/count"): SUPERUSER,
    ("POST", "/api/api-key"): SUPERUSER,
    ("PUT", "/api/api-key/*"): SUPERUSER,
    ("PUT", "/api/api-key/*/regenerate"): SUPERUSER,
    ("DELETE", "/api/api-key/*"): SUPERUSER,
    # plugins.permissions
    ("GET", "/api/permissions/group"): USER,  # superusers and managers of several groups
    ("GET", "/api/permissions/group/*"): USER,  # superusers and the group's managers
    ("POST", "/api/permissions/group"): SUPERUSER,
    ("PUT", "/api/permissions/group/*"): USER,  # superusers and the group's managers
    ("DELETE", "/api/permissions/group/*"): USER,  # superusers and the group's managers
    ("GET", "/api/permissions/membership"): USER,  # superusers and group managers
    ("POST", "/api/permissions/membership"): USER,  # superusers and the group's managers
    ("PUT", "/api/permissions/membership/*"): USER,  # superusers and the group's managers
    ("DELETE", "/api/permissions/membership/*"): USER,  # superusers and the group's managers
    ("GET", "/api/permissions/graph"): SUPERUSER,
    ("GET", "/api/permissions/graph-v2"): SUPERUSER,
    ("GET", "/api/permissions/graph/db/*"): SUPERUSER,
    ("GET", "/api/permissions/graph/group/*"): SUPERUSER,
    ("PUT", "/api/permissions/graph"): SUPERUSER,
    ("GET", "/api/permissions/execution/graph"): SUPERUSER,
    ("PUT", "/api/permissions/execution/graph"): SUPERUSER,
    ("GET", "/api/collection/graph"): SUPERUSER,
    ("PUT", "/api/collection/graph"): SUPERUSER,
    # plugins.collections (the views answer 403 per collection)
    ("GET", "/api/collection"): USER,
    ("GET", "/api/collection/tree"): USER,
    ("GET", "/api/collection/root"): USER,
    ("GET", "/api/collection/root/items"): USER,
    ("GET", "/api/collection/*"): USER,
    ("GET", "/api/collection/*/items"): USER,
    ("POST", "/api/collection"): USER,
    ("PUT", "/api/collection/*"): USER,
    # plugins.search (results filtered by permissions)
    ("GET", "/api/search"): USER,
    # plugins.cards (the views answer 403 per collection, per database and for downloads)
    ("GET", "/api/bookmark"): USER,
    ("POST", "/api/bookmark/*/*"): USER,
    ("DELETE", "/api/bookmark/*/*"): USER,
    ("PUT", "/api/bookmark/ordering"): USER,
    ("GET", "/api/card"): USER,
    ("GET", "/api/card/embeddable"): SUPERUSER,
    ("GET", "/api/card/public"): SUPERUSER,
    ("GET", "/api/card/*"): USER,
    ("GET", "/api/card/*/related"): USER,
    ("POST", "/api/card/related"): USER,
    ("POST", "/api/card"): USER,
    ("PUT", "/api/card/*"): USER,
    ("DELETE", "/api/card/*"): USER,
    ("POST", "/api/card/*/copy"): USER,
    ("POST", "/api/card/collections"): USER,
    ("POST", "/api/card/*/public_link"): SUPERUSER,
    ("DELETE", "/api/card/*/public_link"): SUPERUSER,
    ("POST", "/api/card/*/query"): USER,
    ("POST", "/api/card/*/query/*"): USER,
    ("POST", "/api/card/pivot/*/query"): USER,
    ("GET", "/api/card/*/series"): USER,
    ("GET", "/api/card/*/params/*/values"): USER,
    ("GET", "/api/card/*/params/*/search/*"): USER,
    ("GET", "/api/table/card__*/query_metadata"): USER,
    ("GET", "/api/table/card__*/fks"): USER,
    ("GET", "/api/database/-1337/metadata"): USER,
    ("GET", "/api/database/-1337/schemas"): USER,
    ("GET", "/api/database/-1337/schema/*"): USER,
    ("GET", "/api/database/-1337/datasets"): USER,
    ("GET", "/api/database/-1337/datasets/*"): USER,
    ("GET", "/api/database/*/card_autocomplete_suggestions"): USER,
    ("POST", "/api/card/from-csv"): USER,
    ("POST", "/api/card/*/persist"): USER,
    ("POST", "/api/card/*/refresh"): USER,
    ("POST", "/api/card/*/unpersist"): USER,
    ("POST", "/api/database/*/persist"): SUPERUSER,
    ("POST", "/api/database/*/unpersist"): SUPERUSER,
    # plugins.databases (the views answer 403 per database: data access, data model, details)
    ("GET", "/api/database"): USER,
    ("GET", "/api/database/*"): USER,
    ("POST", "/api/database"): SUPERUSER,
    ("PUT", "/api/database/*"): USER,
    ("DELETE", "/api/database/*"): SUPERUSER,
    ("POST", "/api/database/sample_database"): SUPERUSER,
    ("POST", "/api/database/validate"): SUPERUSER,
    ("GET", "/api/database/*/usage_info"): SUPERUSER,
    ("GET", "/api/database/*/metadata"): USER,
    ("GET", "/api/database/*/fields"): USER,
    ("GET", "/api/database/*/idfields"): USER,
    ("GET", "/api/database/*/autocomplete_suggestions"): USER,
    ("GET", "/api/database/*/schemas"): USER,
    ("GET", "/api/database/*/schema"): USER,
    ("GET", "/api/database/*/schema/*"): USER,
    ("GET", "/api/database/*/syncable_schemas"): USER,
    ("POST", "/api/database/*/sync_schema"): USER,
    ("POST", "/api/database/*/rescan_values"): USER,
    ("POST", "/api/database/*/discard_values"): USER,
    ("POST", "/api/database/*/dismiss_spinner"): USER,
    # plugins.tables (403 per table)
    ("GET", "/api/table"): USER,
    ("PUT", "/api/table"): USER,
    ("GET", "/api/table/*"): USER,
    ("PUT", "/api/table/*"): USER,
    ("GET", "/api/table/*/query_metadata"): USER,
    ("GET", "/api/table/*/fks"): USER,
    ("GET", "/api/table/*/related"): USER,
    ("PUT", "/api/table/*/fields/order"): USER,
    ("POST", "/api/table/*/discard_values"): USER,
    ("POST", "/api/table/*/rescan_values"): USER,
    # plugins.fields (403 per field's table)
    ("GET", "/api/field/*"): USER,
    ("PUT", "/api/field/*"): USER,
    ("GET", "/api/field/*/related"): USER,
    ("GET", "/api/field/*/summary"): USER,
    ("GET", "/api/field/*/values"): USER,
    ("POST", "/api/field/*/values"): USER,
    ("POST", "/api/field/*/rescan_values"): USER,
    ("POST", "/api/field/*/discard_values"): USER,
    ("POST", "/api/field/*/dimension"): USER,
    ("DELETE", "/api/field/*/dimension"): USER,
    ("GET", "/api/field/*/search/*"): USER,
    ("GET", "/api/field/*/remapping/*"): USER,
    # plugins.dataset (the processor checks data permissions per database)
    ("POST", "/api/dataset"): USER,
    ("POST", "/api/dataset/*"): USER,
    ("POST", "/api/dataset/duration"): USER,
    ("POST", "/api/dataset/native"): USER,
    ("POST", "/api/dataset/pivot"): USER,
    ("POST", "/api/dataset/parameter/values"): USER,
    ("POST", "/api/dataset/parameter/search/*"): USER,
    # plugins.snippets
    ("GET", "/api/native-query-snippet"): USER,
    ("GET", "/api/native-query-snippet/*"): USER,
    ("POST", "/api/native-query-snippet"): USER,
    ("PUT", "/api/native-query-snippet/*"): USER,
    # plugins.segments (writes are for administrators, as Metabase's segment write policy)
    ("GET", "/api/segment"): USER,
    ("GET", "/api/segment/*"): USER,
    ("GET", "/api/segment/*/revisions"): USER,
    ("GET", "/api/segment/*/related"): USER,
    ("POST", "/api/segment"): SUPERUSER,
    ("PUT", "/api/segment/*"): SUPERUSER,
    ("DELETE", "/api/segment/*"): SUPERUSER,
    ("POST", "/api/segment/*/revert"): SUPERUSER,
    # plugins.metrics (legacy metrics; writes are for administrators)
    ("GET", "/api/metric"): USER,
    ("GET", "/api/metric/*"): USER,
    ("GET", "/api/metric/*/revisions"): USER,
    ("GET", "/api/metric/*/related"): USER,
    ("POST", "/api/metric"): SUPERUSER,
    ("PUT", "/api/metric/*"): SUPERUSER,
    ("PUT", "/api/metric/*/important_fields"): SUPERUSER,
    ("DELETE", "/api/metric/*"): SUPERUSER,
    ("POST", "/api/metric/*/revert"): SUPERUSER,
    # plugins.timelines (the views answer 403 per collection)
    ("GET", "/api/timeline"): USER,
    ("GET", "/api/timeline/*"): USER,
    ("POST", "/api/timeline"): USER,
    ("PUT", "/api/timeline/*"): USER,
    ("DELETE", "/api/timeline/*"): USER,
    ("GET", "/api/timeline/collection/root"): USER,
    ("GET", "/api/timeline/collection/*"): USER,
    ("GET", "/api/timeline/card/*"): USER,
    ("GET", "/api/card/*/timelines"): USER,
    ("GET", "/api/collection/*/timelines"): USER,
    ("GET", "/api/collection/root/timelines"): USER,
    ("POST", "/api/timeline-event"): USER,
    ("GET", "/api/timeline-event/*"): USER,
    ("PUT", "/api/timeline-event/*"): USER,
    ("DELETE", "/api/timeline-event/*"): USER,
}

# API-SPEC, Authentication 1 and 4-5: the routes that need no authentication.
SPEC_OPEN_PREFIXES = ("/api/setup", "/api/session", "/api/health", "/api/public/", "/api/embed/")
# Open routes outside those prefixes, each with the reason.
EXTRA_OPEN = {
    ("GET", "/api/docs"): "the API documentation, as Metabase serves /api/docs",
    ("GET", "/api/docs/openapi.json"): "the OpenAPI document",
    ("GET", "/api/util/random_token"): "Metabase mounts /api/util without authentication",
    ("POST", "/api/util/password_check"): "used on the password-reset page, before login",
    ("POST", "/api/util/product-feedback"): "Metabase mounts /api/util without authentication",
}

# API-SPEC, Authentication 2: superuser only. Checked for each route once it is registered.
SPEC_SUPERUSER_ONLY = {
    ("GET", "/api/api-key"), ("GET", "/api/api-key/count"), ("POST", "/api/api-key"), ("PUT", "/api/api-key/*"),
    ("PUT", "/api/api-key/*/regenerate"), ("DELETE", "/api/api-key/*"),
    ("DELETE", "/api/database/*"), ("GET", "/api/database/*/usage_info"), ("POST", "/api/database"),
    ("POST", "/api/database/sample_database"), ("POST", "/api/database/validate"),
    ("POST", "/api/dashboard/*/public_link"), ("POST", "/api/action/*/public_link"),
    ("GET", "/api/collection/graph"), ("PUT", "/api/collection/graph"),
    ("GET", "/api/permissions/graph"), ("GET", "/api/permissions/graph-v2"), ("GET", "/api/permissions/graph/db/*"),
    ("GET", "/api/permissions/graph/group/*"), ("GET", "/api/permissions/execution/graph"),
    ("PUT", "/api/permissions/graph"), ("PUT", "/api/permissions/execution/graph"),
    ("POST", "/api/permissions/group"),
    ("GET", "/api/metric/*/important_fields"),
    ("DELETE", "/api/user/*"), ("POST", "/api/user"), ("POST", "/api/user/*/send_invite"), ("PUT", "/api/user/*/reactivate"),
}

METHOD_ORDER = {"GET": 0, "POST": 1, "PUT": 2, "DELETE": 3}


def key(endpoint) -> tuple[str, str]:
    return endpoint.method, re.sub(r"<[^>]+>", "*", endpoint.full_rule)


def url(endpoint) -> str:
    return re.sub(r"<[^>]+>", "1", endpoint.full_rule)


def endpoints(app):
    return sorted(app.extensions["tessera"].endpoints, key=lambda e: (METHOD_ORDER[e.method], e.full_rule))


def call(client, endpoint, headers=None):
    kwargs = {"json": {}} if endpoint.method in ("POST", "PUT") else {}
    return client.open(url(endpoint), method=endpoint.method, headers=headers or {}, **kwargs)


def test_every_route_is_classified(app):
    registered = {key(e) for e in endpoints(app)}
    missing = sorted(registered - set(ROUTE_ACCESS))
    assert not missing, f"add these routes to ROUTE_ACCESS in tests/test_route_access.py: {missing}"
    for endpoint in endpoints(app):
        expected = ROUTE_ACCESS[key(endpoint)]
        declared = {"public": OPEN, "user": USER, "superuser": SUPERUSER}[endpoint.auth]
        if expected != USER:
            assert declared == expected, (key(endpoint), endpoint.auth)
        else:
            assert declared == USER, (key(endpoint), endpoint.auth)
    for route, access in ROUTE_ACCESS.items():
        if access == OPEN:
            assert route[1].startswith(SPEC_OPEN_PREFIXES) or route in EXTRA_OPEN, route
        if route in SPEC_SUPERUSER_ONLY:
            assert access == SUPERUSER, route


def test_anonymous_gets_401_except_open_routes(app, admin):
    client = app.test_client()
    for endpoint in endpoints(app):
        response = call(client, endpoint)
        assert response.status_code < 500, (key(endpoint), response.status_code, response.json)
        if ROUTE_ACCESS[key(endpoint)] == OPEN:
            assert response.status_code != 401 or key(endpoint) == ("POST", "/api/session"), key(endpoint)
        else:
            assert response.status_code == 401, (key(endpoint), response.status_code)
            assert response.json == "Unauthenticated"


def fresh_session(app, user_id: int) -> dict:
    """A new session per call: some calls (logout, password change) end the caller's sessions."""
    from core import auth
    from core.models import User

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        return {"X-Metabase-Session": auth.create_session(session, session.get(User, user_id))}


def test_plain_user_gets_403_on_superuser_routes(app, admin, user):
    for endpoint in endpoints(app):
        response = call(app.test_client(), endpoint, fresh_session(app, user.user["id"]))
        assert response.status_code < 500, (key(endpoint), response.status_code, response.json)
        assert response.status_code != 401, key(endpoint)
        if ROUTE_ACCESS[key(endpoint)] == SUPERUSER:
            assert response.status_code == 403, (key(endpoint), response.status_code)
            assert response.json == "You don't have permissions to do that."


def test_superuser_never_gets_500(app, admin, user):
    for endpoint in endpoints(app):
        response = call(app.test_client(), endpoint, fresh_session(app, admin.user["id"]))
        assert response.status_code < 500, (key(endpoint), response.status_code, response.json)
        if ROUTE_ACCESS[key(endpoint)] != OPEN:
            assert response.status_code not in (401, 403), (key(endpoint), response.status_code, response.json)
