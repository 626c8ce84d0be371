"""Making and editing dashboards (plugins/app/dashboard_edit*.py) through HTTP as the editor's page sends
it: a new dashboard in a collection the user may write; the editor's changes (questions from the picker,
text, heading and link cards, removing, placing on the grid, tabs, filters wired to columns with the
same-field suggestion, defaults, required, linked filters, per-card overrides), each answered by the
editor drawn again; Save as exactly one PUT /api/dashboard/:id of the whole dashboard, refused when
stale or invalid; Cancel writes nothing; a read-only user gets no Edit and no editor; history and revert."""
from __future__ import annotations

import re
from html import unescape

import orjson
import pytest

from core.testing import USER_PASSWORD, make_user, setup_admin
from tests.plugins.app.test_dashboard_pages import build_shop, ok
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.support import module_app

pytestmark = pytest.mark.xdist_group("app-dashboard-edit")


class Site:
    def __init__(self, app, admin, shop, reader, collection):
        self.app, self.admin, self.shop, self.reader, self.collection = app, admin, shop, reader, collection


@pytest.fixture(scope="module")
def site(tmp_path_factory, app_db_template):
    app = module_app(tmp_path_factory.mktemp("app-dashboard-edit"), app_db_template)
    admin = setup_admin(app)
    collection = ok(admin.post("/api/collection", json={"name": "Shelf"}))["id"]
    shop = build_shop(app, admin, collection)
    reader = make_user(app, email="reader@example.com")
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {
        "1": {"root": "read", str(collection): "read"}}}))
    yield Site(app, admin, shop, reader, collection)
    app.extensions["tessera"].db.dispose()


def form_of(html: str) -> dict:
    """The editor form's fields as json-enc sends them (text inputs, textareas, selected options, checked boxes)."""
    form = html[html.index('<form id="editor"'):]
    fields: dict = {}

    def put(name, value):
        if name in fields:
            fields[name] = fields[name] if isinstance(fields[name], list) else [fields[name]]
            fields[name].append(value)
        else:
            fields[name] = value

    for tag in re.finditer(r"<input\b([^>]*)>", form):
        attrs = dict((k, unescape(v)) for k, v in re.findall(r'([\w.:-]+)="([^"]*)"', tag.group(1)))
        if "name" not in attrs or attrs.get("type") == "search":
            continue
        if attrs.get("type") == "checkbox":
            if " checked" in tag.group(1):
                put(attrs["name"], attrs.get("value", "on"))
        else:
            put(attrs["name"], attrs.get("value", ""))
    for tag in re.finditer(r'<textarea\b[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', form, re.DOTALL):
        put(tag.group(1), unescape(tag.group(2)))
    for tag in re.finditer(r'<select\b[^>]*name="([^"]+)"[^>]*>(.*?)</select>', form, re.DOTALL):
        options = re.findall(r'<option value="([^"]*)"( selected)?', tag.group(2))
        chosen = next((v for v, s in options if s), options[0][0] if options else "")
        put(tag.group(1), unescape(chosen))
    return fields


class Editor:
    """The editor's page as a browser drives it: each change posts the whole form and gets the form back."""

    def __init__(self, client, path: str):
        self.client, self.path = client, path
        page = client.get(path + "/edit")
        assert page.status_code == 200, text(page)[:300]
        self.html = text(page)

    @property
    def fields(self) -> dict:
        return form_of(self.html)

    @property
    def draft(self) -> dict:
        return orjson.loads(self.fields["draft"])

    def apply(self, op: str, status: int = 200, **changes) -> str:
        response = self.client.post(self.path + "/edit/apply", json={**self.fields, **changes, "op": op}, headers=HTMX)
        assert response.status_code == status, text(response)[:500]
        if status == 200:
            self.html = text(response)
        return text(response)

    def save(self, **changes):
        return self.client.post(self.path + "/edit/save", json={**self.fields, **changes}, headers=HTMX)


def new_dashboard(site, name: str) -> tuple[int, str]:
    made = ok(site.admin.post("/api/dashboard", json={"name": name, "collection_id": site.collection}))
    return made["id"], f"/dashboard/{made['id']}-{name.lower().replace(' ', '-')}"


