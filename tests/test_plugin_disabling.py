"""Each plugin that may be disabled, disabled in turn: its routes are gone (404 "API endpoint does not
exist.") and every other plugin still answers. Nothing here lists plugins or their requests: the
plugins come from core.assembly.plugins, their routes from their own register_routes, and a plugin's smoke
requests are its parameterless GET routes, called by an administrator (not a 404, not a 5xx)."""
import re

import pytest

from core.assembly.app import create_app
from core.assembly.plugins import BUILTIN_PLUGINS, ESSENTIAL_PLUGINS, collect, make_plugin_manager
from core.testing import setup_admin
from plugins.docs.openapi import openapi_path

DISABLABLE = sorted(set(BUILTIN_PLUGINS) - ESSENTIAL_PLUGINS)
PATH_VARIABLE = re.compile(r"<(?:[a-z_]+:)?[A-Za-z0-9_-]+>")
NO_ENDPOINT = "API endpoint does not exist."


def routes_by_plugin(config) -> dict[str, list[tuple[str, str]]]:
    """(method, full rule) of every endpoint, by the plugin that registered it."""
    routes: dict[str, list[tuple[str, str]]] = {}
    for contribution in collect(make_plugin_manager(config), "register_routes"):
        routes.setdefault(contribution.plugin, []).extend(
            (endpoint.method, endpoint.full_rule) for endpoint in contribution.item.endpoints)
    return routes


def concrete(rule: str) -> str:
    return PATH_VARIABLE.sub("1", rule)


@pytest.mark.parametrize("disabled", DISABLABLE)
def test_disabling_a_plugin_removes_its_routes_only(app_config, disabled):
    routes = routes_by_plugin(app_config)
    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": disabled})
    assert disabled not in {name for name, _ in app.extensions["tessera"].pm.list_name_plugin()}
    admin = setup_admin(app)
    adapter = app.url_map.bind("localhost")
    remaining = {(rule.rule, method) for rule in app.url_map.iter_rules() for method in rule.methods}
    for method, rule in routes.get(disabled, []):
        assert (rule, method) not in remaining, (disabled, method, rule)
        path = concrete(rule)
        try:
            adapter.match(path, method=method)
            continue  # another plugin's rule covers this URL (e.g. /api/table/<id> vs /table/card__<id>)
        except Exception:
            pass
        response = admin.request(method, path, json={} if method in ("POST", "PUT") else None)
        assert response.status_code == 404 and response.json == NO_ENDPOINT, (disabled, method, path, response.json)
    if disabled != "plugins.docs":
        paths = admin.get("/api/docs/openapi.json").json["paths"]
        documented = {(method.upper(), path) for path, operations in paths.items() for method in operations}
        assert not documented & {(method, openapi_path(rule)) for method, rule in routes.get(disabled, [])}
    for plugin, endpoints in routes.items():
        if plugin == disabled:
            continue
        for method, rule in endpoints:
            if method != "GET" or "<" in rule:
                continue
            response = admin.get(rule)
            assert response.status_code != 404 and response.status_code < 500, \
                (disabled, plugin, rule, response.status_code, response.json)
    app.extensions["tessera"].db.dispose()


def test_links_to_pages_of_a_disabled_plugins_api_are_hidden(app_config):
    """The web app draws a link to a page that reads a plugin's API only while that API exists: with
    plugins.subscriptions disabled, a question has no Alerts link, a dashboard no Subscriptions link and
    the profile no "Your alerts" (each would lead to a 404 page), while their Share links stay."""
    from pathlib import Path

    from tests.plugins.app.test_pages import sign_in, text
    from tests.plugins.cards.fixtures import card_body, make_warehouse, mbql_query, register_warehouse

    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.subscriptions"})
    admin = setup_admin(app)
    warehouse = register_warehouse(app, make_warehouse(Path(app_config["TESSERA_DATA_DIR"])))
    card = admin.post("/api/card", json=card_body("People", mbql_query(warehouse["db"], **{
        "source-table": warehouse["people"]}))).json
    dashboard = admin.post("/api/dashboard", json={"name": "Board"}).json
    client = sign_in(app)
    for path, absent in ((f"/question/{card['id']}-people", "/alerts"), (f"/dashboard/{dashboard['id']}-board", "/subscriptions")):
        page = client.get(path)
        assert page.status_code == 200, path
        assert f'{path}/share"' in text(page) and f'{path}{absent}"' not in text(page), path
        assert client.get(path + absent).status_code == 404
    assert client.get("/account/profile").status_code == 200
    assert "/account/notifications" not in text(client.get("/account/profile"))
    app.extensions["tessera"].db.dispose()


def test_bookmark_controls_are_hidden_when_the_bookmarks_plugin_is_disabled(app_config):
    """With plugins.bookmarks disabled, no page draws the ☆ Bookmark button or the navigation's Bookmarks
    menu, and /bookmarks is 404, while the pages themselves answer."""
    from tests.plugins.app.test_pages import sign_in, text

    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.bookmarks"})
    admin = setup_admin(app)
    dashboard = admin.post("/api/dashboard", json={"name": "Board"}).json
    collection = admin.post("/api/collection", json={"name": "Shelf"}).json
    client = sign_in(app)
    for path in (f"/dashboard/{dashboard['id']}-board", f"/collection/{collection['id']}-shelf", "/collection/root"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert 'class="bookmark' not in text(page) and 'id="nav-bookmarks"' not in text(page), path
    assert client.get("/bookmarks").status_code == 404
    app.extensions["tessera"].db.dispose()
