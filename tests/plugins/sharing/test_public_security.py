"""What a public link can reach (compat/security.md section 6, row 13): only the shared object's data.
A dashcard of another dashboard, a card not on the dashboard, a field the object does not use: 404.
Parameter values are bound and their targets are the author's: no value changes which table or column
is read. Switching public sharing off makes every public URL 400 at once. The gate refuses a grant
anything its object does not hold."""
import json

import pytest

from core.query.access import SharedGrant
from core.testing import ApiClient

from .support import (
    enable_sharing,
    field_ref,
    make_card,
    make_dashboard,
    mapping,
    mbql_query,
    native_query,
    people_card,
    share,
)


@pytest.fixture
def two_dashboards(app, admin, warehouse):
    enable_sharing(admin)
    shown = people_card(admin, warehouse)
    hidden = make_card(admin, "Orders", mbql_query(warehouse["db"], **{"source-table": warehouse["orders"]}))
    params = [{"id": "name", "slug": "name", "type": "string/="}]
    public = make_dashboard(app, admin.user["id"], params, [{"card_id": shown, "parameter_mappings": [
        mapping("name", shown, field_ref(warehouse["people.first_name"]))]}])
    private = make_dashboard(app, admin.user["id"], [], [{"card_id": hidden}])
    return {"uuid": share(admin, "dashboard", public["id"]), "dashcard": public["dashcards"][0], "card": shown,
            "other_dashcard": private["dashcards"][0], "other_card": hidden}


@pytest.mark.security_row(13)
def test_public_dashboard_reaches_only_its_own_dashcards_and_cards(client, two_dashboards):
    d = two_dashboards
    base = f"/api/public/dashboard/{d['uuid']}"
    assert client.get(f"{base}/dashcard/{d['dashcard']}/card/{d['card']}").status_code == 202
    for dashcard, card in [(d["other_dashcard"], d["other_card"]),  # another dashboard's dashcard and card
                           (d["other_dashcard"], d["card"]),        # another dashboard's dashcard, our card
                           (d["dashcard"], d["other_card"])]:       # our dashcard, a card not on it
        for suffix in ("", "/csv", "/api"):
            got = client.get(f"{base}/dashcard/{dashcard}/card/{card}{suffix}")
            assert got.status_code == 404, (dashcard, card, suffix, got.status_code)
        assert client.get(f"/api/public/pivot/dashboard/{d['uuid']}/dashcard/{dashcard}/card/{card}").status_code == 404


@pytest.mark.security_row(13)
def test_fields_the_object_does_not_use_are_404(admin, client, two_dashboards, warehouse):
    d = two_dashboards
    card_uuid = share(admin, "card", d["card"])
    used, unused = warehouse["people.first_name"], warehouse["orders.total"]
    for base in (f"/api/public/dashboard/{d['uuid']}", f"/api/public/card/{card_uuid}"):
        assert client.get(f"{base}/field/{used}/values").status_code == 200
        assert client.get(f"{base}/field/{unused}/values").status_code == 404
        assert client.get(f"{base}/field/{unused}/search/{unused}", query_string={"value": "1"}).status_code == 404
        assert client.get(f"{base}/field/{used}/search/{unused}", query_string={"value": "1"}).status_code == 404
        assert client.get(f"{base}/field/{unused}/remapping/{used}", query_string={"value": "1"}).status_code == 404
        assert client.get(f"{base}/field/{used}/remapping/{unused}", query_string={"value": "1"}).status_code == 404
        assert client.get(f"{base}/field/{2**31 + 5}/values").status_code == 404


@pytest.mark.security_row(13)
def test_parameter_values_are_bound_and_cannot_change_what_is_read(admin, client, two_dashboards, warehouse):
    d = two_dashboards
    run = f"/api/public/dashboard/{d['uuid']}/dashcard/{d['dashcard']}/card/{d['card']}"
    for evil in ("Ada' OR '1'='1", "Ada\" OR 1=1 --", "'; DROP TABLE people; --"):
        got = client.get(run, query_string={"parameters": json.dumps([{"id": "name", "value": [evil]}])})
        assert got.status_code == 202 and got.json["data"]["rows"] == [], evil
    # A parameter's own target in the request is ignored: the dashboard's mapping decides the column.
    forged = ('[{"id": "name", "value": ["Ada"], "target": ["dimension", ["field", %d, null]]}]'
              % warehouse["orders.total"])
    got = client.get(run, query_string={"parameters": forged})
    assert got.status_code == 202 and got.json["data"]["rows"] == [["Ada"]]
    assert [c["name"] for c in got.json["data"]["cols"]] == ["first_name"]
    card_uuid = share(admin, "card", d["card"])
    forged = ('[{"id": "other", "type": "category", "value": [1], "target": ["dimension", ["field", %d, null]]}]'
              % warehouse["orders.id"])
    got = client.get(f"/api/public/card/{card_uuid}/query", query_string={"parameters": forged})
    assert got.status_code == 202 and got.json["data"]["rows"] == [["Ada"], ["Alan"], ["Grace"]]
    forged = json.dumps([{"id": "min_age", "type": "number/>=", "value": [40],
                          "target": ["dimension", ["field", warehouse["people.id"], None]]}])
    got = client.get(f"/api/public/card/{card_uuid}/query", query_string={"parameters": forged})
    assert got.status_code == 202 and got.json["data"]["rows"] == [["Alan"], ["Grace"]]  # age >= 40, not id
    # A native variable: the value is bound, never spliced into the SQL.
    tag = {"id": "t1", "name": "who", "display-name": "Who", "type": "text"}
    native = make_card(admin, "Native", native_query(
        warehouse["db"], "SELECT first_name FROM people WHERE first_name = {{who}}", who=tag))
    native_uuid = share(admin, "card", native)
    got = client.get(f"/api/public/card/{native_uuid}/query",
                     query_string={"parameters": '[{"id": "t1", "type": "category", "value": "x\' OR \'1\'=\'1"}]'})
    assert got.status_code == 202 and got.json["data"]["rows"] == []
    got = client.get(f"/api/public/card/{native_uuid}/query",
                     query_string={"parameters": '[{"id": "t1", "type": "category", "value": "Grace"}]'})
    assert got.json["data"]["rows"] == [["Grace"]]
    # The warehouse still holds its rows: nothing ran but reads.
    assert len(client.get(f"/api/public/card/{card_uuid}/query").json["data"]["rows"]) == 3


