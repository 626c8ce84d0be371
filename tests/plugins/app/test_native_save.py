"""Saving and visualizing in the SQL editor (plugins/app/native_editor.py with save.py and viz_settings.py)
through HTTP as the browser sends it: the question pages' save panel over the editor's question (a new
card whose dataset_query and template tags equal a client's POST of the same SQL and settings; the saved
question the editor was opened from replaced, its tag ids kept; refusals and a missing name in the
panel), and a run drawn as a chart with the display picker and settings panel, whose choice the URL and
the save keep."""
from __future__ import annotations

import base64
import re
from urllib.parse import parse_qs, urlencode, urlsplit

import orjson

from core.testing import USER_PASSWORD, make_user
from tests.plugins.app.test_native_editor import run
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.plugins.app.test_question_pages import ok, shop  # noqa: F401 - the fixture
from tests.plugins.app.test_save import saved_id

SQL = ("SELECT region, SUM(amount) AS total FROM sales WHERE amount >= {{min}} [[AND {{day}}]] "
       "[[AND region = {{region}}]] GROUP BY region ORDER BY region")


def fields(ids: dict, **more) -> dict:
    """The editor's form: a number variable with a default, a date field filter, a text variable."""
    return {"native-db": str(ids["db"]), "native-sql": SQL, "tag-type.min": "number", "tag-default.min": "0",
            "tag-label.min": "Least amount", "tag-required.min": "true",
            "tag-type.day": "dimension", "tag-field.day": str(ids["fields"]["sold_on"]),
            "tag-widget.day": "date/all-options", "tag-type.region": "text", **more}


def client_tags(ids: dict) -> dict:
    """What a client posts for the same SQL and settings (Metabase's template-tag shape)."""
    return {"min": {"id": "min", "name": "min", "display-name": "Least amount", "type": "number",
                    "required": True, "default": "0"},
            "day": {"id": "day", "name": "day", "display-name": "Day", "type": "dimension", "required": False,
                    "dimension": ["field", ids["fields"]["sold_on"], None], "widget-type": "date/all-options"},
            "region": {"id": "region", "name": "region", "display-name": "Region", "type": "text",
                       "required": False}}


def panel_q(panel_html: str) -> str:
    found = re.search(r'<input type="hidden" name="q" value="([^"]+)">', panel_html)
    assert found, panel_html
    return found.group(1)


def decoded(q: str) -> dict:
    return orjson.loads(base64.urlsafe_b64decode(q + "=" * (-len(q) % 4)))


def test_a_new_card_from_the_editor_is_what_a_client_posts(app, admin, shop):  # noqa: F811
    shelf = ok(admin.post("/api/collection", json={"name": "Shelf"}))["id"]
    client = sign_in(app)
    settings = {"graph.show_values": True}
    viz = base64.urlsafe_b64encode(orjson.dumps(settings)).decode().rstrip("=")
    state = fields(shop, **{"native-display": "bar", "native-viz": viz}, region="North")
    page = text(client.get("/question/native?" + urlencode(state)))
    # The page offers the question pages' save panel, loaded beside the form (it holds a form of its own).
    assert 'id="native-save" hx-get="/question/save" hx-include="#filters"' in page
    assert page.index('<div id="save-panel"') > page.index("</form>")
    assert '<input type="hidden" name="native-display" value="bar">' in page

    panel = text(client.get("/question/save?" + urlencode(state), headers=HTMX))
    assert '<label for="save-name">Name</label>' in panel and 'name="replace"' not in panel
    assert re.search(rf'<option value="{shelf}"[^>]*>[^<]*Shelf</option>', panel)
    q = panel_q(panel)
    saved = client.post("/question/save", json={"q": q, "name": "Totals by region", "collection_id": str(shelf)},
                        headers=HTMX)
    card = ok(admin.get(f"/api/card/{saved_id(saved)}"))
    assert saved.headers["HX-Redirect"] == f"/question/{card['id']}-totals-by-region"
    assert (card["name"], card["collection_id"], card["display"]) == ("Totals by region", shelf, "bar")
    assert card["visualization_settings"] == settings
    # The same question posted by a client is stored as the same thing, template tags included.
    posted = ok(admin.post("/api/card", json={
        "name": "Posted", "display": "bar", "visualization_settings": settings, "collection_id": shelf,
        "dataset_query": {"database": shop["db"], "type": "native",
                          "native": {"query": SQL, "template-tags": client_tags(shop)}}}))
    posted = ok(admin.get(f"/api/card/{posted['id']}"))
    assert card["dataset_query"] == posted["dataset_query"]
    assert card["dataset_query"]["native"]["template-tags"] == client_tags(shop)
    # With a parameter per tag a person gives a value to, as Metabase's SQL editor saves them.
    assert card["parameters"] == [
        {"id": "min", "slug": "min", "type": "number/=", "name": "Least amount", "default": "0", "required": True,
         "target": ["variable", ["template-tag", "min"]]},
        {"id": "day", "slug": "day", "type": "date/all-options", "name": "Day", "default": None, "required": False,
         "target": ["dimension", ["template-tag", "day"]]},
        {"id": "region", "slug": "region", "type": "category", "name": "Region", "default": None,
         "required": False, "target": ["variable", ["template-tag", "region"]]}]
    # A parameter value is what the person ran it with, not the question: it is not saved.
    assert "North" not in orjson.dumps(card).decode()
    # The saved question's page runs it with its parameters, and is in the collection.
    items = ok(admin.get(f"/api/collection/{shelf}/items"))["data"]
    assert {one["name"] for one in items} == {"Totals by region", "Posted"}
    shown = client.get(saved.headers["HX-Redirect"])
    assert shown.status_code == 200 and 'name="min"' in text(shown) and 'name="region"' in text(shown)


