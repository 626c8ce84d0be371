"""Cards on both app-DB backends (SQLite and PostgreSQL): JSON columns, filters, revisions."""
from pathlib import Path

from core.testing import setup_admin

from .fixtures import card_body, make_warehouse, mbql_query, native_query, register_warehouse


def test_cards_on_each_app_db(any_app):
    admin = setup_admin(any_app)
    ids = register_warehouse(any_app, make_warehouse(Path(any_app.config["TESSERA_DATA_DIR"])))
    broken = admin.post("/api/card", json=card_body("Broken", native_query(ids["db"], "SELECT nope"))).json
    assert broken["result_metadata"] is None
    model = admin.post("/api/card", json=card_body("Model", mbql_query(ids["db"], **{"source-table": ids["people"]}),
                                                   type="model")).json
    assert [c["name"] for c in model["result_metadata"]] == ["id", "first_name", "last_name", "age"]
    assert [c["id"] for c in admin.get(f"/api/card?f=table&model_id={ids['people']}").json] == [model["id"]]
    assert admin.put(f"/api/card/{model['id']}", json={"description": "people"}).json["description"] == "people"
    assert admin.get(f"/api/card/{model['id']}").json["last-edit-info"]["email"] == "admin@example.com"
    tables = admin.get("/api/database/-1337/metadata").json["tables"]
    assert [t["id"] for t in tables] == [f"card__{model['id']}"]  # the broken card has no columns
    assert admin.post("/api/dataset", json=mbql_query(ids["db"], **{"source-table": f"card__{model['id']}",
                                                                   "aggregation": [["count"]]})).json["data"]["rows"] == [[3]]
