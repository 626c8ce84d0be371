"""The lockdowns through /api/database (threat rows 2, 6 and 23): what a client sees."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.testing import POSTGRES_HOST, POSTGRES_PORT, mariadb_data_source, require_postgres

SUPERUSER = {"host": POSTGRES_HOST, "port": POSTGRES_PORT, "dbname": "postgres", "user": "postgres"}


@pytest.mark.parametrize("key", ["connection-uri", "subprotocol", "classname", "options", "passfile", "service",
                                 "sslkey", "init_command", "read_default_file", "local_infile"])
@pytest.mark.security_row(2)
def test_forbidden_detail_keys_are_400_naming_the_key(admin, key):
    response = admin.post("/api/database", json={"name": "x", "engine": "postgres",
                                                 "details": {**SUPERUSER, key: "x"}})
    assert response.status_code == 400
    assert key in response.json["errors"]


@pytest.mark.security_row(6)
def test_postgres_superuser_registration_is_refused(admin):
    require_postgres()
    response = admin.post("/api/database", json={"name": "pg", "engine": "postgres", "details": SUPERUSER})
    assert response.status_code == 400
    assert "superuser" in response.json["message"]


@pytest.mark.security_row(23)
def test_password_masked_encrypted_and_kept_through_a_masked_put(app, admin):
    with mariadb_data_source() as source:
        secret = source.details["password"]
        created = admin.post("/api/database", json={"name": "maria", "engine": "mysql", "details": source.details})
        assert created.status_code == 200, created.json
        db_id = created.json["id"]
        shown = admin.get(f"/api/database/{db_id}").json["details"]
        assert shown["password"] == "**MetabasePass**" and shown["user"] == source.details["user"]
        app_db = Path(app.config["TESSERA_DB_URL"].split("///", 1)[1])
        for path in (app_db, Path(f"{app_db}-wal")):
            if path.exists():
                assert secret.encode() not in path.read_bytes(), path
        updated = admin.put(f"/api/database/{db_id}", json={"details": shown})
        assert updated.status_code == 200, updated.json
        assert updated.json["details"]["password"] == "**MetabasePass**"
        # the stored secret still works: a query runs with it
        result = admin.post("/api/dataset", json={"database": db_id, "type": "native",
                                                  "native": {"query": "SELECT 41 + 1 AS answer"}})
        assert result.status_code in (200, 202), result.json
        assert result.json["data"]["rows"] == [[42]]
        admin.delete(f"/api/database/{db_id}")


@pytest.mark.security_row(3)
@pytest.mark.parametrize("path", ["/etc/passwd", "/dev/zero", "files/../../../../../../etc/hostname",
                                  "files/missing.db"])
def test_file_paths_outside_the_rules_are_400_through_the_api(app, admin, path):
    data_dir = Path(app.config["TESSERA_DATA_DIR"])
    (data_dir / "files").mkdir(exist_ok=True)
    before = sorted(p.name for p in data_dir.rglob("*"))
    raw = str(data_dir / path) if path.startswith("files") else path
    response = admin.post("/api/database", json={"name": "x", "engine": "sqlite", "details": {"db": raw}})
    assert response.status_code == 400, response.json
    assert "db" in response.json["errors"]
    assert sorted(p.name for p in data_dir.rglob("*")) == before
    assert admin.get("/api/database").json["data"] == []


@pytest.mark.security_row(9)
def test_the_app_database_cannot_be_registered_through_the_api(app_config):
    """Even when the allowed directory holds the app DB, its file (or a link to it) is refused."""
    from core.assembly.app import create_app
    from core.testing import setup_admin

    data_dir = Path(app_config["TESSERA_DATA_DIR"])
    app = create_app({**app_config, "TESSERA_FILE_DB_DIRS": str(data_dir)})
    admin = setup_admin(app)
    (data_dir / "alias.db").symlink_to(data_dir / "tessera.db")
    for path in (data_dir / "tessera.db", data_dir / "alias.db"):
        response = admin.post("/api/database", json={"name": "me", "engine": "sqlite", "details": {"db": str(path)}})
        assert response.status_code == 400, response.json
        assert "application database" in response.json["message"]
    assert admin.get("/api/database").json["data"] == []
    app.extensions["tessera"].db.dispose()