def test_the_editor_replaces_the_question_it_was_opened_from(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    native = shop["native"]
    # The saved question has parameters of its own (as Metabase's editor saves them) for two of its tags.
    ok(admin.put(f"/api/card/{native}", json={"parameters": [
        {"id": "t-min", "name": "Least amount", "slug": "min", "type": "number/=", "default": 0,
         "target": ["variable", ["template-tag", "min"]]},
        {"id": "t-region", "name": "Region", "slug": "region", "type": "category",
         "target": ["variable", ["template-tag", "region"]]}]}))
    question_page = text(client.get(f"/question/{native}"))
    opener = re.search(r'<a class="xray" href="(/question/native\?q=[^"]+)"', question_page)
    assert opener, "Open editor"
    link = opener.group(1).replace("&amp;", "&")
    assert decoded(parse_qs(urlsplit(link).query)["q"][0])["original_card_id"] == native
    page = text(client.get(link))
    assert f'<input type="hidden" name="native-card" value="{native}">' in page
    assert '<input type="hidden" name="tag-id.min" value="t-min">' in page
    # The state the page's form holds, with the SQL changed: read back from its fields as the browser would.
    state = dict(re.findall(r'<input type="hidden" name="((?:native|tag)-[^"]+)" value="([^"]*)">', page))
    state = {**state, "native-db": str(shop["db"]), "native-sql": "SELECT id FROM sales WHERE amount >= {{min}}",
             "tag-type.min": "number", "tag-required.min": "true", "tag-default.min": "5",
             "tag-label.min": "Least amount"}
    state.pop("native-viz-change", None)
    panel = text(client.get("/question/save?" + urlencode(state), headers=HTMX))
    assert 'value="replace" checked' in panel and "Sales in SQL" in panel
    q = panel_q(panel)
    replaced = client.post("/question/save", json={"q": q, "replace": "replace"}, headers=HTMX)
    assert saved_id(replaced) == native
    card = ok(admin.get(f"/api/card/{native}"))
    assert card["name"] == "Sales in SQL"
    assert card["dataset_query"]["native"] == {"query": "SELECT id FROM sales WHERE amount >= {{min}}",
                                               "template-tags": {"min": {
                                                   "id": "t-min", "name": "min", "display-name": "Least amount",
                                                   "type": "number", "required": True, "default": "5"}}}
    # The question's parameter of a tag the SQL no longer has goes with the tag; the others stay.
    assert [p["slug"] for p in card["parameters"]] == ["min"]
    # "Save as new" from the same panel leaves the original as it is and makes a second card.
    copy = client.post("/question/save", json={"q": q, "replace": "new", "name": "A copy"}, headers=HTMX)
    assert saved_id(copy) != native and ok(admin.get(f"/api/card/{saved_id(copy)}"))["name"] == "A copy"


def test_refusals_and_a_missing_name_are_said_in_the_panel(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    before = len(ok(admin.get("/api/card")))
    q = panel_q(text(client.get("/question/save?" + urlencode(fields(shop)), headers=HTMX)))
    nameless = client.post("/question/save", json={"q": q, "name": " "}, headers=HTMX)
    assert nameless.status_code == 400 and "needs a name" in text(nameless) and 'role="alert"' in text(nameless)
    # Nothing to save yet: said where the person asked, not a broken panel.
    empty = client.get("/question/save?" + urlencode({"native-db": shop["db"], "native-sql": " "}), headers=HTMX)
    assert empty.status_code == 400 and "Write the SQL to save." in text(empty)
    broken = client.get("/question/save?" + urlencode({"native-db": shop["db"], "native-sql": "SELECT {{x"}),
                        headers=HTMX)
    assert broken.status_code == 400 and "no matching" in text(broken)

    # A user who may only read the question and its collection: no replace offered, and the API's own
    # refusals (a read-only collection, a card they may not write) in the panel; nothing written.
    shelf = ok(admin.post("/api/collection", json={"name": "Read only"}))["id"]
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {
        str(shelf): "read", "root": "read"}}}))
    make_user(app, "reader@example.com")
    reader = sign_in(app, "reader@example.com", USER_PASSWORD)
    state = fields(shop, **{"native-card": str(shop["native"])})
    offered = reader.get("/question/save?" + urlencode(state), headers=HTMX)
    assert 'name="replace"' not in text(offered)
    reader_q = panel_q(text(offered))
    refused = reader.post("/question/save", json={"q": reader_q, "name": "Mine", "collection_id": str(shelf)},
                          headers=HTMX)
    assert refused.status_code == 403 and 'role="alert"' in text(refused) and "permission" in text(refused).lower()
    sneaky = reader.post("/question/save", json={"q": reader_q, "replace": "replace"}, headers=HTMX)
    assert sneaky.status_code == 403 and 'role="alert"' in text(sneaky)
    assert ok(admin.get(f"/api/card/{shop['native']}"))["dataset_query"]["native"]["query"] != SQL
    assert len(ok(admin.get("/api/card"))) == before


