"""The oracle: every path data leaves by returns, for a sandboxed user, exactly what the reference SQL
with the sandbox's filter returns (counts, sums, values, exports), never another state's rows or the
dropped column (ORDERS.DISCOUNT, which the ORDERS sandbox's question does not return)."""
import io
import json
import zipfile

import pytest

from tests.plugins.sandboxes.conftest import ok

USERS = (("tx", "TX"), ("ca", "CA"))


def mbql(world, inner):
    return {"database": world.db, "type": "query", "query": inner}


def rows(client, query):
    return ok(client.post("/api/dataset", json=query))["data"]["rows"]


def field(world, table, name):
    return ["field", world.fields[table][name], None]


def orders_of(reference, state, what="COUNT(*)"):
    return reference(f"SELECT {what} FROM ORDERS o JOIN PEOPLE p ON o.USER_ID = p.ID WHERE p.STATE = ?", state)[0][0]


@pytest.mark.parametrize("name, state", USERS)
@pytest.mark.security_row(14)
def test_ad_hoc_counts_sums_and_rows(world, reference, name, state):
    client = getattr(world, name)
    people, orders = world.tables["PEOPLE"], world.tables["ORDERS"]
    assert rows(client, mbql(world, {"source-table": people, "aggregation": [["count"]]})) == \
        [[reference("SELECT COUNT(*) FROM PEOPLE WHERE STATE = ?", state)[0][0]]]
    got = rows(client, mbql(world, {"source-table": orders,
                                    "aggregation": [["count"], ["sum", field(world, "ORDERS", "TOTAL")]]}))
    assert got[0][0] == orders_of(reference, state)
    assert got[0][1] == pytest.approx(orders_of(reference, state, "SUM(o.TOTAL)"))
    states = rows(client, mbql(world, {"source-table": people, "breakout": [field(world, "PEOPLE", "STATE")]}))
    assert states == [[state]]
    # raw rows: every column of the table but the one the sandbox's question drops
    body = ok(client.post("/api/dataset", json=mbql(world, {"source-table": orders, "limit": 5})))
    names = [c["name"] for c in body["data"]["cols"]]
    assert "DISCOUNT" not in names and {"ID", "USER_ID", "TOTAL", "CREATED_AT"} <= set(names)
    assert "DISCOUNT" in [c["name"] for c in ok(world.admin.post("/api/dataset", json=mbql(
        world, {"source-table": orders, "limit": 1})))["data"]["cols"]]
    # the table's metadata shows the user only the columns they can read
    fields = [f["name"] for f in ok(client.get(f"/api/table/{orders}/query_metadata"))["fields"]]
    assert "DISCOUNT" not in fields and "TOTAL" in fields
    assert "DISCOUNT" in [f["name"] for f in ok(world.admin.get(f"/api/table/{orders}/query_metadata"))["fields"]]


@pytest.mark.security_row(14)
def test_the_dropped_column_cannot_be_asked_for(world):
    query = mbql(world, {"source-table": world.tables["ORDERS"], "aggregation": [["sum", field(world, "ORDERS", "DISCOUNT")]]})
    response = world.tx.post("/api/dataset", json=query)
    assert response.status_code == 400 and "DISCOUNT" in response.json["error"]
    assert response.json["data"]["rows"] == []


@pytest.mark.parametrize("name, state", USERS)
@pytest.mark.security_row(14)
def test_implicit_and_explicit_joins(world, reference, name, state):
    client = getattr(world, name)
    orders, products = world.tables["ORDERS"], world.tables["PRODUCTS"]
    user_id, state_id = world.fields["ORDERS"]["USER_ID"], world.fields["PEOPLE"]["STATE"]
    # implicit FK join from the sandboxed ORDERS to the sandboxed PEOPLE
    got = rows(client, mbql(world, {"source-table": orders, "aggregation": [["count"]],
                                    "breakout": [["field", state_id, {"source-field": user_id}]]}))
    assert got == [[state, orders_of(reference, state)]]
    # an explicit join from an unrestricted table to a sandboxed one
    got = rows(client, mbql(world, {
        "source-table": products, "aggregation": [["sum", ["field", world.fields["ORDERS"]["TOTAL"], {"join-alias": "O"}]]],
        "joins": [{"alias": "O", "source-table": orders, "strategy": "inner-join",
                   "condition": ["=", field(world, "PRODUCTS", "ID"),
                                 ["field", world.fields["ORDERS"]["PRODUCT_ID"], {"join-alias": "O"}]]}]}))
    assert got[0][0] == pytest.approx(orders_of(reference, state, "SUM(o.TOTAL)"))
    # an implicit join from an unrestricted table (REVIEWS has no FK to PEOPLE; PRODUCTS stays whole)
    total = rows(client, mbql(world, {"source-table": products, "aggregation": [["count"]]}))
    assert total == [[reference("SELECT COUNT(*) FROM PRODUCTS")[0][0]]]


