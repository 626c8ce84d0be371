"""The app DB on SQLite and PostgreSQL: migrations match the models, and the core flows work on both."""
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import select

from core.appdb import search_index
from core.appdb.models import Base, PermissionsGroup
from core.testing import ApiClient, setup_admin


def test_migrations_match_models(any_app):
    engine = any_app.extensions["tessera"].db.engine
    with engine.connect() as connection:
        # Each plugin's migrations keep their own alembic_version_<name> table, which no model describes,
        # nor the search index's engine objects (FTS5 tables, the trigram index).
        context = MigrationContext.configure(connection, opts={"include_name": lambda name, kind, _: not (
            (kind == "table" and name.startswith("alembic_version")) or (name or "").startswith(search_index.ENGINE_OBJECTS))})
        diff = compare_metadata(context, Base.metadata)
    assert diff == []


def test_seeded_groups_and_new_group_ids(any_app):
    with any_app.app_context(), any_app.extensions["tessera"].db.session() as session:
        groups = dict(session.execute(select(PermissionsGroup.id, PermissionsGroup.name)).all())
        assert groups[1] == "All Users" and groups[2] == "Administrators"
        group = PermissionsGroup(name="Analysts")
        session.add(group)
        session.flush()
        assert group.id > 2


def test_setup_login_and_settings_on_each_backend(any_app):
    admin = setup_admin(any_app)
    me = admin.get("/api/user/current").json
    assert me["is_superuser"] is True and me["group_ids"] == [1, 2]
    assert admin.put("/api/setting/site-name", json={"value": "Backend Co"}).status_code == 204
    assert ApiClient(any_app).get("/api/session/properties").json["site-name"] == "Backend Co"
    login = ApiClient(any_app).post("/api/session", json={"username": "admin@example.com",
                                                           "password": "Sup3r-Secret-Admin"})
    assert login.status_code == 200
    # Timestamps come back timezone-aware (UTC) on every backend.
    assert me["date_joined"].endswith("Z")


def test_app_db_file_is_kept_from_data_sources(tmp_path):
    """A file-backed app DB anywhere (not only TESSERA_DATA_DIR/tessera.db) cannot be opened as a data
    source; a server app DB adds no file; an aware timestamp is stored as the backend keeps it."""
    import datetime as dt

    from sqlalchemy.dialects import postgresql, sqlite

    from core.appdb.models.base import UTCDateTime
    from core.driver.sources import ConnectionPolicy

    elsewhere = tmp_path / "elsewhere" / "app.db"
    data_dir = tmp_path / "data"
    on_file = ConnectionPolicy.from_config({"TESSERA_DATA_DIR": str(data_dir), "TESSERA_DB_URL": f"sqlite:///{elsewhere}"})
    on_server = ConnectionPolicy.from_config({"TESSERA_DATA_DIR": str(data_dir),
                                              "TESSERA_DB_URL": "postgresql+psycopg://tessera@db.example/tessera"})
    assert elsewhere in on_file.forbidden_files
    assert set(on_file.forbidden_files) - set(on_server.forbidden_files) == {elsewhere}

    noon_in_paris = dt.datetime(2024, 5, 1, 14, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert UTCDateTime().process_bind_param(noon_in_paris, sqlite.dialect()) == dt.datetime(2024, 5, 1, 12, 0)
    assert UTCDateTime().process_bind_param(noon_in_paris, postgresql.dialect()) == \
        dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc)


def test_sqlite_app_db_keeps_a_connection_for_every_request_thread(app):
    """Eight threads (gunicorn's threads per worker) holding app-DB connections at once, round after
    round, reuse them: a pool smaller than that closes the extra ones after each round, and a reopened
    SQLite connection parses the whole schema again on its first statement."""
    import threading

    from sqlalchemy import event, text

    engine = app.extensions["tessera"].db.engine
    opened = []
    event.listen(engine, "connect", lambda *_: opened.append(1))
    barrier = threading.Barrier(8)

    def rounds():
        for _ in range(5):
            with engine.connect() as conn:
                assert conn.execute(text("SELECT count(*) FROM core_user")).scalar() >= 0
                barrier.wait()  # all eight checked out together
            barrier.wait()

    threads = [threading.Thread(target=rounds) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(opened) <= 8
