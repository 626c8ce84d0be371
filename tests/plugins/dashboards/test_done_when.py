"""The issue's "done when", through the API only: a new user builds a dashboard with two tabs, four cards
(MBQL, native with a field filter, a card on a model, a text card) and two linked filters, runs every
dashcard with filter values, exports one, copies it deep, reverts an edit, finds it in its collection
and in search, and posts the GET body back unchanged."""
import csv
import io

from core.testing import make_user, sqlite_file, wait_for_sync

SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE invoices (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), amount REAL);
INSERT INTO customers VALUES (1, 'Ann', 'Oslo'), (2, 'Bob', 'Rome'), (3, 'Cy', 'Oslo');
INSERT INTO invoices VALUES (1, 1, 10.0), (2, 1, 5.5), (3, 2, 7.0), (4, 3, 1.0);
"""

CITY = {"id": "p_city", "name": "City", "slug": "city", "type": "string/="}
NAME = {"id": "p_name", "name": "Name", "slug": "name", "type": "string/="}


def by_name(items):
    return {i["name"]: i for i in items}


def ok(response, status=200):
    assert response.status_code == status, (response.status_code, response.json)
    return response.json


def rows(response):
    assert response.status_code == 202, (response.status_code, response.json)
    return response.json["data"]["rows"]


def shop(app, admin):
    """The warehouse, a collection the new user may write in, and the field ids by table and name."""
    path = sqlite_file(app, "shop.db", SHOP)
    db = ok(admin.post("/api/database", json={"name": "Shop", "engine": "sqlite", "details": {"db": path}}))["id"]
    wait_for_sync(app)
    tables = by_name(ok(admin.get(f"/api/database/{db}/metadata"))["tables"])
    fields = {t: {f["name"]: f["id"] for f in tables[t]["fields"]} for t in ("customers", "invoices")}
    for field_id in (fields["customers"]["city"], fields["customers"]["name"]):  # category filters with values
        ok(admin.put(f"/api/field/{field_id}", json={"semantic_type": "type/Category", "has_field_values": "list"}))
        ok(admin.post(f"/api/field/{field_id}/rescan_values"))
    collection = ok(admin.post("/api/collection", json={"name": "Shop reports", "color": "#509EE3"}))["id"]
    graph = ok(admin.get("/api/collection/graph"))
    graph["groups"]["1"][str(collection)] = "write"
    ok(admin.put("/api/collection/graph", json=graph))
    return db, {t: tables[t]["id"] for t in ("customers", "invoices")}, fields, collection


def test_new_user_builds_runs_copies_reverts_and_finds_a_dashboard(app, admin):
    db, table, field, collection = shop(app, admin)
    user = make_user(app, email="builder@example.com")
    customer_fk = field["invoices"]["customer_id"]

    def card(name, dataset_query, **extra):
        return ok(user.post("/api/card", json={"name": name, "display": "table", "visualization_settings": {},
                                               "collection_id": collection, "dataset_query": dataset_query,
                                               **extra}))["id"]

    revenue = card("Revenue per customer", {"database": db, "type": "query", "query": {
        "source-table": table["invoices"], "aggregation": [["sum", ["field", field["invoices"]["amount"], None]]],
        "breakout": [["field", customer_fk, None]]}})
    native = card("Customers by city", {"database": db, "type": "native", "native": {
        "query": "SELECT name FROM customers WHERE {{city}} ORDER BY id",
        "template-tags": {"city": {"id": "t-city", "name": "city", "display-name": "City", "type": "dimension",
                                   "dimension": ["field", field["customers"]["city"], None],
                                   "widget-type": "string/="}}}})
    model = card("Customers model", {"database": db, "type": "query", "query": {"source-table": table["customers"]}},
                 type="model")
    on_model = card("Customer count", {"database": db, "type": "query", "query": {
        "source-table": f"card__{model}", "aggregation": [["count"]]}})

    dashboard = ok(user.post("/api/dashboard", json={"name": "Shop overview", "collection_id": collection,
                                                     "parameters": [CITY, NAME]}))
    did = dashboard["id"]
    via_customer = lambda f: ["dimension", ["field", field["customers"][f], {"source-field": customer_fk}]]  # noqa: E731
    on_customers = lambda f: ["dimension", ["field", field["customers"][f], None]]  # noqa: E731
    body = {"tabs": [{"id": -1, "name": "Sales"}, {"id": -2, "name": "Customers"}], "dashcards": [
        {"id": -1, "card_id": revenue, "dashboard_tab_id": -1, "row": 0, "col": 0, "size_x": 6, "size_y": 4,
         "parameter_mappings": [{"parameter_id": "p_city", "card_id": revenue, "target": via_customer("city")},
                                {"parameter_id": "p_name", "card_id": revenue, "target": via_customer("name")}]},
        {"id": -2, "card_id": native, "dashboard_tab_id": -1, "row": 0, "col": 6, "size_x": 6, "size_y": 4,
         "parameter_mappings": [{"parameter_id": "p_city", "card_id": native,
                                 "target": ["dimension", ["template-tag", "city"]]}]},
        {"id": -3, "card_id": on_model, "dashboard_tab_id": -2, "row": 0, "col": 0, "size_x": 4, "size_y": 3,
         "parameter_mappings": [{"parameter_id": "p_city", "card_id": on_model, "target": on_customers("city")},
                                {"parameter_id": "p_name", "card_id": on_model, "target": on_customers("name")}]},
        {"id": -4, "card_id": None, "dashboard_tab_id": -2, "row": 3, "col": 0, "size_x": 12, "size_y": 2,
         "visualization_settings": {"virtual_card": {"name": None, "display": "text", "visualization_settings": {},
                                                     "dataset_query": {}, "archived": False},
                                    "text": "Numbers are in EUR."}}]}
    built = ok(user.put(f"/api/dashboard/{did}", json={**body, "parameters": [CITY, NAME]}))
    tabs = {t["name"]: t["id"] for t in built["tabs"]}
    assert list(tabs) == ["Sales", "Customers"] and all(t > 0 for t in tabs.values())
    dashcards = {dc["card_id"]: dc for dc in built["dashcards"]}
    assert {dc["dashboard_tab_id"] for dc in built["dashcards"]} == set(tabs.values())
    assert dashcards[None]["visualization_settings"]["text"] == "Numbers are in EUR."
    assert dashcards[revenue]["card"]["name"] == "Revenue per customer" and dashcards[revenue]["dashboard_tab_id"] == tabs["Sales"]

    def run(card_id, *values):
        dashcard = dashcards[card_id]["id"]
        parameters = [{"id": pid, "type": "string/=", "value": value} for pid, value in values]
        return rows(user.post(f"/api/dashboard/{did}/dashcard/{dashcard}/card/{card_id}/query",
                              json={"parameters": parameters}))

    assert run(revenue) == [[1, 15.5], [2, 7.0], [3, 1.0]]
    assert run(revenue, ("p_city", ["Oslo"])) == [[1, 15.5], [3, 1.0]]
    assert run(revenue, ("p_city", ["Oslo"]), ("p_name", ["Cy"])) == [[3, 1.0]]
    assert run(native, ("p_city", ["Rome"])) == [["Bob"]]
    assert run(on_model, ("p_city", ["Oslo"])) == [[2]]
    assert run(on_model, ("p_city", ["Oslo"]), ("p_name", ["Ann", "Bob"])) == [[1]]

    # Linked filters: the names offered are those of the chosen city.
    names = ok(user.get(f"/api/dashboard/{did}/params/p_name/values?p_city=Oslo"))
    assert sorted(v[0] for v in names["values"]) == ["Ann", "Cy"] and names["has_more_values"] is False
    assert sorted(v[0] for v in ok(user.get(f"/api/dashboard/{did}/params/p_city/values"))["values"]) == ["Oslo", "Rome"]

    export = user.post(f"/api/dashboard/{did}/dashcard/{dashcards[revenue]['id']}/card/{revenue}/query/csv",
                       data={"parameters": '[{"id": "p_city", "type": "string/=", "value": ["Oslo"]}]'})
    assert export.status_code == 200
    assert len(list(csv.reader(io.StringIO(export.data.decode())))) == 3  # header and the two Oslo customers

    # The GET body posted back as it is changes nothing.
    current = ok(user.get(f"/api/dashboard/{did}"))
    again = ok(user.put(f"/api/dashboard/{did}", json=current))
    assert [(d["id"], d["card_id"], d["dashboard_tab_id"]) for d in again["dashcards"]] == \
        [(d["id"], d["card_id"], d["dashboard_tab_id"]) for d in current["dashcards"]]
    assert again["tabs"] == current["tabs"] and again["parameters"] == current["parameters"]

    # An edit reverted: the dashboard's name and its cards come back.
    ok(user.put(f"/api/dashboard/{did}", json={"name": "Renamed", "dashcards": current["dashcards"][:1],
                                               "tabs": current["tabs"]}))
    assert len(ok(user.get(f"/api/dashboard/{did}"))["dashcards"]) == 1
    revisions = ok(user.get(f"/api/dashboard/{did}/revisions"))
    assert revisions[0]["is_reversion"] is False and revisions[-1]["is_creation"] is True
    ok(user.post(f"/api/dashboard/{did}/revert", json={"revision_id": revisions[1]["id"]}))
    reverted = ok(user.get(f"/api/dashboard/{did}"))
    assert reverted["name"] == "Shop overview"
    # As in Metabase, dashcards deleted since come back as new rows: compare what they hold.
    held = lambda dashboard: sorted((d["card_id"] or 0, d["row"], d["col"]) for d in dashboard["dashcards"])  # noqa: E731
    assert held(reverted) == held(current)
    assert ok(user.get(f"/api/dashboard/{did}/revisions"))[0]["is_reversion"] is True

    # A deep copy has its own cards, wired the same way, and they run.
    copy = ok(user.post(f"/api/dashboard/{did}/copy", json={"name": "Shop overview (copy)",
                                                            "collection_id": collection, "is_deep_copy": True}))
    copied = ok(user.get(f"/api/dashboard/{copy['id']}"))
    copied_cards = {dc["card_id"] for dc in copied["dashcards"]} - {None}
    assert len(copied_cards) == 3 and not copied_cards & {revenue, native, on_model}
    assert {t["name"] for t in copied["tabs"]} == {"Sales", "Customers"}
    assert not {t["id"] for t in copied["tabs"]} & set(tabs.values())
    for dashcard in copied["dashcards"]:
        assert all(m["card_id"] == dashcard["card_id"] for m in dashcard["parameter_mappings"])
        if dashcard["card_id"] is not None:
            query = user.post(f"/api/dashboard/{copy['id']}/dashcard/{dashcard['id']}/card/{dashcard['card_id']}/query",
                              json={"parameters": [{"id": "p_city", "type": "string/=", "value": ["Oslo"]}]})
            assert rows(query)

    # Found in its collection and in search.
    items = ok(user.get(f"/api/collection/{collection}/items?models=dashboard"))
    assert {i["name"] for i in items["data"]} == {"Shop overview", "Shop overview (copy)"}
    assert all(i["model"] == "dashboard" for i in items["data"])
    found = ok(user.get("/api/search?q=shop%20overview&models=dashboard"))
    assert {r["id"] for r in found["data"] if r["model"] == "dashboard"} == {did, copy["id"]}
