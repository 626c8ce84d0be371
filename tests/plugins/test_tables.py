"""/api/table: listing, one table, query metadata, FKs, related tables, edits and field order."""
from core.testing import wait_for_sync


def sample(app, admin):
    db_id = admin.post("/api/database/sample_database").json["id"]
    wait_for_sync(app)
    tables = {t["name"]: t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]}
    return db_id, tables


def test_list_and_get(app, admin, user, sample_database_file):
    db_id, tables = sample(app, admin)
    listing = admin.get("/api/table/").json
    assert [t["name"] for t in listing] == ["ORDERS", "PEOPLE", "PRODUCTS", "REVIEWS"]
    assert listing[0]["db"]["id"] == db_id and "details" in listing[0]["db"]
    assert "details" not in user.get("/api/table").json[0]["db"]
    one = user.get(f"/api/table/{tables['ORDERS']['id']}").json
    assert one["name"] == "ORDERS" and one["db"]["name"] == "Sample Database"
    assert one["pk_field"] == next(f["id"] for f in tables["ORDERS"]["fields"] if f["name"] == "ID")
    assert admin.get("/api/table/999999").status_code == 404


def test_query_metadata_fks_and_related(app, admin, sample_database_file):
    _, tables = sample(app, admin)
    orders, people = tables["ORDERS"], tables["PEOPLE"]
    metadata = admin.get(f"/api/table/{orders['id']}/query_metadata").json
    assert metadata["db"]["id"] == orders["db_id"] and "details" not in metadata["db"]
    assert metadata["schema"] == ""
    fields = {f["name"]: f for f in metadata["fields"]}
    assert [f["name"] for f in metadata["fields"]][:3] == ["ID", "USER_ID", "PRODUCT_ID"]
    assert fields["USER_ID"]["target"]["name"] == "ID" and fields["USER_ID"]["dimensions"] == []
    assert metadata["segments"] == [] and metadata["metrics"] == []
    people_meta = admin.get(f"/api/table/{people['id']}/query_metadata").json
    assert {f["name"]: f for f in people_meta["fields"]}["ID"]["name_field"]["name"] == "NAME"
    fks = admin.get(f"/api/table/{people['id']}/fks").json
    assert len(fks) == 1 and fks[0]["origin"]["name"] == "USER_ID" and fks[0]["origin"]["table"]["name"] == "ORDERS"
    assert fks[0]["destination"]["name"] == "ID" and fks[0]["relationship"] == "Mt1"
    assert admin.get(f"/api/table/{orders['id']}/fks").json == []
    related = admin.get(f"/api/table/{orders['id']}/related").json
    assert sorted(t["name"] for t in related["linking-to"]) == ["PEOPLE", "PRODUCTS"]
    assert related["linked-from"] == [] and [t["name"] for t in related["tables"]] == ["REVIEWS"]
    product_related = admin.get(f"/api/table/{tables['PRODUCTS']['id']}/related").json
    assert sorted(t["name"] for t in product_related["linked-from"]) == ["ORDERS", "REVIEWS"]


def test_sensitive_and_hidden_fields(app, admin, sample_database_file):
    _, tables = sample(app, admin)
    people = tables["PEOPLE"]
    password = next(f for f in people["fields"] if f["name"] == "PASSWORD")
    address = next(f for f in people["fields"] if f["name"] == "ADDRESS")
    admin.put(f"/api/field/{password['id']}", json={"visibility_type": "sensitive"})
    admin.put(f"/api/field/{address['id']}", json={"visibility_type": "hidden"})
    names = [f["name"] for f in admin.get(f"/api/table/{people['id']}/query_metadata").json["fields"]]
    assert "PASSWORD" not in names and "ADDRESS" not in names
    names = [f["name"] for f in admin.get(f"/api/table/{people['id']}/query_metadata"
                                          "?include_sensitive_fields=true&include_hidden_fields=true").json["fields"]]
    assert "PASSWORD" in names and "ADDRESS" in names


def test_updates(app, admin, user, sample_database_file):
    _, tables = sample(app, admin)
    orders = tables["ORDERS"]
    changed = admin.put(f"/api/table/{orders['id']}", json={
        "display_name": "Sales", "description": "Every sale", "visibility_type": "technical",
        "entity_type": ":entity/GenericTable", "caveats": "c", "points_of_interest": "p", "field_order": "alphabetical"})
    assert changed.status_code == 200, changed.json
    body = changed.json
    assert (body["display_name"], body["description"], body["visibility_type"], body["entity_type"], body["field_order"]) == (
        "Sales", "Every sale", "technical", "entity/GenericTable", "alphabetical")
    ordered = [f["name"] for f in admin.get(f"/api/table/{orders['id']}/query_metadata").json["fields"]]
    assert ordered == sorted(ordered, key=lambda n: n.replace("_", " ").lower())
    assert admin.put(f"/api/table/{orders['id']}", json={"visibility_type": "secret"}).status_code == 400
    assert admin.put(f"/api/table/{orders['id']}", json={"entity_type": "GenericTable"}).status_code == 400
    assert user.put(f"/api/table/{orders['id']}", json={"description": "no"}).status_code == 403
    ids = [tables["PEOPLE"]["id"], tables["REVIEWS"]["id"]]
    bulk = admin.put("/api/table/", json={"ids": ids, "description": "shared", "visibility_type": "cruft"})
    assert bulk.status_code == 200 and [t["description"] for t in bulk.json] == ["shared", "shared"]
    # one unknown id: nothing is changed
    failed = admin.put("/api/table/", json={"ids": [tables["PRODUCTS"]["id"], 999999], "description": "x"})
    assert failed.status_code == 404
    assert admin.get(f"/api/table/{tables['PRODUCTS']['id']}").json["description"] is None


def test_field_order(app, admin, sample_database_file):
    _, tables = sample(app, admin)
    reviews = tables["REVIEWS"]
    ids = [f["id"] for f in reviews["fields"]]
    wanted = list(reversed(ids))
    response = admin.put(f"/api/table/{reviews['id']}/fields/order", json=wanted)
    assert response.status_code == 200 and response.json == {"success": True}
    metadata = admin.get(f"/api/table/{reviews['id']}/query_metadata").json
    assert metadata["field_order"] == "custom" and [f["id"] for f in metadata["fields"]] == wanted
    other = tables["ORDERS"]["fields"][0]["id"]
    assert admin.put(f"/api/table/{reviews['id']}/fields/order", json=[other]).status_code == 400
    assert admin.put(f"/api/table/{reviews['id']}/fields/order", json={"a": 1}).status_code == 400


def test_table_values(app, admin, sample_database_file):
    _, tables = sample(app, admin)
    products = tables["PRODUCTS"]
    category = next(f["id"] for f in products["fields"] if f["name"] == "CATEGORY")
    assert admin.post(f"/api/table/{products['id']}/discard_values").json == {"status": "success"}
    assert admin.get(f"/api/field/{category}/values").json["values"] == []
    assert admin.post(f"/api/table/{products['id']}/rescan_values").json == {"status": "success"}
    wait_for_sync(app)
    assert admin.get(f"/api/field/{category}/values").json["values"][0] == ["Doohickey"]
