"""/api/mt/gtap and /api/mt/user as Metabase's, the graph's `sandboxes` key, and the semantics around a
sandbox: a missing attribute, two sandboxes on one table, a group with unrestricted access lifting it,
a sandboxed group refused native rights, numeric attributes converted."""
import pytest

from core.testing.app import make_user
from tests.plugins.sandboxes.conftest import ok


def count_people(world, client):
    return client.post("/api/dataset", json={"database": world.db, "type": "query", "query": {
        "source-table": world.tables["PEOPLE"], "aggregation": [["count"]]}})


def test_gtap_crud_and_validate(world):
    admin = world.admin
    listed = ok(admin.get("/api/mt/gtap"))
    people = next(s for s in listed if s["table_id"] == world.tables["PEOPLE"])
    assert set(people) >= {"id", "group_id", "table_id", "card_id", "attribute_remappings"}
    assert ok(admin.get(f"/api/mt/gtap?group_id={world.group}&table_id={world.tables['PEOPLE']}")) == people
    assert admin.get(f"/api/mt/gtap?group_id={world.group}&table_id={world.tables['REVIEWS']}").status_code == 404
    assert ok(admin.get(f"/api/mt/gtap/{people['id']}")) == people
    assert admin.get("/api/mt/gtap/99999").status_code == 404
    group = ok(admin.post("/api/permissions/group", json={"name": "Reviewers"}))["id"]
    body = {"group_id": group, "table_id": world.tables["REVIEWS"],
            "attribute_remappings": {"product": ["dimension", ["field", world.fields["REVIEWS"]["PRODUCT_ID"], None]]}}
    assert admin.post("/api/mt/gtap/validate", json=body).status_code == 204
    created = ok(admin.post("/api/mt/gtap", json=body))
    assert created["card_id"] is None and created["group_id"] == group
    assert admin.post("/api/mt/gtap", json=body).status_code == 400  # one per group and table
    text_ids = ok(admin.post("/api/card", json={
        "name": "Text ids", "display": "table", "visualization_settings": {},
        "dataset_query": {"database": world.db, "type": "native", "native": {"query": "SELECT BODY AS ID FROM REVIEWS"}}}))
    bad = [
        {**body, "attribute_remappings": {"product": ["dimension", ["field", world.fields["PEOPLE"]["STATE"], None]]}},
        {**body, "attribute_remappings": {"product": ["nonsense"]}},
        {**body, "table_id": 99999},
        {**body, "group_id": 2},
        {**body, "card_id": text_ids["id"]},  # its ID is text, REVIEWS.ID an integer
        {**body, "card_id": world.orders_card,
         "attribute_remappings": {"state": ["variable", ["template-tag", "nope"]]}},
    ]
    for entry in bad:
        response = admin.post("/api/mt/gtap/validate", json=entry)
        assert response.status_code == 400, (entry, response.json)
    updated = ok(admin.put(f"/api/mt/gtap/{created['id']}", json={"attribute_remappings": {}}))
    assert updated["attribute_remappings"] == {} and updated["table_id"] == world.tables["REVIEWS"]
    assert admin.delete(f"/api/mt/gtap/{created['id']}").status_code == 204
    assert admin.get(f"/api/mt/gtap/{created['id']}").status_code == 404
    assert world.tx.get("/api/mt/gtap").status_code == 403


def test_user_attributes(world):
    admin = world.admin
    assert "state" in ok(admin.get("/api/mt/user/attributes"))
    someone = make_user(world.app, "attrs@example.com")
    ok(admin.put(f"/api/mt/user/{someone.user['id']}/attributes", json={"login_attributes": {"region": "west"}}), 204)
    assert ok(admin.get(f"/api/user/{someone.user['id']}"))["login_attributes"] == {"region": "west"}
    assert "region" in ok(admin.get("/api/mt/user/attributes"))
    assert admin.put("/api/mt/user/99999/attributes", json={"login_attributes": {}}).status_code == 404
    assert someone.get("/api/mt/user/attributes").status_code == 403


def _in_groups(world, client, groups):
    ok(world.admin.put(f"/api/user/{client.user['id']}", json={
        "user_group_memberships": [{"id": 1}, *({"id": g} for g in groups)]}))


def test_missing_attribute_two_sandboxes_and_lifting(world, reference):
    admin = world.admin
    nobody = make_user(world.app, "noattr@example.com")
    _in_groups(world, nobody, [world.group])
    response = count_people(world, nobody)
    assert response.status_code == 400 and response.json["error"] == "Query requires user attribute `state`"
    # a numeric attribute for a numeric column, sent as a string (SSO claims are strings)
    graph = ok(admin.get("/api/permissions/graph"))
    schema = next(iter(ok(admin.get(f"/api/permissions/graph/group/{world.group}"))["groups"][str(world.group)]
                       [str(world.db)]["view-data"]))
    second = ok(admin.post("/api/permissions/group", json={"name": "By id"}))["id"]
    people = world.tables["PEOPLE"]
    ok(admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        str(second): {str(world.db): {"view-data": {schema: {str(people): "sandboxed"}}, "create-queries": "query-builder"}}},
        "sandboxes": [{"group_id": second, "table_id": people,
                       "attribute_remappings": {"pid": ["dimension", ["field", world.fields["PEOPLE"]["ID"], None]]}}]}))
    numeric = make_user(world.app, "pid@example.com")
    ok(admin.put(f"/api/user/{numeric.user['id']}", json={"login_attributes": {"pid": "7"}}))
    _in_groups(world, numeric, [second])
    assert ok(count_people(world, numeric))["data"]["rows"] == [[1]]
    # in both sandboxed groups: refused, naming both
    _in_groups(world, numeric, [second, world.group])
    ok(admin.put(f"/api/user/{numeric.user['id']}", json={"login_attributes": {"pid": "7", "state": "TX"}}))
    response = count_people(world, numeric)
    assert response.status_code == 400 and "By id" in response.json["error"] and "Sales" in response.json["error"]
    # a group with unrestricted access to the table lifts the sandbox
    everything = ok(admin.post("/api/permissions/group", json={"name": "Everything"}))["id"]
    graph = ok(admin.get("/api/permissions/graph"))
    ok(admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        str(everything): {str(world.db): {"view-data": "unrestricted", "create-queries": "query-builder"}}}}))
    _in_groups(world, numeric, [second, world.group, everything])
    assert ok(count_people(world, numeric))["data"]["rows"] == [[reference("SELECT COUNT(*) FROM PEOPLE")[0][0]]]


def test_graph_refuses_native_rights_for_a_sandboxed_group(world):
    admin = world.admin
    graph = ok(admin.get("/api/permissions/graph"))
    response = admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        str(world.group): {str(world.db): {"create-queries": "query-builder-and-native"}}}})
    assert response.status_code == 400 and "sandboxed" in response.json
    assert ok(admin.get("/api/session/properties"))["token-features"]["sandboxes"] is True


@pytest.mark.parametrize("key", ["sandboxes"])
def test_graph_sandbox_entries_are_checked(world, key):
    admin = world.admin
    graph = ok(admin.get("/api/permissions/graph"))
    for entries in ({"group_id": world.group}, [{"group_id": world.group}], [{"group_id": world.group, "table_id": 99999}]):
        response = admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {}, key: entries})
        assert response.status_code == 400, entries
    assert ok(admin.get("/api/permissions/graph"))["revision"] == graph["revision"]
