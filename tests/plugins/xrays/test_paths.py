"""The nine paths of /api/automagic-dashboards beyond plain tables: segments, saved questions and
models (also as card__N), ad-hoc queries, fields, cells, rules and comparisons; Metabase's 400s for
bad input, 404s for what does not exist and 403s for what the caller may not read."""
from __future__ import annotations

import pytest

from .support import XRAY, b64, cards, check_filters, run_every_card

# One xdist worker runs this module (make test: --dist loadgroup): its module-scoped shop is built once.
pytestmark = pytest.mark.xdist_group("xrays-paths")


@pytest.fixture(scope="module")
def content(shop):
    ids, admin = shop.ids, shop.admin
    segment = admin.post("/api/segment", json={"name": "Big orders", "table_id": ids["ORDERS"], "definition": {
        "source-table": ids["ORDERS"], "filter": [">", ["field", ids["ORDERS.TOTAL"], None], 100]}}).json
    query = {"database": ids["db"], "type": "query", "query": {"source-table": ids["ORDERS"]}}
    question = admin.post("/api/card", json={"name": "All orders", "display": "table", "visualization_settings": {},
                                             "dataset_query": query}).json
    model = admin.post("/api/card", json={"name": "Customers", "type": "model", "display": "table",
                                          "visualization_settings": {}, "dataset_query": {
                                              **query, "query": {"source-table": ids["PEOPLE"]}}}).json
    return {"segment": segment["id"], "question": question["id"], "model": model["id"]}


def xray(shop, path, status=200, client=None):
    response = shop.get(f"{XRAY}/{path}", client)
    assert response.status_code == status, (path, response.json)
    return response.json


def test_segment_xray_filters_every_card(shop, content):
    dashboard = xray(shop, f"segment/{content['segment']}")
    assert dashboard["name"] == "A look at your Big orders"
    for card in cards(dashboard):
        clause = card["dataset_query"]["query"]["filter"]
        assert clause == ["segment", content["segment"]] or clause[:2] == ["and", ["segment", content["segment"]]]
    assert dashboard["related"]["zoom-out"][0]["url"] == f"/auto/dashboard/table/{shop.ids['ORDERS']}"
    assert dashboard["related"]["compare"][0]["url"] == (
        f"/auto/dashboard/segment/{content['segment']}/compare/table/{shop.ids['ORDERS']}")
    check_filters(dashboard, shop.ids)
    run_every_card(shop.admin, dashboard)


@pytest.mark.parametrize("kind", ["question", "model", "card"])
def test_saved_question_and_model_xrays_read_the_card(shop, content, kind):
    card_id = content["model" if kind == "model" else "question"]
    path = f"table/card__{card_id}" if kind == "card" else f"{kind}/{card_id}"
    dashboard = xray(shop, path)
    assert len(cards(dashboard)) >= 4
    assert {c["dataset_query"]["query"]["source-table"] for c in cards(dashboard)} == {f"card__{card_id}"}
    run_every_card(shop.admin, dashboard)
    assert dashboard["dashboard-template-name"] == ("table/UserTable" if kind == "model" else "table/GenericTable")
    if kind != "card":
        source = shop.ids["PEOPLE" if kind == "model" else "ORDERS"]
        assert dashboard["related"]["zoom-out"][0]["url"] == f"/auto/dashboard/table/{source}"


def test_native_question_xray_reads_its_result_columns(shop):
    native = shop.admin.post("/api/card", json={
        "name": "Order totals", "display": "table", "visualization_settings": {},
        "dataset_query": {"database": shop.ids["db"], "type": "native",
                          "native": {"query": "SELECT ID, TOTAL, CREATED_AT, QUANTITY FROM ORDERS"}}}).json
    dashboard = xray(shop, f"question/{native['id']}")
    assert len(cards(dashboard)) >= 2
    run_every_card(shop.admin, dashboard)


def test_model_and_question_are_not_interchangeable(shop, content):
    """A question is not x-rayed as a model; a model is x-rayed as a question too, as Metabase does."""
    assert shop.get(f"{XRAY}/model/{content['question']}").status_code == 404
    response = shop.get(f"{XRAY}/question/{content['model']}")
    assert response.status_code == 200, response.json
    assert {c["dataset_query"]["query"]["source-table"] for c in cards(response.json)} == {f"card__{content['model']}"}


