"""The dashboard and x-ray pages (plugins/app/dashboard.py) through HTTP as a browser sends them: the
page with its filter widgets, tabs and card frames; each card's body as htmx loads it, with the
filters of the URL; value lists chained by the other filters; downloads posted as forms; text cards'
Markdown with every tag escaped; and what a user who may not read or query something is shown. One
app per module: a small shop database (invoices with dates) and the Sample Database for the x-ray."""
from __future__ import annotations

import csv
import io
import re
import shutil
from html import unescape
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest

from core.testing import USER_PASSWORD, make_user, setup_admin, sqlite_file, wait_for_sync
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.support import module_app

pytestmark = pytest.mark.xdist_group("app-dashboard-pages")

SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE invoices (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), amount REAL,
                       created_at DATE);
INSERT INTO customers VALUES (1, 'Ann', 'Oslo'), (2, 'Bob', 'Rome'), (3, 'Cy', 'Oslo');
INSERT INTO invoices VALUES (1, 1, 10.0, '2024-01-15'), (2, 1, 5.5, '2024-02-20'), (3, 2, 7.0, '2024-03-05'),
                            (4, 3, 1.0, '2024-03-25');
"""
CITY = {"id": "p_city", "name": "City", "slug": "city", "type": "string/="}
NAME = {"id": "p_name", "name": "Name", "slug": "name", "type": "string/="}
DATE = {"id": "p_date", "name": "Date", "slug": "date", "type": "date/all-options"}
AMOUNT = {"id": "p_amount", "name": "Amount", "slug": "amount", "type": "number/between"}
INVOICE = {"id": "p_invoice", "name": "Invoice", "slug": "invoice", "type": "id"}
PARAMETERS = [CITY, NAME, DATE, AMOUNT, INVOICE]
TEXT = ("Numbers are in **EUR**. <script>alert(1)</script> <img src=x onerror=alert(1)> "
        "[report](javascript:alert(1)) [site](https://example.com/a)")


def ok(response, status=200):
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:500])
    return response.json


def block_data(admin, db_id: int) -> None:
    """All Users may neither see this database's data nor query it."""
    revision = ok(admin.get("/api/permissions/graph"))["revision"]
    ok(admin.put("/api/permissions/graph", json={"revision": revision, "groups": {
        "1": {str(db_id): {"view-data": "blocked", "create-queries": "no"}}}}))


def blocked_database(site, name: str, sql: str) -> tuple[int, dict, dict]:
    """A SQLite database of its own (made by `sql`), synced, whose data All Users may neither see nor query:
    its id, tables and fields (as fields_of gives them)."""
    path = sqlite_file(site.app, f"{name.lower()}.db", sql)
    db_id = ok(site.admin.post("/api/database", json={"name": name, "engine": "sqlite", "details": {"db": path}}))["id"]
    wait_for_sync(site.app)
    tables, fields = fields_of(site.admin, db_id)
    block_data(site.admin, db_id)
    return db_id, tables, fields


def fields_of(admin, db_id: int) -> tuple[dict, dict]:
    tables = {t["name"]: t for t in ok(admin.get(f"/api/database/{db_id}/metadata"))["tables"]}
    return tables, {(t, f["name"]): f["id"] for t, table in tables.items() for f in table["fields"]}


