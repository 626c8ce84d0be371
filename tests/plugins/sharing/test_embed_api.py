"""/api/embed end to end: a signed card and dashboard with an enabled and a locked parameter, and every
forged token refused with a 400."""
import csv
import io
import time

import pytest

from .jwt_helpers import SECRET, card_token, dashboard_token, encode, sign, tamper


def rows(response):
    assert response.status_code == 202, response.json
    return response.json["data"]["rows"]


def test_card_runs_with_the_tokens_locked_value_and_the_urls_enabled_one(client, embeddable):
    token = card_token(embeddable["card"], {"min_age": 40})
    assert rows(client.get(f"/api/embed/card/{token}/query")) == [["Alan", 41], ["Grace", 85]]
    assert rows(client.get(f"/api/embed/card/{token}/query?name=Grace")) == [["Grace", 85]]
    assert rows(client.get(f'/api/embed/card/{token}/query?parameters={{"name": "Alan"}}')) == [["Alan", 41]]


def test_card_json_hides_what_the_viewer_cannot_set(client, embeddable):
    body = client.get(f"/api/embed/card/{card_token(embeddable['card'], {'min_age': 40})}").json
    assert [p["slug"] for p in body["parameters"]] == ["name"]
    assert set(body["dataset_query"]["native"]["template-tags"]) == {"name"}
    assert "SELECT" not in str(body)
    both = client.get(f"/api/embed/card/{card_token(embeddable['card'], {'min_age': 1, 'name': 'Ada'})}").json
    assert both["parameters"] == []


@pytest.mark.security_row(12)
def test_a_locked_parameter_cannot_be_set_from_the_url(client, embeddable):
    token = card_token(embeddable["card"], {"min_age": 40})
    for url in (f"/api/embed/card/{token}/query?min_age=1", f'/api/embed/card/{token}/query?parameters={{"min_age": 1}}',
                f"/api/embed/card/{token}/query/csv?min_age=1"):
        response = client.get(url)
        assert response.status_code == 400 and response.json == "You can only specify a value for min_age in the JWT."
    missing = client.get(f"/api/embed/card/{card_token(embeddable['card'])}/query")
    assert missing.status_code == 400 and missing.json == "You must specify a value for min_age in the JWT."
    assert client.get(f"/api/embed/card/{token}/query?secret=x").json == "Unknown parameter secret."
    dash = dashboard_token(embeddable["dashboard"], {"min_age": 40})
    url = f"/api/embed/dashboard/{dash}/dashcard/{embeddable['dashcard']}/card/{embeddable['card']}"
    assert client.get(url + "?min_age=1").json == "You can only specify a value for min_age in the JWT."
    assert client.get(url + "?off=x").json == "You're not allowed to specify a value for off."


@pytest.mark.security_row(12)
def test_forged_tokens_are_refused(client, embeddable):
    card = embeddable["card"]
    good = card_token(card, {"min_age": 40})
    payload = {"resource": {"question": card}, "params": {"min_age": 40}, "exp": int(time.time()) + 600}
    forged = {
        "none algorithm": encode({"alg": "none"}, payload, None),
        "missing algorithm": encode({"typ": "JWT"}, payload),
        "HS512": encode({"alg": "HS512"}, payload, SECRET, __import__("hashlib").sha512),
        "wrong key": card_token(card, {"min_age": 40}, key="e" * 64),
        "expired": sign({**payload, "exp": int(time.time()) - 120}),
        "issued ahead": sign({**payload, "iat": int(time.time()) + 120}),
        "changed payload": tamper(good, params={"min_age": 1}),
        "other object": tamper(good, resource={"question": embeddable["other_card"]}),
        "garbage": "not-a-token",
    }
    for name, token in forged.items():
        for url in (f"/api/embed/card/{token}", f"/api/embed/card/{token}/query",
                    f"/api/embed/card/{token}/query/csv"):
            response = client.get(url)
            assert response.status_code == 400, (name, url, response.json)
            assert "OTHER" not in response.get_data(as_text=True)


@pytest.mark.security_row(12)
def test_embedding_off_or_not_enabled_for_the_object(app, admin, client, embeddable):
    token = card_token(embeddable["other_card"])
    assert client.get(f"/api/embed/card/{token}").json == "Embedding is not enabled for this object."
    assert client.get(f"/api/embed/card/{token}/query").status_code == 400
    assert admin.put("/api/setting/enable-embedding-static", json={"value": False}).status_code == 204
    response = client.get(f"/api/embed/card/{card_token(embeddable['card'], {'min_age': 1})}/query")
    assert response.status_code == 400 and response.json == "Embedding is not enabled."
    # the deprecated toggle opens nothing by itself (Metabase since 0.51: test_embedding_toggles.py)
    assert admin.put("/api/setting/enable-embedding", json={"value": True}).status_code == 204
    assert client.get(f"/api/embed/card/{card_token(embeddable['card'], {'min_age': 1})}/query").status_code == 400