def test_adhoc_xray_keeps_the_query_filter(shop):
    ids = shop.ids
    cheap = ["<", ["field", ids["ORDERS.TOTAL"], None], 30]
    query = b64({"database": ids["db"], "type": "query", "query": {"source-table": ids["ORDERS"], "filter": cheap}})
    dashboard = xray(shop, f"adhoc/{query}")
    assert all(cheap in [c["dataset_query"]["query"]["filter"], *c["dataset_query"]["query"]["filter"]]
               for c in cards(dashboard))
    assert dashboard["related"]["compare"][0]["url"] == f"/auto/dashboard/adhoc/{query}/compare/table/{ids['ORDERS']}"
    run_every_card(shop.admin, dashboard)


@pytest.mark.parametrize("field,template", [("ORDERS.TOTAL", "field/Number"), ("ORDERS.CREATED_AT", "field/DateTime"),
                                            ("PRODUCTS.CATEGORY", "field/Category"), ("PEOPLE.STATE", "field/Category"),
                                            ("PEOPLE.EMAIL", "field/GenericField")])
def test_field_xrays(shop, field, template):
    dashboard = xray(shop, f"field/{shop.ids[field]}")
    assert dashboard["dashboard-template-name"] == template
    assert len(cards(dashboard)) >= 4
    table = field.split(".")[0]
    assert dashboard["related"]["zoom-out"][0]["url"] == f"/auto/dashboard/table/{shop.ids[table]}"
    check_filters(dashboard, shop.ids)
    run_every_card(shop.admin, dashboard)


def test_cell_drill_narrows_every_card(shop):
    ids = shop.ids
    widget = ["=", ["field", ids["PRODUCTS.CATEGORY"], {"source-field": ids["ORDERS.PRODUCT_ID"]}], "Widget"]
    cell = b64(widget)
    dashboard = xray(shop, f"table/{ids['ORDERS']}/cell/{cell}")
    assert dashboard["name"] == "A closer look at Orders where Category is Widget"
    assert dashboard["transient_filters"] == [widget]
    assert all(widget in [c["dataset_query"]["query"]["filter"], *c["dataset_query"]["query"]["filter"]]
               for c in cards(dashboard))
    assert dashboard["related"]["zoom-out"] == [{"url": f"/auto/dashboard/table/{ids['ORDERS']}", "title": "Orders",
                                                 "description": "The whole of Orders"}]
    run_every_card(shop.admin, dashboard)
    # ran: the Widget count is smaller than the whole table's
    total = cards(dashboard)[0]
    assert total["name"] == "Total transactions"
    narrowed = shop.admin.post("/api/dataset", json=total["dataset_query"]).json["data"]["rows"][0][0]
    assert 0 < narrowed < 18760


def test_comparisons_put_this_and_that_side_by_side(shop, content):
    ids = shop.ids
    dashboard = xray(shop, f"segment/{content['segment']}/compare/table/{ids['ORDERS']}")
    assert dashboard["name"] == "Comparison of Big orders and Orders"
    pairs = {}
    for d in dashboard["dashcards"]:
        if d["card"] is not None:
            assert d["size_x"] == 12 and d["col"] in (0, 12)
            pairs.setdefault(d["row"], {})[d["col"]] = d["card"]
    assert len(pairs) >= 4
    for row in pairs.values():
        this, that = row[0], row[12]
        assert this["dataset_query"]["query"].get("filter") is not None
        assert "segment" in repr(this["dataset_query"]["query"]["filter"])
        assert "segment" not in repr(that["dataset_query"]["query"].get("filter"))
    run_every_card(shop.admin, dashboard)
    cell = b64(["=", ["field", ids["ORDERS.QUANTITY"], None], 2])
    compared = xray(shop, f"table/{ids['ORDERS']}/cell/{cell}/compare/segment/{content['segment']}")
    assert compared["name"] == "Comparison of Orders where Quantity is 2 and Big orders"
    run_every_card(shop.admin, compared)
    xray(shop, f"table/{ids['ORDERS']}/compare/table/{ids['PEOPLE']}", 400)


def test_rules_pick_the_template(shop, content):
    ids = shop.ids
    generic = xray(shop, f"table/{ids['ORDERS']}/rule/table/GenericTable")
    assert generic["dashboard-template-name"] == "table/GenericTable" and generic["name"] == "A look at Orders"
    cell = b64(["=", ["field", ids["ORDERS.QUANTITY"], None], 3])
    for path in (f"table/{ids['ORDERS']}/cell/{cell}/rule/table/EventTable",
                 f"table/{ids['ORDERS']}/rule/table/GenericTable/compare/segment/{content['segment']}",
                 f"table/{ids['ORDERS']}/cell/{cell}/rule/table/GenericTable/compare/table/{ids['ORDERS']}"):
        dashboard = xray(shop, path)
        assert cards(dashboard), path
        run_every_card(shop.admin, dashboard)


