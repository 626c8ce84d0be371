"""Reading a table needs query permission (issue 27, item 1): Metabase's read of a table (its metadata,
its fields, their values stored or read live, x-rays) is view-data unrestricted AND create-queries at
least query-builder. A user who may view data but not create queries reads a database's data only
through saved questions and dashboards; the dashboard's own filter routes keep working for them."""
import base64
import json

import pytest

from core.testing import wait_for_sync


@pytest.fixture
def viewer_world(app, admin, user, sample_database_file):
    """The Sample Database with All Users (the plain user's only group) at view-data unrestricted,
    create-queries no; a dashboard in the root collection with a filter on PEOPLE.SOURCE."""
    db_id = admin.post("/api/database/sample_database").json["id"]
    wait_for_sync(app)
    meta = admin.get(f"/api/database/{db_id}/metadata").json
    tables = {t["name"]: t for t in meta["tables"]}
    fields = {t: {f["name"]: f["id"] for f in tables[t]["fields"]} for t in tables}
    people = tables["PEOPLE"]["id"]
    segment = admin.post("/api/segment", json={"name": "Organic", "table_id": people, "definition": {
        "source-table": people, "filter": ["=", ["field", fields["PEOPLE"]["SOURCE"], None], "Organic"]}}).json["id"]
    card_parameter = {"id": "c", "type": "category", "slug": "source",
                      "target": ["dimension", ["field", fields["PEOPLE"]["SOURCE"], None]]}
    card = admin.post("/api/card", json={"name": "People", "display": "table", "visualization_settings": {},
                                         "parameters": [card_parameter],
                                         "dataset_query": {"database": db_id, "type": "query",
                                                           "query": {"source-table": people}}}).json["id"]
    parameter = {"id": "p", "type": "category", "name": "Source", "slug": "source"}
    dashboard = admin.post("/api/dashboard", json={"name": "People", "parameters": [parameter]}).json["id"]
    target = ["dimension", ["field", fields["PEOPLE"]["SOURCE"], None]]
    response = admin.put(f"/api/dashboard/{dashboard}", json={"dashcards": [
        {"id": -1, "card_id": card, "size_x": 4, "size_y": 4, "row": 0, "col": 0,
         "parameter_mappings": [{"parameter_id": "p", "card_id": card, "target": target}]}]})
    assert response.status_code == 200, response.json
    dashcard = response.json["dashcards"][0]["id"]
    graph = admin.get("/api/permissions/graph").json
    response = admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(db_id): {"view-data": "unrestricted", "create-queries": "no"}}}})
    assert response.status_code == 200, response.json
    return {"db": db_id, "tables": {t: tables[t]["id"] for t in tables}, "fields": fields, "segment": segment,
            "card": card, "dashboard": dashboard, "dashcard": dashcard}


def data_model_reads(w: dict) -> dict:
    """Every data-model read of the Sample Database that a plain user could use to read its data or its
    tables, by name: (method, path, body)."""
    people, email, password = w["tables"]["PEOPLE"], w["fields"]["PEOPLE"]["EMAIL"], w["fields"]["PEOPLE"]["PASSWORD"]
    source, user_id = w["fields"]["PEOPLE"]["SOURCE"], w["fields"]["ORDERS"]["USER_ID"]
    adhoc = base64.urlsafe_b64encode(json.dumps({"database": w["db"], "type": "query",
                                                 "query": {"source-table": people}}).encode()).decode()
    xray = "/api/automagic-dashboards"
    return {
        "field search": ("GET", f"/api/field/{email}/search/{email}?value=b", None),
        "field remapping": ("GET", f"/api/field/{user_id}/remapping/{password}?value=1", None),
        "field summary": ("GET", f"/api/field/{password}/summary", None),
        "field values": ("GET", f"/api/field/{source}/values", None),
        "field": ("GET", f"/api/field/{password}", None),
        "field related": ("GET", f"/api/field/{password}/related", None),
        "table": ("GET", f"/api/table/{people}", None),
        "table query_metadata": ("GET", f"/api/table/{people}/query_metadata", None),
        "table fks": ("GET", f"/api/table/{people}/fks", None),
        "table related": ("GET", f"/api/table/{people}/related", None),
        "database fields": ("GET", f"/api/database/{w['db']}/fields", None),
        "database idfields": ("GET", f"/api/database/{w['db']}/idfields", None),
        "database autocomplete": ("GET", f"/api/database/{w['db']}/autocomplete_suggestions?prefix=PE", None),
        "parameter values": ("POST", "/api/dataset/parameter/values",
                             {"parameter": {"id": "p", "type": "category"}, "field_ids": [source]}),
        "parameter search": ("POST", "/api/dataset/parameter/search/Org",
                             {"parameter": {"id": "p", "type": "category"}, "field_ids": [source]}),
        "x-ray table": ("GET", f"{xray}/table/{people}", None),
        "x-ray field": ("GET", f"{xray}/field/{source}", None),
        "x-ray segment": ("GET", f"{xray}/segment/{w['segment']}", None),
        "x-ray adhoc": ("GET", f"{xray}/adhoc/{adhoc}", None),
        "x-ray table rule": ("GET", f"{xray}/table/{people}/rule/table/GenericTable", None),
    }