@pytest.fixture(scope="module")
def content(world):
    admin, db = world.admin, world.db
    people, orders = world.tables["PEOPLE"], world.tables["ORDERS"]
    by_state = ok(admin.post("/api/card", json={
        "name": "People by state", "display": "table", "visualization_settings": {},
        "dataset_query": mbql(world, {"source-table": people, "aggregation": [["count"]],
                                      "breakout": [field(world, "PEOPLE", "STATE")]})}))["id"]
    model = ok(admin.post("/api/card", json={
        "name": "Orders model", "display": "table", "visualization_settings": {}, "type": "model",
        "dataset_query": mbql(world, {"source-table": orders})}))["id"]
    parameter = {"id": "st", "type": "category", "name": "State", "slug": "state"}
    dashboard = ok(admin.post("/api/dashboard", json={"name": "People", "parameters": [parameter]}))["id"]
    target = ["dimension", field(world, "PEOPLE", "STATE")]
    saved = ok(admin.put(f"/api/dashboard/{dashboard}", json={"dashcards": [
        {"id": -1, "card_id": by_state, "size_x": 4, "size_y": 4, "row": 0, "col": 0,
         "parameter_mappings": [{"parameter_id": "st", "card_id": by_state, "target": target}]}]}))
    return {"by_state": by_state, "model": model, "dashboard": dashboard, "dashcard": saved["dashcards"][0]["id"],
            "db": db}


@pytest.mark.parametrize("name, state", USERS)
@pytest.mark.security_row(14)
def test_saved_questions_models_nested_sources_and_dashcards(world, reference, content, name, state):
    client = getattr(world, name)
    count = reference("SELECT COUNT(*) FROM PEOPLE WHERE STATE = ?", state)[0][0]
    card = content["by_state"]
    assert ok(client.post(f"/api/card/{card}/query"))["data"]["rows"] == [[state, count]]
    nested = mbql(world, {"source-table": f"card__{card}", "aggregation": [["sum", ["field", "count", {"base-type": "type/Integer"}]]]})
    assert rows(client, nested) == [[count]]
    model = mbql(world, {"source-table": f"card__{content['model']}", "aggregation": [["count"]]})
    assert rows(client, model) == [[orders_of(reference, state)]]
    dash, dashcard = content["dashboard"], content["dashcard"]
    body = ok(client.post(f"/api/dashboard/{dash}/dashcard/{dashcard}/card/{card}/query", json={"parameters": []}))
    assert body["data"]["rows"] == [[state, count]]
    # the dashboard's filter offers only the user's values, and its search finds no other state
    assert ok(client.get(f"/api/dashboard/{dash}/params/st/values"))["values"] == [[state]]
    assert ok(client.get(f"/api/dashboard/{dash}/params/st/search/{'C' if state == 'TX' else 'T'}"))["values"] == []
    filtered = ok(client.post(f"/api/dashboard/{dash}/dashcard/{dashcard}/card/{card}/query",
                              json={"parameters": [{"id": "st", "type": "category", "value": ["CA", "TX"],
                                                    "target": ["dimension", field(world, "PEOPLE", "STATE")]}]}))
    assert filtered["data"]["rows"] == [[state, count]]
    # the admin's view of the same card is the whole table
    assert len(ok(world.admin.post(f"/api/card/{card}/query"))["data"]["rows"]) > 40


