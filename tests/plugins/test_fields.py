"""/api/field: one field, edits, values with human-readable names, dimensions, search, remapping."""
from core.testing import wait_for_sync


def sample(app, admin):
    db_id = admin.post("/api/database/sample_database").json["id"]
    wait_for_sync(app)
    tables = {t["name"]: {f["name"]: f for f in t["fields"]}
              for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]}
    return tables


def test_get_and_related(app, admin, user, sample_database_file):
    tables = sample(app, admin)
    field = user.get(f"/api/field/{tables['ORDERS']['USER_ID']['id']}").json
    assert field["name"] == "USER_ID" and field["table"]["name"] == "ORDERS" and field["table"]["db"]["is_sample"]
    assert "details" not in field["table"]["db"]
    assert field["target"]["id"] == tables["PEOPLE"]["ID"]["id"] and field["dimensions"] == []
    related = admin.get(f"/api/field/{tables['ORDERS']['TOTAL']['id']}/related").json
    assert related["table"]["name"] == "ORDERS" and "TOTAL" not in [f["name"] for f in related["fields"]]
    assert admin.get("/api/field/9999999").status_code == 404


def test_update(app, admin, user, sample_database_file):
    tables = sample(app, admin)
    total = tables["ORDERS"]["TOTAL"]["id"]
    response = admin.put(f"/api/field/{total}", json={
        "display_name": "Grand total", "description": "With tax", "semantic_type": ":type/Price",
        "visibility_type": "details-only", "settings": {"currency": "EUR"}, "caveats": "c"})
    assert response.status_code == 200, response.json
    body = response.json
    assert (body["display_name"], body["description"], body["semantic_type"], body["visibility_type"]) == (
        "Grand total", "With tax", "type/Price", "details-only")
    assert body["settings"] == {"currency": "EUR"}
    assert admin.put(f"/api/field/{total}", json={"semantic_type": "type/Nonsense"}).status_code == 400
    assert admin.put(f"/api/field/{total}", json={"has_field_values": "always"}).status_code == 400
    assert admin.put(f"/api/field/{total}", json={"description": "  "}).status_code == 400
    assert admin.put(f"/api/field/{total}", json={"fk_target_field_id": 9999999}).status_code == 400
    assert user.put(f"/api/field/{total}", json={"description": "x"}).status_code == 403
    # coercion changes the effective type
    created = tables["PEOPLE"]["ZIP"]["id"]
    coerced = admin.put(f"/api/field/{created}", json={"coercion_strategy": "Coercion/String->Integer"}).json
    assert coerced["effective_type"] == "type/Integer" and coerced["base_type"] == "type/Text"
    assert admin.put(f"/api/field/{created}", json={"coercion_strategy": None}).json["effective_type"] == "type/Text"
    # no longer a foreign key: the target goes
    user_id = tables["ORDERS"]["USER_ID"]["id"]
    plain = admin.put(f"/api/field/{user_id}", json={"semantic_type": "type/Quantity"}).json
    assert plain["fk_target_field_id"] is None
    back = admin.put(f"/api/field/{user_id}", json={"semantic_type": "type/FK",
                                                    "fk_target_field_id": tables["PEOPLE"]["ID"]["id"]}).json
    assert back["fk_target_field_id"] == tables["PEOPLE"]["ID"]["id"]


def test_list_values_follow_has_field_values(app, admin, sample_database_file):
    tables = sample(app, admin)
    name = tables["PEOPLE"]["NAME"]["id"]
    assert admin.get(f"/api/field/{name}/values").json == {"field_id": name, "values": [], "has_more_values": False}
    listed = admin.put(f"/api/field/{name}", json={"has_field_values": "list"}).json
    assert listed["has_field_values"] == "list"
    values = admin.get(f"/api/field/{name}/values").json
    assert len(values["values"]) == 1000 and values["has_more_values"] is True
    assert admin.put(f"/api/field/{name}", json={"has_field_values": "search"}).status_code == 200
    assert admin.get(f"/api/field/{name}/values").json["values"] == []


