"""PUT /api/dashboard/:id with `dashcards` and `tabs` (the full desired sets), its checks, the one
transaction, the GET body posted back, and the deprecated PUT /api/dashboard/:id/cards."""
import pytest

from .layout_helpers import (
    block_queries,
    collection_for_all_users,
    dashboard,
    dashcard,
    mapping,
    mbql_card,
    native_card,
    without_view,
)


def put(client, dash_id, **body):
    return client.put(f"/api/dashboard/{dash_id}", json=body)


def revision_count(client, dash_id):
    return len(client.get(f"/api/dashboard/{dash_id}/revisions").json)


@pytest.fixture
def cards(admin, warehouse):
    return [mbql_card(admin, warehouse, f"Card {i}") for i in range(3)]


def test_tabs_are_created_positioned_and_temporary_ids_remapped(admin, cards):
    dash = dashboard(admin)
    response = put(admin, dash["id"], tabs=[{"id": -10, "name": "First"}, {"id": -20, "name": "Second"}],
                   dashcards=[dashcard(-1, cards[0]["id"], -20), dashcard(-2, cards[1]["id"], -10)])
    assert response.status_code == 200, response.json
    tabs = response.json["tabs"]
    assert [(t["name"], t["position"]) for t in tabs] == [("First", 0), ("Second", 1)]
    assert all(t["id"] > 0 for t in tabs)
    by_card = {d["card_id"]: d for d in response.json["dashcards"]}
    assert by_card[cards[0]["id"]]["dashboard_tab_id"] == tabs[1]["id"]
    assert by_card[cards[1]["id"]]["dashboard_tab_id"] == tabs[0]["id"]

    # reorder and rename; delete the first tab: its dashcards go with it
    first, second = tabs
    moved = put(admin, dash["id"], tabs=[{"id": second["id"], "name": "Second!"}],
                dashcards=[{**dashcard(d["id"], d["card_id"], d["dashboard_tab_id"])}
                           for d in response.json["dashcards"] if d["dashboard_tab_id"] == second["id"]])
    assert moved.status_code == 200, moved.json
    assert [(t["id"], t["name"], t["position"]) for t in moved.json["tabs"]] == [(second["id"], "Second!", 0)]
    assert [d["card_id"] for d in moved.json["dashcards"]] == [cards[0]["id"]]
    # tabs alone: deleting the last tab leaves a dashboard without tabs whose cards need none
    untabbed = put(admin, dash["id"], tabs=[], dashcards=[dashcard(-5, cards[2]["id"])])
    assert untabbed.status_code == 200 and untabbed.json["tabs"] == []
    assert [d["card_id"] for d in untabbed.json["dashcards"]] == [cards[2]["id"]]


def test_every_dashcard_needs_a_tab_once_the_dashboard_has_tabs(admin, cards):
    dash = dashboard(admin)
    missing = put(admin, dash["id"], tabs=[{"id": -1, "name": "A"}], dashcards=[dashcard(-1, cards[0]["id"])])
    assert missing.status_code == 400 and missing.json == "This dashboard has tab, makes sure every card has a tab"
    stray = put(admin, dash["id"], tabs=[{"id": -1, "name": "A"}], dashcards=[dashcard(-1, cards[0]["id"], -7)])
    assert stray.status_code == 400 and "dashboard_tab_id" in stray.json["errors"]
    # a tab added to a dashboard whose cards sit on no tab
    assert put(admin, dash["id"], dashcards=[dashcard(-1, cards[0]["id"])]).status_code == 200
    alone = put(admin, dash["id"], tabs=[{"id": -1, "name": "A"}])
    assert alone.status_code == 400 and alone.json == "This dashboard has tab, makes sure every card has a tab"
    assert admin.get(f"/api/dashboard/{dash['id']}").json["tabs"] == []


