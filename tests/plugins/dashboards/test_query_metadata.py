"""GET /api/dashboard/:id/query_metadata: the databases, tables and fields of every card on the
dashboard (series, card sources and filter-mapped fields included), only what the caller may see."""
from core.testing import make_user
from tests.core.test_memo import set_access
from tests.test_reads_write_nothing import AppDbStatements, assert_read_only

from .support import block_data, card_body, field_ref, make_dashboard, mapping, mbql_query, native_query


def _setup(app, admin, warehouse):
    w = warehouse
    people = admin.post("/api/card", json=card_body("People", mbql_query(w["db"], **{"source-table": w["people"]}),
                                                    type="model")).json["id"]
    on_model = admin.post("/api/card", json=card_body("On model", mbql_query(
        w["db"], **{"source-table": f"card__{people}"}))).json["id"]
    orders = admin.post("/api/card", json=card_body("Orders", mbql_query(
        w["db"], **{"source-table": w["orders"], "aggregation": [["count"]]}))).json["id"]
    tag = {"id": "t", "name": "who", "display-name": "Who", "type": "dimension", "widget-type": "string/=",
           "dimension": ["field", w["people.last_name"], None]}
    native = admin.post("/api/card", json=card_body("Native", native_query(
        w["db"], "SELECT 1 AS one FROM people WHERE {{who}}", who=tag))).json["id"]
    dash = make_dashboard(app, admin.user["id"], [{"id": "p", "type": "id"}], [
        {"card_id": on_model, "series": [orders]},
        {"card_id": native},
        {"card_id": None, "visualization_settings": {"virtual_card": {"display": "text"}}},
        {"card_id": orders, "parameter_mappings": [mapping("p", orders, field_ref(w["orders.person_id"]))]},
    ])
    return dash["id"], people


def test_everything_the_cards_need(app, admin, warehouse):
    w = warehouse
    dashboard_id, model = _setup(app, admin, warehouse)
    response = admin.get(f"/api/dashboard/{dashboard_id}/query_metadata")
    assert response.status_code == 200, response.json
    body = response.json
    assert [d["id"] for d in body["databases"]] == [w["db"]] and "details" not in body["databases"][0]
    tables = {t["id"]: t for t in body["tables"]}
    # people: where orders.person_id leads.
    assert set(tables) == {w["orders"], w["people"], f"card__{model}"}
    assert {f["name"] for f in tables[w["orders"]]["fields"]} == {"id", "person_id", "total"}
    assert [f["name"] for f in tables[f"card__{model}"]["fields"]] == ["id", "first_name", "last_name", "age"]
    assert sorted(f["id"] for f in body["fields"]) == sorted([w["orders.person_id"], w["people.last_name"]])
    assert body["cards"] == [] and body["dashboards"] == []
    assert admin.get("/api/dashboard/999999/query_metadata").status_code == 404


def test_only_what_the_caller_may_see(app, admin, user, warehouse):
    dashboard_id, _ = _setup(app, admin, warehouse)
    assert len(user.get(f"/api/dashboard/{dashboard_id}/query_metadata").json["tables"]) == 3
    block_data(admin, warehouse["db"])
    body = user.get(f"/api/dashboard/{dashboard_id}/query_metadata").json
    assert body == {"databases": [], "tables": [], "fields": [], "cards": [], "dashboards": []}
    collection = admin.post("/api/collection", json={"name": "Private"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(collection): "none"}}})
    hidden = make_dashboard(app, admin.user["id"], [], [], collection_id=collection)["id"]
    assert user.get(f"/api/dashboard/{hidden}/query_metadata").status_code == 403


# --------------------------------------------------------------------------------------------------
# The answer is kept (core.policy.audience.kept_answers): a repeated request runs the change counters'
# read alone; every change that could change the answer is seen by the next request.
# --------------------------------------------------------------------------------------------------

COUNTERS = "appdb_change"  # the change counters' table: read once by every request
NOTHING = {"databases": [], "tables": [], "fields": [], "cards": [], "dashboards": []}


def computed(statements: list[str]) -> bool:
    """Whether a request computed the answer (read the dashboard's dashcards) rather than was given it."""
    return any("FROM report_dashboardcard" in s for s in statements)


