"""What real clients do with the data model (compat/clients.md 3 and 9): dbt-metabase's export run,
repeated, and metabase-api's column lookups."""
from core.testing import sqlite_file, wait_for_sync

SCHEMA = """
CREATE TABLE stg_customers (customer_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT);
CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER, order_date DATE, status TEXT);
INSERT INTO stg_customers VALUES (1, 'Ann', 'Lee'), (2, 'Bo', 'Chan');
INSERT INTO orders VALUES (1, 1, '2024-01-01', 'placed'), (2, 2, '2024-01-02', 'shipped');
"""


def export(admin, db_id):
    """dbt-metabase `models`: sync, poll metadata with hidden tables, then PUT what differs."""
    assert admin.post(f"/api/database/{db_id}/sync_schema").json == {"status": "ok"}
    metadata = admin.get(f"/api/database/{db_id}/metadata?include_hidden=true").json
    tables = {t["name"]: t for t in metadata["tables"]}
    wanted_tables = {"stg_customers": {"visibility_type": "hidden", "description": "Staging"},
                     "orders": {"description": "One row per order", "display_name": "Orders"}}
    customers_id = next(f["id"] for f in tables["stg_customers"]["fields"] if f["name"] == "customer_id")
    wanted_fields = {("orders", "customer_id"): {"semantic_type": "type/FK", "fk_target_field_id": customers_id,
                                                 "description": "Who ordered"},
                     ("orders", "status"): {"has_field_values": "list", "semantic_type": "type/Category"}}
    puts = 0
    for name, changes in wanted_tables.items():
        table = tables[name]
        assert "db" not in table
        diff = {k: v for k, v in changes.items() if table[k] != v}
        if diff:
            assert admin.put(f"/api/table/{table['id']}", json=diff).status_code == 200
            puts += 1
        for field in table["fields"]:
            for key in ("fk_target_field_id", "semantic_type", "has_field_values", "settings",
                        "coercion_strategy", "visibility_type", "description", "display_name"):
                assert key in field
            changes = wanted_fields.get((name, field["name"]), {})
            diff = {k: v for k, v in changes.items() if field[k] != v}
            if diff:
                response = admin.put(f"/api/field/{field['id']}", json=diff)
                assert response.status_code == 200 and response.is_json
                puts += 1
    order = [f["id"] for f in sorted(tables["orders"]["fields"], key=lambda f: f["name"])]
    if [f["id"] for f in tables["orders"]["fields"]] != order:
        assert admin.put(f"/api/table/{tables['orders']['id']}/fields/order", json=order).json == {"success": True}
        puts += 1
    return puts


def test_dbt_metabase_export_is_idempotent(app, admin):
    path = sqlite_file(app, "dbt.db", SCHEMA)
    db_id = admin.post("/api/database", json={"name": "dbtmetabase", "engine": "sqlite", "details": {"db": path}}).json["id"]
    wait_for_sync(app)
    assert export(admin, db_id) > 0
    wait_for_sync(app)
    # the second run (after its sync_schema ran) finds everything as it left it, hidden table and
    # hand-set foreign key included, and changes nothing
    admin.post(f"/api/database/{db_id}/sync_schema")
    wait_for_sync(app)
    assert export(admin, db_id) == 0
    wait_for_sync(app)
    tables = {t["name"]: t for t in admin.get(f"/api/database/{db_id}/metadata?include_hidden=true").json["tables"]}
    assert tables["stg_customers"]["visibility_type"] == "hidden"
    assert [f["name"] for f in tables["orders"]["fields"]] == ["customer_id", "order_date", "order_id", "status"]
    status = next(f for f in tables["orders"]["fields"] if f["name"] == "status")
    customer = next(f for f in tables["orders"]["fields"] if f["name"] == "customer_id")
    assert customer["semantic_type"] == "type/FK" and customer["fk_target_field_id"] is not None
    assert admin.get(f"/api/field/{status['id']}/values").json["values"] == [["placed"], ["shipped"]]


def test_metabase_api_column_lookup(app, admin):
    path = sqlite_file(app, "lookup.db", SCHEMA)
    db_id = admin.post("/api/database/", json={"name": "Lookup", "engine": "sqlite", "details": {"db": path}}).json["id"]
    wait_for_sync(app)
    admin.put("/api/setting/humanization-strategy", json={"value": "none"})
    settings = {s["key"]: s["value"] for s in admin.get("/api/setting").json}
    assert settings["humanization-strategy"] == "none"
    fields = admin.get(f"/api/database/{db_id}/fields").json
    assert {(f["table_name"], f["name"]) for f in fields} >= {("orders", "status"), ("stg_customers", "first_name")}
    tables = admin.get("/api/table/").json
    orders = next(t for t in tables if t["name"] == "orders")
    assert orders["db_id"] == db_id and orders["db"]["id"] == db_id and orders["db"]["details"]["db"] == path
    names = [f["name"] for f in admin.get(f"/api/table/{orders['id']}/query_metadata").json["fields"]]
    assert names == ["order_id", "customer_id", "order_date", "status"]
