"""/api/database: registering the Sample Database and a user's own SQLite file, what sync finds, and
the listings, metadata, schemas, autocomplete and value endpoints built on it."""
import pytest

from core.testing import make_user, setup_admin, sqlite_file, wait_for_sync

SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, customer_name TEXT, email TEXT, city TEXT, status TEXT);
CREATE TABLE invoices (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), amount FLOAT,
                       created_at DATETIME, note TEXT);
INSERT INTO customers VALUES (1, 'Ann', 'ann@example.com', 'Oslo', 'active'), (2, 'Bob', 'bob@example.com', 'Rome', 'gone'),
                             (3, 'Cy', 'cy@example.com', 'Oslo', 'active');
INSERT INTO invoices VALUES (1, 1, 10.5, '2024-01-01 10:00:00', NULL), (2, 1, 20.0, '2024-02-01 11:00:00', 'x'),
                            (3, 2, 7.25, '2024-03-05 09:30:00', NULL);
"""


def add_sample(app, admin):
    response = admin.post("/api/database/sample_database")
    assert response.status_code == 200, response.json
    wait_for_sync(app)
    return response.json["id"]


def tables_by_name(metadata):
    return {t["name"]: t for t in metadata["tables"]}


def fields_by_name(table):
    return {f["name"]: f for f in table["fields"]}


def test_sample_database_flow(app, admin, sample_database_file):
    response = admin.post("/api/database/sample_database")
    assert response.status_code == 200
    body = response.json
    assert body["name"] == "Sample Database" and body["is_sample"] is True and body["engine"] == "sqlite"
    wait_for_sync(app)
    # a second call returns the same database
    assert admin.post("/api/database/sample_database").json["id"] == body["id"]
    database = admin.get(f"/api/database/{body['id']}").json
    assert database["initial_sync_status"] == "complete"
    assert database["schedules"]["metadata_sync"]["schedule_type"] == "hourly"
    assert database["can-manage"] is True
    metadata = admin.get(f"/api/database/{body['id']}/metadata").json
    tables = tables_by_name(metadata)
    assert sorted(tables) == ["ORDERS", "PEOPLE", "PRODUCTS", "REVIEWS"]
    assert tables["ORDERS"]["display_name"] == "Orders" and tables["ORDERS"]["entity_type"] == "entity/TransactionTable"
    assert "db" not in tables["ORDERS"]
    orders, people, products = (fields_by_name(tables[n]) for n in ("ORDERS", "PEOPLE", "PRODUCTS"))
    assert orders["ID"]["semantic_type"] == "type/PK"
    assert orders["USER_ID"]["semantic_type"] == "type/FK"
    assert orders["USER_ID"]["fk_target_field_id"] == people["ID"]["id"]
    assert orders["USER_ID"]["target"]["id"] == people["ID"]["id"]
    assert orders["USER_ID"]["display_name"] == "User ID"
    assert orders["PRODUCT_ID"]["fk_target_field_id"] == products["ID"]["id"]
    assert orders["CREATED_AT"]["semantic_type"] == "type/CreationTimestamp"
    assert orders["CREATED_AT"]["base_type"] == "type/DateTime"
    assert people["EMAIL"]["semantic_type"] == "type/Email"
    assert people["CITY"]["semantic_type"] == "type/City"
    assert people["STATE"]["semantic_type"] == "type/State"
    assert products["CATEGORY"]["semantic_type"] == "type/Category"
    assert products["CATEGORY"]["has_field_values"] == "list"
    assert people["NAME"]["has_field_values"] == "search"
    for table in metadata["tables"]:
        for field in table["fields"]:
            for key in ("fk_target_field_id", "semantic_type", "has_field_values", "settings", "coercion_strategy",
                        "visibility_type", "effective_type", "database_type"):
                assert key in field
    fingerprint = orders["TOTAL"]["fingerprint"]
    assert fingerprint["global"]["nil%"] == 0.0 and fingerprint["type"]["type/Number"]["min"] > 0
    assert orders["CREATED_AT"]["fingerprint"]["type"]["type/DateTime"]["earliest"].startswith("2022")
    values = admin.get(f"/api/field/{products['CATEGORY']['id']}/values").json
    assert values == {"field_id": products["CATEGORY"]["id"],
                      "values": [["Doohickey"], ["Gadget"], ["Gizmo"], ["Widget"]], "has_more_values": False}
    summary = admin.get(f"/api/field/{orders['USER_ID']['id']}/summary").json
    assert summary[0] == ["count", 18760] and summary[1][0] == "distincts" and 2000 < summary[1][1] <= 2500


def test_register_own_sqlite_file(app, admin):
    path = sqlite_file(app, "shop.db", SHOP)
    response = admin.post("/api/database", json={"name": "Shop", "engine": "sqlite", "details": {"db": path}})
    assert response.status_code == 200, response.json
    created = response.json
    assert created["initial_sync_status"] == "incomplete" and created["details"] == {"db": path}
    wait_for_sync(app)
    listing = admin.get("/api/database").json
    assert listing["total"] == 1 and listing["data"][0]["name"] == "Shop"
    metadata = admin.get(f"/api/database/{created['id']}/metadata").json
    tables = tables_by_name(metadata)
    invoices, customers = fields_by_name(tables["invoices"]), fields_by_name(tables["customers"])
    assert invoices["customer_id"]["display_name"] == "Customer ID"
    assert invoices["customer_id"]["fk_target_field_id"] == customers["id"]["id"]
    assert invoices["amount"]["fk_target_field_id"] is None
    assert customers["status"]["semantic_type"] == "type/Category"
    assert customers["city"]["semantic_type"] == "type/City"
    city = admin.get(f"/api/field/{customers['city']['id']}/values").json
    assert city["values"] == [["Oslo"], ["Rome"]]
    assert tables["invoices"]["schema"] is None
    with_tables = admin.get(f"/api/database/{created['id']}?include=tables").json
    assert {t["schema"] for t in with_tables["tables"]} == {""}
    with_fields = admin.get(f"/api/database/{created['id']}?include=tables.fields").json
    assert all(t["fields"] for t in with_fields["tables"])
    listed = admin.get("/api/database?include=tables").json["data"][0]
    assert [t["name"] for t in listed["tables"]] == ["customers", "invoices"]


def test_create_validation(app, admin, user):
    path = sqlite_file(app, "one.db", "CREATE TABLE t (id INTEGER)")
    assert user.post("/api/database", json={"name": "x", "engine": "sqlite", "details": {"db": path}}).status_code == 403
    bad_engine = admin.post("/api/database", json={"name": "x", "engine": "h2", "details": {"db": path}})
    assert bad_engine.status_code == 400 and "engine" in bad_engine.json["errors"]
    missing = admin.post("/api/database", json={"engine": "sqlite", "details": {"db": path}})
    assert missing.status_code == 400 and missing.json["errors"] == {"name": "value must be a non-blank string."}
    outside = admin.post("/api/database", json={"name": "x", "engine": "sqlite", "details": {"db": "/etc/passwd"}})
    assert outside.status_code == 400
    assert admin.get("/api/database").json == {"data": [], "total": 0}
    assert admin.post("/api/database/validate", json={"engine": "sqlite", "details": {"db": path}}).json == {"valid": True}
    invalid = admin.post("/api/database/validate", json={"engine": "sqlite", "details": {"db": path + ".missing"}})
    assert invalid.status_code == 200 and invalid.json["valid"] is False
    assert user.post("/api/database/validate", json={"engine": "sqlite", "details": {"db": path}}).status_code == 403
    assert admin.get("/api/database/999").status_code == 404
    assert admin.get("/api/database/0").status_code == 400


def test_update_and_delete(app, admin, user):
    path = sqlite_file(app, "one.db", "CREATE TABLE t (id INTEGER PRIMARY KEY, label TEXT); INSERT INTO t VALUES (1, 'a')")
    created = admin.post("/api/database", json={"name": "One", "engine": "sqlite", "details": {"db": path}}).json
    wait_for_sync(app)
    updated = admin.put(f"/api/database/{created['id']}", json={
        "name": "Renamed", "description": "mine", "cache_ttl": 10,
        "schedules": {"metadata_sync": {"schedule_type": "daily", "schedule_hour": 4, "schedule_minute": 30}}})
    assert updated.status_code == 200, updated.json
    assert updated.json["name"] == "Renamed" and updated.json["description"] == "mine" and updated.json["cache_ttl"] == 10
    assert updated.json["metadata_sync_schedule"] == "0 30 4 * * ? *"
    assert updated.json["schedules"]["metadata_sync"] == {"schedule_type": "daily", "schedule_hour": 4,
                                                          "schedule_minute": 30, "schedule_day": None,
                                                          "schedule_frame": None}
    assert user.put(f"/api/database/{created['id']}", json={"name": "no"}).status_code == 403
    broken = admin.put(f"/api/database/{created['id']}", json={"details": {"db": path + ".gone"}})
    assert broken.status_code == 400
    assert admin.get(f"/api/database/{created['id']}").json["details"] == {"db": path}
    # an ordinary user never sees details
    assert "details" not in user.get(f"/api/database/{created['id']}").json
    assert "details" not in user.get("/api/database").json["data"][0]
    assert user.delete(f"/api/database/{created['id']}").status_code == 403
    assert admin.delete(f"/api/database/{created['id']}").status_code == 204
    assert admin.get(f"/api/database/{created['id']}").status_code == 404
    assert admin.get("/api/table").json == []


def test_listings_schemas_and_autocomplete(app, admin, user, sample_database_file):
    db_id = add_sample(app, admin)
    assert admin.get(f"/api/database/{db_id}/schemas").json == [""]
    tables = admin.get(f"/api/database/{db_id}/schema/").json
    assert [t["name"] for t in tables] == ["ORDERS", "PEOPLE", "PRODUCTS", "REVIEWS"]
    assert all(t["schema"] == "" for t in tables)
    assert admin.get(f"/api/database/{db_id}/schema/nope").status_code == 404
    assert admin.get(f"/api/database/{db_id}/syncable_schemas").json == []
    idfields = admin.get(f"/api/database/{db_id}/idfields").json
    assert sorted(f["table"]["name"] for f in idfields) == ["ORDERS", "PEOPLE", "PRODUCTS", "REVIEWS"]
    assert all(f["semantic_type"] == "type/PK" for f in idfields)
    fields = admin.get(f"/api/database/{db_id}/fields").json
    assert {"id", "name", "display_name", "base_type", "semantic_type", "table_name", "table_schema"} <= set(fields[0])
    assert len(fields) == 9 + 13 + 8 + 6
    suggestions = user.get(f"/api/database/{db_id}/autocomplete_suggestions?prefix=pe").json
    assert suggestions == [["PEOPLE", "Table"]]
    by_field = admin.get(f"/api/database/{db_id}/autocomplete_suggestions?prefix=user").json
    assert by_field == [["USER_ID", "ORDERS :type/Integer :type/FK"]]
    substring = admin.get(f"/api/database/{db_id}/autocomplete_suggestions?substring=ATITU").json
    assert substring == [["LATITUDE", "PEOPLE :type/Float :type/Latitude"]]
    plain = admin.get(f"/api/database/{db_id}/autocomplete_suggestions?prefix=addr").json
    assert plain == [["ADDRESS", "PEOPLE :type/Text"]]
    assert admin.get(f"/api/database/{db_id}/autocomplete_suggestions").status_code == 400
    usage = admin.get(f"/api/database/{db_id}/usage_info").json
    assert usage == {"question": 0, "dataset": 0, "metric": 0, "segment": 0}
    assert user.get(f"/api/database/{db_id}/usage_info").status_code == 403


def test_hidden_tables_and_inactive_metadata(app, admin, sample_database_file):
    db_id = add_sample(app, admin)
    reviews = next(t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"] if t["name"] == "REVIEWS")
    assert admin.put(f"/api/table/{reviews['id']}", json={"visibility_type": "hidden"}).status_code == 200
    names = [t["name"] for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]]
    assert "REVIEWS" not in names
    hidden = admin.get(f"/api/database/{db_id}/metadata?include_hidden=true").json
    assert "REVIEWS" in [t["name"] for t in hidden["tables"]]
    assert "REVIEWS" not in [t["name"] for t in admin.get(f"/api/database/{db_id}/schema/").json]
    assert "REVIEWS" in [t["name"] for t in admin.get(f"/api/database/{db_id}/schema/?include_hidden=true").json]
    skipped = admin.get(f"/api/database/{db_id}/metadata?skip_fields=true").json
    assert all(t["fields"] == [] for t in skipped["tables"])


def test_values_discard_rescan_and_spinner(app, admin, user, sample_database_file):
    db_id = add_sample(app, admin)
    products = next(t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"] if t["name"] == "PRODUCTS")
    category = fields_by_name(products)["CATEGORY"]["id"]
    assert user.post(f"/api/database/{db_id}/discard_values").status_code == 403
    assert admin.post(f"/api/database/{db_id}/discard_values").json == {"status": "ok"}
    assert admin.get(f"/api/field/{category}/values").json["values"] == []
    assert admin.post(f"/api/database/{db_id}/rescan_values").json == {"status": "ok"}
    wait_for_sync(app)
    assert len(admin.get(f"/api/field/{category}/values").json["values"]) == 4
    assert admin.post(f"/api/database/{db_id}/sync_schema").json == {"status": "ok"}
    wait_for_sync(app)
    assert admin.post(f"/api/database/{db_id}/dismiss_spinner").json == {"status": "ok"}
    assert admin.get(f"/api/database/{db_id}").json["initial_sync_status"] == "complete"
    assert admin.post("/api/database/999/sync_schema").status_code == 404


def test_humanization_strategy_none(app, admin):
    assert admin.put("/api/setting/humanization-strategy", json={"value": "none"}).status_code == 204
    assert admin.put("/api/setting/humanization-strategy", json={"value": "fancy"}).status_code == 400
    path = sqlite_file(app, "raw.db", "CREATE TABLE order_items (customer_id INTEGER)")
    created = admin.post("/api/database", json={"name": "Raw", "engine": "sqlite", "details": {"db": path}}).json
    wait_for_sync(app)
    table = admin.get(f"/api/database/{created['id']}/metadata").json["tables"][0]
    assert table["display_name"] == "order_items"
    assert table["fields"][0]["display_name"] == "customer_id"
    # back to simple: the next sync renames what it named, not what a person named
    admin.put(f"/api/table/{table['id']}", json={"display_name": "Line items"})
    admin.put("/api/setting/humanization-strategy", json={"value": "simple"})
    admin.post(f"/api/database/{created['id']}/sync_schema")
    wait_for_sync(app)
    table = admin.get(f"/api/database/{created['id']}/metadata").json["tables"][0]
    assert table["display_name"] == "Line items"
    assert table["fields"][0]["display_name"] == "Customer ID"


def test_first_start_adds_sample_once(app_config, sample_database_template):
    from core.assembly.app import create_app

    config = {**app_config, "TESSERA_LOAD_SAMPLE_DATABASE": True}
    first = create_app(config)
    from core.testing import setup_admin

    admin = setup_admin(first)
    data = admin.get("/api/database").json["data"]
    assert [d["name"] for d in data] == ["Sample Database"] and data[0]["initial_sync_status"] == "complete"
    assert admin.delete(f"/api/database/{data[0]['id']}").status_code == 204
    first.extensions["tessera"].db.dispose()
    second = create_app(config)  # same app DB: the removed sample is not added back
    client = make_user(second, email="other@example.com")
    assert client.get("/api/database").json["total"] == 0
    second.extensions["tessera"].db.dispose()


@pytest.mark.parametrize("path", ["/api/database", "/api/table", "/api/field/1"])
def test_authentication_required(client, path):
    assert client.get(path).status_code == 401


def test_permissions_blocked_and_data_model(app, admin, user):
    path = sqlite_file(app, "perm.db", "CREATE TABLE t (id INTEGER PRIMARY KEY, label TEXT)")
    db_id = admin.post("/api/database", json={"name": "Perm", "engine": "sqlite", "details": {"db": path}}).json["id"]
    wait_for_sync(app)
    table = admin.get(f"/api/database/{db_id}/metadata").json["tables"][0]
    field_id = table["fields"][0]["id"]
    # by default every user reads, only administrators edit the data model
    assert user.get(f"/api/database/{db_id}").json["native_permissions"] == "write"
    assert user.put(f"/api/table/{table['id']}", json={"description": "d"}).status_code == 403
    # a group with data-model rights may edit tables and fields
    gid = admin.post("/api/permissions/group", json={"name": "Modellers"}).json["id"]
    admin.post("/api/permissions/membership", json={"group_id": gid, "user_id": user.user["id"]})
    graph = admin.put("/api/permissions/graph", json={"revision": admin.get("/api/permissions/graph-v2").json["revision"],
                                                      "groups": {str(gid): {str(db_id): {"data-model": {"schemas": "all"}}}}})
    assert graph.status_code == 200, graph.json
    assert user.put(f"/api/table/{table['id']}", json={"description": "d"}).status_code == 200
    assert user.put(f"/api/field/{field_id}", json={"description": "f"}).status_code == 200
    assert user.post(f"/api/database/{db_id}/sync_schema").status_code == 403  # details rights: admins
    # blocked: only name, id and tables
    revision = admin.get("/api/permissions/graph-v2").json["revision"]
    blocked = admin.put("/api/permissions/graph", json={"revision": revision, "groups": {
        "1": {str(db_id): {"view-data": "blocked", "create-queries": "no"}},
        str(gid): {str(db_id): {"view-data": "blocked", "create-queries": "no"}}}})
    assert blocked.status_code == 200, blocked.json
    assert user.get(f"/api/database/{db_id}").json == {"id": db_id, "name": "Perm", "tables": []}
    assert set(user.get(f"/api/database/{db_id}/metadata").json) == {"id", "name", "tables"}
    assert user.get("/api/database").json["total"] == 0
    assert user.get(f"/api/table/{table['id']}").status_code == 403
    assert user.get(f"/api/field/{field_id}").status_code == 403
    assert user.get(f"/api/database/{db_id}/fields").status_code == 403
    assert user.get("/api/table").json == []
    assert admin.get(f"/api/database/{db_id}").json["name"] == "Perm"


def test_partial_sync_options_and_editable_checks(app, admin, user):
    path = sqlite_file(app, "light.db", "CREATE TABLE t (id INTEGER PRIMARY KEY, kind TEXT); INSERT INTO t VALUES (1, 'a')")
    light = admin.post("/api/database", json={"name": "Light", "engine": "sqlite", "details": {"db": path},
                                              "is_full_sync": False}).json
    on_demand = admin.post("/api/database", json={"name": "OnDemand", "engine": "sqlite", "details": {"db": path},
                                                  "is_on_demand": True}).json
    wait_for_sync(app)
    light_kind = next(f for f in admin.get(f"/api/database/{light['id']}/metadata").json["tables"][0]["fields"]
                      if f["name"] == "kind")
    assert light_kind["fingerprint"] is None and light_kind["has_field_values"] == "search"
    demand_kind = next(f for f in admin.get(f"/api/database/{on_demand['id']}/metadata").json["tables"][0]["fields"]
                       if f["name"] == "kind")
    assert demand_kind["has_field_values"] == "list"
    assert admin.get(f"/api/field/{demand_kind['id']}/values").json["values"] == []
    assert admin.post(f"/api/field/{demand_kind['id']}/rescan_values").json == {"status": "success"}
    assert admin.get(f"/api/field/{demand_kind['id']}/values").json["values"] == [["a"]]
    # editable views need data-model rights, details views need details rights
    assert user.get(f"/api/database/{light['id']}?include_editable_data_model=true").status_code == 403
    assert user.get(f"/api/database/{light['id']}?exclude_uneditable_details=true").status_code == 403
    assert user.get(f"/api/database/{light['id']}/metadata?include_editable_data_model=true").status_code == 403
    table_id = admin.get(f"/api/database/{light['id']}/metadata").json["tables"][0]["id"]
    assert user.get(f"/api/table/{table_id}?include_editable_data_model=true").status_code == 403
    assert user.get(f"/api/table/{table_id}").status_code == 200
    assert admin.get(f"/api/database/{light['id']}?include_editable_data_model=true").status_code == 200
    assert user.get("/api/database?include_editable_data_model=true").json["total"] == 0
    assert admin.get("/api/database?include_editable_data_model=true").json["total"] == 2


def test_missing_sample_file_is_generated_again(app, admin, sample_database_file):
    db_id = add_sample(app, admin)
    sample_database_file.unlink()
    assert admin.post(f"/api/database/{db_id}/sync_schema").json == {"status": "ok"}
    wait_for_sync(app)
    assert sample_database_file.exists()
    assert admin.get(f"/api/database/{db_id}").json["initial_sync_status"] == "complete"


def test_tables_fields_hide_sensitive_and_schedules(app, admin, sample_database_file):
    db_id = add_sample(app, admin)
    people = next(t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"] if t["name"] == "PEOPLE")
    password = next(f for f in people["fields"] if f["name"] == "PASSWORD")
    admin.put(f"/api/field/{password['id']}", json={"visibility_type": "sensitive"})
    nested = admin.get(f"/api/database/{db_id}?include=tables.fields").json
    names = [f["name"] for t in nested["tables"] if t["name"] == "PEOPLE" for f in t["fields"]]
    assert "PASSWORD" not in names and "EMAIL" in names
    assert "PASSWORD" not in [f["name"] for f in next(
        t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"] if t["name"] == "PEOPLE")["fields"]]
    assert "PASSWORD" in [f["name"] for f in next(
        t for t in admin.get(f"/api/database/{db_id}/metadata?include_hidden=true").json["tables"]
        if t["name"] == "PEOPLE")["fields"]]
    weekly = {"schedule_type": "weekly", "schedule_day": "mon", "schedule_hour": 2, "schedule_minute": 0}
    changed = admin.put(f"/api/database/{db_id}", json={"schedules": {"cache_field_values": weekly}})
    assert changed.status_code == 200
    assert changed.json["cache_field_values_schedule"] == "0 0 2 ? * 2 *"
    assert changed.json["schedules"]["cache_field_values"]["schedule_day"] == "mon"
    bad = admin.put(f"/api/database/{db_id}", json={"schedules": {"metadata_sync": {"schedule_type": "yearly"}}})
    assert bad.status_code == 400


def test_relative_sqlite_path_is_kept_as_given(app, admin, monkeypatch):
    # Clients such as dbt-metabase find a database again by the details they registered: a relative path
    # must come back exactly as sent, while the path checked (and opened) is the resolved one.
    sqlite_file(app, "rel.db", "CREATE TABLE t (id INTEGER PRIMARY KEY, label TEXT); INSERT INTO t VALUES (1, 'a')")
    monkeypatch.chdir(app.config["TESSERA_DATA_DIR"])
    created = admin.post("/api/database", json={"name": "Rel", "engine": "sqlite", "details": {"db": "files/rel.db"}})
    assert created.status_code == 200, created.json
    assert created.json["details"] == {"db": "files/rel.db"}
    wait_for_sync(app)
    db_id = created.json["id"]
    assert admin.get(f"/api/database/{db_id}").json["details"] == {"db": "files/rel.db"}
    table = next(t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"] if t["name"] == "t")
    rows = admin.post("/api/dataset", json={"database": db_id, "type": "query", "query": {"source-table": table["id"]}})
    assert rows.json["data"]["rows"] == [[1, "a"]]
    renamed = admin.put(f"/api/database/{db_id}", json={"name": "Rel 2", "details": {"db": "./files/rel.db"}})
    assert renamed.status_code == 200 and renamed.json["details"] == {"db": "./files/rel.db"}
    for escaping in ("../../etc/passwd", "files/../../../../../../../etc/passwd", "../tessera.db"):
        refused = admin.post("/api/database", json={"name": "x", "engine": "sqlite", "details": {"db": escaping}})
        assert refused.status_code == 400 and "db" in refused.json["errors"], escaping


def test_update_merges_settings(any_app):
    """PUT settings is a patch of the stored map, as in Metabase: keys not sent are kept, a key sent as
    null is removed, and `settings: null` changes nothing (on both app-DB backends: the row is locked)."""
    app, admin = any_app, setup_admin(any_app)
    path = sqlite_file(app, "merge.db", "CREATE TABLE t (id INTEGER PRIMARY KEY)")
    db_id = admin.post("/api/database", json={"name": "Merge", "engine": "sqlite", "details": {"db": path},
                                               "settings": {"unaggregated-query-row-limit": 500}}).json["id"]
    wait_for_sync(app)

    def put(settings):
        response = admin.put(f"/api/database/{db_id}", json={"settings": settings})
        assert response.status_code == 200, response.json
        return admin.get(f"/api/database/{db_id}").json["settings"]

    assert put({"database-enable-actions": True}) == {"unaggregated-query-row-limit": 500,
                                                      "database-enable-actions": True}
    assert put({"unaggregated-query-row-limit": 20}) == {"unaggregated-query-row-limit": 20,
                                                         "database-enable-actions": True}
    assert put({"unaggregated-query-row-limit": None}) == {"database-enable-actions": True}
    assert put(None) == {"database-enable-actions": True}
    assert put({}) == {"database-enable-actions": True}
