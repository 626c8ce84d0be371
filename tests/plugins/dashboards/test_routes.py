"""Every route of the spec's Dashboards table is declared (and so in the OpenAPI document), the two
dashcard `execute` routes included (they run actions through the action_runner hook); disabling the
plugin removes them all."""
import re

from core.testing import setup_admin

# The spec's Dashboards table, path parameters written as {}.
DASHBOARD_ROUTES = {
    ("get", "/api/dashboard/{}"),
    ("get", "/api/dashboard/{}/query_metadata"),
    ("get", "/api/dashboard/{}/related"),
    ("get", "/api/dashboard/{}/revisions"),
    ("get", "/api/dashboard/{}/params/{}/search/{}"),
    ("get", "/api/dashboard/{}/params/{}/values"),
    ("get", "/api/dashboard/embeddable"),
    ("get", "/api/dashboard/public"),
    ("get", "/api/dashboard/params/valid-filter-fields"),
    ("post", "/api/dashboard/"),
    ("post", "/api/dashboard/{}/dashcard/{}/card/{}/query"),
    ("post", "/api/dashboard/{}/dashcard/{}/card/{}/query/{}"),
    ("post", "/api/dashboard/pivot/{}/dashcard/{}/card/{}/query"),
    ("post", "/api/dashboard/{}/public_link"),
    ("delete", "/api/dashboard/{}/public_link"),
    ("post", "/api/dashboard/{}/copy"),
    ("post", "/api/dashboard/{}/revert"),
    ("post", "/api/dashboard/save"),
    ("post", "/api/dashboard/save/collection/{}"),
    ("put", "/api/dashboard/{}"),
    ("put", "/api/dashboard/{}/cards"),
    ("delete", "/api/dashboard/{}"),
    ("get", "/api/dashboard/{}/dashcard/{}/execute"),
    ("post", "/api/dashboard/{}/dashcard/{}/execute"),
}


def declared(client) -> set[tuple[str, str]]:
    paths = client.get("/api/docs/openapi.json").json["paths"]
    return {(method, re.sub(r"\{[^}]+\}", "{}", path)) for path, operations in paths.items() for method in operations}


def normalise(routes):
    return {(m, p.rstrip("/") or "/") for m, p in routes}


def test_every_dashboards_route_of_the_spec_is_in_the_openapi_document(app):
    admin = setup_admin(app)
    routes = normalise(declared(admin))
    assert normalise(DASHBOARD_ROUTES) <= routes, sorted(normalise(DASHBOARD_ROUTES) - routes)


def test_disabling_the_plugin_removes_every_dashboard_route(app_config):
    from core.assembly.app import create_app

    admin = setup_admin(create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.dashboards"}))
    assert not {p for _, p in declared(admin) if p.startswith("/api/dashboard")}
    response = admin.get("/api/dashboard/1")
    assert response.status_code == 404 and response.json == "API endpoint does not exist."
