"""The data-access gate (core.query.access): every /api/dataset route and every query shape that reads
a card, a snippet, a field's values or a table refuses a plain user what they may not read (403, with
nothing of the data or the SQL in the body), and gives it to the administrator (positive controls:
the same requests succeed, so the table cannot pass by everything being refused)."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from sqlalchemy import delete, update

from core.testing import add_collection, make_user

from .conftest import make_orders

# One xdist worker runs this module (make test: --dist loadgroup): its module-scoped fixture is built once.
pytestmark = pytest.mark.xdist_group("dataset-access-gate")

# Orders ids 1..300, price = id * 1.25: the secret row's price is a cell value only its cards reveal.
SECRET_ID = 177
SECRET_CELL = "221.25"
# Text of the native card's SQL (an alias no other query names), to find it in a leaked body.
SECRET_SQL = "secret_price_alias"


@dataclass
class World:
    orders: object  # the readable database (conftest.Orders)
    blocked: object  # the database blocked for All Users
    native_card: int  # in the owner's personal collection
    mbql_card: int  # in the owner's personal collection
    derived_card: int  # in the owner's personal collection, built on mbql_card
    locked_card: int  # in a collection All Users may not read
    snippet: str  # in a snippet folder All Users may not read


def _card(client, name: str, query: dict, collection_id: int | None) -> int:
    response = client.post("/api/card", json={"name": name, "display": "table", "dataset_query": query,
                                              "visualization_settings": {}, "collection_id": collection_id})
    assert response.status_code == 200, response.json
    return response.json["id"]


def _revoke_collection(app, collection_id: int) -> None:
    from core.appdb.models import CollectionPermission

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        session.execute(delete(CollectionPermission).where(CollectionPermission.collection_id == collection_id))


def _block(app, db_id: int) -> None:
    from core.appdb.models import ALL_USERS_GROUP_ID, DataPermission

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        session.execute(update(DataPermission).where(
            DataPermission.db_id == db_id, DataPermission.group_id == ALL_USERS_GROUP_ID,
            DataPermission.perm_type == "view-data").values(perm_value="blocked"))


def _snippet(app, admin, folder: int) -> str:
    from core.appdb.models import NativeQuerySnippet

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        session.add(NativeQuerySnippet(name="secret filter", content=f"id = {SECRET_ID}", creator_id=admin.user["id"],
                                       collection_id=folder))
    return "secret filter"


def build_world(app, admin) -> World:
    """The secret cards, snippet and blocked database of this module, owned by a user "owner" and the admin."""
    orders = make_orders(app, count=300)
    blocked = make_orders(app, count=50, name="blocked.db")
    owner = make_user(app, email="owner@example.com", first_name="Otto", last_name="Owner")
    personal = owner.user["personal_collection_id"]
    native_card = _card(owner, "secret native", {"database": orders.database_id, "type": "native", "native": {
        "query": f"SELECT id, category, price AS {SECRET_SQL} FROM orders WHERE id = {SECRET_ID}"}}, personal)
    mbql_query = {"database": orders.database_id, "type": "query", "query": {
        "source-table": orders.table_id, "filter": ["=", ["field", orders.fields["id"], None], SECRET_ID]}}
    mbql_card = _card(owner, "secret mbql", mbql_query, personal)
    derived_card = _card(owner, "secret derived", {"database": orders.database_id, "type": "query",
                                                   "query": {"source-table": f"card__{mbql_card}"}}, personal)
    locked = add_collection(app, "Locked")
    _revoke_collection(app, locked)
    locked_card = _card(admin, "locked", mbql_query, locked)
    folder = add_collection(app, "Secret snippets", namespace="snippets")
    _revoke_collection(app, folder)
    snippet = _snippet(app, admin, folder)
    _block(app, blocked.database_id)
    return World(orders, blocked, native_card, mbql_card, derived_card, locked_card, snippet)


@pytest.fixture
def world(app, admin) -> World:
    return build_world(app, admin)


@dataclass
class Shared:
    app: object
    admin: object
    plain: object
    world: World


@pytest.fixture(scope="module")
def shared(tmp_path_factory, app_db_template) -> Shared:
    """One app and world for the route x shape cases, which only read: each case is a request that must be
    refused (plain user) or answered (administrator), so building the world again per case (an app, three
    users, two databases, four cards) proved nothing more and cost most of this module's time."""
    import shutil

    from core.assembly.app import create_app
    from core.testing import FAST_HASHING, setup_admin

    folder = tmp_path_factory.mktemp("access_gate")
    shutil.copy(app_db_template, folder / "tessera.db")
    application = create_app({"TESSERA_DATA_DIR": str(folder), "TESSERA_DB_URL": f"sqlite:///{folder / 'tessera.db'}",
                              "TESSERA_PLUGINS_AUTOLOAD": False, "TESSERA_RUN_MIGRATIONS": False, **FAST_HASHING})
    admin = setup_admin(application)
    world = build_world(application, admin)
    yield Shared(application, admin, make_user(application), world)
    application.extensions["tessera"].db.dispose()