@pytest.mark.parametrize("name, state", USERS)
@pytest.mark.security_row(14)
def test_pivot_and_exports(world, reference, name, state):
    client = getattr(world, name)
    query = mbql(world, {"source-table": world.tables["ORDERS"], "aggregation": [["count"]],
                         "breakout": [["field", world.fields["PEOPLE"]["STATE"], {"source-field": world.fields["ORDERS"]["USER_ID"]}],
                                      field(world, "ORDERS", "QUANTITY")]})
    body = ok(client.post("/api/dataset/pivot", json={**query, "pivot_rows": [0], "pivot_cols": [1]}))
    states = {r[0] for r in body["data"]["rows"] if r[0] is not None}
    assert states == {state}
    grand = [r for r in body["data"]["rows"] if r[0] is None and r[1] is None]
    assert grand[0][-1] == orders_of(reference, state)
    raw = mbql(world, {"source-table": world.tables["PEOPLE"], "fields": [field(world, "PEOPLE", "ID"),
                                                                          field(world, "PEOPLE", "STATE")]})
    expected = reference("SELECT COUNT(*) FROM PEOPLE WHERE STATE = ?", state)[0][0]
    csv = client.post("/api/dataset/csv", data={"query": json.dumps(raw)})
    assert csv.status_code == 200
    lines = csv.get_data(as_text=True).strip().splitlines()
    assert len(lines) == expected + 1 and {line.rsplit(",", 1)[1] for line in lines[1:]} == {state}
    exported = client.post("/api/dataset/json", data={"query": json.dumps(raw)})
    assert exported.status_code == 200
    assert {r["State"] for r in exported.json} == {state} and len(exported.json) == expected
    xlsx = client.post("/api/dataset/xlsx", data={"query": json.dumps(raw)})
    assert xlsx.status_code == 200
    sheet = zipfile.ZipFile(io.BytesIO(xlsx.get_data())).read("xl/worksheets/sheet1.xml").decode()
    other = "CA" if state == "TX" else "TX"
    assert f">{state}<" in sheet and f">{other}<" not in sheet
    orders_csv = client.post("/api/dataset/csv", data={"query": json.dumps(mbql(world, {"source-table": world.tables["ORDERS"]}))})
    header = orders_csv.get_data(as_text=True).splitlines()[0]
    assert "Discount" not in header and len(orders_csv.get_data(as_text=True).strip().splitlines()) == \
        orders_of(reference, state) + 1


@pytest.mark.parametrize("name, state", USERS)
@pytest.mark.security_row(14)
def test_field_values_search_remapping_and_parameter_values(world, reference, name, state):
    client = getattr(world, name)
    state_id, email = world.fields["PEOPLE"]["STATE"], world.fields["PEOPLE"]["EMAIL"]
    assert ok(client.get(f"/api/field/{state_id}/values"))["values"] == [[state]]
    assert ok(world.admin.get(f"/api/field/{state_id}/values"))["values"] != [[state]]
    body = {"parameter": {"id": "p", "type": "category"}, "field_ids": [state_id]}
    assert ok(client.post("/api/dataset/parameter/values", json=body))["values"] == [[state]]
    assert ok(client.post(f"/api/dataset/parameter/search/{state[0]}", json=body))["values"] == [[state]]
    found = ok(client.get(f"/api/field/{email}/search/{email}?value=a"))
    expected = reference("SELECT COUNT(DISTINCT EMAIL) FROM PEOPLE WHERE STATE = ? AND lower(EMAIL) LIKE 'a%'", state)
    assert len(found) == expected[0][0]
    summary = ok(client.get(f"/api/field/{state_id}/summary"))
    assert summary == [["count", reference("SELECT COUNT(*) FROM PEOPLE WHERE STATE = ?", state)[0][0]],
                       ["distincts", 1]]
    other = reference("SELECT ID FROM PEOPLE WHERE STATE != ? LIMIT 1", state)[0][0]
    mine = reference("SELECT ID, EMAIL FROM PEOPLE WHERE STATE = ? LIMIT 1", state)[0]
    person = world.fields["PEOPLE"]["ID"]
    assert ok(client.get(f"/api/field/{person}/remapping/{email}?value={other}")) == [other]
    assert ok(client.get(f"/api/field/{person}/remapping/{email}?value={mine[0]}")) == [mine[0], mine[1]]