def metadata(app, client, dashboard_id: int) -> tuple[dict, list[str]]:
    """The caller's answer and the app-DB statements its request ran besides the counters' read."""
    with AppDbStatements(app) as seen:
        response = client.get(f"/api/dashboard/{dashboard_id}/query_metadata")
    assert response.status_code == 200, response.json
    assert_read_only(seen, "GET query_metadata")
    return response.json, [s for s in seen.statements if COUNTERS not in s]


def kept(app, client, dashboard_id: int) -> dict:
    """The answer of a request that ran no statement but the counters' read (computed before if need be).
    A commit of another thread between two requests (the write-behind's) may make the second a miss:
    five in a row fail."""
    first, _ = metadata(app, client, dashboard_id)
    for _ in range(5):
        again, statements = metadata(app, client, dashboard_id)
        assert again == first
        if statements == []:
            return again
    raise AssertionError(f"the answer was not kept: {statements}")


def tables_of(body: dict) -> dict:
    return {t["id"]: t for t in body["tables"]}


def field_names(body: dict, table_id: int) -> set[str]:
    return {f["name"] for f in tables_of(body)[table_id]["fields"]}


def group_with_data(admin, db_id: int, name: str) -> int:
    """A group that may see the database's data, while All Users may not."""
    group = admin.post("/api/permissions/group", json={"name": name}).json["id"]
    graph = admin.get("/api/permissions/graph").json
    response = admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(db_id): {"view-data": "blocked", "create-queries": "no"}},
        str(group): {str(db_id): {"view-data": "unrestricted", "create-queries": "query-builder"}}}})
    assert response.status_code == 200, response.json
    return group


def set_groups(admin, client, groups: list[int]) -> None:
    response = admin.put(f"/api/user/{client.user['id']}",
                         json={"user_group_memberships": [{"id": g} for g in [1, *groups]]})
    assert response.status_code == 200, response.json


def test_a_kept_answer_equals_a_fresh_computation(app, admin, user, warehouse):
    dashboard_id, model = _setup(app, admin, warehouse)
    for client in (admin, user):
        answer = kept(app, client, dashboard_id)
        assert set(tables_of(answer)) == {warehouse["orders"], warehouse["people"], f"card__{model}"}
        app.extensions["tessera"].db.memo.clear()
        fresh, statements = metadata(app, client, dashboard_id)
        assert computed(statements) and fresh == answer


def test_the_next_request_sees_each_change_of_what_the_answer_shows(app, admin, user, warehouse):
    w = warehouse
    orders = admin.post("/api/card", json=card_body("Orders", mbql_query(w["db"], **{"source-table": w["orders"]})))
    card = orders.json["id"]
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": card}])["id"]
    before = kept(app, user, dash)
    # orders.person_id leads to people
    assert set(tables_of(before)) == {w["orders"], w["people"]}

    # The card's query reads another table.
    people_query = mbql_query(w["db"], **{"source-table": w["people"], "aggregation": [["count"]]})
    assert admin.put(f"/api/card/{card}", json={"dataset_query": people_query}).status_code == 200
    assert set(tables_of(kept(app, user, dash))) == {w["people"]}

    # A dashcard added through the dashboard's PUT brings its card's tables.
    put_dashcards(admin, dash, {"id": -1, "card_id": orders_card(admin, w), "row": 8, "col": 0, "size_x": 4,
                                "size_y": 4})
    assert set(tables_of(kept(app, user, dash))) == {w["orders"], w["people"]}

    # So does a series card added to a dashcard: this one reads a model, shown as a table of its own.
    model = admin.post("/api/card", json=card_body("People", people_query, type="model")).json["id"]
    on_model = admin.post("/api/card", json=card_body("On model", mbql_query(
        w["db"], **{"source-table": f"card__{model}"}))).json["id"]
    put_dashcards(admin, dash, series={card: [on_model]})
    assert set(tables_of(kept(app, user, dash))) == {w["orders"], w["people"], f"card__{model}"}

    # A field hidden from everyone, then a table's visibility.
    assert "age" in field_names(kept(app, user, dash), w["people"])
    assert admin.put(f"/api/field/{w['people.age']}", json={"visibility_type": "sensitive"}).status_code == 200
    assert "age" not in field_names(kept(app, user, dash), w["people"])
    assert admin.put(f"/api/table/{w['orders']}", json={"visibility_type": "hidden"}).status_code == 200
    assert tables_of(kept(app, user, dash))[w["orders"]]["visibility_type"] == "hidden"

    # A field's semantic type and foreign-key target: orders.person_id no longer leads to people, which
    # stays for the people card only; a segment of people's shows in it.
    assert admin.put(f"/api/field/{w['orders.person_id']}", json={"semantic_type": "type/Category",
                                                                 "fk_target_field_id": None}).status_code == 200
    shown = tables_of(kept(app, user, dash))
    person = next(f for f in shown[w["orders"]]["fields"] if f["name"] == "person_id")
    assert person["semantic_type"] == "type/Category" and person["fk_target_field_id"] is None
    assert shown[w["people"]]["segments"] == []
    segment = admin.post("/api/segment", json={"name": "Adults", "table_id": w["people"], "definition": {
        "source-table": w["people"], "filter": [">", ["field", w["people.age"], None], 17]}})
    assert segment.status_code == 200, segment.json
    assert [s["name"] for s in tables_of(kept(app, user, dash))[w["people"]]["segments"]] == ["Adults"]

    # The people card moved to a collection All Users may not read: its table goes with it.
    private = admin.post("/api/collection", json={"name": "Private"}).json["id"]
    set_access(admin, private, "none")
    assert admin.put(f"/api/card/{card}", json={"collection_id": private}).status_code == 200
    assert set(tables_of(kept(app, user, dash))) == {w["orders"], f"card__{model}"}
    # ... and back when All Users may read that collection.
    set_access(admin, private, "read")
    assert set(tables_of(kept(app, user, dash))) == {w["orders"], w["people"], f"card__{model}"}

    # The data permission revoked through the graph.
    block_data(admin, w["db"])
    assert kept(app, user, dash) == NOTHING