# --------------------------------------------------------------------------------------------------
# Query shapes: each a function of the world giving a dataset query a plain user may not run
# --------------------------------------------------------------------------------------------------


def _on(w: World, inner: dict, database: int | None = None) -> dict:
    return {"database": w.orders.database_id if database is None else database, "type": "query", "query": inner}


def _join(w: World, source: dict) -> dict:
    return {**source, "alias": "C", "fields": "all",
            "condition": ["=", ["field", w.orders.fields["id"], None],
                          ["field", "id", {"base-type": "type/Integer", "join-alias": "C"}]]}


def _card_tag(card_id: int) -> dict:
    name = f"#{card_id}-secret"
    return {name: {"id": "t1", "name": name, "display-name": name, "type": "card", "card-id": card_id}}


SHAPES = {
    "card source (mbql card)": lambda w: _on(w, {"source-table": f"card__{w.mbql_card}"}),
    "card source (native card)": lambda w: _on(w, {"source-table": f"card__{w.native_card}"}),
    "saved-questions database -1337": lambda w: _on(w, {"source-table": f"card__{w.mbql_card}"}, database=-1337),
    "mbql 5 source-card": lambda w: {"lib/type": "mbql/query", "database": w.orders.database_id, "stages": [
        {"lib/type": "mbql.stage/mbql", "source-card": w.native_card}]},
    "card inside source-query": lambda w: _on(w, {"source-query": {"source-query": {
        "source-table": f"card__{w.mbql_card}"}}}),
    "card in a join": lambda w: _on(w, {"source-table": w.orders.table_id, "joins": [
        _join(w, {"source-table": f"card__{w.native_card}"})]}),
    "card in a join inside a join": lambda w: _on(w, {"source-table": w.orders.table_id, "joins": [
        _join(w, {"source-query": {"source-table": w.orders.table_id, "joins": [
            _join(w, {"source-table": f"card__{w.mbql_card}"})]}})]}),
    "card of a card": lambda w: _on(w, {"source-table": f"card__{w.derived_card}"}),
    "card in an unreadable collection": lambda w: _on(w, {"source-table": f"card__{w.locked_card}"}),
    "native {{#N}} card reference": lambda w: {
        "database": w.orders.database_id, "type": "native", "native": {
            "query": f"SELECT * FROM {{{{#{w.native_card}-secret}}}}", "template-tags": _card_tag(w.native_card)}},
    "native {{#N}} on an mbql card": lambda w: {
        "database": w.orders.database_id, "type": "native", "native": {
            "query": f"SELECT * FROM {{{{#{w.mbql_card}-secret}}}}", "template-tags": _card_tag(w.mbql_card)}},
    "native {{snippet: ...}}": lambda w: {
        "database": w.orders.database_id, "type": "native", "native": {
            "query": f"SELECT id, price FROM orders WHERE {{{{snippet: {w.snippet}}}}}",
            "template-tags": {f"snippet: {w.snippet}": {
                "id": "s1", "name": f"snippet: {w.snippet}", "display-name": "S", "type": "snippet",
                "snippet-name": w.snippet}}}},
    "table of a blocked database": lambda w: _on(w, {"source-table": w.blocked.table_id}, w.blocked.database_id),
    "native on a blocked database": lambda w: {"database": w.blocked.database_id, "type": "native",
                                               "native": {"query": "SELECT * FROM orders"}},
}

