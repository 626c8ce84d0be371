"""Dashboard revisions: every change recorded with Metabase's phrases, /revisions newest first, and
/revert restoring the plain keys, the tabs and the dashcards (recorded as a reversion)."""
from .layout_helpers import dashboard, dashcard, mbql_card, without_view


def history(client, dash_id):
    response = client.get(f"/api/dashboard/{dash_id}/revisions")
    assert response.status_code == 200, response.json
    return response.json


def test_each_change_is_recorded_with_its_description(admin, warehouse):
    cards = [mbql_card(admin, warehouse, f"C{i}") for i in range(2)]
    dash = dashboard(admin, "Revised")
    admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [dashcard(-1, cards[0]["id"])]})
    first = admin.get(f"/api/dashboard/{dash['id']}").json["dashcards"][0]
    moved = {**dashcard(first["id"], cards[0]["id"]), "row": 4}
    admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [moved]})
    admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [
        {**moved, "visualization_settings": {"card.title": "T"}}]})
    admin.put(f"/api/dashboard/{dash['id']}", json={"name": "Renamed", "dashcards": []})
    admin.put(f"/api/dashboard/{dash['id']}", json={"name": "Renamed"})  # no change: no revision
    admin.put(f"/api/dashboard/{dash['id']}", json={"tabs": [{"id": -1, "name": "A"}, {"id": -2, "name": "B"}]})
    admin.put(f"/api/dashboard/{dash['id']}", json={"width": "full", "auto_apply_filters": False})
    revisions = history(admin, dash["id"])
    assert [r["description"] for r in revisions] == [
        "changed the width setting to full and set auto apply filters to false.",
        "added 2 tabs.",
        'renamed this Dashboard from "Revised" to "Renamed" and removed a card.',
        "modified the cards.",
        "rearranged the cards.",
        "added a card.",
        "created this.",
    ]
    assert [r["is_creation"] for r in revisions] == [False] * 6 + [True]
    assert revisions[0]["most_recent"] is True and not any(r["most_recent"] for r in revisions[1:])
    assert revisions[0]["user"]["common_name"] == "Ada Admin"
    assert revisions[2]["diff"]["before"]["name"] == "Revised" and revisions[2]["diff"]["after"]["name"] == "Renamed"
    assert revisions[2]["has_multiple_changes"] is True


def test_revert_restores_keys_tabs_and_dashcards(admin, user, warehouse):
    cards = [mbql_card(admin, warehouse, f"C{i}") for i in range(3)]
    dash = dashboard(admin, "Before", description="first")
    admin.put(f"/api/dashboard/{dash['id']}", json={
        "tabs": [{"id": -1, "name": "One"}, {"id": -2, "name": "Two"}],
        "dashcards": [dashcard(-1, cards[0]["id"], -1, series=[{"id": cards[2]["id"]}]),
                      dashcard(-2, cards[1]["id"], -2, row=2),
                      dashcard(-3, None, -2, visualization_settings={"virtual_card": {"display": "text"}})]})
    good = admin.get(f"/api/dashboard/{dash['id']}").json
    target = history(admin, dash["id"])[0]["id"]
    keep = [d for d in good["dashcards"] if d["card_id"] == cards[0]["id"]][0]
    admin.put(f"/api/dashboard/{dash['id']}", json={
        "name": "After", "description": None, "tabs": [{"id": keep["dashboard_tab_id"], "name": "Renamed"}],
        "dashcards": [{**dashcard(keep["id"], cards[0]["id"], keep["dashboard_tab_id"]), "size_x": 10,
                       "series": []}]})
    changed = admin.get(f"/api/dashboard/{dash['id']}").json
    assert len(changed["tabs"]) == 1 and len(changed["dashcards"]) == 1

    reverted = admin.post(f"/api/dashboard/{dash['id']}/revert", json={"revision_id": target})
    assert reverted.status_code == 200, reverted.json
    assert reverted.json["is_reversion"] is True and reverted.json["description"] == "reverted to an earlier version."
    now = admin.get(f"/api/dashboard/{dash['id']}").json
    assert (now["name"], now["description"]) == ("Before", "first")
    assert [(t["name"], t["position"]) for t in now["tabs"]] == [("One", 0), ("Two", 1)]
    shape = lambda body: sorted(  # noqa: E731
        (d["card_id"] or 0, d["size_x"], d["row"], [s["id"] for s in d["series"]], d["visualization_settings"],
         [t["name"] for t in body["tabs"] if t["id"] == d["dashboard_tab_id"]]) for d in body["dashcards"])
    assert shape(now) == shape(good)
    kept = [d for d in now["dashcards"] if d["card_id"] == cards[0]["id"]][0]
    assert kept["id"] == keep["id"]  # the dashcard that stayed is updated in place
    revisions = history(admin, dash["id"])
    assert revisions[0]["id"] == reverted.json["id"] and revisions[0]["is_reversion"] is True
    # the revert recorded the state reached: posting it back records nothing more
    assert admin.put(f"/api/dashboard/{dash['id']}", json=now).status_code == 200
    assert len(history(admin, dash["id"])) == len(revisions)
    assert without_view(admin.get(f"/api/dashboard/{dash['id']}").json) == without_view(now)


def test_revert_checks(admin, user, warehouse):
    private = dashboard(admin, collection_id=admin.user["personal_collection_id"])
    revision = history(admin, private["id"])[0]["id"]
    assert user.post(f"/api/dashboard/{private['id']}/revert", json={"revision_id": revision}).status_code == 403
    other = dashboard(admin)
    assert admin.post(f"/api/dashboard/{other['id']}/revert", json={"revision_id": revision}).status_code == 404
    assert admin.post(f"/api/dashboard/{other['id']}/revert", json={}).status_code == 400
    assert admin.get("/api/dashboard/99999/revisions").status_code == 404


def test_service_functions_for_the_generic_revision_api(app, admin, warehouse):
    """plugins.dashboards.revisions.history/revert are what /api/revision calls for dashboards."""
    from core.appdb.models import User
    from plugins.dashboards import revisions

    dash = dashboard(admin, "Named")
    admin.put(f"/api/dashboard/{dash['id']}", json={"name": "Other"})
    state = app.extensions["tessera"]
    with app.test_request_context(), state.db.session() as session:
        user = session.get(User, admin.user["id"])
        listed = revisions.history(session, user, dash["id"])
        assert [r["description"] for r in listed] == ['renamed this Dashboard from "Named" to "Other".',
                                                      "created this."]
        out = revisions.revert(session, user, dash["id"], listed[1]["id"])
        assert out["is_reversion"] is True
    assert admin.get(f"/api/dashboard/{dash['id']}").json["name"] == "Named"