def test_dashcards_are_created_updated_and_deleted_with_series_and_virtual_cards(admin, cards):
    dash = dashboard(admin)
    text = {"virtual_card": {"display": "text", "archived": False, "visualization_settings": {}}, "text": "# Hello"}
    created = put(admin, dash["id"], dashcards=[
        dashcard(-1, cards[0]["id"], series=[{"id": cards[2]["id"]}, {"id": cards[1]["id"]}]),
        dashcard(-2, None, visualization_settings=text, size_x=24, size_y=1),
        dashcard(-3, cards[1]["id"], col=4)]).json
    first, virtual, third = created["dashcards"]
    assert [s["id"] for s in first["series"]] == [cards[2]["id"], cards[1]["id"]]
    assert virtual["card_id"] is None and virtual["card"] is None and virtual["visualization_settings"] == text
    assert (virtual["size_x"], virtual["size_y"]) == (24, 1)

    updated = put(admin, dash["id"], dashcards=[
        {**dashcard(first["id"], cards[0]["id"], row=5), "series": [{"id": cards[1]["id"]}]},
        {"id": virtual["id"], "size_x": 12, "size_y": 2, "row": 0, "col": 0}]).json
    assert [d["id"] for d in updated["dashcards"]] == [first["id"], virtual["id"]]
    again_first, again_virtual = updated["dashcards"]
    assert again_first["row"] == 5 and [s["id"] for s in again_first["series"]] == [cards[1]["id"]]
    # keys not sent are kept
    assert again_virtual["visualization_settings"] == text and again_virtual["size_x"] == 12


def test_parameter_mappings_are_kept_as_sent(admin, cards, warehouse):
    dash = dashboard(admin, parameters=[{"id": "p", "type": "category"}])
    sent = {**mapping("p", cards[0]["id"], warehouse["people.first_name"]), "extra": {"kept": True}}
    response = put(admin, dash["id"], dashcards=[dashcard(-1, cards[0]["id"], parameter_mappings=[sent])])
    assert response.json["dashcards"][0]["parameter_mappings"] == [sent]


def test_bad_dashcards_are_400s(admin, cards):
    dash = dashboard(admin)
    duplicate = put(admin, dash["id"], dashcards=[dashcard(-1, cards[0]["id"]), dashcard(-1, cards[1]["id"])])
    assert duplicate.status_code == 400 and "dashcards" in duplicate.json["errors"]
    for bad in ({"size_x": 0}, {"row": -1}, {"size_y": 2**40}, {"card_id": "x"}, {"series": [{}]},
                {"parameter_mappings": [{"target": []}]}):
        response = put(admin, dash["id"], dashcards=[{**dashcard(-1, cards[0]["id"]), **bad}])
        assert response.status_code == 400, (bad, response.json)
    tabs = put(admin, dash["id"], tabs=[{"id": -1, "name": "A"}, {"id": -1, "name": "B"}])
    assert tabs.status_code == 400 and "tabs" in tabs.json["errors"]


@pytest.mark.security_row(15)
def test_cards_placed_must_exist_be_readable_and_not_archived(admin, user, cards, warehouse):
    writable = collection_for_all_users(admin, "Shared", "write")
    dash = dashboard(user, collection_id=writable)
    assert put(user, dash["id"], dashcards=[dashcard(-1, 99999)]).status_code == 404
    private = mbql_card(admin, warehouse, "Private", collection_id=admin.user["personal_collection_id"])
    assert put(user, dash["id"], dashcards=[dashcard(-1, private["id"])]).status_code == 403
    assert put(user, dash["id"], dashcards=[dashcard(-1, cards[0]["id"],
                                                     series=[{"id": private["id"]}])]).status_code == 403
    admin.put(f"/api/card/{cards[2]['id']}", json={"archived": True})
    archived = put(user, dash["id"], dashcards=[dashcard(-1, cards[2]["id"])])
    assert archived.status_code == 404 and archived.json["error_code"] == "archived"
    assert user.get(f"/api/dashboard/{dash['id']}").json["dashcards"] == []


def test_an_invalid_third_dashcard_leaves_the_dashboard_exactly_as_it_was(admin, user, cards, warehouse):
    dash = dashboard(admin, parameters=[{"id": "p", "type": "category"}])
    setup = put(admin, dash["id"], tabs=[{"id": -1, "name": "Only"}],
                dashcards=[dashcard(-1, cards[0]["id"], -1), dashcard(-2, cards[1]["id"], -1)])
    tab = setup.json["tabs"][0]["id"]
    first, second = setup.json["dashcards"]
    before = without_view(admin.get(f"/api/dashboard/{dash['id']}").json)
    revisions = revision_count(admin, dash["id"])
    invalid_thirds = [dashcard(-3, 99999, tab),  # no such card: 404
                      dashcard(-3, cards[2]["id"]),  # no tab on a tabbed dashboard: 400
                      dashcard(-3, cards[2]["id"], -99)]  # a tab that is not there: 400
    for third in invalid_thirds:
        response = put(admin, dash["id"], name="Changed", description="changed", width="full",
                       tabs=[{"id": tab, "name": "Renamed"}, {"id": -2, "name": "New tab"}],
                       dashcards=[{**dashcard(first["id"], cards[0]["id"], tab), "row": 9,
                                   "parameter_mappings": [mapping("p", cards[0]["id"], warehouse["people.age"])]},
                                  dashcard(-9, cards[2]["id"], -2), third])
        assert response.status_code in (400, 404), response.json
        after = without_view(admin.get(f"/api/dashboard/{dash['id']}").json)
        assert after == before
    assert second["id"] in [d["id"] for d in before["dashcards"]]
    assert revision_count(admin, dash["id"]) == revisions


