"""The dashboard_content hook (implemented by the dashboards plugin, used by subscriptions): a dashboard's
cards in reading order with the subscription's filter values mapped onto each card, the dashboard's
defaults otherwise; texts; None for an archived or absent dashboard. And a dashboard subscription's
e-mail filtered by its parameters."""
from __future__ import annotations

from core.schedule.runner import run_due
from tests.plugins.dashboards.layout_helpers import dashcard, mapping

from .support import add_card, card_ref, parts
from .test_send import at

PARAMS = [{"id": "age", "name": "Age", "slug": "age", "type": "number/>=", "default": [40]}]


def board(admin, warehouse):
    people = add_card(admin, warehouse, "People")
    other = add_card(admin, warehouse, "Everyone")
    dash = admin.post("/api/dashboard", json={"name": "Board", "parameters": PARAMS}).json
    text = {"virtual_card": {"display": "text"}, "text": "Read me first"}
    layout = admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [
        dashcard(-1, people["id"], row=2, parameter_mappings=[mapping("age", people["id"], warehouse["people.age"])]),
        dashcard(-2, None, row=0, visualization_settings=text),
        dashcard(-3, other["id"], row=5)]})
    assert layout.status_code == 200, layout.json
    return dash, people, other, {d["card_id"]: d["id"] for d in layout.json["dashcards"]}


def content(app, dashboard_id, parameters):
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        return state.pm.hook.dashboard_content(session=session, dashboard_id=dashboard_id, parameters=parameters)


def test_hook_dashboard_content(app, admin, warehouse):
    dash, people, other, dashcards = board(admin, warehouse)
    found = content(app, dash["id"], [{"id": "age", "type": "number/>=", "value": [80]}, {"id": "gone", "value": 1}])
    assert found.name == "Board" and found.id == dash["id"]
    assert [p.card_id for p in found.parts] == [None, people["id"], other["id"]]  # row order
    assert found.parts[0].text == "Read me first"
    [param] = found.parts[1].parameters
    assert param["value"] == [80] and param["target"] == ["dimension", ["field", warehouse["people.age"], None]]
    assert found.parts[2].parameters == ()  # not mapped to the other card
    defaults = content(app, dash["id"], [])
    assert defaults.parts[1].parameters[0]["value"] == [40]
    admin.put(f"/api/dashboard/{dash['id']}", json={"archived": True})
    assert content(app, dash["id"], []) is None
    assert content(app, 99999, []) is None


def test_dashboard_subscription_applies_its_filter_values(app, admin, warehouse, inbox):
    dash, people, other, dashcards = board(admin, warehouse)
    created = admin.post("/api/pulse", json={
        "name": "Board", "dashboard_id": dash["id"],
        "cards": [card_ref(people, dashboard_card_id=dashcards[people["id"]], include_csv=True), card_ref(other)],
        "parameters": [{"id": "age", "name": "Age", "slug": "age", "type": "number/>=", "value": [80]}],
        "channels": [{"channel_type": "email", "enabled": True, "schedule_type": "hourly",
                      "recipients": [{"email": "a@example.com"}]}]})
    assert created.status_code == 200, created.json
    run_due(app, at(26, 10, 30))
    assert len(run_due(app, at(26, 11))) == 1
    got = parts(inbox.wait(1)[0][1])
    html = got["html"][0]
    assert html.index("Read me first") < html.index("People") < html.index("Everyone")
    [(name, csv_bytes)] = got["files"]
    rows = csv_bytes.decode().splitlines()[1:]
    assert name == "People.csv" and len(rows) == 1 and "Hopper" in rows[0]  # only age >= 80
    # the unfiltered card still shows everybody
    assert html.count("Lovelace") == 1


def test_deleted_dashboard_takes_its_subscriptions_along(app, admin, warehouse):
    from core.schedule import scheduled
    from core.schedule.runner import tick

    dash, people, other, dashcards = board(admin, warehouse)
    pulse = admin.post("/api/pulse", json={"name": "Board", "dashboard_id": dash["id"], "cards": [card_ref(people)],
                                           "channels": [{"channel_type": "email", "enabled": True,
                                                         "schedule_type": "hourly",
                                                         "recipients": [{"email": "a@example.com"}]}]}).json

    def jobs():
        with app.app_context(), app.extensions["tessera"].db.session() as session:
            return [j.key for j in scheduled(session, "send-pulse")]
    assert jobs() == [str(pulse["channels"][0]["id"])]
    assert admin.delete(f"/api/dashboard/{dash['id']}").status_code == 204
    assert admin.get("/api/pulse").json == [] and admin.get(f"/api/pulse/{pulse['id']}").status_code == 404
    tick(app, at(26, 10))  # the scheduler's reconcile drops the job of the orphaned subscription
    assert jobs() == []


def test_dashboard_subscription_draws_cards_with_their_dashcard_settings(app, admin, warehouse, inbox):
    """The e-mail draws a card with the card's settings merged with its dashcard's (as the dashboard
    shows it): the dashcard's title, its table.columns (a hidden column is absent), the card's
    conditional formatting colouring the matching cell."""
    rule = {"type": "single", "columns": ["age"], "operator": ">", "value": 80, "color": "#ff0000",
            "highlight_row": False}
    people = add_card(admin, warehouse, "People", visualization_settings={"table.column_formatting": [rule]})
    dash = admin.post("/api/dashboard", json={"name": "Board"}).json
    columns = [{"name": n, "enabled": n != "last_name"} for n in ("age", "first_name", "last_name", "id")]
    layout = admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [dashcard(-1, people["id"], visualization_settings={
        "card.title": "Our elders", "table.columns": columns})]})
    assert layout.status_code == 200, layout.json
    created = admin.post("/api/pulse", json={
        "name": "Board", "dashboard_id": dash["id"],
        "cards": [card_ref(people, dashboard_card_id=layout.json["dashcards"][0]["id"])],
        "channels": [{"channel_type": "email", "enabled": True, "schedule_type": "hourly",
                      "recipients": [{"email": "a@example.com"}]}]})
    assert created.status_code == 200, created.json
    run_due(app, at(26, 10, 30))
    assert len(run_due(app, at(26, 11))) == 1
    html = parts(inbox.wait(1)[0][1])["html"][0]
    assert "Our elders" in html and ">People<" not in html
    assert "Lovelace" not in html and "Last Name" not in html and "Ada" in html
    assert html.index(">Age<") < html.index(">First Name<")  # the dashcard's order, not the table's
    assert 'background-color:rgba(255, 0, 0, 0.65);">85<' in html
    assert html.count("rgba(255, 0, 0") == 1  # only Grace Hopper is over 80