def put_dashcards(admin, dash: int, *added: dict, series: dict | None = None) -> None:
    """The dashboard's dashcards as they are, with `added` ones and, by card id, series cards."""
    dashcards = [{"id": d["id"], "card_id": d["card_id"], "row": d["row"], "col": d["col"], "size_x": d["size_x"],
                  "size_y": d["size_y"], "series": [{"id": c} for c in (series or {}).get(d["card_id"], [])]}
                 for d in admin.get(f"/api/dashboard/{dash}?ignore_view=true").json["dashcards"]]
    response = admin.put(f"/api/dashboard/{dash}", json={"dashcards": [*dashcards, *added]})
    assert response.status_code == 200, response.json


def orders_card(admin, w) -> int:
    query = mbql_query(w["db"], **{"source-table": w["orders"], "aggregation": [["count"]]})
    return admin.post("/api/card", json=card_body("Order count", query)).json["id"]


def test_users_of_the_same_groups_share_the_answer_and_a_group_change_is_seen(app, admin, warehouse):
    w = warehouse
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": orders_card(admin, w)}])["id"]
    analysts = group_with_data(admin, w["db"], "Analysts")
    ann, bob, cid = (make_user(app, f"{n}@example.com", n.title(), "User") for n in ("ann", "bob", "cid"))
    set_groups(admin, ann, [analysts])
    set_groups(admin, bob, [analysts])

    full, statements = metadata(app, ann, dash)
    assert computed(statements) and set(tables_of(full)) == {w["orders"], w["people"]}
    # Bob is in the same groups: Ann's answer is his, not computed again.
    theirs, statements = metadata(app, bob, dash)
    assert theirs == full and statements and not computed(statements), statements  # his session and groups
    # Cid is in All Users alone: his own answer, computed for his groups.
    empty, statements = metadata(app, cid, dash)
    assert computed(statements) and empty == NOTHING
    assert kept(app, ann, dash) == full

    # Bob moved out of Analysts: the answer of All Users alone, Cid's.
    set_groups(admin, bob, [])
    assert kept(app, bob, dash) == empty
    assert kept(app, ann, dash) == full
    # ... and Cid moved in: Ann's.
    set_groups(admin, cid, [analysts])
    assert kept(app, cid, dash) == full


