"""Table x-rays of the Sample Database on SQLite and DuckDB: the right template for each table, at
least four cards, every card's query running as-is, filters mapped onto the cards' fields, and the
candidates of the database sorted by score."""
from __future__ import annotations

import pytest

from .support import XRAY, cards, check_filters, run_every_card

EXPECTED = {"ORDERS": "table/TransactionTable", "PEOPLE": "table/UserTable",
            "PRODUCTS": "table/GenericTable", "REVIEWS": "table/GenericTable"}


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_every_sample_table_xray_runs(shop, engine):
    ids = shop.ids if engine == "sqlite" else shop.duck
    if ids is None:
        pytest.skip("the duckdb module is not installed")
    for table, template in EXPECTED.items():
        response = shop.get(f"{XRAY}/table/{ids[table]}")
        assert response.status_code == 200, response.json
        dashboard = response.json
        assert dashboard["dashboard-template-name"] == template, table
        assert len(cards(dashboard)) >= 4, table
        assert dashboard["transient_name"] and dashboard["auto_apply_filters"] is True
        assert dashboard["width"] == "fixed" and set(dashboard["related"]) == {"zoom-in", "zoom-out", "related",
                                                                               "compare"}
        assert all(c["dataset_query"]["database"] == ids["db"] for c in cards(dashboard))
        assert dashboard["parameters"], table
        check_filters(dashboard, ids)
        run_every_card(shop.admin, dashboard)


def test_layout_fits_the_grid_without_overlaps(shop):
    dashboard = shop.get(f"{XRAY}/table/{shop.ids['ORDERS']}?show=all").json
    taken = set()
    for d in dashboard["dashcards"]:
        assert 0 <= d["col"] and d["col"] + d["size_x"] <= 24
        cells = {(d["row"] + r, d["col"] + c) for r in range(d["size_y"]) for c in range(d["size_x"])}
        assert not cells & taken, d
        taken |= cells
    texts = [d for d in dashboard["dashcards"] if d["card"] is None]
    assert texts and all(d["visualization_settings"]["virtual_card"]["display"] == "text" for d in texts)


def test_orders_cards_use_linked_tables(shop):
    dashboard = shop.get(f"{XRAY}/table/{shop.ids['ORDERS']}").json
    names = [c["name"] for c in cards(dashboard)]
    assert "Total transactions" in names and "Transactions over time" in names
    by_category = next(c for c in cards(dashboard) if c["name"] == "Total per Products → Category")
    assert by_category["dataset_query"]["query"]["breakout"] == [
        ["field", shop.ids["PRODUCTS.CATEGORY"], {"source-field": shop.ids["ORDERS.PRODUCT_ID"]}]]
    over_time = next(c for c in cards(dashboard) if c["name"] == "Transactions over time")
    assert over_time["display"] == "line"
    assert over_time["dataset_query"]["query"]["breakout"] == [
        ["field", shop.ids["ORDERS.CREATED_AT"], {"temporal-unit": "month"}]]
    kinds = {p["name"]: p["type"] for p in dashboard["parameters"]}
    assert kinds["Created At"] == "date/all-options" and kinds["Products → Category"] == "string/="


def test_entity_type_from_the_fields_when_the_name_says_nothing(shop):
    admin, orders = shop.admin, shop.ids["ORDERS"]
    assert admin.put(f"/api/table/{orders}", json={"entity_type": "entity/GenericTable"}).status_code == 200
    try:
        # Created At, a discount (money) and a key to the people table: transactions.
        assert shop.get(f"{XRAY}/table/{orders}").json["dashboard-template-name"] == "table/TransactionTable"
    finally:
        admin.put(f"/api/table/{orders}", json={"entity_type": "entity/TransactionTable"})


def test_show_limits_the_cards_and_links_to_more(shop):
    orders = shop.ids["ORDERS"]
    default = shop.get(f"{XRAY}/table/{orders}").json
    everything = shop.get(f"{XRAY}/table/{orders}?show=all").json
    two = shop.get(f"{XRAY}/table/{orders}?show=2").json
    assert len(cards(default)) <= 15 <= len(cards(everything)) or len(cards(default)) == len(cards(everything))
    assert len(cards(two)) == 2 and two["more"] == f"/auto/dashboard/table/{orders}#show=all"
    assert everything["more"] is None
    scores = [c["card_score"] for c in cards(two)]
    assert min(scores) >= max(c["card_score"] for c in cards(everything) if c["name"] not in
                              {x["name"] for x in cards(two)})


def test_candidates_are_sorted_by_score(shop):
    response = shop.get(f"{XRAY}/database/{shop.ids['db']}/candidates")
    assert response.status_code == 200, response.json
    [group] = response.json
    assert group["id"] == f"{shop.ids['db']}/" and group["schema"] is None
    tables = group["tables"]
    assert 1 <= len(tables) <= 10
    assert [t["score"] for t in tables] == sorted((t["score"] for t in tables), reverse=True)
    assert tables[0]["table"]["name"] == "ORDERS"
    assert tables[0]["url"] == f"/auto/dashboard/table/{shop.ids['ORDERS']}"
    assert tables[0]["dashboard-template-name"] == "table/TransactionTable"
    assert {t["table"]["name"] for t in tables} == set(EXPECTED)
    assert shop.get(f"{XRAY}/database/999999/candidates").status_code == 404
    assert shop.get(f"{XRAY}/database/0/candidates").status_code == 400


def test_duckdb_candidates_per_schema(shop):
    if shop.duck is None:
        pytest.skip("the duckdb module is not installed")
    groups = shop.get(f"{XRAY}/database/{shop.duck['db']}/candidates").json
    assert [g["schema"] for g in groups] == ["main"] and len(groups[0]["tables"]) == 4
