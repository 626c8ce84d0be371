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
