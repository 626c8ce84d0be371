"""Model persistence: per database on and off, per model persist/refresh/unpersist; queries read the
persisted table while it is fresh. SQLite (table prefix) and PostgreSQL (cache schema)."""
import sqlite3
from pathlib import Path

from sqlalchemy import create_engine, text

from core.testing import postgres_data_source

from .fixtures import card_body, mbql_query, native_query


def count_of(client, db_id, card_id):
    data = client.post("/api/dataset", json=mbql_query(db_id, **{"source-table": f"card__{card_id}",
                                                                 "aggregation": [["count"]]})).json
    return data["data"]["rows"][0][0]


def native_count(client, db_id, card_id):
    name = f"#{card_id}-m"
    query = native_query(db_id, f"SELECT count(*) AS n FROM {{{{{name}}}}} x",
                         **{name: {"id": name, "name": name, "display-name": name, "type": "card", "card-id": card_id}})
    response = client.post("/api/dataset", json=query)
    assert response.status_code == 202, response.json
    return response.json["data"]["rows"][0][0]


def test_sqlite_model_persistence(app, app_config, admin, user, warehouse):
    db = warehouse["db"]
    model = user.post("/api/card", json=card_body("People", native_query(db, "SELECT id, first_name FROM people"),
                                                  type="model")).json
    refused = user.post(f"/api/card/{model['id']}/persist")
    assert refused.status_code == 400 and "not enabled" in refused.json
    assert user.post(f"/api/database/{db}/persist").status_code == 403
    assert admin.post(f"/api/database/{db}/persist").status_code == 204
    assert admin.post(f"/api/database/{db}/persist").status_code == 204  # already on
    question = user.post("/api/card", json=card_body("Q", native_query(db, "SELECT 1 AS x"))).json
    assert user.post(f"/api/card/{question['id']}/persist").status_code == 400
    assert user.post(f"/api/card/{model['id']}/refresh").status_code == 400  # not persisted yet

    assert user.post(f"/api/card/{model['id']}/persist").status_code == 204
    card = user.get(f"/api/card/{model['id']}").json
    assert card["persisted"] is True and card["persisted_info"]["state"] == "persisted"
    path = Path(app_config["TESSERA_DATA_DIR"]) / "files" / "warehouse.sqlite"
    con = sqlite3.connect(path)
    table = f"tessera_cache_model_{model['id']}"
    assert con.execute(f'SELECT count(*) FROM "{table}"').fetchone() == (3,)
    # New rows in the source: the persisted copy answers until it is refreshed.
    con.execute("INSERT INTO people VALUES (4, 'Edsger', 'Dijkstra', 72)")
    con.commit()
    assert count_of(user, db, model["id"]) == 3
    assert native_count(user, db, model["id"]) == 3
    assert user.post(f"/api/card/{model['id']}/refresh").status_code == 204
    assert count_of(user, db, model["id"]) == 4
    # Changing the model's query makes the copy stale: queries go back to the live query.
    user.put(f"/api/card/{model['id']}", json={"dataset_query": native_query(db, "SELECT id FROM people WHERE id < 3")})
    assert count_of(user, db, model["id"]) == 2
    assert user.get(f"/api/card/{model['id']}").json["persisted"] is False
    assert user.post(f"/api/card/{model['id']}/persist").status_code == 204
    assert user.post(f"/api/card/{model['id']}/unpersist").status_code == 204
    assert con.execute("SELECT name FROM sqlite_master WHERE name = ?", (table,)).fetchone() is None
    assert user.get(f"/api/card/{model['id']}").json["persisted"] is False
    assert count_of(user, db, model["id"]) == 2
    assert user.post(f"/api/card/{model['id']}/persist").status_code == 204
    assert user.delete(f"/api/card/{model['id']}").status_code == 204  # archiving drops the table
    assert con.execute("SELECT name FROM sqlite_master WHERE name = ?", (table,)).fetchone() is None
    assert user.put(f"/api/card/{model['id']}", json={"archived": False}).status_code == 200
    assert user.post(f"/api/card/{model['id']}/persist").status_code == 204
    assert admin.post(f"/api/database/{db}/unpersist").status_code == 204
    assert admin.post(f"/api/database/{db}/unpersist").status_code == 204
    assert con.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'tessera_cache_%'").fetchone() == (0,)
    con.close()