def test_bad_input_gets_metabases_messages(shop):
    orders = shop.ids["ORDERS"]
    base64_error = "value couldn't be parsed as base64 encoded JSON"
    assert xray(shop, "tablex/1", 400)["errors"] == {"entity": "Invalid entity type"}
    assert xray(shop, f"table/{orders}/cell/!!!", 400)["errors"] == {"cell-query": base64_error}
    assert xray(shop, f"table/{orders}/cell/{b64({'not': 'a clause'})}", 400)["errors"] == {"cell-query": base64_error}
    elsewhere = b64(["=", ["field", shop.ids["REVIEWS.RATING"], None], 5])  # not a column of ORDERS
    assert xray(shop, f"table/{orders}/cell/{elsewhere}", 400)["errors"] == {"cell-query": base64_error}
    assert xray(shop, "adhoc/bm90IGpzb24", 400)["errors"] == {"entity-id-or-query": base64_error}
    assert xray(shop, f"table/{orders}/rule/nope/GenericTable", 400)["errors"] == {"prefix": "invalid value for prefix"}
    assert xray(shop, f"table/{orders}/rule/table/Not-a-name", 400)["errors"] == {"rule": "invalid value for rule name"}
    assert xray(shop, f"table/{orders}/compare/field/1", 400)["errors"] == {
        "comparison-entity": 'Invalid comparison entity type. Can only be one of "table", "segment", or "adhoc"'}
    assert xray(shop, f"table/{orders}?show=some", 400)["errors"] == {
        "show": "nullable must equal all, or natural integer."}
    assert xray(shop, "table/abc", 400)["errors"] == {"entity-id-or-query": "value must be an integer greater than zero."}
    for missing in ("table/999999", "table/card__999999", "segment/999999", "question/999999", "model/999999",
                    "field/999999", f"table/{orders}/rule/table/NoSuchTemplate", "table/99999999999999999999"):
        assert xray(shop, missing, 404) == "Not found."


def test_readers_see_only_what_they_may_read(shop, content, reader):
    from sqlalchemy import update

    from core.appdb.models import ALL_USERS_GROUP_ID, DataPermission

    ids = shop.ids
    assert shop.get(f"{XRAY}/table/{ids['ORDERS']}", reader).status_code == 200
    private = shop.admin.post("/api/card", json={
        "name": "Private", "display": "table", "visualization_settings": {},
        "collection_id": shop.admin.user["personal_collection_id"],
        "dataset_query": {"database": ids["db"], "type": "query", "query": {"source-table": ids["ORDERS"]}}}).json
    assert shop.get(f"{XRAY}/question/{private['id']}", reader).status_code == 403
    assert shop.get(f"{XRAY}/table/card__{private['id']}", reader).status_code == 403
    state = shop.app.extensions["tessera"]
    with shop.app.app_context(), state.db.session() as session:
        session.execute(update(DataPermission).where(
            DataPermission.db_id == ids["db"], DataPermission.group_id == ALL_USERS_GROUP_ID,
            DataPermission.perm_type == "view-data").values(perm_value="blocked"))
    try:
        for path in (f"table/{ids['ORDERS']}", f"field/{ids['ORDERS.TOTAL']}", f"segment/{content['segment']}",
                     f"database/{ids['db']}/candidates"):
            assert shop.get(f"{XRAY}/{path}", reader).status_code == 403, path
    finally:
        with shop.app.app_context(), state.db.session() as session:
            session.execute(update(DataPermission).where(
                DataPermission.db_id == ids["db"], DataPermission.group_id == ALL_USERS_GROUP_ID,
                DataPermission.perm_type == "view-data").values(perm_value="unrestricted"))


def test_xrays_write_nothing_to_the_app_db(shop, content):
    from tests.test_reads_write_nothing import assert_read_only, served

    ids = shop.ids
    cell = b64(["=", ["field", ids["ORDERS.QUANTITY"], None], 2])
    for path in (f"table/{ids['ORDERS']}", f"segment/{content['segment']}/compare/table/{ids['ORDERS']}",
                 f"table/{ids['ORDERS']}/cell/{cell}", f"database/{ids['db']}/candidates"):
        assert_read_only(served(shop.app, shop.admin, "GET", f"{XRAY}/{path}"), path)