def _call(client, method: str, path: str, body):
    return client.post(path, json=body) if method == "POST" else client.get(path)


def test_a_user_who_may_not_create_queries_reads_no_table(viewer_world, user):
    w = viewer_world
    assert user.post("/api/dataset", json={"database": w["db"], "type": "query",
                                           "query": {"source-table": w["tables"]["PEOPLE"]}}).status_code == 403
    answers = {name: _call(user, *call) for name, call in data_model_reads(w).items()}
    assert {name: r.status_code for name, r in answers.items() if r.status_code != 403} == {}
    # Listings show none of the database's tables; the database itself only as a blocked one is shown.
    assert [t for t in user.get("/api/table").json if t["db_id"] == w["db"]] == []
    assert user.get(f"/api/database/{w['db']}/metadata").json.get("tables") == []
    assert w["db"] not in [d["id"] for d in user.get("/api/database").json["data"]]
    assert user.get(f"/api/database/{w['db']}").json == {"id": w["db"], "name": "Sample Database", "tables": []}
    assert user.get(f"/api/automagic-dashboards/database/{w['db']}/candidates").status_code == 403
    assert [r for r in user.get("/api/search?q=people").json["data"] if r["model"] == "table"] == []
    assert [r for r in user.get("/api/search?q=sample").json["data"] if r["model"] == "database"] == []


def test_data_model_rights_do_not_read_values(viewer_world, admin, user):
    """Editing the data model (Metabase's manage-table-metadata) shows the tables and their segments to
    edit them, never the data: values, summaries and x-rays stay closed without query permission."""
    w = viewer_world
    graph = admin.get("/api/permissions/graph").json
    assert admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(w["db"]): {"data-model": {"schemas": "all"}}}}}).status_code == 200
    assert user.get(f"/api/segment/{w['segment']}").status_code == 200
    editable = user.get(f"/api/database/{w['db']}/metadata?include_editable_data_model=true")
    assert "PEOPLE" in [t["name"] for t in editable.json["tables"]], editable.json
    assert user.get(f"/api/table/{w['tables']['PEOPLE']}/query_metadata?include_editable_data_model=true"
                    ).status_code == 200
    refused = ("field search", "field remapping", "field summary", "field values", "parameter values",
               "x-ray table", "x-ray field", "x-ray segment", "table query_metadata")
    calls = data_model_reads(w)
    assert {name: _call(user, *calls[name]).status_code for name in refused} == {name: 403 for name in refused}


def test_the_same_reads_answer_once_queries_are_allowed(viewer_world, admin, user):
    """The refusals above are the permission's doing: query-builder permission opens every one."""
    w = viewer_world
    graph = admin.get("/api/permissions/graph").json
    assert admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(w["db"]): {"view-data": "unrestricted", "create-queries": "query-builder",
                             "data-model": {"schemas": "all"}}}}}).status_code == 200  # segments need data-model
    answers = {name: _call(user, *call) for name, call in data_model_reads(w).items()}
    assert {name: r.status_code for name, r in answers.items() if r.status_code != 200} == {}
    assert "PEOPLE" in [t["name"] for t in user.get("/api/table").json if t["db_id"] == w["db"]]
    assert "PEOPLE" in [r["table_name"] for r in user.get("/api/search?q=people").json["data"] if r["model"] == "table"]
    assert "Sample Database" in [r["name"] for r in user.get("/api/search?q=sample").json["data"]
                                 if r["model"] == "database"]


def test_dashboard_filters_still_work_for_that_user(viewer_world, user):
    w = viewer_world
    base = f"/api/dashboard/{w['dashboard']}/params/p"
    values = user.get(f"{base}/values")
    assert values.status_code == 200, values.json
    assert ["Organic"] in values.json["values"]
    found = user.get(f"{base}/search/Org")
    assert found.status_code == 200 and found.json["values"] == [["Organic"]], found.json
    assert user.get(f"{base}/remapping?value=Organic").json == ["Organic"]
    linked = user.get(f"{base}/values?p=Organic")
    assert linked.status_code == 200, linked.json
    ran = user.post(f"/api/dashboard/{w['dashboard']}/dashcard/{w['dashcard']}/card/{w['card']}/query",
                    json={"parameters": [{"id": "p", "type": "category", "value": ["Organic"],
                                          "target": ["dimension", ["field", w["fields"]["PEOPLE"]["SOURCE"], None]]}]})
    assert ran.status_code == 202 and ran.json["row_count"] > 0, ran.json
    # A saved question's own filter routes answer as well: the question authorises them.
    assert user.get(f"/api/card/{w['card']}/params/c/values").json["values"][:1] == [["Affiliate"]]
    card_search = user.get(f"/api/card/{w['card']}/params/c/search/Org")
    assert card_search.status_code == 200 and card_search.json["values"] == [["Organic"]], card_search.json
    metadata = user.get(f"/api/dashboard/{w['dashboard']}/query_metadata")
    assert metadata.status_code == 200 and "PEOPLE" in [t["name"] for t in metadata.json["tables"]], metadata.json
