"""POST /api/dashboard/:id/copy: shallow and deep copies, tabs, series and filter mappings rewired,
cards the caller cannot read left out and listed, the permission checks and the one transaction."""
import pytest

from tests.plugins.cards.fixtures import card_body, mbql_query, native_query


def set_collection_access(admin, collection_id, level: str) -> None:
    graph = admin.get("/api/collection/graph").json
    graph["groups"]["1"][str(collection_id)] = level
    assert admin.put("/api/collection/graph", json=graph).status_code == 200


def new_collection(admin, name: str, level: str | None = "write") -> int:
    collection = admin.post("/api/collection", json={"name": name, "color": "#509EE3"}).json["id"]
    if level is not None:
        set_collection_access(admin, collection, level)
    return collection


def make_dashboard(admin, collection_id, tabs, dashcards, parameters=()):
    """A dashboard built through the API with tabs (names) and dashcards ({card_id, tab (index), series,
    parameter_mappings, visualization_settings}); returns its id."""
    created = admin.post("/api/dashboard", json={"name": "Sales", "description": "All of it",
                                                 "collection_id": collection_id, "parameters": list(parameters)})
    assert created.status_code == 200, created.json
    body = {"tabs": [{"id": -(i + 1), "name": name} for i, name in enumerate(tabs)], "dashcards": [
        {"id": -(i + 1), "card_id": spec.get("card_id"), "row": i * 4, "col": 0, "size_x": 4, "size_y": 4,
         "series": [{"id": card_id} for card_id in spec.get("series", [])],
         "parameter_mappings": spec.get("parameter_mappings", []),
         "visualization_settings": spec.get("visualization_settings", {}),
         **({"dashboard_tab_id": -(spec["tab"] + 1)} if "tab" in spec else {})}
        for i, spec in enumerate(dashcards)]}
    updated = admin.put(f"/api/dashboard/{created.json['id']}", json=body)
    assert updated.status_code == 200, updated.json
    return created.json["id"]


def layout(admin, dashboard_id):
    """(tab id -> name, dashcards in row order) of a dashboard, as GET /api/dashboard/:id shows them."""
    dashboard = admin.get(f"/api/dashboard/{dashboard_id}").json
    tabs = {t["id"]: t["name"] for t in dashboard["tabs"]}
    cards = [{"card_id": d["card_id"], "tab": d["dashboard_tab_id"], "series": [c["id"] for c in d["series"]],
              "parameter_mappings": d["parameter_mappings"], "visualization_settings": d["visualization_settings"]}
             for d in sorted(dashboard["dashcards"], key=lambda d: d["row"])]
    return tabs, cards


def mapping(card_id, field_id):
    return {"parameter_id": "p1", "card_id": card_id, "target": ["dimension", ["field", field_id, None]]}


@pytest.fixture
def sales(app, admin, warehouse):
    """A dashboard in a shared collection with two tabs: an MBQL card with a series and a mapped filter,
    a native card, a model, a text card."""
    shared = new_collection(admin, "Shared")
    people = mbql_query(warehouse["db"], **{"source-table": warehouse["people"]})
    ids = {"collection": shared}
    ids["mbql"] = admin.post("/api/card", json=card_body("People", people, collection_id=shared)).json["id"]
    ids["series"] = admin.post("/api/card", json=card_body("Orders", mbql_query(
        warehouse["db"], **{"source-table": warehouse["orders"]}), collection_id=shared)).json["id"]
    ids["native"] = admin.post("/api/card", json=card_body("Ages", native_query(
        warehouse["db"], "SELECT age FROM people ORDER BY id"), collection_id=shared)).json["id"]
    ids["model"] = admin.post("/api/card", json=card_body("People model", people, collection_id=shared,
                                                          type="model")).json["id"]
    text = {"virtual_card": {"display": "text"}, "text": "Hello"}
    ids["dashboard"] = make_dashboard(admin, shared, ["One", "Two"], [
        {"card_id": ids["mbql"], "tab": 0, "series": [ids["series"]],
         "parameter_mappings": [mapping(ids["mbql"], warehouse["people.age"])]},
        {"card_id": ids["native"], "tab": 1},
        {"card_id": ids["model"], "tab": 1, "parameter_mappings": [mapping(ids["model"], warehouse["people.age"])]},
        {"card_id": None, "tab": 0, "visualization_settings": text},
    ], parameters=[{"id": "p1", "name": "Age", "slug": "age", "type": "number/="}])
    return ids


