"""The page walk: every route of the web app (every page blueprint mounted at "/"), called as nobody,
as a plain user, as a user who may see one collection only, and as a superuser, over content the first
three may not see (tests/support.create_content). A page shows only what its user could read through
the API:
- nothing answers 5xx, whoever calls, with good ids, unknown ids and junk in the path;
- anonymously a page sends the person to sign in (or is one of the few pages made for nobody: sign-in,
  setup, password reset, the assets);
- no answer to the plain or the one-collection user contains the "SECRET-MARKER" strings of the objects
  hidden from them, while the superuser's answers do (the walk does reach the content), and the
  one-collection user sees their collection's question but nothing of the root collection;
- writes (POST) with an empty or a junk JSON body answer 4xx or a fragment, never 5xx, and never leak.
A new route with a path parameter this walk cannot fill fails `test_every_parameter_can_be_filled`
until PARAMETERS says which object fills it.
"""
from __future__ import annotations

import re

import pytest

from tests.support import MARKER, create_content, module_app

pytestmark = pytest.mark.xdist_group("page-walk")

# The path segment before a parameter -> the create_content id that fills it (objects hidden from the
# plain user, each carrying the marker).
PARAMETERS = {"collection": "collection", "dashboard": "dashboard", "question": "card", "model": "model",
              "databases": "db", "table": "table", "card": "card", "dashcard": "dashcard", "database": "db",
              "field": "field", "subscriptions": "pulse", "people": "user", "groups": "group", "group": "group",
              "api-keys": "api_key", "preview": "card", "alerts": "alert", "notifications": "alert"}
# Pages made for someone not signed in (or for nobody in particular).
OPEN_PAGES = ("/auth/login", "/auth/forgot_password", "/auth/reset_password", "/setup", "/app/assets/")
PARAM = re.compile(r"<(?:[a-z_]+(?:\([^)]*\))?:)?([a-z_]+)>")


@pytest.fixture(scope="module")
def world(tmp_path_factory, app_db_template):
    from core.testing import ApiClient, make_user, setup_admin

    application = module_app(tmp_path_factory.mktemp("page_walk"), app_db_template)
    admin = setup_admin(application)
    plain = make_user(application)
    ids = create_content(application, admin)
    one = one_collection_user(application, admin)
    yield application, {"nobody": ApiClient(application), "plain": plain, "one": one, "admin": admin}, ids
    application.extensions["tessera"].db.dispose()


def one_collection_user(application, admin):
    """A user of a group that may read one collection ("Team shelf", holding "Team question"); All Users
    no longer read the root collection, which holds "Root-only question"."""
    from core.testing import make_user

    def ok(response):
        assert response.status_code == 200, response.json
        return response.json

    shelf = ok(admin.post("/api/collection", json={"name": "Team shelf"}))["id"]
    native = {"database": ok(admin.get("/api/database"))["data"][0]["id"], "type": "native",
              "native": {"query": "SELECT 1 AS one"}}
    for name, collection in (("Team question", shelf), ("Root-only question", None)):
        ok(admin.post("/api/card", json={"name": name, "display": "table", "visualization_settings": {},
                                         "dataset_query": native, "collection_id": collection}))
    group = ok(admin.post("/api/permissions/group", json={"name": "Team"}))["id"]
    one = make_user(application, email="one@example.com", first_name="Oona")
    ok(admin.post("/api/permissions/membership", json={"group_id": group, "user_id": one.user["id"]}))
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {
        "1": {"root": "none", str(shelf): "none"}, str(group): {str(shelf): "read"}}}))
    one.shelf = shelf
    return one


def app_rules(application) -> list:
    pages = application.extensions["tessera"].pages
    root = {name for name, page in pages.items() if page.prefix == "/"}
    return [rule for rule in application.url_map.iter_rules() if rule.endpoint.split(".")[0] in root]


