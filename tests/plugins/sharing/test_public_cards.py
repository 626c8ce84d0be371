"""/api/public/card: a shared card's JSON (only compat content.md 5's keys), its results with
parameters, downloads, pivot, field and parameter values, for a caller without an account."""
import csv
import io

import pytest

from .support import enable_sharing, make_card, mbql_query, native_query, people_card, share

PUBLIC_CARD_KEYS = {"id", "name", "description", "display", "visualization_settings", "parameters",
                    "dataset_query", "param_fields"}


@pytest.fixture
def shared_card(admin, warehouse):
    enable_sharing(admin)
    card_id = people_card(admin, warehouse)
    return card_id, share(admin, "card", card_id)


def test_public_card_shows_only_the_public_keys(client, shared_card, warehouse):
    card_id, uuid = shared_card
    got = client.get(f"/api/public/card/{uuid}")
    assert got.status_code == 200, got.json
    assert set(got.json) == PUBLIC_CARD_KEYS
    assert got.json["id"] == card_id and got.json["dataset_query"] == {"type": "query"}
    assert [p["slug"] for p in got.json["parameters"]] == ["min_age"]
    assert set(got.json["param_fields"]) == {str(warehouse["people.age"])}
    text = str(got.json)
    assert "source-table" not in text and "creator" not in text and "Warehouse" not in text


def test_public_native_card_hides_the_sql_and_keeps_its_template_tags(admin, client, warehouse):
    enable_sharing(admin)
    tag = {"id": "t1", "name": "min_age", "display-name": "Min age", "type": "number"}
    card_id = make_card(admin, "Native", native_query(
        warehouse["db"], "SELECT first_name FROM people WHERE age >= {{min_age}} ORDER BY id", min_age=tag))
    uuid = share(admin, "card", card_id)
    got = client.get(f"/api/public/card/{uuid}").json
    assert got["dataset_query"] == {"type": "native", "native": {"template-tags": {"min_age": tag}}}
    assert got["parameters"][0]["slug"] == "min_age" and got["parameters"][0]["type"] == "number/="
    assert "SELECT" not in str(got)
    ran = client.get(f"/api/public/card/{uuid}/query",
                     query_string={"parameters": '[{"id": "t1", "type": "number/=", "value": 40}]'})
    assert ran.status_code == 202, ran.json
    assert ran.json["data"]["rows"] == [["Alan"], ["Grace"]]
    # By slug too, as embeds send them.
    ran = client.get(f"/api/public/card/{uuid}/query", query_string={"parameters": '[{"slug": "min_age", "value": 80}]'})
    assert ran.json["data"]["rows"] == [["Grace"]]


def test_public_card_query_shape_and_parameters(client, shared_card):
    _, uuid = shared_card
    ran = client.get(f"/api/public/card/{uuid}/query")
    assert ran.status_code == 202, ran.json
    assert set(ran.json) == {"data", "json_query", "status"} and ran.json["status"] == "completed"
    assert set(ran.json["data"]) <= {"cols", "rows", "rows_truncated", "insights", "requested_timezone",
                                     "results_timezone"}
    assert ran.json["data"]["rows"] == [["Ada"], ["Alan"], ["Grace"]]
    ran = client.get(f"/api/public/card/{uuid}/query",
                     query_string={"parameters": '[{"id": "min_age", "type": "number/>=", "value": [40]}]'})
    assert ran.json["data"]["rows"] == [["Alan"], ["Grace"]]
    assert ran.json["json_query"]["parameters"][0]["value"] == [40]
    assert client.get(f"/api/public/card/{uuid}/query", query_string={"parameters": "{nope"}).status_code == 400
    assert client.get(f"/api/public/card/{uuid}/query", query_string={"parameters": "[1]"}).status_code == 400


def test_public_card_failure_says_only_that_an_error_occurred(admin, client, warehouse):
    enable_sharing(admin)
    card_id = make_card(admin, "Broken", native_query(warehouse["db"], "SELECT nope FROM people"))
    ran = client.get(f"/api/public/card/{share(admin, 'card', card_id)}/query")
    assert ran.status_code == 400
    assert ran.json["status"] == "failed" and ran.json["error"] == "An error occurred while running the query."
    assert "nope" not in str(ran.json) and "SELECT" not in str(ran.json)


def test_public_card_downloads(client, shared_card):
    _, uuid = shared_card
    got = client.get(f"/api/public/card/{uuid}/query/csv")
    assert got.status_code == 200 and "attachment" in got.headers["Content-Disposition"]
    assert list(csv.reader(io.StringIO(got.data.decode())))[1:] == [["Ada"], ["Alan"], ["Grace"]]
    got = client.get(f"/api/public/card/{uuid}/query/json",
                     query_string={"parameters": '[{"id": "min_age", "value": [80]}]'})
    assert got.status_code == 200 and [list(r.values()) for r in got.json] == [["Grace"]]
    assert client.get(f"/api/public/card/{uuid}/query/xlsx").data[:2] == b"PK"
    api = client.get(f"/api/public/card/{uuid}/query/api")
    assert api.status_code == 202 and api.json["data"]["rows"] == [["Ada"], ["Alan"], ["Grace"]]
    assert set(api.json) == {"data", "json_query", "status"}
    assert client.get(f"/api/public/card/{uuid}/query/nope").status_code == 400


def test_public_pivot_card(admin, client, warehouse):
    enable_sharing(admin)
    card_id = make_card(admin, "Pivot", mbql_query(warehouse["db"], **{
        "source-table": warehouse["people"], "aggregation": [["count"]],
        "breakout": [["field", warehouse["people.first_name"], None]]}), display="pivot")
    ran = client.get(f"/api/public/pivot/card/{share(admin, 'card', card_id)}/query")
    assert ran.status_code == 202, ran.json
    assert set(ran.json) == {"data", "json_query", "status"}
    assert [r[0] for r in ran.json["data"]["rows"]][:3] == ["Ada", "Alan", "Grace"]


def test_public_card_field_and_parameter_values(app, admin, client, shared_card, warehouse):
    _, uuid = shared_card
    age = warehouse["people.age"]
    got = client.get(f"/api/public/card/{uuid}/field/{age}/values")
    assert got.status_code == 200, got.json
    assert got.json["field_id"] == age
    got = client.get(f"/api/public/card/{uuid}/field/{warehouse['people.first_name']}/search/"
                     f"{warehouse['people.first_name']}", query_string={"value": "a"})
    assert got.status_code == 200 and sorted(got.json) == [["Ada"], ["Alan"]]
    got = client.get(f"/api/public/card/{uuid}/params/min_age/values")
    assert got.status_code == 200 and "values" in got.json
    assert client.get(f"/api/public/card/{uuid}/params/nope/values").status_code == 404


def test_unknown_archived_or_unshared_card_is_404(admin, client, shared_card):
    card_id, uuid = shared_card
    assert client.get("/api/public/card/00000000-0000-4000-8000-000000000000").status_code == 404
    assert client.get("/api/public/card/not-a-uuid").status_code == 400
    assert admin.put(f"/api/card/{card_id}", json={"archived": True}).status_code == 200
    assert client.get(f"/api/public/card/{uuid}").status_code == 404
    assert admin.put(f"/api/card/{card_id}", json={"archived": False}).status_code == 200
    assert client.get(f"/api/public/card/{uuid}").status_code == 200
    assert admin.delete(f"/api/card/{card_id}/public_link").status_code == 204
    assert client.get(f"/api/public/card/{uuid}").status_code == 404