def test_shallow_copy_references_the_same_cards(app, admin, sales):
    target = new_collection(admin, "Target")
    copied = admin.post(f"/api/dashboard/{sales['dashboard']}/copy", json={"collection_id": target, "name": "Copy"})
    assert copied.status_code == 200, copied.json
    new = copied.json
    assert new["id"] != sales["dashboard"] and new["name"] == "Copy" and new["collection_id"] == target
    assert new["description"] == "All of it" and "uncopied" not in new
    assert new["parameters"] == [{"id": "p1", "name": "Age", "slug": "age", "type": "number/="}]
    old_tabs, old_cards = layout(admin, sales["dashboard"])
    tabs, cards = layout(admin, new["id"])
    assert sorted(tabs.values()) == ["One", "Two"] and not set(tabs) & set(old_tabs)
    assert [c["card_id"] for c in cards] == [c["card_id"] for c in old_cards]
    assert [tabs[c["tab"]] for c in cards] == [old_tabs[c["tab"]] for c in old_cards]
    assert [(c["series"], c["parameter_mappings"], c["visualization_settings"]) for c in cards] == \
        [(c["series"], c["parameter_mappings"], c["visualization_settings"]) for c in old_cards]
    assert len(admin.get(f"/api/collection/{target}/items?models=card").json["data"]) == 0
    assert len(new["dashcards"]) == 4 and len(new["tabs"]) == 2 and new["can_write"] is True  # hydrated
    assert new["dashcards"][0]["card"]["name"] in ("People", "Ages", "People model")


def test_the_copy_records_its_creation_with_its_layout(admin, sales):
    """The creation revision holds the copied tabs and dashcards: reverting to it after emptying the copy
    brings them back (through /api/revision, the dashboards' registered kind)."""
    new = admin.post(f"/api/dashboard/{sales['dashboard']}/copy", json={"name": "Copy"}).json
    history = admin.get(f"/api/revision?entity=dashboard&id={new['id']}").json
    assert [(r["is_creation"], r["description"]) for r in history] == [(True, "created this.")]
    emptied = admin.put(f"/api/dashboard/{new['id']}", json={"tabs": [], "dashcards": []})
    assert emptied.status_code == 200 and emptied.json["dashcards"] == []
    reverted = admin.post("/api/revision/revert", json={"entity": "dashboard", "id": new["id"],
                                                        "revision_id": history[0]["id"]})
    assert reverted.status_code == 200 and reverted.json["is_reversion"] is True
    tabs, cards = layout(admin, new["id"])
    assert sorted(tabs.values()) == ["One", "Two"]
    assert sorted(c["card_id"] or 0 for c in cards) == sorted([sales["mbql"], sales["native"], sales["model"], 0])
    assert admin.get(f"/api/revision/dashboard/{new['id']}").json[0]["is_reversion"] is True


def test_deep_copy_duplicates_cards_and_rewires_everything(app, admin, user, sales, warehouse):
    target = new_collection(admin, "Target")
    copied = user.post(f"/api/dashboard/{sales['dashboard']}/copy", json={"collection_id": target,
                                                                         "is_deep_copy": True})
    assert copied.status_code == 200, copied.json
    new = copied.json
    assert new["name"] == "Sales" and new["creator_id"] == user.user["id"] and "uncopied" not in new
    tabs, cards = layout(admin, new["id"])
    by_old = dict(zip((sales["mbql"], sales["native"], sales["model"], None), cards))
    items = {i["name"]: i["id"] for i in admin.get(f"/api/collection/{target}/items?models=card").json["data"]}
    assert set(items) == {"People", "Orders", "Ages"}  # the model is referenced, not copied
    mbql, native, model, text = by_old[sales["mbql"]], by_old[sales["native"]], by_old[sales["model"]], by_old[None]
    assert mbql["card_id"] == items["People"] and mbql["series"] == [items["Orders"]]
    assert mbql["parameter_mappings"] == [mapping(items["People"], warehouse["people.age"])]
    assert native["card_id"] == items["Ages"]
    assert model["card_id"] == sales["model"] and model["parameter_mappings"][0]["card_id"] == sales["model"]
    assert text["card_id"] is None and text["visualization_settings"]["text"] == "Hello"
    assert tabs[mbql["tab"]] == "One" and tabs[native["tab"]] == "Two" and tabs[text["tab"]] == "One"
    for name in ("People", "Orders", "Ages"):
        card = user.get(f"/api/card/{items[name]}").json
        assert card["collection_id"] == target and card["creator_id"] == user.user["id"]
        history = user.get(f"/api/revision?entity=card&id={items[name]}").json
        assert [r["is_creation"] for r in history] == [True]
        ran = user.post(f"/api/card/{items[name]}/query")
        assert ran.status_code == 202 and ran.json["row_count"] > 0, ran.json
    ages = user.post(f"/api/card/{items['Ages']}/query").json["data"]["rows"]
    assert ages == [[36], [41], [85]]


