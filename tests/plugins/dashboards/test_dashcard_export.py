"""Downloads of a dashboard card (csv, json, xlsx, api) and its pivot form, with the dashboard's filter
values posted as a form field holding JSON (as browsers send them) or as JSON."""
import csv
import io
import json

from .support import block_data, card_body, field_ref, make_dashboard, mapping, mbql_query


def _setup(app, admin, warehouse, **card_extra):
    card = admin.post("/api/card", json=card_body("People", mbql_query(warehouse["db"], **{
        "source-table": warehouse["people"],
        "fields": [["field", warehouse["people.id"], None], ["field", warehouse["people.first_name"], None]],
        "order-by": [["asc", ["field", warehouse["people.id"], None]]]}), **card_extra)).json["id"]
    params = [{"id": "name", "type": "string/="}]
    dash = make_dashboard(app, admin.user["id"], params, [{"card_id": card, "parameter_mappings": [
        mapping("name", card, field_ref(warehouse["people.first_name"]))]}])
    return card, dash, f"/api/dashboard/{dash['id']}/dashcard/{dash['dashcards'][0]}/card/{card}/query"


def test_csv_json_and_api_downloads_with_form_parameters(app, admin, warehouse):
    _, _, url = _setup(app, admin, warehouse)
    params = json.dumps([{"id": "name", "value": ["Alan", "Grace"]}])
    as_csv = admin.post(f"{url}/csv", data={"parameters": params})
    assert as_csv.status_code == 200, as_csv.data
    assert as_csv.headers["Content-Type"].startswith("text/csv") and "attachment" in as_csv.headers["Content-Disposition"]
    assert list(csv.reader(io.StringIO(as_csv.data.decode("utf-8-sig")))) == [
        ["Id", "First Name"], ["2", "Alan"], ["3", "Grace"]]
    as_json = admin.post(f"{url}/json", json={"parameters": [{"id": "name", "value": ["Ada"]}]})
    assert as_json.status_code == 200 and json.loads(as_json.data) == [{"Id": 1, "First Name": "Ada"}]
    as_api = admin.post(f"{url}/api", data={"parameters": params})
    assert as_api.status_code == 200 and json.loads(as_api.data)["data"]["rows"] == [[2, "Alan"], [3, "Grace"]]
    as_xlsx = admin.post(f"{url}/xlsx", data={"parameters": params})
    assert as_xlsx.status_code == 200 and as_xlsx.data[:2] == b"PK"
    assert admin.post(f"{url}/docx").status_code == 400
    assert admin.post(f"{url}/csv", data={"parameters": json.dumps([{"id": "other", "value": 1}])}).status_code == 400


def test_download_needs_download_and_data_permission(app, admin, user, warehouse):
    _, _, url = _setup(app, admin, warehouse)
    assert user.post(f"{url}/csv").status_code == 200
    graph = admin.get("/api/permissions/graph").json
    graph["groups"]["1"][str(warehouse["db"])]["download"] = {"schemas": "none"}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    refused = user.post(f"{url}/csv")
    assert refused.status_code == 403 and b"Grace" not in refused.data
    block_data(admin, warehouse["db"])
    refused = user.post(f"{url}/api")
    assert refused.status_code == 403 and b"Grace" not in refused.data


def test_pivot_dashcard(app, admin, warehouse):
    card = admin.post("/api/card", json=card_body("Pivot", mbql_query(warehouse["db"], **{
        "source-table": warehouse["orders"], "aggregation": [["count"]],
        "breakout": [["field", warehouse["orders.person_id"], None]]}), display="pivot")).json["id"]
    params = [{"id": "who", "type": "id"}]
    dash = make_dashboard(app, admin.user["id"], params, [{"card_id": card, "parameter_mappings": [
        mapping("who", card, field_ref(warehouse["orders.person_id"]))]}])
    url = f"/api/dashboard/pivot/{dash['id']}/dashcard/{dash['dashcards'][0]}/card/{card}/query"
    ran = admin.post(url, json={"parameters": [{"id": "who", "value": [1]}]})
    assert ran.status_code == 202, ran.json
    rows = ran.json["data"]["rows"]
    assert [1, 0, 2] in rows and [None, 1, 2] in rows and not any(r[0] == 2 for r in rows)
    assert admin.post(f"/api/dashboard/pivot/{dash['id']}/dashcard/{dash['dashcards'][0]}/card/999999/query",
                      json={}).status_code == 404