def test_a_run_draws_the_chosen_display_and_settings_which_the_url_keeps(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    table = run(client, fields(shop))
    body = text(table)
    assert table.status_code == 200 and "<tbody>" in body
    # The question pages' picker and panel, in editor mode (sent with the next run, not to /question/viz).
    assert '<nav class="viz-picker" aria-label="Display" data-native-viz>' in body
    assert 'data-display="bar"' in body and 'hx-get="/question/viz"' not in body
    assert 'id="native-view-state" hx-swap-oob="true"' in body

    bar = run(client, fields(shop, **{"native-viz-change": "display=bar"}))
    body = text(bar)
    assert '<figure class="chart"><svg' in body and "<tbody>" not in body
    assert re.search(r'data-display="bar" aria-current="true"', body)
    assert '<input type="hidden" name="native-display" value="bar">' in body
    assert 'data-native-view="table" aria-pressed="false"' in body
    url = bar.headers["HX-Replace-Url"]
    assert parse_qs(urlsplit(url).query)["native-display"] == ["bar"]

    # A settings change (the panel's fields) is applied by the question pages' rules and kept.
    change = urlencode([("form", "1"), ("sections", "graph"), ("cols", "region"), ("cols", "total"),
                        ("graph.x", "region"), ("graph.metrics", "total"), ("graph.show_goal", "1"),
                        ("graph.goal_value", "300"), ("graph.goal_label", "Target")])
    goal = run(client, fields(shop, **{"native-display": "bar", "native-viz-change": change}))
    assert goal.status_code == 200, text(goal)
    kept = parse_qs(urlsplit(goal.headers["HX-Replace-Url"]).query)
    viz = kept["native-viz"][0]
    settings = decoded(viz)
    assert settings["graph.goal_value"] == 300 and settings["graph.show_goal"] is True
    assert settings["graph.dimensions"] == ["region"] and settings["graph.metrics"] == ["total"]
    figure = re.search(r'<figure class="chart">(.*?)</figure>', text(goal), re.S)
    assert figure and "Target" in figure.group(1)  # the goal line's label, drawn by core.charts
    # The reload opens the same view state, and the table view of it is a run away.
    reopened = text(client.get(goal.headers["HX-Replace-Url"]))
    assert f'<input type="hidden" name="native-viz" value="{viz}">' in reopened
    as_table = run(client, fields(shop, **{"native-display": "bar", "native-viz": viz, "native-view": "table"}))
    assert "<tbody>" in text(as_table) and 'data-native-view="table" aria-pressed="true"' in text(as_table)
    # A save from that state stores the display and the settings.
    q = panel_q(text(client.get("/question/save?" + urlencode(fields(shop, **{
        "native-display": "bar", "native-viz": viz})), headers=HTMX)))
    card = ok(admin.get(f"/api/card/{saved_id(client.post('/question/save', json={'q': q, 'name': 'Goal'}, headers=HTMX))}"))
    assert card["display"] == "bar" and card["visualization_settings"] == settings

    # A change the panel cannot mean is said as the run's error.
    # A display or settings in a link that cannot be read are the table's defaults, never a failure.
    junk = run(client, fields(shop, **{"native-display": "nonsense", "native-viz": "!!", "native-view": "x"}))
    assert junk.status_code == 200 and "<tbody>" in text(junk)
    assert "native-display" not in parse_qs(urlsplit(junk.headers["HX-Replace-Url"]).query)
    bad = run(client, fields(shop, **{"native-viz-change": "display=nonsense"}))
    assert bad.status_code == 400 and "is not a display" in text(bad)
    bad_goal = run(client, fields(shop, **{"native-display": "bar", "native-viz-change": "form=1&sections=graph&"
                                           "graph.show_goal=1&graph.goal_value=lots"}))
    assert bad_goal.status_code == 400 and "goal is a number" in text(bad_goal)
