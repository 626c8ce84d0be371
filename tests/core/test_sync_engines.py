"""Sync against real PostgreSQL and MariaDB databases: schemas, FKs across schemas, masked
passwords, values and fingerprints read through each driver."""
from sqlalchemy import create_engine, text

from core.testing import mariadb_data_source, postgres_data_source, wait_for_sync


def fill(url: str, statements: list[str]) -> None:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        for statement in statements:
            conn.execute(text(statement))
    engine.dispose()


def test_postgres_sync(app, admin):
    with postgres_data_source() as source:
        fill(source.admin_url, [
            "CREATE SCHEMA sales",
            f'GRANT USAGE ON SCHEMA sales TO "{source.details["user"]}"',
            "CREATE TABLE public.customers (id SERIAL PRIMARY KEY, email TEXT, city TEXT, joined_at TIMESTAMPTZ)",
            "CREATE TABLE sales.orders (id BIGSERIAL PRIMARY KEY, customer_id INT REFERENCES public.customers(id),"
            " total NUMERIC(10,2), status TEXT)",
            f'GRANT SELECT ON ALL TABLES IN SCHEMA sales TO "{source.details["user"]}"',
            "INSERT INTO public.customers (email, city, joined_at) VALUES ('a@x.io', 'Oslo', now()), ('b@x.io', 'Rome', now())",
            "INSERT INTO sales.orders (customer_id, total, status) VALUES (1, 10.5, 'paid'), (2, 3, 'open'), (1, 7, 'paid')",
        ])
        created = admin.post("/api/database", json={"name": "PG", "engine": "postgres", "details": source.details})
        assert created.status_code == 200, created.json
        db_id = created.json["id"]
        wait_for_sync(app)
        assert admin.get(f"/api/database/{db_id}").json["initial_sync_status"] == "complete"
        assert admin.get(f"/api/database/{db_id}/schemas").json == ["public", "sales"]
        assert "sales" in admin.get(f"/api/database/{db_id}/syncable_schemas").json
        tables = {(t["schema"], t["name"]): t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]}
        customers, orders = tables[("public", "customers")], tables[("sales", "orders")]
        order_fields = {f["name"]: f for f in orders["fields"]}
        customer_fields = {f["name"]: f for f in customers["fields"]}
        assert order_fields["customer_id"]["fk_target_field_id"] == customer_fields["id"]["id"]
        assert order_fields["id"]["base_type"] == "type/BigInteger" and order_fields["id"]["semantic_type"] == "type/PK"
        assert customer_fields["joined_at"]["semantic_type"] == "type/JoinTimestamp"
        status = order_fields["status"]
        assert admin.get(f"/api/field/{status['id']}/values").json["values"] == [["open"], ["paid"]]
        assert admin.get(f"/api/field/{status['id']}/summary").json == [["count", 3], ["distincts", 2]]
        sales = admin.get(f"/api/database/{db_id}/schema/sales").json
        assert [t["name"] for t in sales] == ["orders"]
        assert admin.delete(f"/api/database/{db_id}").status_code == 204


def test_mariadb_sync_masks_password(app, admin):
    with mariadb_data_source() as source:
        fill(source.admin_url, [
            "CREATE TABLE vendors (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(50))",
            "CREATE TABLE products (id INT PRIMARY KEY AUTO_INCREMENT, vendor_id INT, category VARCHAR(20),"
            " price DOUBLE, FOREIGN KEY (vendor_id) REFERENCES vendors(id))",
            "INSERT INTO vendors (name) VALUES ('Acme'), ('Globex')",
            "INSERT INTO products (vendor_id, category, price) VALUES (1, 'Gizmo', 9.5), (2, 'Widget', 3.25)",
        ])
        created = admin.post("/api/database", json={"name": "Maria", "engine": "mysql", "details": source.details})
        assert created.status_code == 200, created.json
        assert created.json["details"]["password"] == "**MetabasePass**"
        db_id = created.json["id"]
        wait_for_sync(app)
        # a PUT that sends the mask back keeps the stored password
        renamed = admin.put(f"/api/database/{db_id}", json={"name": "Maria DB", "details": created.json["details"]})
        assert renamed.status_code == 200, renamed.json
        tables = {t["name"]: t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]}
        products = {f["name"]: f for f in tables["products"]["fields"]}
        vendors = {f["name"]: f for f in tables["vendors"]["fields"]}
        assert products["vendor_id"]["fk_target_field_id"] == vendors["id"]["id"]
        assert products["category"]["semantic_type"] == "type/Category"
        assert admin.get(f"/api/field/{products['category']['id']}/values").json["values"] == [["Gizmo"], ["Widget"]]
        search = admin.get(f"/api/field/{products['vendor_id']['id']}/search/{vendors['name']['id']}?value=ac").json
        assert search == [[1, "Acme"]]
        assert admin.delete(f"/api/database/{db_id}").status_code == 204