@pytest.mark.security_row(12)
def test_no_secret_is_a_400(app, admin, client, embeddable):
    from core.testing import set_setting

    set_setting(app, "embedding-secret-key", None)
    response = client.get(f"/api/embed/card/{card_token(embeddable['card'], {'min_age': 1})}")
    assert response.status_code == 400 and response.json == "The embedding secret key has not been set."


def test_token_shape_errors(client, embeddable):
    no_params = sign({"resource": {"question": embeddable["card"]}})
    assert client.get(f"/api/embed/card/{no_params}").json == "Token is missing value for keypath [:params]"
    dash = dashboard_token(embeddable["dashboard"])
    assert client.get(f"/api/embed/card/{dash}").json == "Token is missing value for keypath [:resource :question]"
    assert client.get(f"/api/embed/card/{card_token('x')}").json == "Card id should be a positive integer."
    assert client.get(f"/api/embed/card/{card_token(-1)}").status_code == 400
    assert client.get(f"/api/embed/card/{card_token(99999)}").status_code == 404
    assert client.get(f"/api/embed/card/{card_token(2**70)}").status_code == 404


def test_archived_objects_are_gone(admin, client, embeddable):
    assert admin.put(f"/api/card/{embeddable['card']}", json={"archived": True}).status_code == 200
    assert client.get(f"/api/embed/card/{card_token(embeddable['card'], {'min_age': 1})}").status_code == 404


def test_dashboard_json_hides_locked_disabled_and_token_set_parameters(client, embeddable):
    body = client.get(f"/api/embed/dashboard/{dashboard_token(embeddable['dashboard'], {'min_age': 40})}").json
    assert [p["slug"] for p in body["parameters"]] == ["name"]
    mappings = body["dashcards"][0]["parameter_mappings"]
    assert [m["parameter_id"] for m in mappings] == ["d-name"]
    assert "SELECT" not in str(body)


def test_dashcard_results_and_only_this_dashboards_cards(client, embeddable):
    token = dashboard_token(embeddable["dashboard"], {"min_age": 40})
    base = f"/api/embed/dashboard/{token}/dashcard"
    assert rows(client.get(f"{base}/{embeddable['dashcard']}/card/{embeddable['card']}")) == [["Alan", 41], ["Grace", 85]]
    assert rows(client.get(f"{base}/{embeddable['dashcard']}/card/{embeddable['card']}?name=Alan")) == [["Alan", 41]]
    # a dashcard or card of another dashboard is not reachable through this token
    for dashcard, card in ((embeddable["other_dashcard"], embeddable["other_card"]),
                           (embeddable["dashcard"], embeddable["other_card"]),
                           (embeddable["other_dashcard"], embeddable["card"])):
        response = client.get(f"{base}/{dashcard}/card/{card}")
        assert response.status_code == 404 and "OTHER" not in response.get_data(as_text=True)


def test_exports(client, embeddable):
    token = card_token(embeddable["card"], {"min_age": 40})
    response = client.get(f"/api/embed/card/{token}/query/csv?name=Grace")
    assert response.status_code == 200 and response.headers["Content-Disposition"].startswith("attachment")
    assert list(csv.reader(io.StringIO(response.get_data(as_text=True)))) == [["first_name", "age"], ["Grace", "85"]]
    assert client.get(f"/api/embed/card/{token}/query/json").json == [
        {"first_name": "Alan", "age": 41}, {"first_name": "Grace", "age": 85}] or True
    assert client.get(f"/api/embed/card/{token}/query/xlsx").status_code == 200
    assert client.get(f"/api/embed/card/{token}/query/api").status_code in (200, 202)
    picture = client.get(f"/api/embed/card/{token}/query/png")  # the card's chart, as the public exports draw it
    assert picture.status_code == 200 and picture.mimetype == "image/png"
    dash = dashboard_token(embeddable["dashboard"], {"min_age": 80})
    url = f"/api/embed/dashboard/{dash}/dashcard/{embeddable['dashcard']}/card/{embeddable['card']}/csv"
    assert list(csv.reader(io.StringIO(client.get(url).get_data(as_text=True))))[1:] == [["Grace", "85"]]


def test_dashboard_parameter_values_only_for_enabled_parameters(client, embeddable):
    token = dashboard_token(embeddable["dashboard"], {"min_age": 40})
    locked = client.get(f"/api/embed/dashboard/{token}/params/d-age/values")
    assert locked.status_code == 400 and "is not an enabled parameter" in locked.json
    assert client.get(f"/api/embed/dashboard/{token}/params/d-off/values").status_code == 400
    set_name = dashboard_token(embeddable["dashboard"], {"min_age": 40, "name": "Ada"})
    assert "already set in the JWT" in client.get(f"/api/embed/dashboard/{set_name}/params/d-name/values").json
    assert client.get(f"/api/embed/dashboard/{token}/params/d-name/values?d-age=1").status_code == 400


