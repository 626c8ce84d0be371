"""Saving from the question pages (plugins/app/save.py, save_metadata.py) through HTTP as a browser sends
it: a new question into a collection (found there), replacing the question a drill came from, refusals
shown in the panel (the API's permission message, a missing name), a question turned into a model, a
model's column metadata, and adding a question to a dashboard at the first free place."""
from __future__ import annotations

import base64
import re

import orjson

from core.testing import USER_PASSWORD, make_user
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.plugins.app.test_question_pages import ok, shop  # noqa: F401 - the fixture


def link_of(card: dict) -> str:
    return base64.b64encode(orjson.dumps(card)).decode()


def monthly(ids: dict) -> dict:
    return {"database": ids["db"], "type": "query", "query": {
        "source-table": ids["table"], "aggregation": [["count"]],
        "breakout": [["field", ids["fields"]["sold_on"], {"temporal-unit": "month"}]]}}


def saved_id(response) -> int:
    assert response.status_code == 200 and "HX-Redirect" in response.headers, response.get_data(as_text=True)
    return int(re.fullmatch(r"/(?:question|model)/(\d+)(-[a-z0-9-]*)?", response.headers["HX-Redirect"]).group(1))


def test_an_adhoc_question_is_saved_into_a_collection_with_its_view(app, admin, shop):  # noqa: F811
    shelf = ok(admin.post("/api/collection", json={"name": "Shelf"}))["id"]
    settings = {"graph.show_values": True, "graph.dimensions": ["sold_on"]}
    q = link_of({"dataset_query": monthly(shop), "display": "line", "visualization_settings": settings})
    client = sign_in(app)
    page = text(client.get("/question/adhoc", query_string={"q": q}))
    assert 'hx-get="/question/save?q=' in page and 'id="save-panel"' in page
    panel = text(client.get("/question/save", query_string={"q": q}, headers=HTMX))
    assert '<label for="save-name">Name</label>' in panel and 'name="replace"' not in panel
    assert 'name="name" value="Sales"' in panel  # the table's name to start from
    assert re.search(rf'<option value="{shelf}"[^>]*>[^<]*Shelf</option>', panel)
    assert re.search(r'<option value="root" selected>', panel)

    saved = client.post("/question/save", json={"q": q, "name": "Sales per month", "description": "Counted",
                                                "collection_id": str(shelf)}, headers=HTMX)
    card = ok(admin.get(f"/api/card/{saved_id(saved)}"))
    assert (card["name"], card["description"], card["collection_id"]) == ("Sales per month", "Counted", shelf)
    assert card["dataset_query"]["query"] == monthly(shop)["query"] and card["type"] == "question"
    assert card["display"] == "line" and card["visualization_settings"] == settings
    items = ok(admin.get(f"/api/collection/{shelf}/items"))["data"]
    assert [(one["model"], one["name"]) for one in items] == [("card", "Sales per month")]
    assert client.get(saved.headers["HX-Redirect"]).status_code == 200


def test_a_drilled_question_replaces_its_original_and_refusals_show_in_the_panel(app, admin, shop):  # noqa: F811
    original = shop["by_region"]
    drilled = {"dataset_query": monthly(shop), "display": "bar", "visualization_settings": {},
               "original_card_id": original}
    q = link_of(drilled)
    client = sign_in(app)
    panel = text(client.get("/question/save", query_string={"q": q}, headers=HTMX))
    assert 'value="replace" checked' in panel and "Sales by region" in panel
    assert '<fieldset class="save-new" disabled>' in panel
    replaced = client.post("/question/save", json={"q": q, "replace": "replace"}, headers=HTMX)
    assert saved_id(replaced) == original
    card = ok(admin.get(f"/api/card/{original}"))
    assert card["name"] == "Sales by region" and card["dataset_query"]["query"] == monthly(shop)["query"]

    # No name: said in the panel, nothing saved.
    before = len(ok(admin.get("/api/card")))
    nameless = client.post("/question/save", json={"q": q, "replace": "new", "name": "  "}, headers=HTMX)
    assert nameless.status_code == 400 and "needs a name" in text(nameless) and 'role="alert"' in text(nameless)
    assert len(ok(admin.get("/api/card"))) == before

    # A user who may only read a collection: the API's refusal, in the panel; no replace offered.
    shelf = ok(admin.post("/api/collection", json={"name": "Read only"}))["id"]
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(shelf): "read",
                                                                                             "root": "read"}}}))
    make_user(app, "reader@example.com")
    reader = sign_in(app, "reader@example.com", USER_PASSWORD)
    offered = text(reader.get("/question/save", query_string={"q": q}, headers=HTMX))
    assert 'name="replace"' not in offered and f'<option value="{shelf}"' not in offered
    refused = reader.post("/question/save", json={"q": q, "name": "Mine", "collection_id": str(shelf)},
                          headers=HTMX)
    assert refused.status_code == 403 and 'role="alert"' in text(refused)
    assert "permission" in text(refused).lower()
    sneaky = reader.post("/question/save", json={"q": q, "replace": "replace"}, headers=HTMX)
    assert sneaky.status_code == 403 and ok(admin.get(f"/api/card/{original}"))["dataset_query"]["query"] == \
        monthly(shop)["query"]
    assert len(ok(admin.get("/api/card"))) == before
    # A question the user may not read: the refusal is the panel's (a fragment), not a whole error page.
    hidden = ok(admin.post("/api/collection", json={"name": "Hidden"}))["id"]
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(hidden): "none"}}}))
    secret = ok(admin.post("/api/card", json={"name": "Secret", "display": "table", "visualization_settings": {},
                                              "collection_id": hidden, "dataset_query": monthly(shop)}))["id"]
    for path in (f"/question/save?card={secret}", f"/question/{secret}/dashboards",
                 f"/question/drill?card={secret}&at={{}}"):
        answer = reader.get(path, headers=HTMX)
        assert answer.status_code in (403, 404) and "<!doctype" not in text(answer).lower(), path
        assert 'role="alert"' in text(answer) and "Secret" not in text(answer), path
    # Writes with the cookie must be JSON, as for the API.
    assert client.post("/question/save", data={"q": q, "name": "x"}).status_code == 403