def build_shop(app, admin, collection_id=None) -> dict:
    """Two tabs: Sales (a bar chart, a number, a table of invoices, text, a heading and a link) and
    Customers (a table); five filters (city, name, date, amount between, invoice id)."""
    path = sqlite_file(app, "shop.db", SHOP)
    db = ok(admin.post("/api/database", json={"name": "Shop", "engine": "sqlite", "details": {"db": path}}))["id"]
    wait_for_sync(app)
    tables, field = fields_of(admin, db)
    city = field[("customers", "city")]
    ok(admin.put(f"/api/field/{city}", json={"semantic_type": "type/Category", "has_field_values": "list"}))
    ok(admin.post(f"/api/field/{city}/rescan_values"))
    wait_for_sync(app)
    fk = field[("invoices", "customer_id")]

    def card(name, display, query):
        body = {"name": name, "display": display, "visualization_settings": {}, "collection_id": collection_id,
                "dataset_query": {"database": db, "type": "query", "query": query}}
        return ok(admin.post("/api/card", json=body))["id"]

    invoices = tables["invoices"]["id"]
    amount = ["sum", ["field", field[("invoices", "amount")], None]]
    chart = card("Revenue by city", "bar", {"source-table": invoices, "aggregation": [amount],
                                            "breakout": [["field", city, {"source-field": fk}]]})
    total = card("Invoice total", "scalar", {"source-table": invoices, "aggregation": [amount]})
    listing = card("Invoice list", "table", {"source-table": invoices,
                                             "order-by": [["asc", ["field", field[("invoices", "id")], None]]]})
    people = card("Customer list", "table", {"source-table": tables["customers"]["id"]})
    dashboard = ok(admin.post("/api/dashboard", json={"name": "Shop overview", "collection_id": collection_id}))

    def on_invoices(card_id):
        def target(table, name, via_fk=False):
            return ["dimension", ["field", field[(table, name)], {"source-field": fk} if via_fk else None]]
        return [{"parameter_id": "p_city", "card_id": card_id, "target": target("customers", "city", True)},
                {"parameter_id": "p_name", "card_id": card_id, "target": target("customers", "name", True)},
                {"parameter_id": "p_date", "card_id": card_id, "target": target("invoices", "created_at")},
                {"parameter_id": "p_amount", "card_id": card_id, "target": target("invoices", "amount")},
                {"parameter_id": "p_invoice", "card_id": card_id, "target": target("invoices", "id")}]

    def virtual(display, **settings):
        return {"virtual_card": {"name": None, "display": display, "visualization_settings": {},
                                 "dataset_query": {}, "archived": False}, **settings}

    on_people = [{"parameter_id": p, "card_id": people, "target": ["dimension", ["field", field[("customers", n)], None]]}
                 for p, n in (("p_city", "city"), ("p_name", "name"))]
    dashcards = [
        {"id": -1, "card_id": chart, "dashboard_tab_id": -1, "row": 0, "col": 0, "size_x": 12, "size_y": 6,
         "parameter_mappings": on_invoices(chart)},
        {"id": -2, "card_id": total, "dashboard_tab_id": -1, "row": 0, "col": 12, "size_x": 6, "size_y": 3,
         "parameter_mappings": on_invoices(total)},
        {"id": -3, "card_id": None, "dashboard_tab_id": -1, "row": 3, "col": 12, "size_x": 6, "size_y": 3,
         "visualization_settings": virtual("text", text=TEXT)},
        {"id": -4, "card_id": None, "dashboard_tab_id": -1, "row": 6, "col": 0, "size_x": 24, "size_y": 1,
         "visualization_settings": virtual("heading", text="Every invoice <b>listed</b>{{place}}"),
         "parameter_mappings": [{"parameter_id": "p_city", "target": ["text-tag", "place"]}]},
        {"id": -5, "card_id": listing, "dashboard_tab_id": -1, "row": 7, "col": 0, "size_x": 18, "size_y": 3,
         "parameter_mappings": on_invoices(listing)},
        {"id": -6, "card_id": None, "dashboard_tab_id": -1, "row": 7, "col": 18, "size_x": 6, "size_y": 1,
         "visualization_settings": virtual("link", link={"url": "javascript:alert(1)"})},
        {"id": -7, "card_id": people, "dashboard_tab_id": -2, "row": 0, "col": 0, "size_x": 12, "size_y": 5,
         "parameter_mappings": on_people},
        {"id": -8, "card_id": None, "dashboard_tab_id": -2, "row": 0, "col": 12, "size_x": 6, "size_y": 1,
         "visualization_settings": virtual("link", link={"entity": {"id": chart, "model": "card",
                                                                    "name": "Revenue by city"}})},
        {"id": -9, "card_id": None, "dashboard_tab_id": -2, "row": 1, "col": 12, "size_x": 6, "size_y": 1,
         "visualization_settings": virtual("link", link={"url": "example.com/handbook"})},
    ]
    saved = ok(admin.put(f"/api/dashboard/{dashboard['id']}", json={
        "tabs": [{"id": -1, "name": "Sales"}, {"id": -2, "name": "Customers"}], "dashcards": dashcards,
        "parameters": PARAMETERS}))
    ids = {d["card_id"]: d["id"] for d in saved["dashcards"] if d["card_id"]}
    return {"dashboard": dashboard["id"], "db": db, "chart": chart, "total": total, "listing": listing,
            "people": people, "dashcard": ids, "tabs": [t["id"] for t in saved["tabs"]],
            "path": f"/dashboard/{dashboard['id']}-shop-overview"}


class Site:
    def __init__(self, app, admin, shop, orders):
        self.app, self.admin, self.shop, self.orders = app, admin, shop, orders


@pytest.fixture(scope="module")
def site(tmp_path_factory, app_db_template, sample_database_template):
    from core.sync.sample_data import FILE_NAME, directory

    data_dir = tmp_path_factory.mktemp("app-dashboards")
    app = module_app(data_dir, app_db_template)
    directory(data_dir).mkdir(parents=True, exist_ok=True)
    shutil.copy(sample_database_template, directory(data_dir) / FILE_NAME)
    admin = setup_admin(app)
    shop = build_shop(app, admin)
    sample = ok(admin.post("/api/database/sample_database"))["id"]
    wait_for_sync(app)
    tables, _ = fields_of(admin, sample)
    yield Site(app, admin, shop, tables["ORDERS"]["id"])
    app.extensions["tessera"].db.dispose()