def test_posting_the_get_body_back_changes_nothing(admin, cards, warehouse):
    native = native_card(admin, warehouse)
    dash = dashboard(admin, parameters=[{"id": "p", "type": "string/="}, {"id": "q", "type": "category"}])
    put(admin, dash["id"], tabs=[{"id": -1, "name": "One"}, {"id": -2, "name": "Two"}], dashcards=[
        dashcard(-1, cards[0]["id"], -1, series=[{"id": cards[1]["id"]}],
                 parameter_mappings=[mapping("p", cards[0]["id"], warehouse["people.first_name"])]),
        dashcard(-2, native["id"], -2, parameter_mappings=[
            {"parameter_id": "q", "card_id": native["id"], "target": ["dimension", ["template-tag", "name"]]}]),
        dashcard(-3, None, -2, visualization_settings={"virtual_card": {"display": "heading"}, "text": "H"})])
    before = admin.get(f"/api/dashboard/{dash['id']}").json
    revisions = revision_count(admin, dash["id"])
    response = admin.put(f"/api/dashboard/{dash['id']}", json=before)
    assert response.status_code == 200, response.json
    after = admin.get(f"/api/dashboard/{dash['id']}").json
    assert without_view(after) == without_view(before)
    assert without_view(response.json) == without_view(before)
    assert revision_count(admin, dash["id"]) == revisions


@pytest.mark.security_row(15)
def test_new_mappings_need_query_permission_on_the_mapped_table(admin, user, warehouse):
    writable = collection_for_all_users(admin, "Team", "write")
    card = mbql_card(admin, warehouse, "Team card", collection_id=writable)
    native = native_card(admin, warehouse, "Team native", collection_id=writable)
    dash = dashboard(user, collection_id=writable, parameters=[{"id": "p", "type": "category"}])
    existing = mapping("p", card["id"], warehouse["people.first_name"])
    assert put(user, dash["id"], dashcards=[dashcard(-1, card["id"], parameter_mappings=[existing]),
                                            dashcard(-2, native["id"])]).status_code == 200
    block_queries(admin, warehouse["db"])
    body = user.get(f"/api/dashboard/{dash['id']}").json
    # the mapping already there stays: the GET body goes back
    assert user.put(f"/api/dashboard/{dash['id']}", json=body).status_code == 200
    first, second = body["dashcards"]
    refused = put(user, dash["id"], dashcards=[
        {**dashcard(first["id"], card["id"]), "parameter_mappings": [existing, mapping("p", card["id"],
                                                                                      warehouse["people.age"])]},
        dashcard(second["id"], native["id"])])
    assert refused.status_code == 403 and "data permissions" in refused.json
    tag = {"parameter_id": "p", "card_id": native["id"], "target": ["dimension", ["template-tag", "name"]]}
    assert put(user, dash["id"], dashcards=[dashcard(first["id"], card["id"]),
                                            dashcard(second["id"], native["id"], parameter_mappings=[tag])]
               ).status_code == 403
    variable = {"parameter_id": "p", "card_id": native["id"], "target": ["variable", ["template-tag", "other"]]}
    assert put(user, dash["id"], dashcards=[dashcard(first["id"], card["id"]),
                                            dashcard(second["id"], native["id"], parameter_mappings=[variable])]
               ).status_code == 200
    assert put(admin, dash["id"], dashcards=[dashcard(-1, card["id"], parameter_mappings=[
        mapping("p", card["id"], warehouse["people.age"])])]).status_code == 200
    missing = put(admin, dash["id"], dashcards=[dashcard(-1, card["id"], parameter_mappings=[
        mapping("p", 99999, warehouse["people.age"])])])
    assert missing.status_code == 404


