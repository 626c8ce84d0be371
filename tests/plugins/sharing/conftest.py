"""Fixtures of the embedding tests: an embeddable card and dashboard over the test warehouse, with an
enabled, a locked and a disabled parameter."""
from __future__ import annotations

import pytest

from tests.plugins.cards.fixtures import card_body, native_query
from tests.plugins.dashboards.support import make_dashboard

from .jwt_helpers import SECRET

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