def test_postgres_model_persistence(app, admin, user):
    from core.appdb.models import Database
    from core.driver.crypto import encrypt_details

    with postgres_data_source("tessera_cards") as source:
        engine = create_engine(source.admin_url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text("CREATE TABLE items (id integer primary key, label text, price numeric(6,2), "
                              "at timestamp)"))
            conn.execute(text("INSERT INTO items VALUES (1, 'a', 1.50, '2024-01-02 03:04:05'), (2, 'b', 2.25, NULL)"))
            conn.execute(text(f'ALTER TABLE items OWNER TO "{source.details["user"]}"'))
        state = app.extensions["tessera"]
        with app.app_context(), state.db.session() as session:
            database = Database(name="PG", engine="postgres", details=encrypt_details(source.details),
                                initial_sync_status="complete")
            session.add(database)
            session.commit()
            db = database.id
        model = user.post("/api/card", json=card_body("Items", native_query(db, "SELECT id, label, price, at FROM items"),
                                                      type="model")).json
        assert [c["name"] for c in model["result_metadata"]] == ["id", "label", "price", "at"]
        denied = admin.post(f"/api/database/{db}/persist")
        assert denied.status_code == 400 and "cannot create" in denied.json  # no CREATE on the database yet
        with engine.connect() as conn:
            conn.execute(text(f'GRANT CREATE ON DATABASE "{source.details["dbname"]}" TO "{source.details["user"]}"'))
        assert admin.post(f"/api/database/{db}/persist").status_code == 204
        assert user.post(f"/api/card/{model['id']}/persist").status_code == 204, user.post(f"/api/card/{model['id']}/persist").json
        with engine.connect() as conn:
            assert conn.execute(text(f'SELECT count(*) FROM tessera_cache."model_{model["id"]}"')).scalar() == 2
            conn.execute(text("DELETE FROM items WHERE id = 2"))
        assert count_of(user, db, model["id"]) == 2
        rows = user.post("/api/dataset", json=mbql_query(db, **{"source-table": f"card__{model['id']}",
                                                               "order-by": [["asc", ["field", "id", {"base-type": "type/Integer"}]]]})).json
        assert rows["data"]["rows"][0][:3] == [1, "a", 1.5]
        assert user.post(f"/api/card/{model['id']}/unpersist").status_code == 204
        assert count_of(user, db, model["id"]) == 1
        with engine.connect() as conn:
            assert conn.execute(text("SELECT to_regclass(:t)"), {"t": f'tessera_cache.model_{model["id"]}'}).scalar() is None
        assert admin.post(f"/api/database/{db}/unpersist").status_code == 204
        from core.driver.connections import dispose

        with app.app_context():
            dispose(db)
        engine.dispose()


def test_mariadb_model_persistence(app, admin, user):
    from core.appdb.models import Database
    from core.driver.crypto import encrypt_details
    from core.testing import mariadb_data_source

    with mariadb_data_source("tessera_cards") as source:
        engine = create_engine(source.admin_url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text("CREATE TABLE items (id integer primary key, label varchar(20), price decimal(6,2))"))
            conn.execute(text("INSERT INTO items VALUES (1, 'a', 1.50), (2, 'b', 2.25)"))
        with app.app_context(), app.extensions["tessera"].db.session() as session:
            database = Database(name="Maria", engine="mysql", details=encrypt_details(source.details),
                                initial_sync_status="complete")
            session.add(database)
            session.commit()
            db = database.id
        model = user.post("/api/card", json=card_body("Items", native_query(db, "SELECT id, label, price FROM items"),
                                                      type="model")).json
        enabled = admin.post(f"/api/database/{db}/persist")
        assert enabled.status_code == 204, enabled.json
        persisted = user.post(f"/api/card/{model['id']}/persist")
        assert persisted.status_code == 204, persisted.json
        with engine.connect() as conn:
            assert conn.execute(text(f"SELECT count(*) FROM tessera_cache_model_{model['id']}")).scalar() == 2
            conn.execute(text("DELETE FROM items WHERE id = 2"))
        assert count_of(user, db, model["id"]) == 2
        # The session went back to read-only after the write: a plain query still cannot write.
        sneaky = user.post("/api/dataset", json=native_query(db, "DELETE FROM items"))
        assert sneaky.status_code == 400
        assert user.post(f"/api/card/{model['id']}/unpersist").status_code == 204
        assert count_of(user, db, model["id"]) == 1
        assert admin.post(f"/api/database/{db}/unpersist").status_code == 204
        from core.driver.connections import dispose

        with app.app_context():
            dispose(db)
        engine.dispose()
