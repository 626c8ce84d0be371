"""POST /api/dashboard/:did/dashcard/:dcid/card/:cid/query: dashboard filters applied through the
dashcard's mappings to MBQL, native (field filter and plain variable) and model-based cards; ids that
do not belong together; data permissions; the query log names the dashboard."""
from core.appdb.counters import flush

from .support import block_data, card_body, field_ref, make_dashboard, mapping, mbql_query, native_query


def _card(client, name, query, **extra):
    response = client.post("/api/card", json=card_body(name, query, **extra))
    assert response.status_code == 200, response.json
    return response.json["id"]


def _run(client, dashboard, dashcard_id, card_id, parameters=None):
    body = {} if parameters is None else {"parameters": parameters}
    return client.post(f"/api/dashboard/{dashboard['id']}/dashcard/{dashcard_id}/card/{card_id}/query", json=body)


def _people_card(admin, warehouse):
    return _card(admin, "People", mbql_query(warehouse["db"], **{
        "source-table": warehouse["people"], "fields": [["field", warehouse["people.first_name"], None]],
        "order-by": [["asc", ["field", warehouse["people.id"], None]]]}))


def test_mbql_card_with_a_dashboard_filter_and_its_default(app, admin, warehouse):
    card = _people_card(admin, warehouse)
    params = [{"id": "name", "type": "string/=", "slug": "name"},
              {"id": "age", "type": "number/>=", "slug": "age", "default": [40]}]
    mappings = [mapping("name", card, field_ref(warehouse["people.first_name"])),
                mapping("age", card, field_ref(warehouse["people.age"]))]
    dash = make_dashboard(app, admin.user["id"], params, [{"card_id": card, "parameter_mappings": mappings}])
    dc = dash["dashcards"][0]
    # No value given: the "age" default (>= 40) applies.
    ran = _run(admin, dash, dc, card)
    assert ran.status_code == 202, ran.json
    assert ran.json["data"]["rows"] == [["Alan"], ["Grace"]] and ran.json["context"] == "dashboard"
    ran = _run(admin, dash, dc, card, [{"id": "name", "value": ["Grace", "Ada"]}])
    assert ran.json["data"]["rows"] == [["Grace"]]
    # A value given as null clears the default.
    ran = _run(admin, dash, dc, card, [{"id": "age", "value": None}, {"id": "name", "value": ["Ada"]}])
    assert ran.json["data"]["rows"] == [["Ada"]]
    ran = _run(admin, dash, dc, card, [{"id": "nope", "value": 1}])
    assert ran.status_code == 400 and "nope" in str(ran.json)
    assert _run(admin, dash, dc, card, [{"value": 1}]).status_code == 400
    assert _run(admin, dash, dc, card, [{"id": ["name"], "value": 1}]).status_code == 400
    assert _run(admin, dash, dc, card, [{"id": "name", "type": 7, "value": 1}]).status_code == 400


def test_native_field_filter_and_plain_variable(app, admin, warehouse):
    field_filter = {"id": "t1", "name": "who", "display-name": "Who", "type": "dimension", "widget-type": "string/=",
                    "dimension": ["field", warehouse["people.first_name"], None]}
    by_name = _card(admin, "Native by name", native_query(
        warehouse["db"], "SELECT first_name FROM people WHERE {{who}} ORDER BY id", who=field_filter))
    variable = {"id": "t2", "name": "min_age", "display-name": "Min age", "type": "number"}
    by_age = _card(admin, "Native by age", native_query(
        warehouse["db"], "SELECT first_name FROM people WHERE age >= {{min_age}} ORDER BY id", min_age=variable))
    params = [{"id": "who", "type": "string/="}, {"id": "age", "type": "number/="}]
    dash = make_dashboard(app, admin.user["id"], params, [
        {"card_id": by_name, "parameter_mappings": [mapping("who", by_name, ["dimension", ["template-tag", "who"]])]},
        {"card_id": by_age, "parameter_mappings": [mapping("age", by_age, ["variable", ["template-tag", "min_age"]])]},
    ])
    first, second = dash["dashcards"]
    ran = _run(admin, dash, first, by_name, [{"id": "who", "value": ["Alan"]}, {"id": "age", "value": 80}])
    assert ran.status_code == 202, ran.json
    assert ran.json["data"]["rows"] == [["Alan"]]
    # The field filter without a value is "1 = 1".
    assert _run(admin, dash, first, by_name).json["data"]["rows"] == [["Ada"], ["Alan"], ["Grace"]]
    ran = _run(admin, dash, second, by_age, [{"id": "age", "value": 80}, {"id": "who", "value": ["Alan"]}])
    assert ran.status_code == 202, ran.json
    assert ran.json["data"]["rows"] == [["Grace"]]


