"""Public links over the small warehouse of the card tests: sharing switched on, cards and dashboards
made through the API (and dashboards written straight into the app DB), their public UUIDs."""
from __future__ import annotations

from tests.plugins.cards.fixtures import card_body, mbql_query, native_query  # noqa: F401
from tests.plugins.dashboards.support import field_ref, make_dashboard, mapping  # noqa: F401


def enable_sharing(admin, on: bool = True) -> None:
    assert admin.put("/api/setting/enable-public-sharing", json={"value": on}).status_code == 204


def make_card(admin, name: str, dataset_query: dict, **extra) -> int:
    response = admin.post("/api/card", json=card_body(name, dataset_query, **extra))
    assert response.status_code == 200, response.json
    return response.json["id"]


def share(admin, model: str, object_id: int) -> str:
    response = admin.post(f"/api/{model}/{object_id}/public_link")
    assert response.status_code == 200, response.json
    return response.json["uuid"]


def people_card(admin, warehouse, **extra) -> int:
    """First names of people ordered by id, with a parameter on age (`min_age`, number/>=)."""
    params = [{"id": "min_age", "slug": "min_age", "name": "Min age", "type": "number/>=",
               "target": ["dimension", ["field", warehouse["people.age"], None]]}]
    return make_card(admin, "People", mbql_query(warehouse["db"], **{
        "source-table": warehouse["people"], "fields": [["field", warehouse["people.first_name"], None]],
        "order-by": [["asc", ["field", warehouse["people.id"], None]]]}), parameters=params, **extra)
