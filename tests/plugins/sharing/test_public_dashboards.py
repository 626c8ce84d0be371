"""/api/public/dashboard: a shared dashboard's JSON (compat content.md 5's keys), its cards' results
with filter values, downloads (the dashcard export route the public page draws charts from), filter
values, linked filters, remapping and field values, for a caller without an account."""
import csv
import io

import pytest

from .support import enable_sharing, field_ref, make_dashboard, mapping, people_card, share

PUBLIC_DASHBOARD_KEYS = {"id", "name", "description", "parameters", "auto_apply_filters", "width", "tabs",
                         "param_fields", "dashcards"}
PUBLIC_DASHCARD_KEYS = {"id", "card", "card_id", "dashboard_id", "series", "col", "row", "size_x", "size_y",
                        "dashboard_tab_id", "parameter_mappings", "visualization_settings", "action"}


@pytest.fixture
def shared_dashboard(app, admin, warehouse):
    enable_sharing(admin)
    card = people_card(admin, warehouse)
    params = [{"id": "name", "slug": "first_name", "type": "string/="},
              {"id": "age", "slug": "age", "type": "number/>="}]
    mappings = [mapping("name", card, field_ref(warehouse["people.first_name"])),
                mapping("age", card, field_ref(warehouse["people.age"]))]
    made = make_dashboard(app, admin.user["id"], params, [{"card_id": card, "parameter_mappings": mappings}])
    return {"id": made["id"], "dashcard": made["dashcards"][0], "card": card,
            "uuid": share(admin, "dashboard", made["id"])}


def _run(client, shared, parameters=None, dashcard=None, card=None):
    query = {} if parameters is None else {"parameters": parameters}
    return client.get(f"/api/public/dashboard/{shared['uuid']}/dashcard/{dashcard or shared['dashcard']}"
                      f"/card/{card or shared['card']}", query_string=query)


def test_public_dashboard_shows_only_the_public_keys(client, shared_dashboard, warehouse):
    got = client.get(f"/api/public/dashboard/{shared_dashboard['uuid']}")
    assert got.status_code == 200, got.json
    assert set(got.json) == PUBLIC_DASHBOARD_KEYS
    (dashcard,) = got.json["dashcards"]
    assert set(dashcard) == PUBLIC_DASHCARD_KEYS
    assert set(dashcard["card"]) == {"id", "name", "description", "display", "visualization_settings",
                                     "parameters", "dataset_query", "param_fields"}
    assert dashcard["card"]["dataset_query"] == {"type": "query"}
    assert set(got.json["param_fields"]) == {str(warehouse["people.first_name"]), str(warehouse["people.age"])}
    assert "creator" not in str(got.json) and "source-table" not in str(got.json)


def test_public_dashcard_runs_with_filter_values_by_id_or_slug(client, shared_dashboard):
    ran = _run(client, shared_dashboard)
    assert ran.status_code == 202, ran.json
    assert set(ran.json) == {"data", "json_query", "status"}
    assert ran.json["data"]["rows"] == [["Ada"], ["Alan"], ["Grace"]]
    ran = _run(client, shared_dashboard, '[{"id": "age", "value": 40}]')
    assert ran.json["data"]["rows"] == [["Alan"], ["Grace"]]
    ran = _run(client, shared_dashboard, '[{"slug": "first_name", "value": ["Ada", "Grace"]}, {"id": "age", "value": 40}]')
    assert ran.json["data"]["rows"] == [["Grace"]]


def test_public_dashcard_downloads(client, shared_dashboard):
    base = f"/api/public/dashboard/{shared_dashboard['uuid']}/dashcard/{shared_dashboard['dashcard']}" \
           f"/card/{shared_dashboard['card']}"
    got = client.get(f"{base}/csv", query_string={"parameters": '[{"id": "age", "value": 80}]'})
    assert got.status_code == 200 and "attachment" in got.headers["Content-Disposition"]
    assert list(csv.reader(io.StringIO(got.data.decode())))[1:] == [["Grace"]]
    assert client.get(f"{base}/xlsx").data[:2] == b"PK"
    assert client.get(f"{base}/api").json["data"]["rows"] == [["Ada"], ["Alan"], ["Grace"]]
    # The chart the public page draws, as an image URL.
    svg = client.get(f"{base}/svg")
    assert svg.status_code == 200 and svg.data.startswith(b"<svg")