def _public_urls(app, values: dict) -> list[str]:
    """Every declared /api/public route with its path filled from `values`."""
    urls = []
    for endpoint in app.extensions["tessera"].endpoints:
        rule = endpoint.full_rule
        if endpoint.method != "GET" or not rule.startswith("/api/public/"):
            continue
        for name, value in values.items():
            rule = rule.replace(f"<{name}>", str(value))
        urls.append(rule)
    return urls


@pytest.mark.security_row(13)
def test_public_sharing_off_makes_every_public_url_400_at_once(app, admin, two_dashboards, warehouse):
    d = two_dashboards
    card_uuid = share(admin, "card", d["card"])
    anonymous = ApiClient(app)
    values = {"dashcard_id": d["dashcard"], "card_id": d["card"], "field_id": warehouse["people.first_name"],
              "search_field_id": warehouse["people.first_name"], "remapped_id": warehouse["people.first_name"],
              "param_key": "name", "query": "a", "export_format": "csv"}
    query = {"value": "a", "url": f"http://example.com/public/dashboard/{d['uuid']}"}
    urls = [u.replace("<uuid>", d["uuid"] if "/dashboard/" in u else card_uuid) for u in _public_urls(app, values)]
    assert len(urls) >= 20
    before = {u: anonymous.get(u, query_string=query).status_code for u in urls}
    assert all(status < 500 for status in before.values()), before
    assert before[f"/api/public/dashboard/{d['uuid']}"] == 200 and before[f"/api/public/card/{card_uuid}"] == 200
    enable_sharing(admin, False)
    for url in urls:
        got = anonymous.get(url, query_string=query)
        assert got.status_code == 400 and got.json == "Public sharing is not enabled.", (url, got.status_code)
    # Unknown links too: nothing is looked up while sharing is off.
    assert anonymous.get("/api/public/card/00000000-0000-4000-8000-000000000000").status_code == 400


@pytest.mark.security_row(13)
def test_a_grant_runs_only_what_its_object_holds(app, admin, two_dashboards, warehouse):
    """The data-access gate itself: a grant runs its own cards, never another card or an ad-hoc query
    beyond its fields' tables, nor native SQL."""
    from core.appdb.models import Card
    from core.query import processor

    d = two_dashboards
    grant = SharedGrant("card", d["card"], frozenset({d["card"]}), frozenset({warehouse["people.first_name"]}))
    with app.app_context():
        from core.appdb.db import session

        s = session()
        own = s.get(Card, d["card"]).dataset_query
        other = s.get(Card, d["other_card"]).dataset_query
        envelope, status = processor.run_query(s, grant, own, card_id=d["card"])
        assert status == 202 and len(envelope["data"]["rows"]) == 3
        last_names = mbql_query(warehouse["db"], **{"source-table": warehouse["people"],
                                                    "fields": [["field", warehouse["people.last_name"], None]]})
        # Another card, even as an ad-hoc query; a column of the field's table that the object does not use.
        for query, card_id in [(other, d["other_card"]), (other, None), (last_names, None)]:
            with pytest.raises(Exception) as refused:
                processor.run_query(s, grant, query, card_id=card_id)
            assert getattr(refused.value, "status", None) == 403, (query, card_id)
        native = native_query(warehouse["db"], "SELECT 1")
        with pytest.raises(Exception) as refused:
            processor.run_query(s, grant, native)
        assert getattr(refused.value, "status", None) == 403
        # Values of its own field's table: allowed (filter widgets list them this way).
        values = mbql_query(warehouse["db"], **{"source-table": warehouse["people"],
                                                "breakout": [["field", warehouse["people.first_name"], None]]})
        assert processor.run_query(s, grant, values)[1] == 202