def test_deep_copy_into_the_same_collection_marks_duplicates(app, admin, sales):
    copied = admin.post(f"/api/dashboard/{sales['dashboard']}/copy",
                        json={"collection_id": sales["collection"], "is_deep_copy": True})
    assert copied.status_code == 200, copied.json
    names = sorted(i["name"] for i in admin.get(f"/api/collection/{sales['collection']}/items?models=card&models=dataset").json["data"])
    assert names == ["Ages", "Ages - Duplicate", "Orders", "Orders - Duplicate", "People", "People - Duplicate",
                     "People model"]


def test_deep_copy_leaves_out_cards_the_caller_cannot_read(app, admin, user, sales, warehouse):
    hidden = new_collection(admin, "Hidden", level="none")
    secret = admin.post("/api/card", json=card_body("Secret", native_query(warehouse["db"], "SELECT 1 AS s"),
                                                    collection_id=hidden)).json["id"]
    secret_series = admin.post("/api/card", json=card_body("Secret series", native_query(warehouse["db"], "SELECT 2 AS s"),
                                                           collection_id=hidden)).json["id"]
    dashboard = make_dashboard(admin, sales["collection"], [], [
        {"card_id": sales["mbql"], "series": [secret_series, sales["series"]]},
        {"card_id": secret, "series": [sales["native"]]},
    ])
    target = new_collection(admin, "Target")
    copied = user.post(f"/api/dashboard/{dashboard}/copy", json={"collection_id": target, "is_deep_copy": True})
    assert copied.status_code == 200, copied.json
    assert sorted(c["id"] for c in copied.json["uncopied"]) == sorted([secret, secret_series, sales["native"]])
    assert all(set(c) == {"id"} for c in copied.json["uncopied"])
    _, cards = layout(admin, copied.json["id"])
    items = {i["name"]: i["id"] for i in admin.get(f"/api/collection/{target}/items?models=card").json["data"]}
    assert set(items) == {"People", "Orders"}
    assert [(c["card_id"], c["series"]) for c in cards] == [(items["People"], [items["Orders"]])]


def test_permissions(app, admin, user, sales, warehouse):
    hidden = new_collection(admin, "Hidden", level="none")
    readonly = new_collection(admin, "Read only", level="read")
    secret_dashboard = make_dashboard(admin, hidden, [], [{"card_id": sales["mbql"]}])
    assert user.post(f"/api/dashboard/{secret_dashboard}/copy", json={}).status_code == 403
    assert user.post(f"/api/dashboard/{sales['dashboard']}/copy", json={"collection_id": readonly}).status_code == 403
    assert user.post(f"/api/dashboard/{sales['dashboard']}/copy", json={"collection_id": 99999}).status_code == 404
    assert user.post("/api/dashboard/99999/copy", json={}).status_code == 404
    assert user.post(f"/api/dashboard/{sales['dashboard']}/copy", json={"name": ""}).status_code == 400
    assert user.post(f"/api/dashboard/{sales['dashboard']}/copy", json={"is_deep_copy": "yes"}).status_code == 400
    assert len(admin.get(f"/api/collection/{readonly}/items").json["data"]) == 0


def test_a_failing_copy_writes_nothing(app, admin, sales, monkeypatch):
    """The creation revision is the copy's last write: when it fails, no dashboard, tab or card remains."""
    from core.appdb.models import Card
    from core.http.errors import Forbidden
    from plugins.dashboards import revisions
    from plugins.dashboards.models import Dashboard, DashboardTab

    def fail(*args, **kwargs):
        raise Forbidden()

    monkeypatch.setattr(revisions, "record", fail)
    target = new_collection(admin, "Target")
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        before = (session.query(Dashboard).count(), session.query(DashboardTab).count(), session.query(Card).count())
    refused = admin.post(f"/api/dashboard/{sales['dashboard']}/copy", json={"collection_id": target, "is_deep_copy": True})
    assert refused.status_code == 403
    with app.app_context(), state.db.session() as session:
        assert (session.query(Dashboard).count(), session.query(DashboardTab).count(),
                session.query(Card).count()) == before


def test_dashcards_of_archived_cards_are_not_copied(admin, sales):
    assert admin.put(f"/api/card/{sales['native']}", json={"archived": True}).status_code == 200
    for deep in (False, True):
        copied = admin.post(f"/api/dashboard/{sales['dashboard']}/copy", json={"is_deep_copy": deep})
        assert copied.status_code == 200, copied.json
        _, cards = layout(admin, copied.json["id"])
        assert len(cards) == 3 and sales["native"] not in [c["card_id"] for c in cards]
    names = [i["name"] for i in admin.get("/api/collection/root/items?models=card").json["data"]]
    assert "Ages" not in names
