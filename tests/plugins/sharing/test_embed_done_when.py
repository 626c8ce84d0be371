"""Issue 17's "done when", for the signed side, through the API only: an administrator turns embedding on,
builds a dashboard with a locked and an enabled filter, signs a token with the generated key, and the
embed shows and runs it; every forged token is refused with a 400."""
import hashlib
import time

from tests.plugins.cards.fixtures import card_body, mbql_query

from .jwt_helpers import encode, sign, tamper


def ok(response):
    assert response.status_code in (200, 202), response.json
    return response.json


def test_a_signed_dashboard_with_a_locked_and_an_enabled_filter(admin, client, warehouse):
    assert admin.put("/api/setting/enable-embedding-static", json={"value": True}).status_code == 204
    secret = admin.get("/api/setting/embedding-secret-key").json
    people = ok(admin.post("/api/card", json=card_body("People", mbql_query(
        warehouse["db"], **{"source-table": warehouse["people"], "order-by": [["asc", ["field", warehouse["people.id"], None]]]}))))
    parameters = [{"id": "p_age", "slug": "min_age", "name": "Min age", "type": "number/>="},
                  {"id": "p_name", "slug": "first_name", "name": "First name", "type": "string/="}]
    dashboard = ok(admin.post("/api/dashboard", json={"name": "People", "parameters": parameters}))
    target = lambda f: ["dimension", ["field", warehouse[f], None]]  # noqa: E731
    dashcards = [{"id": -1, "card_id": people["id"], "row": 0, "col": 0, "size_x": 12, "size_y": 6,
                  "parameter_mappings": [
                      {"parameter_id": "p_age", "card_id": people["id"], "target": target("people.age")},
                      {"parameter_id": "p_name", "card_id": people["id"], "target": target("people.first_name")}]}]
    built = ok(admin.put(f"/api/dashboard/{dashboard['id']}", json={"dashcards": dashcards, "parameters": parameters}))
    ok(admin.put(f"/api/dashboard/{dashboard['id']}", json={
        "enable_embedding": True, "embedding_params": {"min_age": "locked", "first_name": "enabled"}}))
    dashcard = built["dashcards"][0]["id"]

    payload = {"resource": {"dashboard": dashboard["id"]}, "params": {"min_age": 40}, "exp": int(time.time()) + 600}
    token = sign(payload, secret)
    shown = ok(client.get(f"/api/embed/dashboard/{token}"))
    assert [p["slug"] for p in shown["parameters"]] == ["first_name"]
    url = f"/api/embed/dashboard/{token}/dashcard/{dashcard}/card/{people['id']}"
    assert [r[1] for r in ok(client.get(url))["data"]["rows"]] == ["Alan", "Grace"]
    assert [r[1] for r in ok(client.get(url + "?first_name=Grace"))["data"]["rows"]] == ["Grace"]

    forged = {
        "none algorithm": encode({"alg": "none"}, payload, None),
        "wrong key": sign(payload, "0" * 64),
        "expired": sign({**payload, "exp": int(time.time()) - 61 - 60}, secret),
        "changed payload": tamper(token, params={"min_age": 0}),
        "HS512": encode({"alg": "HS512"}, payload, secret, hashlib.sha512),
    }
    for name, bad in forged.items():
        response = client.get(f"/api/embed/dashboard/{bad}/dashcard/{dashcard}/card/{people['id']}")
        assert response.status_code == 400, name
    locked = client.get(url + "?min_age=0")
    assert locked.status_code == 400 and locked.json == "You can only specify a value for min_age in the JWT."