# Shapes whose rows hold the secret cell (the others read a whole table, or the blocked database).
SECRET_ROWS = {name for name in SHAPES if "blocked" not in name and "join" not in name}


def _pivot(query: dict) -> dict:
    return {**query, "query": {**query["query"], "aggregation": [["count"]],
                               "breakout": [["field", "category", {"base-type": "type/Text"}]]}}


# route name -> how to send a query there
ROUTES = {
    "POST /api/dataset": lambda c, q: c.post("/api/dataset", json=q),
    "POST /api/dataset/native": lambda c, q: c.post("/api/dataset/native", json=q),
    "POST /api/dataset/csv": lambda c, q: c.post("/api/dataset/csv", data={"query": json.dumps(q)}),
    "POST /api/dataset/json": lambda c, q: c.post("/api/dataset/json", json={"query": q}),
    "POST /api/dataset/api": lambda c, q: c.post("/api/dataset/api", json={"query": q}),
}

# /api/dataset/native takes only a real database id (400 for -1337 before any query is read).
CASES = [(route, shape) for route in ROUTES for shape in SHAPES
         if (route, shape) != ("POST /api/dataset/native", "saved-questions database -1337")]


def _no_leak(response) -> None:
    body = response.get_data()
    assert SECRET_SQL.encode() not in body
    assert SECRET_CELL.encode() not in body
    assert b"WHERE id =" not in body


@pytest.mark.parametrize("route, shape", CASES, ids=[f"{r} | {s}" for r, s in CASES])
def test_plain_user_is_refused(shared, route, shape):
    response = ROUTES[route](shared.plain, SHAPES[shape](shared.world))
    assert response.status_code == 403, (response.status_code, response.get_data()[:300])
    _no_leak(response)


@pytest.mark.parametrize("route, shape", CASES, ids=[f"{r} | {s}" for r, s in CASES])
def test_administrator_reads_the_same(shared, route, shape):
    response = ROUTES[route](shared.admin, SHAPES[shape](shared.world))
    assert response.status_code in (200, 202), (response.status_code, response.get_data()[:300])
    body = response.get_data()
    assert b'"status":"failed"' not in body.replace(b" ", b"")
    if shape in SECRET_ROWS and route != "POST /api/dataset/native":
        assert SECRET_CELL.encode() in body


PIVOT_SHAPES = [s for s in SHAPES if not s.startswith("native") and "source-card" not in s]


@pytest.mark.parametrize("shape", PIVOT_SHAPES)
def test_pivot_route(shared, shape):
    query = _pivot(SHAPES[shape](shared.world))
    refused = shared.plain.post("/api/dataset/pivot", json=query)
    assert refused.status_code == 403
    _no_leak(refused)
    allowed = shared.admin.post("/api/dataset/pivot", json=query)
    assert allowed.status_code == 202 and allowed.json["status"] == "completed", allowed.json


def test_the_owner_reads_their_own_cards(app, world):
    """The cards refused above are the owner's to read, through the very same shapes."""
    owner_login = app.test_client().post("/api/session", json={"username": "owner@example.com",
                                                               "password": _password()})
    assert owner_login.status_code == 200
    headers = {"X-Metabase-Session": owner_login.json["id"]}
    for shape in ("card source (mbql card)", "card source (native card)", "card of a card",
                  "card in a join inside a join", "native {{#N}} card reference", "saved-questions database -1337"):
        response = app.test_client().post("/api/dataset", json=SHAPES[shape](world), headers=headers)
        assert response.status_code == 202 and response.json["status"] == "completed", (shape, response.json)


def _password() -> str:
    from core.testing import USER_PASSWORD

    return USER_PASSWORD


# --------------------------------------------------------------------------------------------------
# Parameter values: field-sourced (a blocked database's field) and card-sourced (an unreadable card)
# --------------------------------------------------------------------------------------------------


def _parameter_requests(w: World) -> dict:
    blocked_field = {"parameter": {"id": "p", "type": "category"}, "field_ids": [w.blocked.fields["category"]]}
    card = {"parameter": {"id": "p", "type": "number/=", "values_source_type": "card",
                          "values_source_config": {"card_id": w.native_card,
                                                   "value_field": ["field", SECRET_SQL, {"base-type": "type/Float"}]}},
            "field_ids": []}
    return {"field of a blocked database": blocked_field, "card source": card}