def recorded_calls(monkeypatch) -> list:
    """Every API call the editor's routes make (method, path, body), still made."""
    from plugins.app import dashboard_edit

    seen, real = [], dashboard_edit.call

    def spy(method, path, **kwargs):
        seen.append((method, path, kwargs.get("json")))
        return real(method, path, **kwargs)

    monkeypatch.setattr(dashboard_edit, "call", spy)
    return seen


def test_a_new_dashboard_goes_in_a_collection_its_maker_may_write_and_opens_in_the_editor(site):
    admin, reader = sign_in(site.app), sign_in(site.app, "reader@example.com", USER_PASSWORD)
    form = text(admin.get("/dashboard/new?collection=%d" % site.collection))
    assert f'<option value="{site.collection}" selected>Shelf</option>' in form
    assert 'href="/dashboard/new"' in form  # the navigation's entry
    assert "Shelf" not in text(reader.get("/dashboard/new"))  # read-only for them
    refused = reader.post("/dashboard/new", json={"name": "Mine", "collection_id": str(site.collection)}, headers=HTMX)
    assert refused.status_code == 403 and 'role="alert"' in text(refused)
    unnamed = admin.post("/dashboard/new", json={"name": "", "collection_id": "root"}, headers=HTMX)
    assert unnamed.status_code == 400 and 'role="alert"' in text(unnamed)
    junk = admin.post("/dashboard/new", json={"name": "X", "collection_id": "../1"}, headers=HTMX)
    assert junk.status_code == 400
    made = admin.post("/dashboard/new", json={"name": "Quarterly review", "description": "Numbers",
                                              "collection_id": str(site.collection)}, headers=HTMX)
    location = made.headers["HX-Redirect"]
    dashboard_id = int(re.fullmatch(r"/dashboard/(\d+)-quarterly-review/edit", location).group(1))
    saved = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))
    assert (saved["name"], saved["description"], saved["collection_id"]) == ("Quarterly review", "Numbers", site.collection)
    assert admin.get(location).status_code == 200


def test_a_read_only_user_gets_no_edit_and_the_editor_refuses_them(site):
    reader = sign_in(site.app, "reader@example.com", USER_PASSWORD)
    path = site.shop["path"]
    page = text(reader.get(path))
    assert "Shop overview" in page and f'href="{path}/edit"' not in page
    assert f'href="{path}/edit"' in text(sign_in(site.app).get(path))
    assert reader.get(path + "/edit").status_code == 403
    assert reader.get(path + "/edit/questions").status_code == 403
    draft = Editor(sign_in(site.app), path).fields
    for route in ("/edit/apply", "/edit/save", "/history/revert"):
        response = reader.post(path + route, json={**draft, "op": "add-virtual:text", "revision_id": 1}, headers=HTMX)
        assert response.status_code == 403, route
    assert reader.get(path + "/history").status_code == 200  # reading the history is the API's to allow


def test_saving_sends_the_whole_dashboard_as_one_put_and_cancel_writes_nothing(site, monkeypatch):
    dashboard_id, path = new_dashboard(site, "Built here")
    client = sign_in(site.app)
    editor = Editor(client, path)
    assert "This dashboard is empty." in editor.html
    picker = text(client.get(path + "/edit/questions?q=Revenue"))
    assert f'value="add-card:{site.shop["chart"]}"' in picker and "Customer list" not in picker
    editor.apply(f"add-card:{site.shop['chart']}")
    editor.apply(f"add-card:{site.shop['total']}")
    editor.apply("add-virtual:text")
    text_card = editor.draft["dashcards"][-1]["id"]
    editor.apply("add-virtual:heading")
    editor.apply("add-virtual:link")
    heading, link = (d["id"] for d in editor.draft["dashcards"][-2:])
    editor.apply("sync", **{f"text.{text_card}": "Numbers are in **EUR**", f"text.{heading}": "Sales",
                            f"url.{link}": "https://example.com"})
    editor.apply(f"remove:{heading}")
    assert editor.apply("add-card:999999", status=400)  # no such question
    before = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))

    # Cancel: the page is left; nothing of the above was written.
    assert ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"] == [] == before["dashcards"]

    calls = recorded_calls(monkeypatch)
    saved = editor.save(name="Built here, saved")
    assert saved.status_code == 200 and saved.headers["HX-Redirect"] == f"/dashboard/{dashboard_id}-built-here-saved"
    puts = [c for c in calls if c[0] != "GET"]
    assert len(puts) == 1 and puts[0][:2] == ("PUT", f"/api/dashboard/{dashboard_id}")
    body = puts[0][2]
    assert set(body) == {"name", "description", "tabs", "dashcards", "parameters"}
    assert body["name"] == "Built here, saved" and body["tabs"] == [] and body["parameters"] == []
    chart, total, note, url = body["dashcards"]
    assert chart == {"id": -1, "card_id": site.shop["chart"], "dashboard_tab_id": None, "row": 0, "col": 0,
                     "size_x": 12, "size_y": 6, "parameter_mappings": [], "visualization_settings": {}, "series": []}
    assert (total["card_id"], total["row"], total["size_x"], total["size_y"]) == (site.shop["total"], 6, 6, 3)
    assert note["card_id"] is None and note["visualization_settings"]["text"] == "Numbers are in **EUR**"
    assert note["visualization_settings"]["virtual_card"]["display"] == "text"
    assert url["visualization_settings"]["link"] == {"url": "https://example.com"}
    stored = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))
    assert [d["card_id"] for d in stored["dashcards"]] == [site.shop["chart"], site.shop["total"], None, None]
    assert "Numbers are in <strong>EUR</strong>" in text(client.get(f"/dashboard/{dashboard_id}"))


