"""Multi-tenant embedding: one signed dashboard (and card) for every tenant, each token's `attributes`
claim filling the sandboxes of the group named by `embedding-sandbox-group-id` (the conftest's Sales:
PEOPLE by STATE, ORDERS by a question). Each tenant sees only its rows in dashcard queries, downloads,
filter values and field values; no enabled or locked parameter, from the token or the URL, widens it;
a token without attributes is refused, and so is one with attributes while no group is set; two tenants
never share a cached result."""
import time

import pytest

from tests.plugins.sandboxes.conftest import ok
from tests.plugins.sharing.jwt_helpers import SECRET, sign

TENANTS = (("TX", "CA"), ("CA", "TX"))


@pytest.fixture(scope="module")
def embed(world):
    admin, db = world.admin, world.db
    ok(admin.put("/api/setting/enable-embedding-static", json={"value": True}), 204)
    ok(admin.put("/api/setting/embedding-secret-key", json={"value": SECRET}), 204)
    ok(admin.put("/api/setting/embedding-sandbox-group-id", json={"value": world.group}), 204)
    state = ["field", world.fields["PEOPLE"]["STATE"], None]
    query = {"database": db, "type": "query", "query": {
        "source-table": world.tables["PEOPLE"], "aggregation": [["count"]], "breakout": [state]}}
    card = ok(admin.post("/api/card", json={"name": "People by state", "display": "table",
                                            "visualization_settings": {}, "dataset_query": query}))["id"]
    orders = ok(admin.post("/api/card", json={
        "name": "Orders", "display": "scalar", "visualization_settings": {},
        "dataset_query": {"database": db, "type": "query", "query": {
            "source-table": world.tables["ORDERS"], "aggregation": [["count"]]}}}))["id"]
    parameters = [{"id": "p_state", "slug": "state", "name": "State", "type": "string/="},
                  {"id": "p_lock", "slug": "lock", "name": "Locked state", "type": "string/="}]
    dashboard = ok(admin.post("/api/dashboard", json={"name": "Tenants", "parameters": parameters}))["id"]
    mappings = [{"parameter_id": p, "card_id": card, "target": ["dimension", state]} for p in ("p_state", "p_lock")]
    built = ok(admin.put(f"/api/dashboard/{dashboard}", json={"parameters": parameters, "dashcards": [
        {"id": -1, "card_id": card, "row": 0, "col": 0, "size_x": 6, "size_y": 4, "parameter_mappings": mappings},
        {"id": -2, "card_id": orders, "row": 0, "col": 6, "size_x": 6, "size_y": 4, "parameter_mappings": []}]}))
    ok(admin.put(f"/api/dashboard/{dashboard}", json={
        "enable_embedding": True, "embedding_params": {"state": "enabled", "lock": "locked"}}))
    ok(admin.put(f"/api/card/{card}", json={"enable_embedding": True, "embedding_params": {}}))
    dashcards = {d["card_id"]: d["id"] for d in built["dashcards"]}
    return {"card": card, "orders": orders, "dashboard": dashboard, "dashcards": dashcards}


def dashboard_token(embed, attributes, lock=None):
    # the locked filter must be given by the token: the tenant's own state unless the test says otherwise
    own = (attributes or {}).get("state") or "TX"
    payload = {"resource": {"dashboard": embed["dashboard"]}, "params": {"lock": lock or own},
               "exp": int(time.time()) + 600}
    if attributes is not None:
        payload["attributes"] = attributes
    return sign(payload)


def card_token(embed, attributes):
    return sign({"resource": {"question": embed["card"]}, "params": {}, "attributes": attributes,
                 "exp": int(time.time()) + 600})


def dashcard_url(embed, token, card):
    return f"/api/embed/dashboard/{token}/dashcard/{embed['dashcards'][card]}/card/{card}"


def people(reference, state):
    return reference("SELECT COUNT(*) FROM PEOPLE WHERE STATE = ?", state)[0][0]


