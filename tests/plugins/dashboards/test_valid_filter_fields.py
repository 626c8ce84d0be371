"""GET /api/dashboard/params/valid-filter-fields: the filtering fields a linked filter can use for each
filtered field (same table, or joined through foreign keys the data model knows)."""
from .support import block_data


def test_same_table_and_foreign_keys(app, admin, warehouse):
    w = warehouse
    url = (f"/api/dashboard/params/valid-filter-fields?filtered={w['people.first_name']}&filtered={w['orders.total']}"
           f"&filtering={w['people.age']}&filtering={w['orders.total']}")
    response = admin.get(url)
    assert response.status_code == 200, response.json
    assert response.json == {str(w["people.first_name"]): [w["people.age"], w["orders.total"]],
                             str(w["orders.total"]): [w["people.age"], w["orders.total"]]}
    # Without the foreign key the tables no longer reach each other.
    assert admin.put(f"/api/field/{w['orders.person_id']}",
                     json={"semantic_type": None, "fk_target_field_id": None}).status_code == 200
    assert admin.get(url).json == {str(w["people.first_name"]): [w["people.age"]],
                                   str(w["orders.total"]): [w["orders.total"]]}
    single = admin.get(f"/api/dashboard/params/valid-filter-fields?filtered={w['people.age']}")
    assert single.status_code == 200 and single.json == {str(w["people.age"]): []}


def test_bad_input_and_unreadable_fields(app, admin, user, warehouse):
    assert admin.get("/api/dashboard/params/valid-filter-fields").status_code == 400
    assert admin.get("/api/dashboard/params/valid-filter-fields?filtered=x").status_code == 400
    assert admin.get("/api/dashboard/params/valid-filter-fields?filtered=999999&filtering=1").json == {"999999": []}
    w = warehouse
    url = f"/api/dashboard/params/valid-filter-fields?filtered={w['people.first_name']}&filtering={w['people.age']}"
    assert user.get(url).json == {str(w["people.first_name"]): [w["people.age"]]}
    block_data(admin, w["db"])
    assert user.get(url).json == {str(w["people.first_name"]): []}
