"""Issue 20's "Done when": a new user opens the candidates of the Sample Database, follows a table's
x-ray, drills into a cell, compares a segment with its table, saves one x-ray as a dashboard and runs
every card on it; and building x-rays runs nothing on the warehouse."""
from __future__ import annotations

import shutil

from .support import XRAY, b64, cards, run_every_card


def follow(client, url: str) -> dict:
    """A related or candidate link (/auto/dashboard/...) opened through the API."""
    assert url.startswith("/auto/dashboard/"), url
    response = client.get(f"{XRAY}/{url.removeprefix('/auto/dashboard/')}")
    assert response.status_code == 200, (url, response.json)
    return response.json


def test_candidates_xray_cell_compare_save_run(shop):
    admin, ids = shop.admin, shop.ids
    [schema] = admin.get(f"{XRAY}/database/{ids['db']}/candidates").json
    best = schema["tables"][0]
    table = follow(admin, best["url"])
    assert table["dashboard-template-name"] == best["dashboard-template-name"]
    run_every_card(admin, table)

    # Drill into the Widget bar of the revenue-per-category card.
    by_category = next(c for c in cards(table) if "Category" in c["name"] and c["display"] == "row")
    [breakout] = by_category["dataset_query"]["query"]["breakout"]
    cell = follow(admin, f"{best['url']}/cell/{b64(['=', breakout, 'Widget'])}")
    assert "Widget" in cell["name"]
    run_every_card(admin, cell)
    compared_cell = follow(admin, cell["related"]["compare"][0]["url"])
    run_every_card(admin, compared_cell)

    segment = admin.post("/api/segment", json={"name": "Discounted", "table_id": ids["ORDERS"], "definition": {
        "source-table": ids["ORDERS"], "filter": ["not-null", ["field", ids["ORDERS.DISCOUNT"], None]]}}).json
    segment_xray = follow(admin, f"/auto/dashboard/segment/{segment['id']}")
    comparison = follow(admin, segment_xray["related"]["compare"][0]["url"])
    assert comparison["name"] == "Comparison of Discounted and Orders"
    run_every_card(admin, comparison)

    saved = admin.post("/api/dashboard/save", json=cell)
    assert saved.status_code == 200, saved.json
    dashboard = admin.get(f"/api/dashboard/{saved.json['id']}").json
    assert dashboard["name"] == cell["name"] and len(dashboard["parameters"]) == len(cell["parameters"])
    placed = [d for d in dashboard["dashcards"] if d["card_id"] is not None]
    assert len(placed) == len(cards(cell))
    for dashcard in placed:
        ran = admin.post(f"/api/card/{dashcard['card_id']}/query")
        assert ran.status_code == 202 and ran.json["status"] == "completed", (dashcard["card"]["name"], ran.json)
        assert all(m["card_id"] == dashcard["card_id"] for m in dashcard["parameter_mappings"])
    # A saved filter still narrows the saved cards through their mappings.
    parameter = next(p for p in dashboard["parameters"] if p["type"] == "date/all-options")
    dashcard = next(d for d in placed if d["parameter_mappings"] and d["card"]["display"] == "scalar")
    filtered = admin.post(f"/api/dashboard/{dashboard['id']}/dashcard/{dashcard['id']}/card/{dashcard['card_id']}/query",
                          json={"parameters": [{"id": parameter["id"], "type": parameter["type"], "value": "2024-01-01~2024-12-31",
                                                "target": dashcard["parameter_mappings"][0]["target"]}]})
    assert filtered.status_code == 202 and filtered.json["status"] == "completed", filtered.json

    collection = admin.post("/api/collection", json={"name": "X-rays", "parent_id": None}).json
    into = admin.post(f"/api/dashboard/save/collection/{collection['id']}", json=comparison)
    assert into.status_code == 200, into.json
    assert admin.get(f"/api/collection/{into.json['collection_id']}").json["location"] == f"/{collection['id']}/"


def test_building_xrays_reads_no_warehouse(shop, tmp_path):
    """With the Sample Database file moved away, every x-ray kind is still built (the cards would fail)."""
    from core.sync.sample_data import FILE_NAME, directory

    ids, admin = shop.ids, shop.admin
    source = directory(shop.app.config["TESSERA_DATA_DIR"]) / FILE_NAME
    shutil.move(source, tmp_path / FILE_NAME)
    from core.driver import connections

    try:
        with shop.app.app_context():
            connections.dispose_all()
        cell = b64(["=", ["field", ids["ORDERS.QUANTITY"], None], 1])
        for path in (f"database/{ids['db']}/candidates", f"table/{ids['ORDERS']}", f"field/{ids['PEOPLE.STATE']}",
                     f"table/{ids['ORDERS']}/cell/{cell}", f"table/{ids['ORDERS']}/cell/{cell}/compare/table/{ids['ORDERS']}"):
            assert admin.get(f"{XRAY}/{path}").status_code == 200, path
    finally:
        shutil.move(tmp_path / FILE_NAME, source)
        with shop.app.app_context():
            connections.dispose_all()