def test_human_readable_values_and_dimensions(app, admin, sample_database_file):
    tables = sample(app, admin)
    rating = tables["REVIEWS"]["RATING"]["id"]
    assert admin.get(f"/api/field/{rating}/values").json["values"] == [[1], [2], [3], [4], [5]]
    names = [[1, "Awful"], [2, "Bad"], [3, "OK"], [4, "Good"], [5, "Great"]]
    assert admin.post(f"/api/field/{rating}/values", json={"values": names}).json == {"status": "success"}
    assert admin.get(f"/api/field/{rating}/values").json["values"] == names
    mixed = admin.post(f"/api/field/{rating}/values", json={"values": [[1, "Awful"], [2]]})
    assert mixed.status_code == 400
    assert admin.post(f"/api/field/{rating}/values", json={"values": [[1, ""]]}).status_code == 400
    assert admin.post(f"/api/field/{rating}/values", json={"values": "nope"}).status_code == 400
    total = tables["ORDERS"]["TOTAL"]["id"]
    assert admin.post(f"/api/field/{total}/values", json={"values": [[1]]}).status_code == 400
    # internal dimension
    dimension = admin.post(f"/api/field/{rating}/dimension", json={"type": "internal", "name": "Rating label"})
    assert dimension.status_code == 200 and dimension.json["type"] == "internal"
    assert admin.get(f"/api/field/{rating}").json["dimensions"][0]["name"] == "Rating label"
    # external dimension: the FK shown as the customer's name
    user_id, person_name = tables["ORDERS"]["USER_ID"]["id"], tables["PEOPLE"]["NAME"]["id"]
    assert admin.post(f"/api/field/{user_id}/dimension", json={"type": "external", "name": "User"}).status_code == 400
    external = admin.post(f"/api/field/{user_id}/dimension", json={"type": "external", "name": "User",
                                                                   "human_readable_field_id": person_name})
    assert external.status_code == 200 and external.json["human_readable_field_id"] == person_name
    unrelated = admin.post(f"/api/field/{user_id}/dimension", json={
        "type": "external", "name": "x", "human_readable_field_id": tables["PRODUCTS"]["TITLE"]["id"]})
    assert unrelated.status_code == 400
    assert admin.delete(f"/api/field/{user_id}/dimension").status_code == 204
    assert admin.get(f"/api/field/{user_id}").json["dimensions"] == []
    assert admin.post(f"/api/field/{rating}/discard_values").json == {"status": "success"}
    assert admin.get(f"/api/field/{rating}/values").json["values"] == []
    assert admin.post(f"/api/field/{rating}/rescan_values").json == {"status": "success"}
    assert admin.get(f"/api/field/{rating}/values").json["values"] == [[1], [2], [3], [4], [5]]


def test_search_remapping_and_summary(app, admin, sample_database_file):
    tables = sample(app, admin)
    people_id, people_name = tables["PEOPLE"]["ID"]["id"], tables["PEOPLE"]["NAME"]["id"]
    found = admin.get(f"/api/field/{people_id}/search/{people_name}?value=hud&limit=3").json
    assert 0 < len(found) <= 3
    assert all(isinstance(i, int) and n.lower().startswith("hud") for i, n in found)
    remapped = admin.get(f"/api/field/{people_id}/remapping/{people_name}?value={found[0][0]}").json
    assert remapped == found[0]
    # through the FK: ORDERS.USER_ID searched by PEOPLE.NAME
    user_id = tables["ORDERS"]["USER_ID"]["id"]
    assert admin.get(f"/api/field/{user_id}/remapping/{people_name}?value={found[0][0]}").json == found[0]
    assert admin.get(f"/api/field/{user_id}/remapping/{people_name}?value=999999").json == [999999]
    assert admin.get(f"/api/field/{user_id}/remapping/{people_name}?value=abc").status_code == 400
    same = admin.get(f"/api/field/{people_name}/search/{people_name}?value=zoie").json
    assert same and all(len(row) == 1 and row[0].lower().startswith("zoie") for row in same)
    # a value with SQL in it is only ever a literal
    assert admin.get(f"/api/field/{people_name}/search/{people_name}?value=x' OR '1'='1").json == []
    unrelated = tables["PRODUCTS"]["TITLE"]["id"]
    assert admin.get(f"/api/field/{people_id}/search/{unrelated}?value=a").status_code == 400
    assert admin.get(f"/api/field/{people_id}/search/{people_name}").status_code == 400
    summary = admin.get(f"/api/field/{tables['PRODUCTS']['CATEGORY']['id']}/summary").json
    assert summary == [["count", 200], ["distincts", 4]]
