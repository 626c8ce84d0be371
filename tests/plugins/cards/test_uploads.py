"""POST /api/card/from-csv: typed table in the uploads database, a model on it, nothing left behind
by a bad file."""
import io
import sqlite3
from pathlib import Path

from core.testing import wait_for_sync

from .fixtures import mbql_query

CSV = b"Name,Age,Score,Joined,Active,Seen At\nAda,36,1.5,2020-01-02,true,2020-01-02T03:04:05\n" \
      b"Alan,41,,2021-05-06,false,2021-05-06 07:08:09\nGrace,85,3,2019-12-31,yes,\n"


def upload(client, data, filename="people list.csv", **form):
    response = client.post("/api/card/from-csv", data={"file": (io.BytesIO(data), filename), **form},
                           content_type="multipart/form-data")
    wait_for_sync(client.app)  # the upload starts a background sync of the uploads database
    return response


def uploads_file(app_config) -> Path:
    return Path(app_config["TESSERA_DATA_DIR"]) / "files" / "uploads.sqlite"


def test_csv_becomes_a_typed_table_and_a_model(app_config, user):
    collection = user.user["personal_collection_id"]
    response = upload(user, CSV, collection_id=str(collection))
    assert response.status_code == 200, response.json
    model = user.get(f"/api/card/{response.json}").json
    assert model["type"] == "model" and model["name"] == "People List" and model["collection_id"] == collection
    assert model["based_on_upload"] == model["table_id"]
    names = [c["name"] for c in model["result_metadata"]]
    assert names == ["_mb_row_id", "name", "age", "score", "joined", "active", "seen_at"]
    types = {c["name"]: c["base_type"] for c in model["result_metadata"]}
    assert types["age"] == "type/BigInteger" and types["score"] == "type/Float" and types["name"] == "type/Text"
    assert types["joined"] == "type/Date" and types["active"] == "type/Boolean" and types["seen_at"] == "type/DateTime"
    ran = user.post(f"/api/card/{model['id']}/query").json
    assert ran["data"]["rows"][1][1:4] == ["Alan", 41, None]
    average = user.post("/api/dataset", json=mbql_query(model["database_id"], **{
        "source-table": f"card__{model['id']}", "aggregation": [["avg", ["field", "age", {"base-type": "type/BigInteger"}]]]}))
    assert average.json["data"]["rows"] == [[54.0]]
    table = user.get(f"/api/table/card__{model['id']}/query_metadata").json
    assert [f["name"] for f in table["fields"]][1] == "name"
    synced = user.get(f"/api/table/{model['table_id']}/query_metadata").json
    fields = {f["name"]: f for f in synced["fields"]}
    assert fields["name"]["fingerprint"] is not None and fields["_mb_row_id"]["semantic_type"] == "type/PK"
    assert synced["is_upload"] is True
    con = sqlite3.connect(uploads_file(app_config))
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert len(tables) == 1 and tables[0].startswith("upload_people_list_")
    assert con.execute(f'SELECT count(*) FROM "{tables[0]}"').fetchone() == (3,)
    second = upload(user, b"a;b\n1;x\n", filename="semi.csv")
    assert second.status_code == 200
    assert user.get(f"/api/card/{second.json}").json["database_id"] == model["database_id"]  # same Uploads database


def test_bad_csv_is_a_clear_400_and_leaves_nothing(app, app_config, user):
    for data, message in ((b"", "empty"), (b"a,b\n1,2,3\n", "Row 2"), (b"\xff\xfe\x00bad", "UTF-8")):
        response = upload(user, data)
        assert response.status_code == 400 and message in response.json, response.json
    assert user.post("/api/card/from-csv", data={}, content_type="multipart/form-data").status_code == 400
    assert upload(user, CSV, collection_id="999").status_code == 404
    from core.appdb.models import Card, Table

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        assert session.query(Card).count() == 0 and session.query(Table).count() == 0
    path = uploads_file(app_config)
    if path.exists():
        con = sqlite3.connect(path)
        assert con.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone() == (0,)


def test_uploads_go_where_the_setting_says(app, admin, user):
    from sqlalchemy import create_engine, text

    from core.appdb.models import Database
    from core.driver.crypto import encrypt_details
    from core.testing import postgres_data_source

    with postgres_data_source("tessera_upl") as source:
        engine = create_engine(source.admin_url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text(f'GRANT CREATE ON DATABASE "{source.details["dbname"]}" TO "{source.details["user"]}"'))
        with app.app_context(), app.extensions["tessera"].db.session() as session:
            database = Database(name="PG uploads", engine="postgres", details=encrypt_details(source.details),
                                uploads_enabled=True)
            session.add(database)
            session.commit()
            db_id = database.id
        assert admin.put("/api/setting/uploads-settings",
                         json={"value": {"db_id": db_id, "schema_name": "public", "table_prefix": "up_"}}).status_code in (200, 204)
        response = upload(user, CSV)
        assert response.status_code == 200, response.json
        model = user.get(f"/api/card/{response.json}").json
        assert model["database_id"] == db_id
        with engine.connect() as conn:
            names = [r[0] for r in conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))]
        assert len(names) == 1 and names[0].startswith("up_people_list_")
        assert user.post(f"/api/card/{model['id']}/query").json["row_count"] == 3
        from core.driver.connections import dispose

        with app.app_context():
            dispose(db_id)
        engine.dispose()
