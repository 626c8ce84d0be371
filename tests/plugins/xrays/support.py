"""Helpers of the x-ray tests: encoding cells and queries, running every card of a dashboard through
POST /api/dataset, and checking that each dashboard filter targets a field its card can filter on."""
from __future__ import annotations

import base64
import json

XRAY = "/api/automagic-dashboards"


def b64(value) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def cards(dashboard: dict) -> list[dict]:
    return [d["card"] for d in dashboard["dashcards"] if d["card"] is not None]


def run_every_card(client, dashboard: dict) -> int:
    """Each card's dataset_query, as-is, through POST /api/dataset: completed without error."""
    for card in cards(dashboard):
        response = client.post("/api/dataset", json=card["dataset_query"])
        assert response.status_code == 202, (card["name"], response.json)
        assert response.json["status"] == "completed", (card["name"], response.json.get("error"),
                                                        card["dataset_query"])
    return len(cards(dashboard))


def field_table(ids: dict, field_id: int) -> str:
    """"ORDERS" for an ORDERS field id of a metadata_ids map."""
    return next(k.split(".")[0] for k, v in ids.items() if "." in k and v == field_id)


def check_filters(dashboard: dict, ids: dict) -> None:
    """Each mapping targets a dashboard parameter and a field of the card's source table, or a field
    reached through one of that table's foreign keys."""
    parameters = {p["id"] for p in dashboard["parameters"]}
    tables = {v: k for k, v in ids.items() if "." not in k and k != "db"}
    for dashcard in dashboard["dashcards"]:
        card = dashcard["card"]
        if card is None:
            assert dashcard["parameter_mappings"] == []
            continue
        source = tables[card["dataset_query"]["query"]["source-table"]]
        for mapping in dashcard["parameter_mappings"]:
            assert mapping["parameter_id"] in parameters
            kind, ref = mapping["target"]
            assert kind == "dimension" and ref[0] == "field"
            options = ref[2] or {}
            if "source-field" in options:
                assert field_table(ids, options["source-field"]) == source, (card["name"], mapping)
            else:
                assert field_table(ids, ref[1]) == source, (card["name"], mapping)
