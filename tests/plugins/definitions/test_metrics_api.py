"""/api/metric (legacy metrics): CRUD, the deprecated DELETE, revisions and revert, important fields."""
from tests.plugins.definitions.support import grant_data_model, sample


def definition(ids, minimum=None):
    out = {"aggregation": [["sum", ["field", ids["ORDERS.TOTAL"], None]]]}
    if minimum is not None:
        out["filter"] = [">", ["field", ids["ORDERS.TOTAL"], None], minimum]
    return out


def create(admin, ids, name="Revenue", **extra):
    response = admin.post("/api/metric", json={"name": name, "table_id": ids["ORDERS"], "definition": definition(ids),
                                               **extra})
    assert response.status_code == 200, response.json
    return response.json


def test_crud(app, admin, user, sample_database_file):
    ids = sample(app, admin)
    metric = create(admin, ids, description="All revenue")
    assert user.get(f"/api/metric/{metric['id']}").status_code == 403 and user.get("/api/metric").json == []
    grant_data_model(app, ids["db"])
    assert metric["how_is_this_calculated"] is None and metric["creator"]["id"] == metric["creator_id"]
    one = user.get(f"/api/metric/{metric['id']}").json
    assert one["name"] == "Revenue" and one["important_field_ids"] == []
    listing = user.get("/api/metric").json
    assert [m["name"] for m in listing] == ["Revenue"] and listing[0]["database_id"] == ids["db"]
    assert listing[0]["definition_description"] == "Sum of Total"
    changed = admin.put(f"/api/metric/{metric['id']}", json={
        "definition": definition(ids, 50), "how_is_this_calculated": "sum of totals over 50",
        "revision_message": "only big"}).json
    assert changed["how_is_this_calculated"] == "sum of totals over 50"
    assert user.get("/api/metric").json[0]["definition_description"] == \
        "Sum of Total, Filtered by Total is greater than 50"
    assert user.post("/api/metric", json={"name": "X", "table_id": ids["ORDERS"],
                                          "definition": definition(ids)}).status_code == 403
    assert admin.put(f"/api/metric/{metric['id']}", json={"name": "X"}).status_code == 400
    deleted = admin.delete(f"/api/metric/{metric['id']}?revision_message=retired")
    assert deleted.status_code == 200 and deleted.json == {"success": True}
    assert user.get("/api/metric").json == [] and admin.get(f"/api/metric/{metric['id']}").json["archived"] is True


def test_validation(app, admin, sample_database_file):
    ids = sample(app, admin)
    total = ["field", ids["ORDERS.TOTAL"], None]
    for bad in ({}, {"filter": [">", total, 1]}, {"aggregation": [["sum", total], ["count"]]},
                {"aggregation": [["sum", ["field", 999999, None]]]}, {"aggregation": [["count"]], "breakout": [total]}):
        response = admin.post("/api/metric", json={"name": "X", "table_id": ids["ORDERS"], "definition": bad})
        assert response.status_code == 400, bad


def test_revisions_and_revert(app, admin, sample_database_file):
    ids = sample(app, admin)
    mid = create(admin, ids)["id"]
    admin.put(f"/api/metric/{mid}", json={"name": "Big revenue", "definition": definition(ids, 100),
                                          "revision_message": "big"})
    history = admin.get(f"/api/metric/{mid}/revisions").json
    assert [r["is_creation"] for r in history] == [False, True]
    assert history[0]["diff"] == {"name": {"before": "Revenue", "after": "Big revenue"},
                                  "definition": {"before": definition(ids), "after": definition(ids, 100)}}
    assert history[0]["description"] == 'renamed this Metric from "Revenue" to "Big revenue" and changed the definition.'
    reverted = admin.post(f"/api/metric/{mid}/revert", json={"revision_id": history[1]["id"]}).json
    assert reverted["is_reversion"] is True
    assert admin.get(f"/api/metric/{mid}").json["definition"] == definition(ids)


def test_important_fields(app, admin, user, sample_database_file):
    ids = sample(app, admin)
    mid = create(admin, ids)["id"]
    fields = [ids["ORDERS.TOTAL"], ids["ORDERS.TAX"], ids["ORDERS.CREATED_AT"]]
    assert user.put(f"/api/metric/{mid}/important_fields", json={"important_field_ids": fields}).status_code == 403
    done = admin.put(f"/api/metric/{mid}/important_fields", json={"important_field_ids": fields})
    assert done.status_code == 200 and done.json == {"success": True}
    assert admin.get(f"/api/metric/{mid}").json["important_field_ids"] == sorted(fields)
    admin.put(f"/api/metric/{mid}/important_fields", json={"important_field_ids": fields[:1]})
    assert admin.get(f"/api/metric/{mid}").json["important_field_ids"] == fields[:1]
    too_many = admin.put(f"/api/metric/{mid}/important_fields",
                         json={"important_field_ids": fields + [ids["ORDERS.ID"]]})
    assert too_many.status_code == 400 and too_many.json == "A Metric can have a maximum of 3 important fields."
    unknown = admin.put(f"/api/metric/{mid}/important_fields", json={"important_field_ids": [999999]})
    assert unknown.status_code == 400
    assert admin.get(f"/api/metric/{mid}").json["important_field_ids"] == fields[:1]
    assert admin.put("/api/metric/99999/important_fields", json={"important_field_ids": []}).status_code == 404