def test_a_stale_or_invalid_save_is_refused_and_shown(site):
    dashboard_id, path = new_dashboard(site, "Contested")
    editor = Editor(sign_in(site.app), path)
    editor.apply("add-virtual:text")
    unnamed = editor.save(name="")
    assert unnamed.status_code == 400 and 'role="alert"' in text(unnamed)
    junk = editor.save(draft="{not json")
    assert junk.status_code == 400 and "reload the editor" in text(junk)
    other = editor.save(draft=orjson.dumps({**editor.draft, "id": site.shop["dashboard"]}).decode())
    assert other.status_code == 400  # a draft of another dashboard
    for broken in ({"row": "x"}, {"size_x": None}, {"parameter_mappings": "all"}, {"visualization_settings": []}):
        bad = {**editor.draft, "dashcards": [{**editor.draft["dashcards"][0], **broken}]}
        for route in ("apply", "save"):
            response = editor.client.post(f"{path}/edit/{route}", json={**editor.fields, "draft": orjson.dumps(bad).decode(),
                                                                      "op": "add-virtual:text"}, headers=HTMX)
            assert response.status_code == 400 and "reload the editor" in text(response), (broken, route)
    for broken in ({"_cards": {"1": "x"}}, {"_cards": {"1": {"columns": [5]}}}, {"parameters": [{"id": "a", "type": None}]}):
        response = editor.client.post(f"{path}/edit/apply", json={**editor.fields, "op": "sync", "draft": orjson.dumps(
            {**editor.draft, **broken}).decode()}, headers=HTMX)
        assert response.status_code == 400, broken
    ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))  # a view is no change
    ok(site.admin.put(f"/api/dashboard/{dashboard_id}", json={"description": "Changed by someone else"}))
    stale = editor.save()
    assert stale.status_code == 409 and "Nothing was saved" in text(stale)
    stored = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))
    assert stored["dashcards"] == [] and stored["description"] == "Changed by someone else"
    # Another editor's cards alone (the dashboard's own row untouched) make a draft stale too.
    editor = Editor(sign_in(site.app), path)
    editor.apply("add-virtual:heading")
    ok(site.admin.put(f"/api/dashboard/{dashboard_id}", json={"dashcards": [
        {"id": -1, "card_id": site.shop["total"], "row": 0, "col": 0, "size_x": 6, "size_y": 3}]}))
    assert editor.save().status_code == 409
    assert [d["card_id"] for d in ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"]] == [site.shop["total"]]


def test_an_unchanged_save_keeps_every_card_place_and_wiring(site):
    before = ok(site.admin.get(f"/api/dashboard/{site.shop['dashboard']}"))
    editor = Editor(sign_in(site.app), site.shop["path"])
    assert editor.save().status_code == 200
    after = ok(site.admin.get(f"/api/dashboard/{site.shop['dashboard']}"))
    keys = ("id", "card_id", "dashboard_tab_id", "row", "col", "size_x", "size_y", "parameter_mappings",
            "visualization_settings")
    assert [{k: d[k] for k in keys} for d in after["dashcards"]] == [{k: d[k] for k in keys} for d in before["dashcards"]]
    assert after["parameters"] == before["parameters"] and after["tabs"] == before["tabs"]


def test_cards_are_placed_on_the_24_column_grid_and_push_others_down(site):
    dashboard_id, path = new_dashboard(site, "Layout")
    editor = Editor(sign_in(site.app), path)
    editor.apply(f"add-card:{site.shop['chart']}")   # 12 x 6 at (0, 0)
    editor.apply(f"add-card:{site.shop['total']}")   # 6 x 3 at (0, 6)
    chart, total = (d["id"] for d in editor.draft["dashcards"])
    said = editor.apply(f"place:{total}", col=3, row=0, size_x=6, size_y=3)
    assert 'data-announce="Invoice total: column 4, row 1, 6 wide, 3 tall."' in said
    placed = {d["id"]: d for d in editor.draft["dashcards"]}
    assert (placed[total]["col"], placed[total]["row"]) == (3, 0)
    assert placed[chart]["row"] == 3  # covered, so moved below
    editor.apply(f"place:{total}", col=30, row=-2, size_x=40, size_y=0)  # kept on the grid
    placed = {d["id"]: d for d in editor.draft["dashcards"]}[total]
    assert (placed["col"], placed["row"], placed["size_x"], placed["size_y"]) == (0, 0, 24, 1)
    assert 'class="dashcard dashedit-card col-1 w-24 h-1"' in editor.html
    editor.apply(f"place:{total}", status=400, col="left", row=0, size_x=1, size_y=1)
    assert editor.save().status_code == 200
    stored = {d["card_id"]: d for d in ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"]}
    assert (stored[site.shop["total"]]["size_x"], stored[site.shop["chart"]]["row"]) == (24, 3)


def test_tabs_are_added_renamed_reordered_deleted_and_cards_move_between_them(site):
    dashboard_id, path = new_dashboard(site, "Tabbed")
    editor = Editor(sign_in(site.app), path)
    editor.apply(f"add-card:{site.shop['chart']}")
    editor.apply("add-tab")  # the first new tab makes two: the card stays on the first
    first, second = (t["id"] for t in editor.draft["tabs"])
    assert editor.draft["dashcards"][0]["dashboard_tab_id"] == first and editor.draft["tab"] == second
    editor.apply(f"add-card:{site.shop['total']}")  # onto the tab being shown
    assert editor.draft["dashcards"][1]["dashboard_tab_id"] == second
    editor.apply(f"tab:{first}", **{f"tabname.{first}": "Sales", f"tabname.{second}": "Totals"})
    chart = editor.draft["dashcards"][0]["id"]
    editor.apply("add-tab")
    third = editor.draft["tabs"][-1]["id"]
    editor.apply(f"tab:{first}")
    editor.apply(f"to-tab:{chart}", **{f"totab.{chart}": str(third)})
    assert editor.draft["dashcards"][0]["dashboard_tab_id"] == third
    editor.apply(f"tab-right:{first}")
    assert [t["name"] for t in editor.draft["tabs"]] == ["Totals", "Sales", "Tab 3"]
    editor.apply(f"delete-tab:{first}")
    assert [t["name"] for t in editor.draft["tabs"]] == ["Totals", "Tab 3"]
    editor.apply("delete-tab:12345", status=400)
    assert editor.save().status_code == 200
    stored = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))
    tabs = {t["name"]: t["id"] for t in stored["tabs"]}
    assert [t["name"] for t in sorted(stored["tabs"], key=lambda t: t["position"])] == ["Totals", "Tab 3"]
    assert {d["card_id"]: d["dashboard_tab_id"] for d in stored["dashcards"]} == {
        site.shop["total"]: tabs["Totals"], site.shop["chart"]: tabs["Tab 3"]}
    # Deleting down to one tab leaves a dashboard without tabs.
    editor = Editor(sign_in(site.app), f"/dashboard/{dashboard_id}-tabbed")
    editor.apply(f"delete-tab:{tabs['Tab 3']}")
    assert editor.draft["tabs"] == [] and [d["dashboard_tab_id"] for d in editor.draft["dashcards"]] == [None]