def test_what_a_personal_collection_holds_is_its_owners_alone(app, admin, warehouse):
    """A card and a metric in Ann's personal collection: her answer shows them, Bob's (same groups)
    does not, whichever of them asks first; on a dashboard of shared cards alone, the metric still
    decides."""
    w = warehouse
    ann, bob = (make_user(app, f"{n}@example.com", n.title(), "User") for n in ("ann", "bob"))
    mine = ann.user["personal_collection_id"]
    people = mbql_query(w["db"], **{"source-table": w["people"]})
    shared = admin.post("/api/card", json=card_body("People", people)).json["id"]
    own = ann.post("/api/card", json=card_body("My orders", mbql_query(w["db"], **{"source-table": w["orders"]}),
                                               collection_id=mine)).json["id"]
    metric = ann.post("/api/card", json=card_body("Headcount", mbql_query(
        w["db"], **{"source-table": w["people"], "aggregation": [["count"]]}), type="metric", collection_id=mine))
    assert metric.status_code == 200, metric.json
    for cards, hers_shows in (([shared, own], {w["orders"], w["people"]}), ([shared], {w["people"]})):
        for first, second in ((bob, ann), (ann, bob)):
            dash = make_dashboard(app, admin.user["id"], [], [{"card_id": c} for c in cards])["id"]
            answers = {client.user["id"]: kept(app, client, dash) for client in (first, second)}
            theirs, hers = answers[bob.user["id"]], answers[ann.user["id"]]
            assert set(tables_of(hers)) == hers_shows and set(tables_of(theirs)) == {w["people"]}
            assert [m["name"] for m in tables_of(hers)[w["people"]]["metrics"]] == ["Headcount"]
            assert tables_of(theirs)[w["people"]]["metrics"] == []


def test_a_sandboxed_user_is_answered_on_their_own(app, admin, warehouse):
    """Two users of the same groups, sandboxed on people: neither is given the other's answer."""
    w = warehouse
    sales = admin.post("/api/permissions/group", json={"name": "Sales"}).json["id"]
    ann, bob = (make_user(app, f"{n}@example.com", n.title(), "User") for n in ("ann", "bob"))
    for client, name in ((ann, "Ann"), (bob, "Bob")):
        response = admin.put(f"/api/user/{client.user['id']}", json={
            "login_attributes": {"first_name": name}, "user_group_memberships": [{"id": 1}, {"id": sales}]})
        assert response.status_code == 200, response.json
    graph = admin.get("/api/permissions/graph").json
    response = admin.put("/api/permissions/graph", json={
        "revision": graph["revision"],
        "groups": {"1": {str(w["db"]): {"view-data": "blocked", "create-queries": "no"}},
                   str(sales): {str(w["db"]): {"view-data": {"": {str(w["people"]): "sandboxed",
                                                                  str(w["orders"]): "unrestricted"}},
                                               "create-queries": "query-builder"}}},
        "sandboxes": [{"group_id": sales, "table_id": w["people"], "card_id": None, "attribute_remappings": {
            "first_name": ["dimension", ["field", w["people.first_name"], None]]}}]})
    assert response.status_code == 200, response.json
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": orders_card(admin, w)}])["id"]

    hers = kept(app, ann, dash)
    assert set(tables_of(hers)) == {w["orders"], w["people"]}
    his, statements = metadata(app, bob, dash)
    assert computed(statements) and his == hers
    assert kept(app, bob, dash) == his


def test_a_refusal_is_asked_afresh_and_never_kept(app, admin, user, warehouse):
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": orders_card(admin, warehouse)}])["id"]
    path = f"/api/dashboard/{dash}/query_metadata"
    private = admin.post("/api/collection", json={"name": "Private"}).json["id"]
    set_access(admin, private, "none")
    assert admin.put(f"/api/dashboard/{dash}", json={"collection_id": private}).status_code == 200
    assert [user.get(path).status_code for _ in range(2)] == [403, 403]
    answer = kept(app, admin, dash)  # the administrators' answer, kept: not the user's
    assert [user.get(path).status_code for _ in range(2)] == [403, 403]
    set_access(admin, private, "read")
    assert kept(app, user, dash) == answer
    set_access(admin, private, "none")
    assert user.get(path).status_code == 403
    assert admin.delete(f"/api/dashboard/{dash}").status_code == 204
    assert [c.get(path).status_code for c in (admin, admin, user)] == [404, 404, 404]


def test_the_kept_answers_count_in_the_memos_byte_budget(app, admin, warehouse):
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": orders_card(admin, warehouse)}])["id"]
    size = len(admin.get(f"/api/dashboard/{dash}/query_metadata").data)
    memo = app.extensions["tessera"].db.memo
    memo.clear()
    memo.budget = size - 1  # an answer heavier than the budget is not kept
    assert all(computed(metadata(app, admin, dash)[1]) for _ in range(2))
    memo.budget = size
    metadata(app, admin, dash)
    assert not computed(metadata(app, admin, dash)[1])
