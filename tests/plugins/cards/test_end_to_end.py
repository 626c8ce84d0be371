"""The issue's "done when", through the API only: a new user saves a native and an MBQL question and
a model in a collection, runs and exports them, queries the model as card__N and from native SQL,
the model is persisted and unpersisted, a CSV becomes a model; a full GET body posts back."""
import io
import json

from core.testing import make_user, sqlite_file, wait_for_sync

SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE invoices (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), amount REAL);
INSERT INTO customers VALUES (1, 'Ann', 'Oslo'), (2, 'Bob', 'Rome'), (3, 'Cy', 'Oslo');
INSERT INTO invoices VALUES (1, 1, 10.0), (2, 1, 5.5), (3, 2, 7.0), (4, 3, 1.0);
"""


def by_name(items):
    return {i["name"]: i for i in items}


def test_new_user_works_with_cards_end_to_end(app, admin):
    path = sqlite_file(app, "shop.db", SHOP)
    db = admin.post("/api/database", json={"name": "Shop", "engine": "sqlite", "details": {"db": path}}).json["id"]
    wait_for_sync(app)
    tables = by_name(admin.get(f"/api/database/{db}/metadata").json["tables"])
    invoices = tables["invoices"]
    amount = by_name(invoices["fields"])["amount"]["id"]
    customer_id = by_name(invoices["fields"])["customer_id"]["id"]
    collection = admin.post("/api/collection", json={"name": "Reports", "color": "#509EE3"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    graph["groups"]["1"][str(collection)] = "write"
    assert admin.put("/api/collection/graph", json=graph).status_code == 200

    user = make_user(app, email="new@example.com")
    native = user.post("/api/card", json={
        "name": "Big invoices", "display": "table", "visualization_settings": {}, "collection_id": collection,
        "dataset_query": {"database": db, "type": "native",
                          "native": {"query": "SELECT amount, id FROM invoices WHERE amount > 5 ORDER BY id"}}})
    assert native.status_code == 200, native.json
    assert [c["name"] for c in native.json["result_metadata"]] == ["amount", "id"]
    mbql = user.post("/api/card", json={
        "name": "Revenue per customer", "display": "bar", "visualization_settings": {}, "collection_id": collection,
        "dataset_query": {"database": db, "type": "query", "query": {
            "source-table": invoices["id"], "aggregation": [["sum", ["field-id", amount]]],
            "breakout": [["field-id", customer_id]]}}})
    assert mbql.status_code == 200, mbql.json
    model = user.post("/api/card", json={
        "name": "Invoices model", "display": "table", "visualization_settings": {}, "collection_id": collection,
        "type": "model", "dataset_query": {"database": db, "type": "query", "query": {"source-table": invoices["id"]}}}).json
    assert model["type"] == "model" and model["dataset"] is True

    assert user.post(f"/api/card/{native.json['id']}/query").json["data"]["rows"] == [[10.0, 1], [5.5, 2], [7.0, 3]]
    assert user.post(f"/api/card/{mbql.json['id']}/query").json["data"]["rows"] == [[1, 15.5], [2, 7.0], [3, 1.0]]
    exported = user.post(f"/api/card/{mbql.json['id']}/query/json", data={"parameters": "[]", "format_rows": "false"})
    assert exported.status_code == 200 and len(json.loads(exported.data)) == 3
    csv_export = user.post(f"/api/card/{native.json['id']}/query/csv")
    assert csv_export.status_code == 200 and csv_export.data.decode().splitlines()[1:] == ["10.0,1", "5.5,2", "7.0,3"]

    on_model = user.post("/api/dataset", json={"database": db, "type": "query", "query": {
        "source-table": f"card__{model['id']}", "aggregation": [["count"]]}})
    assert on_model.json["data"]["rows"] == [[4]]
    tag = f"#{model['id']}-invoices-model"
    from_native = user.post("/api/dataset", json={"database": db, "type": "native", "native": {
        "query": f"SELECT sum(amount) AS total FROM {{{{{tag}}}}} AS m",
        "template-tags": {tag: {"id": "x", "name": tag, "display-name": "Invoices", "type": "card",
                                "card-id": model["id"]}}}})
    assert from_native.json["data"]["rows"] == [[23.5]]
    assert user.get(f"/api/table/card__{model['id']}/query_metadata").json["display_name"] == "Invoices model"

    assert admin.post(f"/api/database/{db}/persist").status_code == 204
    assert user.post(f"/api/card/{model['id']}/persist").status_code == 204
    assert user.get(f"/api/card/{model['id']}").json["persisted"] is True
    assert user.post("/api/dataset", json=on_model.json["json_query"]).json["data"]["rows"] == [[4]]
    assert user.post(f"/api/card/{model['id']}/unpersist").status_code == 204
    assert user.get(f"/api/card/{model['id']}").json["persisted"] is False

    uploaded = user.post("/api/card/from-csv", data={"file": (io.BytesIO(b"city,visits\nOslo,3\nRome,4\n"), "visits.csv"),
                                                     "collection_id": str(collection)},
                         content_type="multipart/form-data")
    assert uploaded.status_code == 200, uploaded.json
    wait_for_sync(app)
    upload_model = user.get(f"/api/card/{uploaded.json}").json
    assert upload_model["type"] == "model" and upload_model["collection_id"] == collection
    assert user.post(f"/api/card/{uploaded.json}/query").json["data"]["rows"] == [[1, "Oslo", 3], [2, "Rome", 4]]

    full = user.get(f"/api/card/{mbql.json['id']}").json
    copy = user.post("/api/card", json={**full, "name": "Revenue copy"})
    assert copy.status_code == 200 and copy.json["dataset_query"] == full["dataset_query"]
    items = user.get(f"/api/collection/{collection}/items").json
    names = {i["name"] for i in (items["data"] if isinstance(items, dict) else items)}
    assert {"Big invoices", "Revenue per customer", "Invoices model", "Visits", "Revenue copy"} <= names