def fill(rule: str, ids: dict) -> str | None:
    """The rule with each parameter replaced by the id of a hidden object (None: no way to fill it)."""
    out, last = [], 0
    for match in PARAM.finditer(rule):
        before = rule[:match.start()].rstrip("/").rsplit("/", 1)[-1]
        key = PARAMETERS.get(before)
        if match.group(1) == "name" and before == "assets":
            value = "app.css"
        elif match.group(1) == "token":
            value = "0" * 32
        elif match.group(1) == "schema":
            value = "main"
        elif match.group(1) == "dashcard_id":  # a dashboard's card (the hidden one), by its dashcard's id
            value = str(ids["dashcard"])
        elif match.group(1) == "entity":  # an x-ray's: the hidden table's (its id fills entity_id)
            value = "table"
        elif match.group(1) in ("entity_id", "versus_id"):
            value = str(ids["table"])
        elif match.group(1) == "versus":  # an x-ray compared with the hidden table
            value = "table"
        elif match.group(1) == "cell":  # an x-ray's cell: a base64 filter clause (["not-null", id column])
            value = "WyJub3QtbnVsbCIsWyJmaWVsZCIsMSxudWxsXV0"
        elif match.group(1) == "parameter_id":  # the hidden dashboard's filter (tests/support._dashboard)
            value = "p"
        elif key is None or key not in ids:
            return None
        else:
            value = str(ids[key])
        out.append(rule[last:match.start()] + value)
        last = match.end()
    return "".join(out) + rule[last:]


def test_every_parameter_can_be_filled(world):
    application, _, ids = world
    unfilled = [rule.rule for rule in app_rules(application) if fill(rule.rule, ids) is None]
    assert unfilled == [], "extend PARAMETERS in tests/test_page_walk.py for these routes"


def get_paths(application, ids) -> list[str]:
    paths = []
    for rule in app_rules(application):
        if "GET" in rule.methods:
            path = fill(rule.rule, ids)
            paths.append(path)
            if PARAM.search(rule.rule):  # an unknown id and junk too
                paths.append(PARAM.sub("999999", rule.rule))
                paths.append(PARAM.sub("x%00y", rule.rule))
    return paths


def test_pages_answer_nobody_by_asking_to_sign_in(world):
    application, clients, ids = world
    for path in get_paths(application, ids):
        response = clients["nobody"].get(path)
        assert response.status_code < 500, (path, response.status_code)
        body = response.get_data(as_text=True)
        assert MARKER not in body, path
        if response.status_code == 200 and not path.startswith(OPEN_PAGES):
            pytest.fail(f"{path} answered 200 to nobody")


@pytest.mark.parametrize("who", ["plain", "one"])
def test_pages_show_a_user_nothing_hidden_from_them(world, who):
    application, clients, ids = world
    for path in get_paths(application, ids):
        response = clients[who].get(path)
        assert response.status_code < 500, (path, response.status_code)
        body = response.get_data(as_text=True)
        assert MARKER not in body, path
        assert "Root-only question" not in body, path


def test_the_one_collection_user_sees_their_collection(world):
    application, clients, ids = world
    one = clients["one"]
    shelf = one.get(f"/collection/{one.shelf}").get_data(as_text=True)
    assert "Team question" in shelf
    assert "Team shelf" in one.get("/").get_data(as_text=True)
    root = one.get("/collection/root")
    assert root.status_code == 200 and "Team shelf" in root.get_data(as_text=True)
    assert "Root-only question" in clients["admin"].get("/collection/root").get_data(as_text=True)


def test_pages_show_the_superuser_the_content(world):
    application, clients, ids = world
    seen = []
    for path in get_paths(application, ids):
        response = clients["admin"].get(path)
        assert response.status_code < 500, (path, response.status_code)
        if MARKER in response.get_data(as_text=True):
            seen.append(path)
    assert f"/collection/{ids['collection']}" in seen
    # Search by a word of the marker (the page repeats the words searched for, not the marker itself).
    assert MARKER in clients["admin"].get("/search?q=secret").get_data(as_text=True)
    assert MARKER not in clients["plain"].get("/search?q=secret").get_data(as_text=True)


@pytest.mark.parametrize("body", [{}, {"id": "x", "model": 5, "username": ["a"], "password": {"b": 1}}])
def test_writes_with_junk_never_fail_nor_leak(world, body):
    application, clients, ids = world
    for rule in app_rules(application):
        if "POST" not in rule.methods or rule.rule in ("/auth/logout",):
            continue
        path = fill(rule.rule, ids)
        for who in ("plain", "nobody"):
            response = clients[who].post(path, json=body, headers={"HX-Request": "true"})
            assert response.status_code < 500, (who, path, response.status_code)
            assert MARKER not in response.get_data(as_text=True), (who, path)