def test_filters_of_each_kind_are_wired_to_columns_with_the_same_field_suggested(site):
    dashboard_id, path = new_dashboard(site, "Filtered")
    editor = Editor(sign_in(site.app), path)
    for card in ("chart", "total", "listing", "people"):
        editor.apply(f"add-card:{site.shop[card]}")
    for kind in ("date", "string", "number", "id", "location"):
        editor.apply("add-filter", filter_kind=kind)
    params = editor.draft["parameters"]
    assert [(p["type"], p["sectionId"]) for p in params] == [
        ("date/all-options", "date"), ("string/=", "string"), ("number/=", "number"), ("id", "id"),
        ("string/=", "location")]
    date, city = params[0]["id"], params[1]["id"]
    chart, total, listing, people = (d["id"] for d in editor.draft["dashcards"])
    # A date filter offers the invoices' date, never a text column; a customer list has no date.
    date_select = re.search(rf'<select id="wire-{date}-{chart}".*?</select>', editor.html, re.DOTALL).group(0)
    assert "Created At" in date_select and ">City<" not in date_select
    people_select = re.search(rf'<select id="wire-{date}-{people}".*?</select>', editor.html, re.DOTALL).group(0)
    assert people_select.count("<option") == 1  # "Not wired" alone
    created = next(v for v in re.findall(r'<option value="([^"]*)">Created At<', date_select))
    editor.apply("sync", **{f"wire.{date}.{chart}": unescape(created)})
    assert f'value="autowire:{date}"' in editor.html and "on 2 more cards" in editor.html
    editor.apply(f"autowire:{date}")
    wired = {d["id"]: [m for m in d["parameter_mappings"] if m["parameter_id"] == date] for d in editor.draft["dashcards"]}
    assert len(wired[total]) == len(wired[listing]) == 1 and wired[people] == []
    assert wired[total][0]["target"] == wired[chart][0]["target"] and wired[total][0]["card_id"] == site.shop["total"]
    city_select = re.search(rf'<select id="wire-{city}-{people}".*?</select>', editor.html, re.DOTALL).group(0)
    city_value = unescape(re.search(r'<option value="([^"]*)">City<', city_select).group(1))
    editor.apply("sync", **{f"wire.{city}.{people}": city_value, f"pname.{city}": "Town", f"pdefault.{city}": "Oslo",
                            f"prequired.{city}": "1", f"pdefault.{date}": "past30days",
                            f"plinked.{date}": [city], f"pname.{date}": "When"})
    editor.apply("sync", **{f"wire.{city}.{people}": '["dimension", ["field", 1, null]]'}, status=400)  # not offered
    editor.apply(f"remove-filter:{params[2]['id']}")
    unset = editor.save(**{f"pdefault.{city}": ""})  # required, so it needs a default (Metabase's rule)
    assert unset.status_code == 400 and "needs a default one: Town" in text(unset)
    assert editor.save().status_code == 200
    stored = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))
    by_id = {p["id"]: p for p in stored["parameters"]}
    assert len(by_id) == 4 and params[2]["id"] not in by_id
    assert (by_id[city]["name"], by_id[city]["slug"], by_id[city]["default"], by_id[city]["required"]) == (
        "Town", "town", ["Oslo"], True)
    assert (by_id[date]["name"], by_id[date]["default"], by_id[date]["filteringParameters"]) == ("When", "past30days", [city])
    mapped = {d["card_id"]: {m["parameter_id"] for m in d["parameter_mappings"]} for d in stored["dashcards"]}
    assert mapped == {site.shop["chart"]: {date}, site.shop["total"]: {date}, site.shop["listing"]: {date},
                      site.shop["people"]: {city}}
    # The saved dashboard filters its cards by them: the people table has the Oslo customers by default.
    page = text(sign_in(site.app).get(f"/dashboard/{dashboard_id}"))
    assert 'name="town"' in page and "When" in page