def test_turn_into_a_model_and_edit_its_metadata(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    page = text(client.get(f"/question/{shop['every_sale']}"))
    assert f'hx-post="/question/{shop["every_sale"]}/model"' in page
    turned = client.post(f"/question/{shop['every_sale']}/model", json={}, headers=HTMX)
    assert turned.headers["HX-Redirect"].startswith(f"/model/{shop['every_sale']}")
    assert ok(admin.get(f"/api/card/{shop['every_sale']}"))["type"] == "model"

    model_page = text(client.get(turned.headers["HX-Redirect"]))
    assert f'hx-get="/model/{shop["every_sale"]}/metadata"' in model_page
    panel = text(client.get(f"/model/{shop['every_sale']}/metadata", headers=HTMX))
    names = [c["name"] for c in ok(admin.get(f"/api/card/{shop['every_sale']}"))["result_metadata"]]
    region = names.index("region")
    assert f'name="display_name-{region}"' in panel and f'<label for="md-semantic-{region}">' in panel
    edited = client.post(f"/model/{shop['every_sale']}/metadata", json={
        f"display_name-{region}": "Sales area", f"description-{region}": "Where it was sold",
        f"semantic_type-{region}": "type/City"}, headers=HTMX)
    assert edited.status_code == 200 and edited.headers["HX-Redirect"].startswith("/model/")
    columns = ok(admin.get(f"/api/card/{shop['every_sale']}"))["result_metadata"]
    assert (columns[region]["display_name"], columns[region]["description"], columns[region]["semantic_type"]) == (
        "Sales area", "Where it was sold", "type/City")
    assert [c["name"] for c in columns] == names
    # The model's page runs the model: its table heads the column with the edited name.
    assert "Sales area" not in model_page
    shown = text(client.get(edited.headers["HX-Redirect"]))
    assert re.search(r'<th scope="col">\s*<a href="[^"]*sort=region">Sales area<', shown), \
        "the edited name heads the model's table"
    reopened = text(client.get(f"/model/{shop['every_sale']}/metadata", headers=HTMX))
    assert 'value="Sales area"' in reopened and ">Where it was sold</textarea>" in reopened
    assert re.search(rf'<select id="md-semantic-{region}".*?<option value="type/City" selected>', reopened, re.S)
    bad = client.post(f"/model/{shop['every_sale']}/metadata", json={f"semantic_type-{region}": "type/Nope"},
                      headers=HTMX)
    assert bad.status_code == 400 and "type/Nope" in text(bad)
    blank = client.post(f"/model/{shop['every_sale']}/metadata", json={f"display_name-{region}": ""}, headers=HTMX)
    assert blank.status_code == 400 and "needs a display name" in text(blank)


def test_add_to_a_dashboard_at_the_first_free_place(app, admin, shop):  # noqa: F811
    board = ok(admin.post("/api/dashboard", json={"name": "Board"}))["id"]
    ok(admin.put(f"/api/dashboard/{board}", json={"dashcards": [
        {"id": -1, "card_id": shop["every_sale"], "row": 0, "col": 0, "size_x": 12, "size_y": 6,
         "visualization_settings": {"card.title": "Kept"}}]}))
    client = sign_in(app)
    panel = text(client.get(f"/question/{shop['by_region']}/dashboards", headers=HTMX))
    assert re.search(rf'<option value="{board}">Board', panel)
    added = client.post(f"/question/{shop['by_region']}/dashboards", json={"dashboard_id": str(board)}, headers=HTMX)
    assert "HX-Redirect" in added.headers, text(added)
    assert added.headers["HX-Redirect"] == f"/dashboard/{board}-board/edit"
    assert client.get(added.headers["HX-Redirect"]).status_code == 200  # the editor, with the card in it
    cards = ok(admin.get(f"/api/dashboard/{board}"))["dashcards"]
    placed = {c["card_id"]: (c["row"], c["col"], c["size_x"], c["size_y"]) for c in cards}
    assert placed == {shop["every_sale"]: (0, 0, 12, 6), shop["by_region"]: (0, 12, 12, 6)}
    assert next(c for c in cards if c["card_id"] == shop["every_sale"])["visualization_settings"] == {
        "card.title": "Kept"}  # the dashcards already there are left as they were
    again = client.post(f"/question/{shop['by_region']}/dashboards", json={"dashboard_id": str(board)}, headers=HTMX)
    assert again.status_code == 200
    rows = sorted((c["row"], c["col"]) for c in ok(admin.get(f"/api/dashboard/{board}"))["dashcards"])
    assert rows == [(0, 0), (0, 12), (6, 0)]
    assert client.post(f"/question/{shop['by_region']}/dashboards", json={"dashboard_id": "x"},
                       headers=HTMX).status_code == 400
    make_user(app, "plain@example.com")
    plain = sign_in(app, "plain@example.com", USER_PASSWORD)
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {"root": "read"}}}))
    assert f'<option value="{board}">' not in text(plain.get(f"/question/{shop['by_region']}/dashboards"))
    refused = plain.post(f"/question/{shop['by_region']}/dashboards", json={"dashboard_id": str(board)}, headers=HTMX)
    assert refused.status_code == 403 and 'role="alert"' in text(refused)
    assert len(ok(admin.get(f"/api/dashboard/{board}"))["dashcards"]) == 3