@pytest.mark.parametrize("state, other", TENANTS)
@pytest.mark.security_row(14)
def test_each_tenant_sees_only_its_rows(world, reference, embed, state, other):
    client, card = world.app.test_client(), embed["card"]
    token = dashboard_token(embed, {"state": state})
    assert ok(client.get(dashcard_url(embed, token, card)))["data"]["rows"] == [[state, people(reference, state)]]
    orders = ok(client.get(dashcard_url(embed, token, embed["orders"])))["data"]["rows"]
    assert orders == [[reference("SELECT COUNT(*) FROM ORDERS o JOIN PEOPLE p ON o.USER_ID = p.ID "
                                 "WHERE p.STATE = ?", state)[0][0]]]
    csv = client.get(dashcard_url(embed, token, card) + "/csv")
    assert csv.status_code == 200
    assert csv.get_data(as_text=True).strip().splitlines()[1:] == [f"{state},{people(reference, state)}"]
    values = ok(client.get(f"/api/embed/dashboard/{token}/params/p_state/values"))["values"]
    assert [v[0] for v in values] == [state]
    assert ok(client.get(f"/api/embed/dashboard/{token}/params/p_state/search/{other[0]}"))["values"] == []
    assert ok(client.get(f"/api/embed/dashboard/{token}/params/p_state/search/{state[0]}"))["values"] == [[state]]
    field = world.fields["PEOPLE"]["STATE"]
    assert ok(client.get(f"/api/embed/dashboard/{token}/field/{field}/values"))["values"] == [[state]]
    search = f"/api/embed/dashboard/{token}/field/{field}/search/{field}?value="
    assert ok(client.get(search + other)) == [] and ok(client.get(search + state)) == [[state]]
    # the card embedded on its own, and its download
    token = card_token(embed, {"state": state})
    assert ok(client.get(f"/api/embed/card/{token}/query"))["data"]["rows"] == [[state, people(reference, state)]]
    csv = client.get(f"/api/embed/card/{token}/query/csv")
    assert csv.get_data(as_text=True).strip().splitlines()[1:] == [f"{state},{people(reference, state)}"]


@pytest.mark.parametrize("state, other", TENANTS)
@pytest.mark.security_row(14)
def test_no_parameter_widens_a_tenant(world, embed, state, other):
    client, card = world.app.test_client(), embed["card"]
    # the enabled filter set to the other state in the URL: zero rows, not the other state's
    token = dashboard_token(embed, {"state": state})
    assert ok(client.get(dashcard_url(embed, token, card) + f"?state={other}"))["data"]["rows"] == []
    # the locked filter set to the other state by the token itself: zero rows too
    locked = dashboard_token(embed, {"state": state}, lock=other)
    assert ok(client.get(dashcard_url(embed, locked, card)))["data"]["rows"] == []
    # a URL cannot name attributes (they come from the signed token only)
    assert client.get(dashcard_url(embed, token, card) + f"?attributes=%7B%22state%22%3A%22{other}%22%7D"
                      ).status_code == 400


@pytest.mark.security_row(14)
def test_a_token_without_attributes_is_refused_on_sandboxed_tables(world, embed):
    client = world.app.test_client()
    token = dashboard_token(embed, None)
    body = client.get(dashcard_url(embed, token, embed["card"])).json
    assert body["status"] == "failed" and "data" not in body
    assert client.get(f"/api/embed/card/{card_token(embed, {'state': None})}/query").json["status"] == "failed"
    bad = card_token(embed, {"state": ["TX", "CA"]})
    assert client.get(f"/api/embed/card/{bad}/query").status_code == 400
    # no embedding group: a plain token is a static embed as before, one with attributes is refused
    ok(world.admin.put("/api/setting/embedding-sandbox-group-id", json={"value": None}), 204)
    try:
        plain = sign({"resource": {"question": embed["card"]}, "params": {}, "exp": int(time.time()) + 600})
        assert len(ok(client.get(f"/api/embed/card/{plain}/query"))["data"]["rows"]) > 40
        assert client.get(f"/api/embed/card/{card_token(embed, {'state': 'TX'})}/query").json["status"] == "failed"
    finally:
        ok(world.admin.put("/api/setting/embedding-sandbox-group-id", json={"value": world.group}), 204)


@pytest.mark.security_row(14)
def test_two_tenants_never_share_a_cached_result(world, embed):
    admin, client = world.admin, world.app.test_client()
    ok(admin.put("/api/setting/enable-query-caching", json={"value": True}), 204)
    ok(admin.put(f"/api/card/{embed['card']}", json={"cache_ttl": 10}))
    try:
        urls = [f"/api/embed/card/{card_token(embed, {'state': s})}/query" for s in ("TX", "CA", "TX", "CA")]
        bodies = [ok(client.get(url)) for url in urls]
        assert [b["data"]["rows"][0][0] for b in bodies] == ["TX", "CA", "TX", "CA"]
    finally:
        ok(admin.put("/api/setting/enable-query-caching", json={"value": False}), 204)
        ok(admin.put(f"/api/card/{embed['card']}", json={"cache_ttl": None}))
