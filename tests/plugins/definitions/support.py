"""Shared setup for the segment and legacy-metric tests: the Sample Database and ORDERS' fields."""
from sqlalchemy import delete, update

from core.appdb.models import ALL_USERS_GROUP_ID, DataPermission
from core.testing import wait_for_sync


def sample(app, admin) -> dict:
    """The Sample Database registered and synced: {"db": id, "ORDERS": id, "ORDERS.TOTAL": field id, ...}."""
    db_id = admin.post("/api/database/sample_database").json["id"]
    wait_for_sync(app)
    ids = {"db": db_id}
    for table in admin.get(f"/api/database/{db_id}/metadata").json["tables"]:
        ids[table["name"]] = table["id"]
        for field in table["fields"]:
            ids[f"{table['name']}.{field['name']}"] = field["id"]
    return ids


def block(app, db_id: int) -> None:
    """All Users lose data access to the database."""
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        session.execute(update(DataPermission).where(
            DataPermission.db_id == db_id, DataPermission.group_id == ALL_USERS_GROUP_ID,
            DataPermission.perm_type == "view-data").values(perm_value="blocked"))


def grant_data_model(app, db_id: int) -> None:
    """All Users may edit the database's data model (which reading segments and legacy metrics needs)."""
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        session.execute(delete(DataPermission).where(
            DataPermission.db_id == db_id, DataPermission.group_id == ALL_USERS_GROUP_ID,
            DataPermission.perm_type == "data-model"))
        session.add(DataPermission(group_id=ALL_USERS_GROUP_ID, db_id=db_id, perm_type="data-model", perm_value="all"))


def big_orders(ids: dict, minimum: int = 100) -> dict:
    return {"filter": [">", ["field", ids["ORDERS.TOTAL"], None], minimum]}


def count_orders(admin, ids: dict, query: dict) -> int:
    body = admin.post("/api/dataset", json={"database": ids["db"], "type": "query",
                                            "query": {"source-table": ids["ORDERS"], "aggregation": [["count"]],
                                                      **query}})
    assert body.status_code == 202, body.json
    return body.json["data"]["rows"][0][0]