class Attributes(HTMLParser):
    """Every start tag and attribute of a page."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def parsed(html: str) -> list[tuple[str, dict]]:
    parser = Attributes()
    parser.feed(html)
    return parser.tags


def card_urls(html: str) -> dict[int, str]:
    """dashcard id -> the fragment URL its body loads (hx-get), as the page wrote it."""
    return {int(m.group(1)): unescape(m.group(0)) for m in re.finditer(r"/dashboard/\d+-[a-z-]+/card/(-?\d+)[^\"]*", html)}


def card(client, url: str) -> str:
    response = client.get(url, headers=HTMX)
    assert response.status_code == 200, text(response)
    return text(response)


def scalar(html: str) -> str:
    return re.search(r'<p class="scalar">([^<]*)</p>', html).group(1)


def cells(html: str) -> list[list[str]]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body, re.DOTALL)]


def forms_of(html: str) -> list[tuple[str, dict]]:
    """Each download form: where it posts and its fields."""
    found = re.findall(r'<form method="post" action="([^"]+)">(.*?)</form>', html, re.DOTALL)
    return [(unescape(action), {name: unescape(value) for name, value in re.findall(r'name="(\w+)" value="([^"]*)"', inner)})
            for action, inner in found]


# -- the page -----------------------------------------------------------------------------------------------

def test_a_dashboard_with_filters_renders_its_widgets_tabs_and_card_frames(site):
    client = sign_in(site.app)
    shop = site.shop
    response = client.get(shop["path"])
    assert response.status_code == 200
    page = text(response)
    assert "<h1>Shop overview</h1>" in page
    # A widget per filter, each labelled: a value list, a date with its parts, a number range, ids.
    assert 'class="filter filter-choice" data-slug="city"' in page and "Search City" in page
    assert 'name="date" value="" data-date-value' in page and ">In the past<" in page and ">Between two dates<" in page
    assert page.count('name="amount"') == 2 and 'name="invoice"' in page
    tags = parsed(page)
    ids = {a["id"] for _, a in tags if "id" in a}
    for_labels = [a["for"] for t, a in tags if t == "label" and "for" in a]
    assert for_labels and all(target in ids for target in for_labels)
    # Tabs as Metabase names them in the URL; Sales first and current.
    sales, customers = shop["tabs"]
    assert f'href="{shop["path"]}?tab={sales}-sales" hx-get' in page.replace("&amp;", "&")
    assert re.search(rf'tab={customers}-customers"[^>]*>Customers<', page.replace("&amp;", "&"))
    assert re.search(r'aria-current="page">Sales<', page)
    # The Sales tab's cards, each query card loading its own body; the other tab's card is not drawn.
    for name in ("Revenue by city", "Invoice total", "Invoice list"):
        assert f">{name}</a></h2>" in page  # the title opens the saved question
    assert f'href="/question/{shop["chart"]}-revenue-by-city">Revenue by city</a>' in page
    assert "Customer list" not in page
    assert set(card_urls(page)) == {shop["dashcard"][c] for c in (shop["chart"], shop["total"], shop["listing"])}
    # The grid from the dashcards' places: classes, never an inline style.
    assert re.search(r'class="dashcard col-13 w-6 h-3 dashcard-number" data-row="0"', page)
    assert re.search(r'class="dashcard col-1 w-24 h-1 dashcard-heading" data-row="6"', page)
    assert not [a for _, a in tags if "style" in a]
    # Downloads come with each card's body (the API says whether the user may download).
    assert '<form method="post"' not in page
    # The other tab, as a link: its own cards.
    other = text(client.get(f"{shop['path']}?tab={customers}-customers"))
    assert ">Customer list</a></h2>" in other and "Invoice total" not in other
    assert re.search(r'aria-current="page">Customers<', other)


def test_filter_values_in_the_url_change_what_the_cards_show(site):
    client = sign_in(site.app)
    shop = site.shop
    everything = card_urls(text(client.get(shop["path"])))
    total = shop["dashcard"][shop["total"]]
    assert scalar(card(client, everything[total])) == "23.5"
    cases = {"city=Oslo": "16.5", "city=Oslo&city=Rome": "23.5", "date=2024-01-01~2024-01-31": "10",
             "date=2024-02-01~": "13.5", "date=~2024-02-29": "15.5", "date=2024-03": "8",
             "amount=5&amount=8": "12.5", "amount=&amount=6": "6.5", "invoice=1,3": "17",
             "city=Oslo&date=2024-02-01~2024-03-31": "6.5", "name=Bob": "7"}
    for query, expected in cases.items():
        page = text(client.get(f"{shop['path']}?{query}"))
        url = card_urls(page)[total]
        assert scalar(card(client, url)) == expected, (query, url)
    # The cards' URLs carry the page's filters, lists repeated, ids one by one.
    carried = card_urls(text(client.get(f"{shop['path']}?city=Oslo&city=Rome&invoice=1,3&date=past30days")))[total]
    assert parse_qs(urlsplit(carried).query) == {"city": ["Oslo", "Rome"], "invoice": ["1", "3"], "date": ["past30days"]}
    # A relative date (the page passes Metabase's syntax to the API unchanged): nothing of 2024 is recent.
    page = text(client.get(f"{shop['path']}?date=past30days"))
    assert 'name="date" value="past30days"' in page and '<option value="past" selected>' in page
    assert scalar(card(client, card_urls(page)[total])) == "–"
    this_year = text(client.get(f"{shop['path']}?date=thisyear"))
    assert '<option value="this" selected>' in this_year and '<option value="year" selected>this year' in this_year
    # A number the page cannot read goes to the API as typed: the card shows the API's refusal.
    refused = card(client, card_urls(text(client.get(f"{shop['path']}?amount=lots&amount=6")))[total])
    assert "card-error" in refused and "lots" in refused
    # The table of invoices filtered by city: its rows, not only its status.
    listing = shop["dashcard"][shop["listing"]]
    oslo = card(client, card_urls(text(client.get(f"{shop['path']}?city=Oslo")))[listing])
    assert [row[0] for row in cells(oslo)] == ["1", "2", "4"]
    # The chart is an inline SVG named for screen readers, one bar per city left.
    chart = card(client, card_urls(text(client.get(f"{shop['path']}?city=Rome")))[shop["dashcard"][shop["chart"]]])
    assert '<svg role="img" aria-label="Revenue by city"' in chart and "Oslo" not in chart and "Rome" in chart


def test_a_filter_left_empty_in_the_url_clears_its_default(site):
    admin, shop = site.admin, site.shop
    with_default = [dict(p, default=["Rome"]) if p["id"] == "p_city" else p for p in PARAMETERS]
    ok(admin.put(f"/api/dashboard/{shop['dashboard']}", json={"parameters": with_default}))
    try:
        client = sign_in(site.app)
        total = shop["dashcard"][shop["total"]]
        defaulted = text(client.get(shop["path"]))
        assert 'value="Rome" checked' in defaulted and 'data-keep-empty="city"' in defaulted
        assert scalar(card(client, card_urls(defaulted)[total])) == "7"
        cleared = text(client.get(f"{shop['path']}?city="))
        assert scalar(card(client, card_urls(cleared)[total])) == "23.5"
    finally:
        ok(admin.put(f"/api/dashboard/{shop['dashboard']}", json={"parameters": PARAMETERS}))


def test_value_lists_are_searched_and_chained_by_the_other_filters(site):
    client = sign_in(site.app)
    path = site.shop["path"]

    def offered(url):
        return re.findall(r'<input type="checkbox" name="\w+" value="([^"]*)"( checked)?>', card(client, url))

    assert offered(f"{path}/values/p_city") == [("Oslo", ""), ("Rome", "")]
    assert offered(f"{path}/values/p_name?city=Oslo") == [("Ann", ""), ("Cy", "")]
    # Values chosen stay first and checked; a search lists what holds the text typed.
    assert offered(f"{path}/values/p_name?city=Oslo&name=Cy") == [("Cy", " checked"), ("Ann", "")]
    assert offered(f"{path}/values/p_city?q=os") == [("Oslo", "")]
    # A value the list does not hold can still be chosen as typed.
    assert offered(f"{path}/values/p_city?q=Bergen") == [("Bergen", "")]
    assert offered(f"{path}/values/p_city?q=Os%3F%23x") == [("Os?#x", "")]
    assert offered(f"{path}/values/p_city?q=%20lo%20") == [("Oslo", "")]
    assert client.get(f"{path}/values/p_nothing").status_code == 404


def test_tables_sort_by_a_clicked_column_and_come_in_pages(site):
    client = sign_in(site.app)
    shop = site.shop
    url = card_urls(text(client.get(shop["path"])))[shop["dashcard"][shop["listing"]]]
    first = card(client, url)
    assert [row[0] for row in cells(first)] == ["1", "2", "3"]  # three rows a page at this card's height
    assert "Rows 1–3 of 4" in first and 'aria-label="Invoice list: rows"' in first
    links = [unescape(href) for href in re.findall(r'<a href="([^"]+)"', first)]
    next_page = next(link for link in links if "page=2" in link)
    assert [row[0] for row in cells(card(client, next_page))] == ["4"]
    by_amount = next(link for link in links if "sort=amount" in link)
    ascending = card(client, by_amount)
    assert [row[2] for row in cells(ascending)] == ["1", "5.5", "7"] and 'aria-sort="ascending"' in ascending
    again = next(unescape(h) for h in re.findall(r'<a href="([^"]+)"', ascending) if "sort=amount" in h)
    assert "dir=desc" in again
    descending = card(client, again)
    assert [row[2] for row in cells(descending)] == ["10", "7", "5.5"] and 'aria-sort="descending"' in descending
    # The links load into the card (htmx), and the body reloads itself with its sort when auto-refresh fires.
    assert 'hx-boost="true" hx-target="closest .dashcard-body"' in descending
    assert re.search(r'hx-get="[^"]*sort=amount&amp;dir=desc" hx-trigger="refresh from:body"', descending)
    # Every link keeps the page's filters.
    filtered = card(client, card_urls(text(client.get(f"{shop['path']}?city=Oslo")))[shop["dashcard"][shop["listing"]]])
    assert all("city=Oslo" in unescape(h) for h in re.findall(r'<a href="([^"]+)"', filtered))


def test_text_cards_are_markdown_with_every_tag_escaped(site):
    client = sign_in(site.app)
    page = text(client.get(site.shop["path"]))
    assert "Numbers are in <strong>EUR</strong>." in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script>alert" not in page
    tags = parsed(page)
    assert not [(tag, a) for tag, a in tags if any(name.startswith("on") for name in a)]
    assert not [a for _, a in tags if "javascript:" in (a.get("href") or "").lower()]
    assert [a["href"] for t, a in tags if t == "a" and a.get("rel") == "noopener noreferrer nofollow"] == [
        "https://example.com/a"]
    # The page's only scripts are its own files and the bootstrap data; no picture is drawn.
    scripts = [a for t, a in tags if t == "script"]
    assert scripts and all(a.get("src", "").startswith("/app/assets/") or a.get("type") == "application/json"
                           for a in scripts)
    assert not [t for t, _ in tags if t == "img"]
    # The heading card is text, its markup escaped too; a link card to javascript: stays text.
    assert "<h2>Every invoice &lt;b&gt;listed&lt;/b&gt;</h2>" in page
    assert '<p class="link-card">javascript:alert(1)</p>' in page
    # A text card's {{variable}} shows the value of the filter mapped to it (nothing without one),
    # escaped as the rest.
    assert "{{place}}" not in page
    oslo = text(client.get(f"{site.shop['path']}?city=Oslo&city=%3Ci%3ERome"))
    assert "<h2>Every invoice &lt;b&gt;listed&lt;/b&gt;Oslo, &lt;i&gt;Rome</h2>" in oslo
    # Link cards: to one of Tessera's pages, or to a web address written without its scheme.
    other_tab = text(client.get(f"{site.shop['path']}?tab={site.shop['tabs'][1]}"))
    assert f'<a class="link-card" href="/question/{site.shop["chart"]}-revenue-by-city">Revenue by city</a>' in other_tab
    assert '<a class="link-card" href="https://example.com/handbook" rel="noopener noreferrer nofollow">' in other_tab


def test_downloads_are_the_apis_exports_of_the_filtered_card(site):
    client = sign_in(site.app)
    shop = site.shop
    urls = card_urls(text(client.get(f"{shop['path']}?city=Oslo")))
    listing = forms_of(card(client, urls[shop["dashcard"][shop["listing"]]]))
    assert [action.rsplit("/", 1)[1] for action, _ in listing] == ["csv", "xlsx", "json", "png?theme=light"]
    csv_action, fields = listing[0]
    assert csv_action.endswith(f"/card/{shop['listing']}/query/csv") and set(fields) == {"parameters", "format_rows"}
    # Posted as the browser posts the form: urlencoded, with the session cookie alone.
    response = client.post(csv_action, data=fields)
    assert response.status_code == 200, text(response)
    rows = list(csv.reader(io.StringIO(text(response))))
    assert [row[0] for row in rows[1:]] == ["1", "2", "4"]
    png_action, png_fields = forms_of(card(client, urls[shop["dashcard"][shop["chart"]]]))[3]
    picture = client.post(png_action, data=png_fields)
    assert picture.status_code == 200 and picture.data[:8] == b"\x89PNG\r\n\x1a\n"


def test_loading_the_cards_counts_one_view_of_the_dashboard(site):
    client = sign_in(site.app)
    shop = site.shop
    before = ok(site.admin.get(f"/api/dashboard/{shop['dashboard']}?ignore_view=true"))["view_count"]
    page = text(client.get(shop["path"]))
    for url in card_urls(page).values():
        card(client, url)
    client.get(f"{shop['path']}?city=Oslo", headers=HTMX)  # a filter change: the same visit
    after = ok(site.admin.get(f"/api/dashboard/{shop['dashboard']}?ignore_view=true"))["view_count"]
    assert after == before + 1


# -- what a user who may not see something is shown ---------------------------------------------------------

def test_a_user_who_may_not_read_the_dashboard_gets_the_403_page_and_no_card_name(site):
    admin = site.admin
    private = ok(admin.post("/api/collection", json={"name": "Board room"}))["id"]
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(private): "none"}}}))
    secret = ok(admin.post("/api/card", json={"name": "Secret margin", "display": "scalar", "visualization_settings": {},
                                              "collection_id": private, "dataset_query": {
                                                  "database": site.shop["db"], "type": "native",
                                                  "native": {"query": "SELECT 42 AS margin"}}}))
    board = ok(admin.post("/api/dashboard", json={"name": "Confidential plans", "collection_id": private,
                                                  "parameters": [CITY]}))
    saved = ok(admin.put(f"/api/dashboard/{board['id']}", json={"dashcards": [
        {"id": -1, "card_id": secret["id"], "row": 0, "col": 0, "size_x": 6, "size_y": 3}]}))
    dashcard_id = saved["dashcards"][0]["id"]
    make_user(site.app, email="outsider@example.com")
    client = sign_in(site.app, "outsider@example.com", USER_PASSWORD)
    for path in (f"/dashboard/{board['id']}", f"/dashboard/{board['id']}-confidential-plans",
                 f"/dashboard/{board['id']}/card/{dashcard_id}", f"/dashboard/{board['id']}/values/p_city"):
        response = client.get(path)
        assert response.status_code == 403, path
        assert "Secret margin" not in text(response) and "Confidential plans" not in text(response)
        assert "42" not in re.sub(r"<[^>]+>", "", text(response).split("<main", 1)[1])
    assert client.get("/dashboard/999999").status_code == 404
    assert client.get("/dashboard/abc").status_code == 404
    # Not even whether a card is there: the dashboard's 403 comes first.
    assert client.get(f"/dashboard/{board['id']}/card/12x").status_code == 403
    assert sign_in(site.app).get(f"/dashboard/{board['id']}/card/12x").status_code == 404
    assert sign_in(site.app).get(f"/dashboard/{board['id']}/card/{dashcard_id + 1000}").status_code == 404
    # Signed out: to the login page, and back here afterwards.
    anonymous = site.app.test_client()
    assert anonymous.get(f"/dashboard/{board['id']}").headers["Location"] == f"/auth/login?redirect=/dashboard/{board['id']}"


def test_a_card_the_user_may_not_read_or_query_shows_no_data(site):
    admin = site.admin
    shared = ok(admin.post("/api/collection", json={"name": "Team shared"}))["id"]
    private = ok(admin.post("/api/collection", json={"name": "Team private"}))["id"]
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(shared): "read", str(private): "none"}}}))
    # A database of its own, whose data All Users may not see (the shop's stays open to the other tests).
    ledger_db, tables, _ = blocked_database(site, "Ledger", "CREATE TABLE ledger (id INTEGER PRIMARY KEY, amount REAL);"
                                                            "INSERT INTO ledger VALUES (1, 991.5), (2, 8.5);")

    def ledger_card(name, collection_id):
        return ok(admin.post("/api/card", json={
            "name": name, "display": "table", "visualization_settings": {}, "collection_id": collection_id,
            "dataset_query": {"database": ledger_db, "type": "query",
                              "query": {"source-table": tables["ledger"]["id"]}}}))["id"]

    blocked = ledger_card("Ledger lines", shared)
    hidden = ledger_card("Hidden payroll", private)
    open_card = site.shop["total"]
    board = ok(admin.post("/api/dashboard", json={"name": "Mixed access", "collection_id": shared}))
    saved = ok(admin.put(f"/api/dashboard/{board['id']}", json={"dashcards": [
        {"id": -1, "card_id": blocked, "row": 0, "col": 0, "size_x": 12, "size_y": 4},
        {"id": -2, "card_id": hidden, "row": 0, "col": 12, "size_x": 12, "size_y": 4},
        {"id": -3, "card_id": open_card, "row": 4, "col": 0, "size_x": 6, "size_y": 3}]}))
    by_card = {d["card_id"]: d["id"] for d in saved["dashcards"]}
    make_user(site.app, email="member@example.com")
    client = sign_in(site.app, "member@example.com", USER_PASSWORD)
    page = text(client.get(f"/dashboard/{board['id']}"))
    assert ">Ledger lines</a></h2>" in page and ">Invoice total</a></h2>" in page
    # The card in a collection the user may not read: drawn without its name, its body never loaded.
    assert "Hidden payroll" not in page and "A card you don&#39;t have access to" in page
    assert by_card[hidden] not in card_urls(page)
    # Its fragment, asked for anyway, shows no data either.
    hidden_body = card(client, f"/dashboard/{board['id']}/card/{by_card[hidden]}")
    assert "permission" in hidden_body and "991" not in hidden_body and "Hidden payroll" not in hidden_body
    # The readable card over data the user may not see: no rows, a reason.
    blocked_body = card(client, card_urls(page)[by_card[blocked]])
    assert "991" not in blocked_body and "<table" not in blocked_body and "card-error" in blocked_body
    assert scalar(card(client, card_urls(page)[by_card[open_card]])) == "23.5"
    # The administrator sees the same cards' rows.
    admin_client = sign_in(site.app)
    admin_page = text(admin_client.get(f"/dashboard/{board['id']}"))
    assert ">Hidden payroll</a></h2>" in admin_page
    assert "991.5" in card(admin_client, card_urls(admin_page)[by_card[blocked]])


# -- the x-ray of a table -----------------------------------------------------------------------------------

def test_the_xray_of_a_table_renders_with_the_dashboard_page(site):
    client = sign_in(site.app)
    response = client.get(f"/auto/dashboard/table/{site.orders}")
    assert response.status_code == 200
    page = text(response)
    xray = ok(site.admin.get(f"/api/automagic-dashboards/table/{site.orders}"))
    assert f"<h1>{xray['name']}</h1>" in page and "Save this" in page
    # Its date filter and value lists are the same widgets; its section headings are text cards.
    assert 'name="timestamp" value="" data-date-value' in page and "<h2>Summary</h2>" in page
    urls = {int(m.group(1)): unescape(m.group(0))
            for m in re.finditer(r"/auto/dashboard/table/\d+/card/(-\d+)[^\"]*", page)}
    queried = [d for d in xray["dashcards"] if (d.get("card") or {}).get("dataset_query")]
    assert set(urls) == {d["id"] for d in queried}
    count = next(d["id"] for d in queried if d["card"]["name"] == "Total transactions")
    everything = scalar(card(client, urls[count]))
    assert everything == "18,760"
    # A filter of the URL reaches its cards too (an x-ray's cards run as ad-hoc queries).
    filtered = text(client.get(f"/auto/dashboard/table/{site.orders}?timestamp=2024-01-01~2024-03-31"))
    first_quarter = scalar(card(client, re.search(rf"/auto/dashboard/table/\d+/card/{count}[^\"]*", filtered)
                                .group(0).replace("&amp;", "&")))
    rows = ok(site.admin.post("/api/dataset", json={
        **next(d for d in queried if d["id"] == count)["card"]["dataset_query"],
        "parameters": [{"id": "x", "type": "date/all-options", "value": "2024-01-01~2024-03-31",
                        "target": next(m["target"] for m in next(d for d in queried if d["id"] == count)
                                       ["parameter_mappings"] if m["parameter_id"] == xray["parameters"][0]["id"])}]},
        ), 202)["data"]["rows"]
    assert first_quarter == f"{rows[0][0]:,}" != everything
    # A category filter's values come from the fields it is wired to.
    category = next(p for p in xray["parameters"] if p["slug"] == "productcategory")
    values = card(client, f"/auto/dashboard/table/{site.orders}/values/{category['id']}")
    assert 'value="Gizmo"' in values and 'value="Widget"' in values
    # A downloaded x-ray card is the API's ad-hoc export of its query with the filters.
    action, fields = forms_of(card(client, re.search(rf"/auto/dashboard/table/\d+/card/{count}[^\"]*", filtered)
                                          .group(0).replace("&amp;", "&")))[0]
    assert action == "/api/dataset/csv"
    exported = client.post(action, data=fields)
    assert exported.status_code == 200 and list(csv.reader(io.StringIO(text(exported))))[1][0] == first_quarter.replace(",", "")
    assert client.get(f"/auto/dashboard/table/{site.orders}/card/-9999").status_code == 404
    assert client.get("/auto/dashboard/table/999999").status_code == 404
    # The x-ray's related links that open an x-ray page: each listed, each opening.
    offered = [item for key in ("zoom-in", "zoom-out", "related") for item in xray["related"].get(key, [])
               if re.fullmatch(r"/auto/dashboard/(table|field|segment)/\d+", item["url"])]
    assert offered and "More x-rays" in page
    for item in offered:
        assert f'<a href="{item["url"]}">' in page
    assert client.get(offered[0]["url"]).status_code == 200


def test_saving_an_xray_creates_the_dashboard_and_opens_it(site):
    client = sign_in(site.app)
    path = f"/auto/dashboard/table/{site.orders}"
    # A form another site could post is refused, as for every write of the app.
    assert client.post(f"{path}/save", data={}).status_code == 403
    before = {d["id"] for d in ok(site.admin.get("/api/dashboard"))}
    saved = client.post(f"{path}/save", json={}, headers=HTMX)
    assert saved.status_code == 200, text(saved)
    created = [d for d in ok(site.admin.get("/api/dashboard")) if d["id"] not in before]
    assert len(created) == 1
    dashboard = ok(site.admin.get(f"/api/dashboard/{created[0]['id']}"))
    xray = ok(site.admin.get(f"/api/automagic-dashboards/table/{site.orders}"))
    assert dashboard["name"] == xray["name"] and len(dashboard["dashcards"]) == len(xray["dashcards"])
    assert all(d["card_id"] for d in dashboard["dashcards"] if (d.get("card") or {}).get("dataset_query"))
    assert saved.headers["HX-Redirect"] == f"/dashboard/{dashboard['id']}-a-look-at-your-orders"
    # The saved dashboard opens as any dashboard, its cards now saved ones.
    opened = text(client.get(saved.headers["HX-Redirect"]))
    assert f"<h1>{xray['name']}</h1>" in opened and "Save this" not in opened
    urls = card_urls(opened)
    assert len(urls) == len([d for d in xray["dashcards"] if (d.get("card") or {}).get("dataset_query")])
    totals = [scalar(card(client, url)) for url in urls.values() if 'class="scalar"' in card(client, url)]
    assert "18,760" in totals


def test_a_user_who_may_not_see_the_table_gets_no_xray(site):
    vault_db, vault_tables, _ = blocked_database(site, "Vault", "CREATE TABLE vault (id INTEGER PRIMARY KEY, secret TEXT);"
                                                                "INSERT INTO vault VALUES (1, 'gold');")
    vault = vault_tables["vault"]["id"]
    make_user(site.app, email="visitor@example.com")
    client = sign_in(site.app, "visitor@example.com", USER_PASSWORD)
    response = client.get(f"/auto/dashboard/table/{vault}")
    assert response.status_code == 403 and "Vault" not in text(response).split("<main", 1)[1]
    assert client.post(f"/auto/dashboard/table/{vault}/save", json={}, headers=HTMX).status_code == 403


# -- a dashcard with series ---------------------------------------------------------------------------------

def test_a_dashcard_with_series_draws_its_cards_as_one_chart(site):
    """A line card with a series card (Metabase's combined cards): one SVG naming both, each card's values
    drawn under the page's filters; a user who may not read the series card's collection sees the main
    card alone, and nothing of the other."""
    admin, shop = site.admin, site.shop
    shared = ok(admin.post("/api/collection", json={"name": "Series shared"}))["id"]
    private = ok(admin.post("/api/collection", json={"name": "Series private"}))["id"]
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(shared): "read", str(private): "none"}}}))
    tables, field = fields_of(admin, shop["db"])
    month = ["field", field[("invoices", "created_at")], {"temporal-unit": "month"}]
    amount = ["field", field[("invoices", "amount")], None]

    def line_card(name, aggregation, collection_id):
        return ok(admin.post("/api/card", json={
            "name": name, "display": "line", "collection_id": collection_id,
            "visualization_settings": {"graph.show_values": True, "graph.label_value_frequency": "all"},
            "dataset_query": {"database": shop["db"], "type": "query", "query": {
                "source-table": tables["invoices"]["id"], "aggregation": [aggregation], "breakout": [month]}}}))["id"]

    # Revenue by month 10, 5.5, 8; the series card's the same times 1000 (10,000, 5,500, 8,000).
    revenue = line_card("Monthly revenue", ["sum", amount], shared)
    scaled = line_card("Revenue in mills", ["sum", ["*", amount, 1000]], private)
    # A second series card the viewer may read but whose database's data All Users may not query.
    takings_db, takings_tables, takings_field = blocked_database(
        site, "Takings", "CREATE TABLE takings (id INTEGER PRIMARY KEY, amount REAL, created_at DATE);"
                         "INSERT INTO takings VALUES (1, 0.25, '2024-02-03');")
    takings = ok(admin.post("/api/card", json={
        "name": "Shop takings", "display": "line", "collection_id": shared, "visualization_settings": {},
        "dataset_query": {"database": takings_db, "type": "query", "query": {
            "source-table": takings_tables["takings"]["id"],
            "aggregation": [["sum", ["field", takings_field[("takings", "amount")], None]]],
            "breakout": [["field", takings_field[("takings", "created_at")], {"temporal-unit": "month"}]]}}}))["id"]
    city = ["dimension", ["field", field[("customers", "city")], {"source-field": field[("invoices", "customer_id")]}]]
    board = ok(admin.post("/api/dashboard", json={"name": "Combined revenue", "collection_id": shared,
                                                  "parameters": [CITY]}))
    saved = ok(admin.put(f"/api/dashboard/{board['id']}", json={"dashcards": [
        {"id": -1, "card_id": revenue, "row": 0, "col": 0, "size_x": 12, "size_y": 6, "series": [{"id": scaled}, {"id": takings}],
         "parameter_mappings": [{"parameter_id": "p_city", "card_id": revenue, "target": city},
                                {"parameter_id": "p_city", "card_id": scaled, "target": city}]}]}))
    assert [s["id"] for s in saved["dashcards"][0]["series"]] == [scaled, takings]
    path = f"/dashboard/{board['id']}-combined-revenue"

    def chart_of(client, query=""):
        body = card(client, card_urls(text(client.get(f"{path}{query}")))[saved["dashcards"][0]["id"]])
        assert body.count("<svg") == 1
        return body, re.findall(r"<text[^>]*>([^<]*)</text>", body)

    body, words = chart_of(sign_in(site.app))
    assert 'aria-label="Monthly revenue, Revenue in mills, Shop takings"' in body
    assert {"Monthly revenue", "Revenue in mills", "Shop takings", "10", "5.5", "8", "10,000", "5,500", "8,000",
            "0.25"} <= set(words)
    # The filter reaches both cards: Rome's one invoice of March (7).
    _, rome = chart_of(sign_in(site.app), "?city=Rome")
    assert {"7", "7,000"} <= set(rome) and "10,000" not in rome and "5.5" not in rome
    # A user who may read the dashboard but neither read the first series card's collection nor query the
    # second one's data: the main card alone.
    make_user(site.app, email="series-viewer@example.com")
    viewer = sign_in(site.app, "series-viewer@example.com", USER_PASSWORD)
    page = text(viewer.get(path))
    assert "Monthly revenue" in page and "Revenue in mills" not in page
    body, words = chart_of(viewer)
    assert 'aria-label="Monthly revenue"' in body and {"10", "5.5", "8"} <= set(words)
    assert "Revenue in mills" not in body and not {"10,000", "5,500", "8,000"} & set(words)
    assert "Shop takings" not in body and "0.25" not in words


def test_an_iframe_card_offers_the_embedded_page_as_a_link():
    from plugins.app.cards import frame

    def drawn(setting):
        return str(frame({"id": 5, "card": {"display": "iframe"}, "col": 0, "size_x": 6, "size_y": 4, "row": 0,
                          "visualization_settings": {"iframe": setting, "virtual_card": {"display": "iframe"}}},
                         []).html)

    assert 'href="https://example.com/report?a=1&amp;b=2"' in drawn(
        '<iframe src="https://example.com/report?a=1&amp;b=2" width="600"></iframe>')
    assert 'href="https://maps.example.org/x"' in drawn("https://maps.example.org/x")
    hostile = drawn('<iframe src="javascript:alert(1)"></iframe>')
    assert "href" not in hostile and "javascript:alert(1)" in hostile  # shown as text, never a link



def test_an_xrays_value_lists_are_chained_by_the_other_filters(site):
    """As a saved dashboard's: the states listed are those of people with orders on the chosen day, and of
    the chosen source; searching keeps the chain."""
    xray = ok(site.admin.get(f"/api/automagic-dashboards/table/{site.orders}"))
    state = next(p for p in xray["parameters"] if p["slug"] == "userstate")
    sample = ok(site.admin.get(f"/api/table/{site.orders}"))["db_id"]

    def sql(text):
        return [row[0] for row in ok(site.admin.post("/api/dataset", json={
            "database": sample, "type": "native", "native": {"query": text}}), 202)["data"]["rows"]]

    day = sql("SELECT MIN(substr(CREATED_AT, 1, 10)) FROM ORDERS WHERE CREATED_AT >= '2024-06-01'")[0]
    on_day = sorted(sql(f"SELECT DISTINCT p.STATE FROM ORDERS o JOIN PEOPLE p ON o.USER_ID = p.ID "
                        f"WHERE substr(o.CREATED_AT, 1, 10) = '{day}'"))
    by_ads = sorted(sql(f"SELECT DISTINCT p.STATE FROM ORDERS o JOIN PEOPLE p ON o.USER_ID = p.ID "
                        f"WHERE substr(o.CREATED_AT, 1, 10) = '{day}' AND p.SOURCE = 'Facebook'"))
    everywhere = sorted(sql("SELECT DISTINCT STATE FROM PEOPLE WHERE STATE IS NOT NULL"))
    assert 0 < len(by_ads) < len(on_day) < len(everywhere)

    client = sign_in(site.app)
    base = f"/auto/dashboard/table/{site.orders}/values/{state['id']}"

    def listed(query):
        return sorted(re.findall(r'name="userstate" value="([^"]*)"', card(client, f"{base}?{query}")))

    assert listed("") == everywhere
    assert listed(f"timestamp={day}") == on_day
    assert listed(f"timestamp={day}&usersource=Facebook") == by_ads
    some = by_ads[0][:1]
    assert listed(f"timestamp={day}&usersource=Facebook&q={some}") == [s for s in by_ads if some.lower() in s.lower()]


def test_an_xrays_cell_and_comparison_are_pages_of_their_own(site):
    """The x-ray API's cell (a base64 filter clause) and comparison views: each a page whose cards run,
    whose related links (its comparison) open, and whose junk cell is a 4xx."""
    import base64

    import orjson

    fields = {f["name"]: f["id"] for f in ok(site.admin.get(f"/api/table/{site.orders}/query_metadata"))["fields"]}
    clause = ["<", ["field", fields["TOTAL"], None], 20]
    cell = base64.urlsafe_b64encode(orjson.dumps(clause)).decode().rstrip("=")
    client = sign_in(site.app)
    path = f"/auto/dashboard/table/{site.orders}/cell/{cell}"
    api = ok(site.admin.get(f"/api/automagic-dashboards/table/{site.orders}/cell/{cell}"))
    page = text(client.get(path))
    assert f"<h1>{unescape(api['name'])}</h1>" in unescape(page) and "Save this" in page
    count = next(d["id"] for d in api["dashcards"] if (d.get("card") or {}).get("name") == "Total transactions")
    small = scalar(card(client, f"{path}/card/{count}"))
    sample = ok(site.admin.get(f"/api/table/{site.orders}"))["db_id"]
    expected = ok(site.admin.post("/api/dataset", json={"database": sample, "type": "query", "query": {
        "source-table": site.orders, "aggregation": [["count"]], "filter": clause}}), 202)
    assert small == f"{expected['data']['rows'][0][0]:,}" and small != "18,760"
    # Its comparison with the whole table is offered, and opens with its own cards.
    compare = next(item["url"] for item in api["related"]["compare"])
    assert compare == f"{path}/compare/table/{site.orders}" and f'<a href="{compare}">' in page
    compared = client.get(compare)
    assert compared.status_code == 200
    compared_api = ok(site.admin.get(f"/api/automagic-dashboards/table/{site.orders}/cell/{cell}/compare/table/{site.orders}"))
    queried = [d for d in compared_api["dashcards"] if (d.get("card") or {}).get("dataset_query")]
    assert queried and f"{compare}/card/{queried[0]['id']}" in unescape(text(compared))
    assert client.get(f"{compare}/card/{queried[0]['id']}", headers=HTMX).status_code == 200
    # The table compared with itself, and junk.
    assert client.get(f"/auto/dashboard/table/{site.orders}/compare/table/{site.orders}").status_code in (200, 400)
    assert client.get(f"/auto/dashboard/table/{site.orders}/cell/bm90IGpzb24").status_code == 400
    assert client.get(f"/auto/dashboard/table/{site.orders}/cell/a%20b").status_code == 404