def test_dashcards_of_archived_cards_are_hidden_and_kept(admin, cards):
    dash = dashboard(admin)
    put(admin, dash["id"], dashcards=[dashcard(-1, cards[0]["id"]), dashcard(-2, cards[1]["id"])])
    admin.put(f"/api/card/{cards[1]['id']}", json={"archived": True})
    body = admin.get(f"/api/dashboard/{dash['id']}").json
    assert [d["card_id"] for d in body["dashcards"]] == [cards[0]["id"]]
    assert admin.put(f"/api/dashboard/{dash['id']}", json=body).status_code == 200
    admin.put(f"/api/card/{cards[1]['id']}", json={"archived": False})
    assert [d["card_id"] for d in admin.get(f"/api/dashboard/{dash['id']}").json["dashcards"]] == \
        [cards[0]["id"], cards[1]["id"]]


def test_deprecated_put_cards(admin, user, cards):
    dash = dashboard(admin, collection_id=admin.user["personal_collection_id"])
    response = admin.put(f"/api/dashboard/{dash['id']}/cards", json={
        "cards": [dashcard(-1, cards[0]["id"], -1, series=[{"id": cards[1]["id"]}])],
        "tabs": [{"id": -1, "name": "Tab"}]})
    assert response.status_code == 200, response.json
    assert set(response.json) == {"cards", "tabs"}
    [card], [tab] = response.json["cards"], response.json["tabs"]
    assert card["card"]["id"] == cards[0]["id"] and card["dashboard_tab_id"] == tab["id"]
    assert [s["id"] for s in card["series"]] == [cards[1]["id"]]
    assert admin.put(f"/api/dashboard/{dash['id']}/cards", json={}).status_code == 400
    assert user.put(f"/api/dashboard/{dash['id']}/cards", json={"cards": []}).status_code == 403
    descriptions = [r["description"] for r in admin.get(f"/api/dashboard/{dash['id']}/revisions").json]
    assert descriptions[0] == "added a card and added a tab."


def test_a_new_user_builds_a_dashboard_with_tabs_filters_and_every_kind_of_card(user, warehouse):
    personal = user.user["personal_collection_id"]
    mbql = mbql_card(user, warehouse, "Orders", collection_id=personal, table="orders")
    native = native_card(user, warehouse, "People by name", collection_id=personal)
    model = mbql_card(user, warehouse, "People model", collection_id=personal)
    user.put(f"/api/card/{model['id']}", json={"type": "model"})
    on_model = user.post("/api/card", json={
        "name": "From the model", "display": "table", "visualization_settings": {}, "collection_id": personal,
        "dataset_query": {"database": warehouse["db"], "type": "query",
                          "query": {"source-table": f"card__{model['id']}"}}}).json
    dash = dashboard(user, "Built", collection_id=personal,
                     parameters=[{"id": "name", "type": "string/=", "name": "Name"},
                                 {"id": "person", "type": "id", "name": "Person"}])
    name_on_model = ["dimension", ["field", "first_name", {"base-type": "type/Text"}]]
    built = put(user, dash["id"], tabs=[{"id": -1, "name": "Numbers"}, {"id": -2, "name": "Notes"}], dashcards=[
        dashcard(-1, mbql["id"], -1, parameter_mappings=[mapping("person", mbql["id"], warehouse["orders.person_id"])]),
        dashcard(-2, native["id"], -1, col=4, parameter_mappings=[
            {"parameter_id": "name", "card_id": native["id"], "target": ["dimension", ["template-tag", "name"]]}]),
        dashcard(-3, on_model["id"], -1, col=8, parameter_mappings=[
            {"parameter_id": "name", "card_id": on_model["id"], "target": name_on_model}]),
        dashcard(-4, None, -2, visualization_settings={"virtual_card": {"display": "text"}, "text": "Notes"})])
    assert built.status_code == 200, built.json
    body = user.get(f"/api/dashboard/{dash['id']}").json
    assert [len([d for d in body["dashcards"] if d["dashboard_tab_id"] == t["id"]]) for t in body["tabs"]] == [3, 1]
    assert {str(warehouse["orders.person_id"]), str(warehouse["people.first_name"])} <= set(body["param_fields"])
    assert body["can_write"] is True and all(d["card"] is None or "name" in d["card"] for d in body["dashcards"])
    revisions = revision_count(user, dash["id"])
    again = user.put(f"/api/dashboard/{dash['id']}", json=body)
    assert again.status_code == 200 and without_view(again.json) == without_view(body)
    assert revision_count(user, dash["id"]) == revisions
