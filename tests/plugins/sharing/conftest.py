"""Fixtures of the embedding tests: an embeddable card and dashboard over the test warehouse, with an
enabled, a locked and a disabled parameter; and objects shared every way at once (`shared_objects`), which
the route walks (routes.py) reach."""
from __future__ import annotations

import pytest

from tests.plugins.actions.support import enable_actions, make_model, param, query_action, register, table_id, tag
from tests.plugins.cards.fixtures import card_body, native_query
from tests.plugins.dashboards.support import make_dashboard

from .jwt_helpers import SECRET, card_token, dashboard_token
from .support import enable_sharing, field_ref, make_card, mapping, mbql_query, share

SQL = ("SELECT first_name, age FROM people WHERE 1 = 1 [[AND first_name = {{name}}]] [[AND age >= {{min_age}}]]"
       " ORDER BY id")
TAGS = {"name": {"id": "t-name", "name": "name", "display-name": "Name", "type": "text"},
        "min_age": {"id": "t-age", "name": "min_age", "display-name": "Min age", "type": "number"},
        "secret": {"id": "t-secret", "name": "secret", "display-name": "Secret", "type": "text"}}
CARD_PARAMETERS = [
    {"id": "t-name", "slug": "name", "type": "category", "target": ["variable", ["template-tag", "name"]]},
    {"id": "t-age", "slug": "min_age", "type": "number/=", "target": ["variable", ["template-tag", "min_age"]]},
]
RULES = {"name": "enabled", "min_age": "locked"}
DASHBOARD_PARAMETERS = [
    {"id": "d-name", "slug": "name", "name": "Name", "type": "category"},
    {"id": "d-age", "slug": "min_age", "name": "Min age", "type": "number/="},
    {"id": "d-off", "slug": "off", "name": "Off", "type": "category"},
]


def enable_embedding(admin) -> None:
    assert admin.put("/api/setting/enable-embedding-static", json={"value": True}).status_code == 204
    assert admin.put("/api/setting/embedding-secret-key", json={"value": SECRET}).status_code == 204


@pytest.fixture
def embeddable(app, admin, warehouse):
    """{"card", "dashboard", "dashcard", "other_card", "other_dashboard", "other_dashcard", "big_card"}."""
    enable_embedding(admin)
    card = admin.post("/api/card", json=card_body("People", native_query(warehouse["db"], SQL, **TAGS),
                                                  parameters=CARD_PARAMETERS)).json["id"]
    assert admin.put(f"/api/card/{card}", json={"enable_embedding": True, "embedding_params": RULES}).status_code == 200
    other = admin.post("/api/card", json=card_body("Other", native_query(warehouse["db"], "SELECT 'OTHER' AS x"))).json
    big = admin.post("/api/card", json=card_body("Big", native_query(
        warehouse["db"], "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2500) "
                         "SELECT x FROM n"))).json["id"]
    assert admin.put(f"/api/card/{big}", json={"enable_embedding": True, "embedding_params": {}}).status_code == 200
    mappings = [{"parameter_id": "d-name", "card_id": card, "target": ["variable", ["template-tag", "name"]]},
                {"parameter_id": "d-age", "card_id": card, "target": ["variable", ["template-tag", "min_age"]]},
                {"parameter_id": "d-off", "card_id": card, "target": ["variable", ["template-tag", "secret"]]}]
    dashboard = make_dashboard(app, admin.user["id"], parameters=DASHBOARD_PARAMETERS,
                               dashcards=[{"card_id": card, "parameter_mappings": mappings}],
                               enable_embedding=True, embedding_params={**RULES, "off": "disabled"})
    other_dashboard = make_dashboard(app, admin.user["id"], dashcards=[{"card_id": other["id"]}],
                                     enable_embedding=True, embedding_params={})
    return {"card": card, "dashboard": dashboard["id"], "dashcard": dashboard["dashcards"][0],
            "other_card": other["id"], "other_dashboard": other_dashboard["id"],
            "other_dashcard": other_dashboard["dashcards"][0], "big_card": big}


@pytest.fixture
def shared_objects(app, admin, warehouse):
    """A card (counts by name and age: a pivot table too) and a dashboard, public and embeddable, with a
    first-name filter; a public action."""
    enable_sharing(admin)
    enable_embedding(admin)
    assert admin.put("/api/setting/enable-query-caching", json={"value": True}).status_code == 204
    assert admin.put(f"/api/database/{warehouse['db']}", json={"cache_ttl": 24}).status_code == 200
    first_name = field_ref(warehouse["people.first_name"])
    card_params = [{"id": "fn", "slug": "first_name", "name": "First name", "type": "category",
                    "target": ["dimension", first_name]}]
    card = make_card(admin, "People", mbql_query(warehouse["db"], **{
        "source-table": warehouse["people"],
        "aggregation": [["count"]],
        "breakout": [["field", warehouse["people.first_name"], None], ["field", warehouse["people.age"], None]]}),
        parameters=card_params, display="pivot")
    rules = {"first_name": "enabled"}
    assert admin.put(f"/api/card/{card}", json={"enable_embedding": True, "embedding_params": rules}).status_code == 200
    made = make_dashboard(app, admin.user["id"], [{"id": "fn", "slug": "first_name", "type": "category"}],
                          [{"card_id": card, "parameter_mappings": [mapping("fn", card, first_name)]}],
                          enable_embedding=True, embedding_params=rules)
    db = register(app, admin)
    enable_actions(admin, db)
    model = make_model(admin, db, table_id(admin, db, "people"))
    action = query_action(admin, model, db, "UPDATE people SET age = {{age}} WHERE id = 1",
                          {"age": tag("age", "number")}, [param("age", "number/=")]).json["id"]
    preview = {"_embedding_params": rules}
    return {
        "card": card, "dashboard": made["id"], "dashcard": made["dashcards"][0],
        "uuid": {"card": share(admin, "card", card), "dashboard": share(admin, "dashboard", made["id"]),
                 "action": admin.post(f"/api/action/{action}/public_link").json["uuid"]},
        "token": {"card": card_token(card, **preview), "dashboard": dashboard_token(made["id"], **preview)},
        "field": warehouse["people.first_name"],
    }