def test_a_card_gets_its_own_title_and_hides_when_empty(site):
    dashboard_id, path = new_dashboard(site, "Overrides")
    editor = Editor(sign_in(site.app), path)
    editor.apply(f"add-card:{site.shop['total']}")
    card = editor.draft["dashcards"][0]["id"]
    editor.apply("sync", **{f"title.{card}": "Takings", f"hide.{card}": "1"})
    assert 'aria-label="Takings"' in editor.html
    assert editor.save().status_code == 200
    stored = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"][0]["visualization_settings"]
    assert stored == {"card.title": "Takings", "card.hide_empty": True}
    # An empty card whose dashcard says so is hidden on the dashboard; one that says nothing shows "No results".
    nothing = ok(site.admin.post("/api/card", json={
        "name": "Big invoices", "display": "table", "visualization_settings": {}, "collection_id": site.collection,
        "dataset_query": {"database": site.shop["db"], "type": "native",
                          "native": {"query": "SELECT id FROM invoices WHERE amount > 1000"}}}))["id"]
    editor = Editor(sign_in(site.app), path)
    editor.apply(f"add-card:{nothing}")
    editor.apply(f"add-card:{nothing}")
    hidden, shown = (d["id"] for d in editor.draft["dashcards"][1:])
    editor.apply("sync", **{f"hide.{hidden}": "1"})
    assert editor.save().status_code == 200
    ids = [d["id"] for d in ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"]]
    client = sign_in(site.app)
    assert "shape-hidden" in text(client.get(f"/dashboard/{dashboard_id}/card/{ids[1]}", headers=HTMX))
    assert "shape-empty" in text(client.get(f"/dashboard/{dashboard_id}/card/{ids[2]}", headers=HTMX))


def test_the_history_lists_revisions_and_reverts_one(site):
    dashboard_id, path = new_dashboard(site, "Versioned")
    client = sign_in(site.app)
    editor = Editor(client, path)
    editor.apply(f"add-card:{site.shop['total']}")
    assert editor.save().status_code == 200
    editor = Editor(client, path)
    editor.apply(f"add-card:{site.shop['chart']}")
    assert editor.save().status_code == 200
    assert len(ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"]) == 2
    history = text(client.get(path + "/history"))
    revisions = [int(r) for r in re.findall(r'"revision_id": (\d+)', history)]
    assert len(revisions) >= 2
    junk = client.post(path + "/history/revert", json={"revision_id": "x"}, headers=HTMX)
    assert junk.status_code == 400
    back = client.post(path + "/history/revert", json={"revision_id": revisions[0]}, headers=HTMX)
    assert back.status_code == 200 and back.headers["HX-Redirect"] == path + "/history"
    assert [d["card_id"] for d in ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"]] == [site.shop["total"]]


def test_a_chart_draws_another_question_with_it_as_a_series(site):
    chart = ok(site.admin.get(f"/api/card/{site.shop['chart']}"))
    twin = ok(site.admin.post("/api/card", json={
        "name": "Revenue by city, again", "display": "line", "visualization_settings": {},
        "collection_id": site.collection, "dataset_query": chart["dataset_query"]}))["id"]
    dashboard_id, path = new_dashboard(site, "Combined")
    editor = Editor(sign_in(site.app), path)
    editor.apply(f"add-card:{site.shop['chart']}")
    editor.apply(f"add-card:{site.shop['total']}")
    chart_card, total_card = (d["id"] for d in editor.draft["dashcards"])
    offered = re.search(rf'<select id="series-{chart_card}".*?</select>', editor.html, re.DOTALL).group(0)
    assert f'value="{twin}"' in offered and f'value="{site.shop["total"]}"' not in offered  # a number is no series
    assert f'id="series-{total_card}"' not in editor.html  # nor is a number drawn with others
    editor.apply(f"add-series:{chart_card}", **{f"series.{chart_card}": str(site.shop["total"])}, status=400)
    editor.apply(f"add-series:{chart_card}", **{f"series.{chart_card}": str(twin)})
    assert "Revenue by city, again" in editor.html and f'value="remove-series:{chart_card}:{twin}"' in editor.html
    # A filter is wired to the series card on its own row.
    editor.apply("add-filter", filter_kind="date")
    pid = editor.draft["parameters"][0]["id"]
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<select id="(wire-[^"]+)".*?</select>', editor.html, re.DOTALL)}
    created = unescape(re.search(r'<option value="([^"]*)">Created At<', rows[f"wire-{pid}-{chart_card}-{twin}"]).group(1))
    editor.apply("sync", **{f"wire.{pid}.{chart_card}.{twin}": created})
    assert editor.save().status_code == 200
    stored = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"][0]
    assert [x["id"] for x in stored["series"]] == [twin]
    assert [(m["card_id"], m["parameter_id"]) for m in stored["parameter_mappings"]] == [(twin, pid)]
    editor = Editor(sign_in(site.app), path)
    editor.apply(f"remove-series:{stored['id']}:{twin}")
    assert editor.save().status_code == 200
    again = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"][0]
    assert again["series"] == [] and again["parameter_mappings"] == []  # its wiring went with it


def test_the_editor_draws_each_question_at_its_size_as_the_user_may_run_it(site):
    client = sign_in(site.app)
    path = site.shop["path"]
    editor = Editor(client, path)
    assert f'{path}/edit/preview/{site.shop["total"]}?w=6&amp;h=3' in editor.html
    number = client.get(f"{path}/edit/preview/{site.shop['total']}?w=6&h=3", headers=HTMX)
    assert number.status_code == 200 and '<p class="scalar">23.5</p>' in text(number)
    chart = text(client.get(f"{path}/edit/preview/{site.shop['chart']}?w=12&h=6", headers=HTMX))
    assert "<svg" in chart and 'width="672"' in chart  # 12 columns of 56 px
    rows = text(client.get(f"{path}/edit/preview/{site.shop['listing']}?w=18&h=3&sort=amount&dir=desc", headers=HTMX))
    assert "<table" in rows and f"{path}/edit/preview/{site.shop['listing']}?w=18&amp;h=3&amp;sort=" in rows
    missing = client.get(f"{path}/edit/preview/999999?w=junk", headers=HTMX)
    assert missing.status_code == 200 and "permission" in text(missing)
    reader = sign_in(site.app, "reader@example.com", USER_PASSWORD)
    assert reader.get(f"{path}/edit/preview/{site.shop['total']}").status_code == 403


def test_a_cards_visualization_settings_are_overridden_on_the_dashboard_alone_and_reset(site):
    chart = site.shop["chart"]
    before = ok(site.admin.get(f"/api/card/{chart}"))
    dashboard_id, path = new_dashboard(site, "Restyled")
    client = sign_in(site.app)
    editor = Editor(client, path)
    editor.apply(f"add-card:{chart}")
    card = editor.draft["dashcards"][0]["id"]
    # The question page's panel, for this card, inside the editor's form: no display picker, no Data section.
    editor.apply(f"viz:{card}")
    assert "Visualization settings of Revenue by city" in editor.html and 'name="vizcard"' in editor.html
    assert 'class="viz-picker"' not in editor.html and 'id="viz-data"' not in editor.html
    editor.apply("sync", **{"graph.show_goal": "1", "graph.goal_value": "40", "graph.goal_label": "Target",
                            "graph.y_axis.title_text": "Takings"})
    # Only what differs from the question is kept, and the preview draws it.
    assert editor.draft["dashcards"][0]["visualization_settings"] == {
        "graph.show_goal": True, "graph.goal_value": 40, "graph.goal_label": "Target",
        "graph.y_axis.title_text": "Takings"}
    assert re.search(r'id="viz-show-goal"[^>]*checked', editor.html) and 'value="Takings"' in editor.html
    preview = unescape(re.search(rf'"({re.escape(path)}/edit/preview/{chart}\?[^"]*vs=[^"]*)"', editor.html).group(1))
    assert "Target" in text(client.get(preview, headers=HTMX))
    assert client.get(f"{path}/edit/preview/{chart}?vs=junk", headers=HTMX).status_code == 400
    editor.apply("sync", status=400, **{"graph.goal_value": "lots"})
    editor.apply("viz-close")
    assert 'name="vizcard"' not in editor.html
    assert editor.save().status_code == 200

    stored = ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"][0]
    assert stored["visualization_settings"]["graph.goal_label"] == "Target"
    after = ok(site.admin.get(f"/api/card/{chart}"))
    assert (after["visualization_settings"], after["updated_at"]) == (before["visualization_settings"], before["updated_at"])
    drawn = text(client.get(f"/dashboard/{dashboard_id}/card/{stored['id']}", headers=HTMX))
    assert "Target" in drawn and "Takings" in drawn

    # Reset: the card is drawn with the question's settings again, and saved so.
    editor = Editor(client, path)
    editor.apply(f"viz:{stored['id']}")
    assert re.search(r'id="viz-show-goal"[^>]*checked', editor.html)  # the override, as the panel opens
    editor.apply(f"viz-reset:{stored['id']}")
    assert editor.draft["dashcards"][0]["visualization_settings"] == {}
    assert not re.search(r'id="viz-show-goal"[^>]*checked', editor.html)
    assert editor.save().status_code == 200
    assert ok(site.admin.get(f"/api/dashboard/{dashboard_id}"))["dashcards"][0]["visualization_settings"] == {}
    assert "Target" not in text(client.get(f"/dashboard/{dashboard_id}/card/{stored['id']}", headers=HTMX))