def test_public_dashboard_filter_values_search_and_remapping(client, shared_dashboard, warehouse):
    base = f"/api/public/dashboard/{shared_dashboard['uuid']}"
    got = client.get(f"{base}/params/name/values")
    assert got.status_code == 200, got.json
    assert got.json["values"] == [["Ada"], ["Alan"], ["Grace"]]
    # A linked filter: the other filter's value restricts the values.
    got = client.get(f"{base}/params/name/values", query_string={"age": "80"})
    assert got.json["values"] == [["Grace"]]
    assert client.get(f"{base}/params/name/search/al").json["values"] == [["Alan"]]
    assert client.get(f"{base}/params/name/remapping", query_string={"value": "Ada"}).json == ["Ada"]
    assert client.get(f"{base}/params/nope/values").status_code == 400
    first_name = warehouse["people.first_name"]
    got = client.get(f"{base}/field/{first_name}/values")
    assert got.status_code == 200 and got.json["field_id"] == first_name
    got = client.get(f"{base}/field/{first_name}/search/{first_name}", query_string={"value": "gr"})
    assert got.json == [["Grace"]]


def test_public_dashcard_failure_is_generic(client, shared_dashboard):
    # A value the field cannot take makes the query fail: the public answer names no SQL or engine error.
    ran = _run(client, shared_dashboard, '[{"id": "age", "value": "not a number"}]')
    assert ran.status_code == 400
    assert ran.json == {"status": "failed", "error": "An error occurred while running the query.",
                        "error_type": ran.json["error_type"]}


def test_filter_values_from_a_card_and_a_static_list(app, admin, client, warehouse):
    from .support import make_card, mbql_query

    enable_sharing(admin)
    card = people_card(admin, warehouse)
    source = make_card(admin, "Last names", mbql_query(warehouse["db"], **{
        "source-table": warehouse["people"], "fields": [["field", warehouse["people.last_name"], None]]}))
    params = [{"id": "last", "slug": "last", "type": "string/=", "values_source_type": "card",
               "values_source_config": {"card_id": source, "value_field": ["field", "last_name", None]}},
              {"id": "fixed", "slug": "fixed", "type": "string/=", "values_source_type": "static-list",
               "values_source_config": {"values": ["x", "y"]}}]
    made = make_dashboard(app, admin.user["id"], params, [{"card_id": card, "parameter_mappings": []}])
    uuid = share(admin, "dashboard", made["id"])
    got = client.get(f"/api/public/dashboard/{uuid}/params/last/values")
    assert got.status_code == 200, got.json
    assert sorted(got.json["values"]) == [["Hopper"], ["Lovelace"], ["Turing"]]
    assert client.get(f"/api/public/dashboard/{uuid}/params/fixed/values").json["values"] == [["x"], ["y"]]


def test_series_card_and_a_card_nobody_may_read_run_for_the_public_viewer(app, admin, client, warehouse):
    """The public link grants what the dashboard holds: a series card runs, and so does a card in a
    collection All Users cannot read (as Metabase's public links do); the JSON strips both."""
    from .support import make_card, mbql_query

    enable_sharing(admin)
    collection = admin.post("/api/collection", json={"name": "Private"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    graph["groups"]["1"][str(collection)] = "none"
    assert admin.put("/api/collection/graph", json=graph).status_code == 200
    main = people_card(admin, warehouse, collection_id=collection)
    series = make_card(admin, "Orders", mbql_query(warehouse["db"], **{
        "source-table": warehouse["orders"], "fields": [["field", warehouse["orders.total"], None]],
        "order-by": [["asc", ["field", warehouse["orders.id"], None]]]}))
    made = make_dashboard(app, admin.user["id"], [], [{"card_id": main, "series": [series]}])
    uuid = share(admin, "dashboard", made["id"])
    got = client.get(f"/api/public/dashboard/{uuid}").json
    assert got["dashcards"][0]["series"][0]["id"] == series and "dataset_query" in got["dashcards"][0]["series"][0]
    base = f"/api/public/dashboard/{uuid}/dashcard/{made['dashcards'][0]}"
    assert client.get(f"{base}/card/{main}").json["data"]["rows"] == [["Ada"], ["Alan"], ["Grace"]]
    assert client.get(f"{base}/card/{series}").json["data"]["rows"] == [[10.5], [20.0], [7.25], [100.0]]