@pytest.mark.security_row(14)
def test_native_queries_are_refused(world):
    # a second group with native rights and no data of its own does not open native SQL to a sandboxed user
    admin, db = world.admin, world.db
    analysts = ok(admin.post("/api/permissions/group", json={"name": "Analysts"}))["id"]
    graph = ok(admin.get("/api/permissions/graph"))
    ok(admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        str(analysts): {str(db): {"view-data": "legacy-no-self-service", "create-queries": "query-builder-and-native"}}}}))
    ok(admin.post("/api/permissions/membership", json={"group_id": analysts, "user_id": world.tx.user["id"]}))
    try:
        native = {"database": db, "type": "native", "native": {"query": "SELECT COUNT(*) FROM PEOPLE"}}
        response = world.tx.post("/api/dataset", json=native)
        assert response.status_code == 403 and "sandboxed" in response.get_data(as_text=True)
        assert world.ca.post("/api/dataset", json=native).status_code == 403
        # a saved native question is refused too, as a native source inside MBQL
        card = ok(admin.post("/api/card", json={"name": "All people", "display": "table", "visualization_settings": {},
                                                "dataset_query": native}))["id"]
        response = world.tx.post(f"/api/card/{card}/query")
        assert response.status_code == 403
        nested = world.tx.post("/api/dataset", json=mbql(world, {"source-table": f"card__{card}"}))
        assert nested.status_code == 403
    finally:
        memberships = ok(admin.get("/api/permissions/membership"))
        for entry in memberships[str(world.tx.user["id"])]:
            if entry["group_id"] == analysts:
                ok(admin.delete(f"/api/permissions/membership/{entry['membership_id']}"), 204)


@pytest.mark.security_row(14)
def test_two_users_never_share_a_cached_result(world, reference, content):
    admin = world.admin
    ok(admin.put("/api/setting/enable-query-caching", json={"value": True}), 204)
    card = content["by_state"]
    ok(admin.put(f"/api/card/{card}", json={"cache_ttl": 10}))
    try:
        first = [ok(c.post(f"/api/card/{card}/query")) for c in (world.tx, world.ca, world.tx, world.ca)]
        assert [b["data"]["rows"][0][0] for b in first] == ["TX", "CA", "TX", "CA"]
        assert first[2].get("cached") and first[3].get("cached")  # each user's own entry is reused
    finally:
        ok(admin.put("/api/setting/enable-query-caching", json={"value": False}), 204)


@pytest.mark.security_row(14)
def test_xray_cards_show_only_the_users_rows(world):
    people, state_id = world.tables["PEOPLE"], world.fields["PEOPLE"]["STATE"]
    xray = ok(world.tx.get(f"/api/automagic-dashboards/table/{people}"))
    queries = [d["card"]["dataset_query"] for d in xray["dashcards"]
               if isinstance(d.get("card"), dict) and d["card"].get("dataset_query")]
    by_state = [q for q in queries if f'["field",{state_id},' in json.dumps(q.get("query", {}).get("breakout"),
                                                                         separators=(",", ":"))]
    assert by_state, "the x-ray of PEOPLE has a card by STATE"
    for query in by_state:
        states = {r[0] for r in rows(world.tx, query)}
        assert states == {"TX"}, states
        assert len({r[0] for r in rows(world.admin, query)}) > 40  # the same card is the whole table to the admin


@pytest.mark.security_row(14)
def test_png_export_draws_only_the_users_rows(world, content):
    # the user's picture of the card is the administrator's picture of the same card filtered to TX
    card = content["by_state"]
    mine = world.tx.post(f"/api/card/{card}/query/png")
    assert mine.status_code == 200 and mine.get_data()[:8] == b"\x89PNG\r\n\x1a\n"
    texas = ok(world.admin.post("/api/card", json={
        "name": "People by state", "display": "table", "visualization_settings": {},
        "dataset_query": mbql(world, {"source-table": world.tables["PEOPLE"], "aggregation": [["count"]],
                                      "breakout": [field(world, "PEOPLE", "STATE")],
                                      "filter": ["=", field(world, "PEOPLE", "STATE"), "TX"]})}))["id"]
    assert world.admin.post(f"/api/card/{texas}/query/png").get_data() == mine.get_data()
    assert world.admin.post(f"/api/card/{card}/query/png").get_data() != mine.get_data()


@pytest.mark.security_row(14)
def test_a_subscription_sent_as_a_sandboxed_creator_carries_only_their_rows(world, content):
    from tests.plugins.subscriptions.support import card_ref, daily, parts, smtp_inbox

    me = world.tx.user
    with smtp_inbox(world.app) as inbox:
        sent = world.tx.post("/api/pulse/test", json={
            "name": "My state", "cards": [card_ref({"id": content["by_state"]}, include_csv=True)],
            "channels": [daily(recipients=[{"id": me["id"]}])]})
        assert sent.status_code == 200, sent.get_data(as_text=True)
        [(_, message)] = inbox.wait(1)
    got = parts(message)
    [(name, csv)] = got["files"]
    states = {line.split(",")[0] for line in csv.decode().splitlines()[1:]}
    assert states == {"TX"}, states  # the attachment is the creator's rows
    assert ">TX<" in got["html"][0] and ">CA<" not in got["html"][0]