def test_card_on_a_model(app, admin, warehouse):
    model = _card(admin, "People model", mbql_query(warehouse["db"], **{"source-table": warehouse["people"]}),
                  type="model")
    question = _card(admin, "On the model", mbql_query(warehouse["db"], **{
        "source-table": f"card__{model}", "fields": [["field", "first_name", {"base-type": "type/Text"}]],
        "order-by": [["asc", ["field", "id", {"base-type": "type/Integer"}]]]}))
    params = [{"id": "age", "type": "number/between"}]
    target = ["dimension", ["field", "age", {"base-type": "type/Integer"}]]
    dash = make_dashboard(app, admin.user["id"], params,
                          [{"card_id": question, "parameter_mappings": [mapping("age", question, target)]}])
    ran = _run(admin, dash, dash["dashcards"][0], question, [{"id": "age", "value": [30, 50]}])
    assert ran.status_code == 202, ran.json
    assert ran.json["data"]["rows"] == [["Ada"], ["Alan"]]


def test_ids_that_do_not_belong_together_are_404(app, admin, warehouse):
    card = _people_card(admin, warehouse)
    series = _card(admin, "Series", mbql_query(warehouse["db"], **{"source-table": warehouse["orders"],
                                                                     "aggregation": [["count"]]}))
    other = _card(admin, "Other", mbql_query(warehouse["db"], **{"source-table": warehouse["orders"]}))
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": card, "series": [series]}])
    elsewhere = make_dashboard(app, admin.user["id"], [], [{"card_id": other}])
    dc = dash["dashcards"][0]
    assert _run(admin, dash, dc, card).status_code == 202
    ran = _run(admin, dash, dc, series)
    assert ran.status_code == 202 and ran.json["data"]["rows"] == [[4]]
    assert _run(admin, dash, dc, other).status_code == 404
    assert _run(admin, dash, elsewhere["dashcards"][0], other).status_code == 404
    assert _run(admin, elsewhere, dc, card).status_code == 404
    assert _run(admin, {"id": 999999}, dc, card).status_code == 404


def test_plain_user_without_data_access_gets_403_and_no_rows(app, admin, user, warehouse):
    card = _people_card(admin, warehouse)
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": card}])
    dc = dash["dashcards"][0]
    assert _run(user, dash, dc, card).status_code == 202
    block_data(admin, warehouse["db"])
    ran = _run(user, dash, dc, card)
    assert ran.status_code == 403
    assert "Grace" not in ran.get_data(as_text=True)
    assert _run(admin, dash, dc, card).status_code == 202


def test_unreadable_dashboard_collection_is_403(app, admin, user, warehouse):
    card = _people_card(admin, warehouse)
    collection = admin.post("/api/collection", json={"name": "Private"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(collection): "none"}}})
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": card}], collection_id=collection)
    ran = _run(user, dash, dash["dashcards"][0], card)
    assert ran.status_code == 403 and "Grace" not in ran.get_data(as_text=True)


def test_query_log_names_the_dashboard(app, admin, warehouse):
    from sqlalchemy import select

    from core.appdb.models import QueryExecution

    card = _people_card(admin, warehouse)
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": card}])
    assert _run(admin, dash, dash["dashcards"][0], card).status_code == 202
    flush(app)
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        rows = session.execute(select(QueryExecution.card_id, QueryExecution.dashboard_id, QueryExecution.context)).all()
    assert (card, dash["id"], "dashboard") in [tuple(r) for r in rows]


def test_a_run_kept_for_one_user_is_still_refused_to_another(app, admin, user, warehouse):
    """The run's inputs are kept per dashcard, not per user: the admin's run fills them, and a user who
    cannot read the dashboard's or the card's collection is still refused, 403 before a 404 or a 400."""
    card = _people_card(admin, warehouse)
    collection = admin.post("/api/collection", json={"name": "Private"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(collection): "none"}}})
    hidden = make_dashboard(app, admin.user["id"], [], [{"card_id": card}], collection_id=collection)
    dc = hidden["dashcards"][0]
    unknown = [{"id": "nope", "type": "category", "value": "x"}]
    for client, status in ((admin, 202), (user, 403), (admin, 202), (user, 403)):
        assert _run(client, hidden, dc, card).status_code == status
    for client, status in ((admin, 404), (user, 403)):
        assert _run(client, hidden, dc, card + 999).status_code == status
    for client, status in ((admin, 400), (user, 403)):
        assert _run(client, hidden, dc, card, unknown).status_code == status
    private_card = _card(admin, "Private people", mbql_query(warehouse["db"], **{"source-table": warehouse["people"]}),
                         collection_id=collection)
    open_dash = make_dashboard(app, admin.user["id"], [], [{"card_id": private_card}])
    for client, status in ((admin, 202), (user, 403)):
        ran = _run(client, open_dash, open_dash["dashcards"][0], private_card)
        assert ran.status_code == status and ("Grace" in ran.get_data(as_text=True)) == (status == 202)