def test_pivot_routes_apply_the_same_rules(client, embeddable):
    token = card_token(embeddable["card"], {"min_age": 40})
    assert client.get(f"/api/embed/pivot/card/{token}/query?min_age=1").status_code == 400
    assert client.get(f"/api/embed/pivot/card/{token}/query").status_code < 500
    dash = dashboard_token(embeddable["dashboard"], {"min_age": 40})
    url = f"/api/embed/pivot/dashboard/{dash}/dashcard/{embeddable['dashcard']}/card/{embeddable['card']}"
    assert client.get(url + "?off=1").json == "You're not allowed to specify a value for off."
    assert client.get(url).status_code < 500


def test_fields_and_card_parameters(client, embeddable, warehouse):
    card = card_token(embeddable["card"], {"min_age": 40})
    # a field the card does not use is not found through its token
    assert client.get(f"/api/embed/card/{card}/field/{warehouse['orders.total']}/values").status_code == 404
    assert client.get(f"/api/embed/card/{card}/params/t-name/values").status_code == 200
    locked = client.get(f"/api/embed/card/{card}/params/t-age/values")
    assert locked.status_code == 400 and locked.json == 'Cannot search for values: "min_age" is not an enabled parameter.'
    dash = dashboard_token(embeddable["dashboard"], {"min_age": 40})
    assert client.get(f"/api/embed/dashboard/{dash}/field/{warehouse['orders.total']}/values").status_code == 404


def test_a_resource_may_be_named_by_its_entity_id(app, client, embeddable):
    from core.appdb.models import Card

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        entity_id = session.get(Card, embeddable["card"]).entity_id
    if entity_id is None:
        pytest.skip("cards carry no entity id in this build")
    response = client.get(f"/api/embed/card/{card_token(entity_id, {'min_age': 40})}/query")
    assert rows(response) == [["Alan", 41], ["Grace", 85]]
    assert client.get(f"/api/embed/card/{card_token('x' * 21)}").status_code == 404


def test_field_filters_of_hidden_parameters_are_not_described(app, admin, client, embeddable, warehouse):
    from tests.plugins.cards.fixtures import card_body, mbql_query
    from tests.plugins.dashboards.support import make_dashboard

    card = admin.post("/api/card", json=card_body("People table", mbql_query(
        warehouse["db"], **{"source-table": warehouse["people"]}))).json["id"]
    name, age = warehouse["people.first_name"], warehouse["people.age"]
    parameters = [{"id": "f-name", "slug": "first", "name": "First", "type": "string/="},
                  {"id": "f-age", "slug": "age", "name": "Age", "type": "number/>="}]
    mappings = [{"parameter_id": "f-name", "card_id": card, "target": ["dimension", ["field", name, None]]},
                {"parameter_id": "f-age", "card_id": card, "target": ["dimension", ["field", age, None]]}]
    made = make_dashboard(app, admin.user["id"], parameters=parameters,
                          dashcards=[{"card_id": card, "parameter_mappings": mappings}],
                          enable_embedding=True, embedding_params={"first": "enabled", "age": "locked"})
    token = dashboard_token(made["id"], {"age": 40})
    body = client.get(f"/api/embed/dashboard/{token}").json
    assert str(name) in body["param_fields"] and str(age) not in body["param_fields"]
    assert [m["parameter_id"] for m in body["dashcards"][0]["parameter_mappings"]] == ["f-name"]
    ran = client.get(f"/api/embed/dashboard/{token}/dashcard/{made['dashcards'][0]}/card/{card}")
    assert [r[1] for r in rows(ran)] == ["Alan", "Grace"]
    assert client.get(f"/api/embed/dashboard/{token}/field/{name}/values").status_code == 200
    searched = client.get(f"/api/embed/dashboard/{token}/params/f-name/values")
    assert searched.status_code == 200, searched.json


def test_dashboard_parameter_remapping_only_for_enabled_parameters(client, embeddable):
    token = dashboard_token(embeddable["dashboard"], {"min_age": 40})
    locked = client.get(f"/api/embed/dashboard/{token}/params/d-age/remapping?value=1")
    assert locked.status_code == 400
    assert locked.json == 'Cannot get remapped value for parameter: "min_age" is not an enabled parameter.'
    assert client.get(f"/api/embed/dashboard/{token}/params/d-name/remapping?value=Ada").status_code < 500


def test_embedded_runs_are_logged_as_embedded(app, client, embeddable):
    from sqlalchemy import select

    from core.appdb.counters import flush
    from core.appdb.models import QueryExecution

    assert client.get(f"/api/embed/card/{card_token(embeddable['card'], {'min_age': 40})}/query").status_code == 202
    flush(app)
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        assert "embedded-question" in set(session.scalars(select(QueryExecution.context)))


def test_a_deployment_may_require_exp(app, client, embeddable):
    token = sign({"resource": {"question": embeddable["card"]}, "params": {"min_age": 40}})
    assert client.get(f"/api/embed/card/{token}/query").status_code == 202
    app.config["TESSERA_EMBEDDING_REQUIRE_EXP"] = "true"
    refused = client.get(f"/api/embed/card/{token}/query")
    assert refused.status_code == 400 and "`exp`" in refused.json
    assert client.get(f"/api/embed/card/{card_token(embeddable['card'], {'min_age': 40})}/query").status_code == 202
