"""core.sync.schema: what a sync stores, what it keeps when things vanish or fail, and the value limits."""
import sqlite3

from core.sync import schema as sync
from core.testing import sqlite_file, wait_for_sync


def register(app, admin, name, script):
    path = sqlite_file(app, name, script)
    database = admin.post("/api/database", json={"name": name, "engine": "sqlite", "details": {"db": path}}).json
    wait_for_sync(app)
    return database["id"], path


def metadata(admin, db_id, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return {t["name"]: t for t in admin.get(f"/api/database/{db_id}/metadata?{query}").json["tables"]}


def test_vanished_tables_and_fields_become_inactive(app, admin):
    db_id, path = register(app, admin, "shrink.db", "CREATE TABLE a (id INTEGER PRIMARY KEY, x TEXT, y TEXT);"
                                                    "CREATE TABLE b (id INTEGER PRIMARY KEY)")
    before = metadata(admin, db_id)
    conn = sqlite3.connect(path)
    conn.executescript("DROP TABLE b; ALTER TABLE a DROP COLUMN y; CREATE TABLE c (id INTEGER)")
    conn.close()
    admin.post(f"/api/database/{db_id}/sync_schema")
    wait_for_sync(app)
    after = metadata(admin, db_id)
    assert after["b"]["active"] is False and after["b"]["id"] == before["b"]["id"]
    fields = {f["name"]: f for f in after["a"]["fields"]}
    assert fields["y"]["active"] is False and fields["x"]["active"] is True
    assert fields["x"]["id"] == next(f["id"] for f in before["a"]["fields"] if f["name"] == "x")
    assert after["c"]["active"] is True
    trimmed = metadata(admin, db_id, remove_inactive="true")
    assert "b" not in trimmed and [f["name"] for f in trimmed["a"]["fields"]] == ["id", "x"]
    assert "b" not in [t["name"] for t in admin.get("/api/table").json]
    # the table comes back: the same row becomes active again
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE b (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    admin.post(f"/api/database/{db_id}/sync_schema")
    wait_for_sync(app)
    assert metadata(admin, db_id)["b"] == {**metadata(admin, db_id)["b"], "id": before["b"]["id"], "active": True}


def test_failed_sync_keeps_metadata_and_records_error(app, admin):
    db_id, path = register(app, admin, "fragile.db", "CREATE TABLE t (id INTEGER PRIMARY KEY, label TEXT)")
    before = metadata(admin, db_id)
    with open(path, "wb") as broken:
        broken.write(b"this is not a database" * 100)
    admin.post(f"/api/database/{db_id}/sync_schema")
    wait_for_sync(app)
    assert metadata(admin, db_id) == before
    state = app.extensions["tessera"]
    from core.appdb.models import Database

    with state.db.session() as session:
        row = session.get(Database, db_id)
        assert row.sync_error and row.initial_sync_status == "complete"


def test_failure_while_writing_rolls_back(app, admin, monkeypatch):
    db_id, path = register(app, admin, "grow.db", "CREATE TABLE t (id INTEGER PRIMARY KEY)")
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE u (id INTEGER PRIMARY KEY, t_id INTEGER REFERENCES t(id))")
    conn.close()
    real = sync.write_state

    def half_then_fail(session, database_id, tables, **kwargs):
        real(session, database_id, tables, **kwargs)
        raise RuntimeError("disk full")

    monkeypatch.setattr(sync, "write_state", half_then_fail)
    state = app.extensions["tessera"]
    with app.app_context():
        assert sync.sync_database(state, db_id) is False
    assert sorted(metadata(admin, db_id)) == ["t"]


def test_first_sync_failure_is_aborted(app, admin, monkeypatch):
    path = sqlite_file(app, "later.db", "CREATE TABLE t (id INTEGER)")
    monkeypatch.setattr(sync, "merge_metadata", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
    created = admin.post("/api/database", json={"name": "Later", "engine": "sqlite", "details": {"db": path}}).json
    wait_for_sync(app)
    assert admin.get(f"/api/database/{created['id']}").json["initial_sync_status"] == "aborted"


def test_value_limits(app, admin):
    long_value = "x" * 150
    rows = ",".join(f"('v{i % 1200}')" for i in range(1300))
    db_id, _ = register(app, admin, "values.db", f"""
        CREATE TABLE t (many TEXT, few TEXT, longish TEXT);
        INSERT INTO t (many) VALUES {rows};
        INSERT INTO t (few, longish) VALUES ('a', 'short'), ('b', '{long_value}'), ('a', 'short');
    """)
    fields = {f["name"]: f for f in metadata(admin, db_id)["t"]["fields"]}
    assert fields["many"]["has_field_values"] == "search"
    assert admin.get(f"/api/field/{fields['few']['id']}/values").json["values"] == [["a"], ["b"]]
    longish = admin.get(f"/api/field/{fields['longish']['id']}/values").json
    assert longish == {"field_id": fields["longish"]["id"], "values": [["short"]], "has_more_values": True}


def test_after_sync_hook_and_foreground(app_config, tmp_path, monkeypatch):
    from core.assembly.app import create_app
    from core.testing import setup_admin
    from tests.support import write_plugin

    record = tmp_path / "synced.txt"
    name = write_plugin(tmp_path, monkeypatch, f'''
        from core import hookimpl

        @hookimpl
        def after_sync(database):
            with open({str(record)!r}, "a") as out:
                out.write(f"{{database.id}}\\n")
    ''')
    application = create_app({**app_config, "TESSERA_SYNC_IN_FOREGROUND": True, "TESSERA_PLUGINS_EXTRA": name})
    admin = setup_admin(application)
    path = sqlite_file(application, "fg.db", "CREATE TABLE t (id INTEGER)")
    created = admin.post("/api/database", json={"name": "FG", "engine": "sqlite", "details": {"db": path}}).json
    # in the foreground the sync has finished when the response arrives
    assert admin.get(f"/api/database/{created['id']}").json["initial_sync_status"] == "complete"
    assert record.read_text().split() == [str(created["id"])]
    application.extensions["tessera"].db.dispose()


def test_sync_on_each_app_db_backend(any_app):
    """The bulk writes of a sync work on the PostgreSQL app DB as on SQLite, and a re-sync updates in place."""
    from core.testing import setup_admin

    admin = setup_admin(any_app)
    path = sqlite_file(any_app, "pg.db", """
        CREATE TABLE people (id INTEGER PRIMARY KEY, full_name TEXT, kind TEXT);
        CREATE TABLE pets (id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES people(id), born DATE);
        INSERT INTO people VALUES (1, 'Ann Lee', 'a'), (2, 'Bo Chan', 'b');
        INSERT INTO pets VALUES (1, 1, '2020-01-01');
    """)
    created = admin.post("/api/database", json={"name": "Pets", "engine": "sqlite", "details": {"db": path}}).json
    wait_for_sync(any_app)
    tables = metadata(admin, created["id"])
    pets = {f["name"]: f for f in tables["pets"]["fields"]}
    people = {f["name"]: f for f in tables["people"]["fields"]}
    assert pets["owner_id"]["fk_target_field_id"] == people["id"]["id"]
    assert people["full_name"]["semantic_type"] == "type/Name"
    assert pets["born"]["fingerprint"]["type"]["type/DateTime"]["earliest"] == "2020-01-01"
    assert admin.get(f"/api/field/{people['kind']['id']}/values").json["values"] == [["a"], ["b"]]
    admin.post(f"/api/database/{created['id']}/sync_schema")
    wait_for_sync(any_app)
    again = metadata(admin, created["id"])
    assert {f["id"] for f in again["pets"]["fields"]} == {f["id"] for f in tables["pets"]["fields"]}
    assert admin.get(f"/api/field/{people['kind']['id']}/values").json["values"] == [["a"], ["b"]]


def test_resync_keeps_hand_made_keys(app, admin):
    db_id, _ = register(app, admin, "keys.db", "CREATE TABLE a (code TEXT, b_code TEXT); CREATE TABLE b (code TEXT)")
    tables = metadata(admin, db_id)
    a = {f["name"]: f for f in tables["a"]["fields"]}
    b = {f["name"]: f for f in tables["b"]["fields"]}
    admin.put(f"/api/field/{b['code']['id']}", json={"semantic_type": "type/PK"})
    admin.put(f"/api/field/{a['b_code']['id']}", json={"semantic_type": "type/FK", "fk_target_field_id": b["code"]["id"]})
    admin.post(f"/api/database/{db_id}/sync_schema")
    wait_for_sync(app)
    tables = metadata(admin, db_id)
    assert next(f for f in tables["b"]["fields"] if f["name"] == "code")["semantic_type"] == "type/PK"
    linked = next(f for f in tables["a"]["fields"] if f["name"] == "b_code")
    assert (linked["semantic_type"], linked["fk_target_field_id"]) == ("type/FK", b["code"]["id"])