SEARCH_TERMS = {"field of a blocked database": "giz", "card source": "221"}
PARAMETER_CASES = [(path, name) for path in ("/api/dataset/parameter/values", "/api/dataset/parameter/search/{}")
                   for name in ("field of a blocked database", "card source")]


@pytest.mark.parametrize("path, name", PARAMETER_CASES)
def test_parameter_values(app, admin, world, path, name):
    from core.appdb.models import FieldValues

    # Stored values for the blocked field: the route must not hand them out either.
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        session.add(FieldValues(field_id=world.blocked.fields["category"], type="full",
                                values=["Widget", "Gizmo", "Gadget", "Doohickey"], has_more_values=False))
    body = _parameter_requests(world)[name]
    path = path.format(SEARCH_TERMS[name])
    refused = make_user(app).post(path, json=body)
    assert refused.status_code == 403, refused.get_data()[:300]
    _no_leak(refused)
    assert b"Widget" not in refused.get_data()
    allowed = admin.post(path, json=body)
    assert allowed.status_code == 200, allowed.json
    values = [v[0] for v in allowed.json["values"]]
    if name == "card source":
        assert 221.25 in values
    elif path.endswith("/values"):
        assert "Widget" in values
    else:
        assert "Gizmo" in values


def test_remap_targets_are_filtered_by_data_access(app, world):
    """What the query processor's remapper keeps (core.query.remaps.Dimensions): only targets in tables
    whose data the user may see."""
    from core.appdb.models import User
    from core.query import access

    plain = make_user(app).user["id"]
    blocked, readable = world.blocked.fields["category"], world.orders.fields["category"]
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        assert access.readable_field_ids(session, session.get(User, plain), [blocked, readable]) == {readable}


# --------------------------------------------------------------------------------------------------
# Search and related entities show no unreadable card
# --------------------------------------------------------------------------------------------------


def test_search_and_related_hide_unreadable_cards(app, admin, world):
    user = make_user(app)
    found = user.get("/api/search/?q=secret")
    assert found.status_code == 200
    assert [r["name"] for r in found.json["data"] if r["model"] in ("card", "dataset")] == []
    assert {r["name"] for r in admin.get("/api/search/?q=secret").json["data"]} >= {"secret native", "secret mbql"}
    locked = user.get("/api/search/?q=locked").json["data"]
    assert [r for r in locked if r["model"] == "card"] == []
    # A readable question on the same table beside an unreadable twin in the owner's personal collection:
    # the similar questions the user is shown are the readable ones only.
    counted = _on(world, {"source-table": world.orders.table_id, "aggregation": [["count"]],
                          "breakout": [["field", world.orders.fields["category"], None]]})
    personal = admin.get(f"/api/card/{world.mbql_card}").json["collection_id"]
    _card(admin, "secret twin", counted, personal)
    readable = _card(admin, "readable twin", counted, None)
    related = user.get(f"/api/card/{readable}/related")
    assert related.status_code == 200, related.json
    assert b"secret" not in related.get_data()
    assert "secret twin" in admin.get(f"/api/card/{readable}/related").get_data(as_text=True)
    adhoc = user.post("/api/card/related", json=_on(world, {"source-table": f"card__{world.mbql_card}"}))
    assert adhoc.status_code in (200, 403)
    assert b"secret" not in adhoc.get_data() and SECRET_CELL.encode() not in adhoc.get_data()


def test_plain_user_downloads_a_readable_card_through_the_saved_questions_database(app, admin, world):
    """-1337 is resolved before the download level is read: the card's database decides, not -1337."""
    shared = _card(admin, "shared", _on(world, {"source-table": world.orders.table_id,
                                                "filter": ["=", ["field", world.orders.fields["id"], None],
                                                           SECRET_ID]}), None)
    query = _on(world, {"source-table": f"card__{shared}"}, database=-1337)
    response = make_user(app).post("/api/dataset/csv", data={"query": json.dumps(query)})
    assert response.status_code == 200, response.get_data()[:300]
    assert SECRET_CELL.encode() in response.get_data()
