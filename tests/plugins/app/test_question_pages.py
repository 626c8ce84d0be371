"""The question pages (plugins/app/question.py) through HTTP as a browser sends it, with the cookie:
a saved question's chart and rows, sorting (by the database for MBQL, over every returned row for
SQL), pages of rows, native parameters in the URL, downloads through the API's export routes,
ad-hoc questions from a link's base64, and what users without collection or data access see."""
from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
import sqlite3

import orjson
import pytest

from core.appdb.models import ALL_USERS_GROUP_ID
from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, USER_PASSWORD, make_user, sqlite_file, wait_for_sync
from tests.charts.support import colours
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import serious_violations

REGIONS = ("North", "South", "East", "West")
# 130 sales: more than two pages of 50 rows; amounts out of step with ids, so sorting shows.
SALES = [(i, REGIONS[i % 4], round((i * 37) % 101 + 0.25 * (i % 3), 2), f"2024-01-{i % 28 + 1:02d}")
         for i in range(1, 131)]
SHOP = ("CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT, amount REAL, sold_on DATE);\n"
        + "\n".join(f"INSERT INTO sales VALUES ({i}, '{r}', {a}, '{d}');" for i, r, a, d in SALES))
SQL = ("SELECT id, region, amount FROM sales WHERE amount >= {{min}} [[AND region = {{region}}]] "
       "[[AND {{place}}]] [[AND sold_on = {{day}}]] ORDER BY id")


def ok(response):
    assert response.status_code in (200, 202), response.json
    return response.json


@pytest.fixture
def shop(app, admin) -> dict:
    """The Shop database with a bar chart, a table of every sale and a native question with a number,
    a text, a field filter and a date parameter."""
    path = sqlite_file(app, "shop.db", SHOP)
    db = ok(admin.post("/api/database", json={"name": "Shop", "engine": "sqlite", "details": {"db": path}}))["id"]
    wait_for_sync(app)
    table = next(t for t in ok(admin.get(f"/api/database/{db}/metadata"))["tables"] if t["name"] == "sales")
    field = {f["name"]: f["id"] for f in table["fields"]}

    def card(name, dataset_query, display="table", **extra):
        body = {"name": name, "display": display, "visualization_settings": {}, "dataset_query": dataset_query,
                **extra}
        return ok(admin.post("/api/card", json=body))["id"]

    mbql = {"database": db, "type": "query"}
    by_region = card("Sales by region", {**mbql, "query": {
        "source-table": table["id"], "aggregation": [["sum", ["field", field["amount"], None]]],
        "breakout": [["field", field["region"], None]]}}, display="bar")
    every_sale = card("Every sale", {**mbql, "query": {"source-table": table["id"],
                                                       "order-by": [["asc", ["field", field["id"], None]]]}})
    tags = {"min": {"id": "t-min", "name": "min", "display-name": "Least amount", "type": "number", "required": True,
                    "default": "0"},
            "region": {"id": "t-region", "name": "region", "display-name": "Region", "type": "text"},
            "place": {"id": "t-place", "name": "place", "display-name": "Place", "type": "dimension",
                      "dimension": ["field", field["region"], None], "widget-type": "string/="},
            "day": {"id": "t-day", "name": "day", "display-name": "Day", "type": "date"}}
    native = card("Sales in SQL", {"database": db, "type": "native",
                                   "native": {"query": SQL, "template-tags": tags}})
    return {"db": db, "table": table["id"], "fields": field, "by_region": by_region, "every_sale": every_sale,
            "native": native}


def cells(page_html: str) -> list[list[str]]:
    """The result table's body rows, as the page shows them."""
    body = re.search(r"<tbody>(.*?)</tbody>", page_html, re.S)
    assert body, page_html
    return [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)]


def column(rows: list[list[str]], index: int, kind=float) -> list:
    """A column's values read back from the numbers as shown (grouped by thousands: 1,713.25)."""
    return [kind(row[index].replace(",", "")) for row in rows]


def test_a_saved_question_shows_its_chart_and_switched_its_rows(app, admin, shop):
    client = sign_in(app)
    chart = client.get(f"/question/{shop['by_region']}-sales-by-region")
    page = text(chart)
    assert chart.status_code == 200
    # A chart whose bars open the drill menu is a group of focusable marks (core.charts.drill).
    assert '<svg role="group" aria-label="Sales by region"' in page and "<table" not in page
    assert "<h1>Sales by region</h1>" in page and 'href="/collection/root"' in page
    assert f'href="/question/{shop["by_region"]}-sales-by-region?view=table"' in page
    assert f'href="/auto/dashboard/question/{shop["by_region"]}"' in page
    assert "/app/assets/question.js" in page and "/app/assets/question.css" in page

    table = text(client.get(f"/question/{shop['by_region']}-sales-by-region?view=table"))
    assert "<svg" not in table
    totals = {region: round(sum(a for _, r, a, _ in SALES if r == region), 2) for region in REGIONS}
    shown = {row[0]: round(float(row[1].replace(",", "")), 2) for row in cells(table)}
    assert shown == totals
    assert any("," in row[1] for row in cells(table))  # numbers as the charts and exports write them
    assert 'aria-current="true">Table</a>' in table
    # The MBQL question's SQL, as POST /api/dataset/native compiles it, for one who may run it ad hoc.
    assert '<details class="sql">' in table and "SUM(" in table.upper()


def test_sorting_a_column_orders_every_row_not_one_page(app, admin, shop):
    client = sign_in(app)
    base = f"/question/{shop['every_sale']}"
    first = text(client.get(base))
    assert column(cells(first), 0, int) == list(range(1, 51))  # the question's own order, page 1
    assert f'href="{base}?view=table&amp;sort=amount"' in first

    amounts = sorted(a for _, _, a, _ in SALES)
    down = text(client.get(f"{base}?view=table&sort=amount&dir=desc"))
    assert column(cells(down), 2) == amounts[::-1][:50]  # the largest of all 130, not of page 1
    assert 'aria-sort="descending"' in down
    assert f'href="{base}?view=table&amp;sort=amount"' in down  # the next click sorts ascending
    second = text(client.get(f"{base}?view=table&sort=amount&dir=desc&page=2"))
    assert column(cells(second), 2) == amounts[::-1][50:100]
    up = text(client.get(f"{base}?view=table&sort=amount"))
    assert column(cells(up), 2) == amounts[:50] and 'aria-sort="ascending"' in up
    # A column the question does not have: the API's own refusal, not a 500.
    unknown = client.get(f"{base}?view=table&sort=nope")
    assert unknown.status_code == 200 and "nope" in text(unknown) and 'role="alert"' in text(unknown)


def test_pages_of_rows(app, admin, shop):
    client = sign_in(app)
    base = f"/question/{shop['every_sale']}"
    one = text(client.get(base))
    assert "Rows 1–50 of 130" in one and "page 1 of 3" in one
    assert f'href="{base}?view=table&amp;page=2" rel="next"' in one and 'rel="prev"' not in one
    two = text(client.get(f"{base}?view=table&page=2"))
    assert column(cells(two), 0, int) == list(range(51, 101)) and 'rel="prev"' in two
    three = text(client.get(f"{base}?page=3"))
    assert column(cells(three), 0, int) == list(range(101, 131)) and "Rows 101–130 of 130" in three
    assert 'rel="next"' not in three
    past = text(client.get(f"{base}?page=9"))  # past the last page: the last
    assert column(cells(past), 0, int) == list(range(101, 131))
    for bad in ("page=abc", "page=0", "view=pie", "dir=up"):
        refused = client.get(f"{base}?{bad}")
        assert refused.status_code == 400 and 'role="alert"' in text(refused), bad
    # A swap of part of the page (htmx) is the same page, with the same rows.
    swapped = client.get(f"{base}?page=2", headers=HTMX)
    assert column(cells(text(swapped)), 0, int) == list(range(51, 101))


def test_native_parameters_in_the_url_change_the_result(app, admin, shop):
    client = sign_in(app)
    base = f"/question/{shop['native']}-sales-in-sql"
    everything = text(client.get(base))  # the required number's default (0) applies
    assert "Rows 1–50 of 130" in everything
    for label in ("Least amount", "Region", "Place", "Day"):
        assert f">{label}" in everything
    # The widgets are the filters' (app/_filters.html): a number box showing the default, a text box for a
    # text tag, a date in Metabase's date syntax (its hidden value, its parts), a value list for the field filter.
    assert re.search(r'<input id="filter-min"[^>]* name="min" value="0"', everything)
    assert re.search(r'<input id="filter-region" type="text" name="region" value="">', everything)
    assert '<input type="hidden" name="day" value="" data-date-value>' in everything
    assert re.search(r'<input id="filter-day-start" type="date"', everything)
    assert f'hx-get="{base}/values/t-place"' in everything
    # The field filter's list offers the column's values, as the API gives them to this user.
    listed = text(client.get(f"{base}/values/t-place"))
    assert all(f'name="place" value="{region}">' in listed for region in REGIONS)
    assert re.findall(r'value="([^"]*)"', text(client.get(f"{base}/values/t-place?q=Nor"))) == ["North"]
    assert client.get(f"{base}/values/t-nothing").status_code == 404
    # The SQL, to one who may run native queries.
    assert '<details class="sql">' in everything and "amount &gt;= {{min}}" in everything

    big = text(client.get(f"{base}?min=90"))
    expected = [i for i, _, a, _ in SALES if a >= 90]
    assert column(cells(big), 0, int) == expected and 'name="min" value="90"' in big
    north = text(client.get(f"{base}?min=50&region=North"))
    assert column(cells(north), 0, int) == [i for i, r, a, _ in SALES if a >= 50 and r == "North"]
    place = text(client.get(f"{base}?min=50&place=East"))
    assert column(cells(place), 0, int) == [i for i, r, a, _ in SALES if a >= 50 and r == "East"]
    day = text(client.get(f"{base}?day=2024-01-05"))
    assert column(cells(day), 0, int) == [i for i, _, _, d in SALES if d == "2024-01-05"]
    # A value the API cannot read is its message on the page.
    wrong = client.get(f"{base}?min=lots")
    assert wrong.status_code == 200 and 'role="alert"' in text(wrong) and "lots" in text(wrong)

    # Sorting a native question orders all its returned rows before the page is cut.
    amounts = sorted((a for _, _, a, _ in SALES if a >= 20), reverse=True)
    sorted_page = text(client.get(f"{base}?min=20&sort=amount&dir=desc"))
    assert column(cells(sorted_page), 2) == amounts[:50]
    sorted_two = text(client.get(f"{base}?min=20&sort=amount&dir=desc&page=2"))
    assert column(cells(sorted_two), 2) == amounts[50:100]
    # The sort and page links keep the parameter values; new values keep the sort.
    assert "min=20" in re.search(r'href="([^"]*)" rel="prev"', sorted_two).group(1)
    assert '<input type="hidden" name="sort" value="amount"><input type="hidden" name="dir" value="desc">' in sorted_two
    assert "X-ray this" not in sorted_two  # a SQL question's x-ray has only its saved columns: not offered


def test_a_native_date_parameter_takes_metabases_date_syntax_through_the_shared_widget(app, admin, shop):
    """A field filter on a date column is drawn as a dashboard's date filter: relative dates and ranges
    in Metabase's syntax go from the URL to the API, and the widget shows the value's parts."""
    tags = {"sold": {"id": "t-sold", "name": "sold", "display-name": "Sold", "type": "dimension",
                     "dimension": ["field", shop["fields"]["sold_on"], None], "widget-type": "date/all-options"}}
    card = ok(admin.post("/api/card", json={
        "name": "Sales by day", "display": "table", "visualization_settings": {},
        "dataset_query": {"database": shop["db"], "type": "native", "native": {
            "query": "SELECT id, sold_on FROM sales [[WHERE {{sold}}]] ORDER BY id", "template-tags": tags}}}))["id"]
    client = sign_in(app)
    base = f"/question/{card}"
    everything = text(client.get(base))
    assert "Rows 1–50 of 130" in everything
    assert '<input type="hidden" name="sold" value="" data-date-value>' in everything
    assert '<option value="past">In the past</option>' in everything and '<option value="" selected' not in everything

    between = text(client.get(f"{base}?view=table&sold=2024-01-03~2024-01-05"))
    assert column(cells(between), 0, int) == [i for i, _, _, d in SALES if "2024-01-03" <= d <= "2024-01-05"]
    assert '<option value="between" selected>' in between
    assert 'id="filter-sold-start" type="date" data-local data-part="start" value="2024-01-03"' in between
    assert 'id="filter-sold-end" type="date" data-local data-part="end" value="2024-01-05"' in between
    assert '<input type="hidden" name="sold" value="2024-01-03~2024-01-05" data-date-value>' in between

    # The sales are of January 2024: none in the past 30 days, all of them in the past ten years.
    recent = text(client.get(f"{base}?view=table&sold=past30days"))
    assert 'role="alert"' not in recent and "No rows." in recent
    assert '<option value="past" selected>' in recent and 'data-part="amount" value="30"' in recent
    decade = text(client.get(f"{base}?view=table&sold=past10years"))
    assert column(cells(decade), 0, int) == list(range(1, 51)) and "Rows 1–50 of 130" in decade
    month = text(client.get(f"{base}?view=table&sold=2024-01"))
    assert "Rows 1–50 of 130" in month and '<option value="month" selected>' in month
    # A value the API cannot read is its message on the page.
    wrong = client.get(f"{base}?sold=someday")
    assert wrong.status_code == 200 and 'role="alert"' in text(wrong) and "someday" in text(wrong)


def test_without_collection_access_the_page_is_refused_and_names_nothing(app, admin, shop):
    secret = ok(admin.post("/api/collection", json={"name": "Board only", "color": "#509EE3"}))["id"]
    hidden = ok(admin.post("/api/card", json={
        "name": "Confidential margins", "display": "table", "visualization_settings": {}, "collection_id": secret,
        "dataset_query": {"database": shop["db"], "type": "query", "query": {"source-table": shop["table"]}}}))["id"]
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                                "groups": {str(ALL_USERS_GROUP_ID): {str(secret): "none"}}}))
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    for path in (f"/question/{hidden}", f"/question/{hidden}-confidential-margins?view=table",
                 f"/model/{hidden}", f"/question/{hidden}/values/t-place"):
        refused = client.get(path)
        assert refused.status_code == 403, path
        assert "Confidential" not in text(refused) and "Board only" not in text(refused)
    assert client.get("/question/999999").status_code == 404
    assert client.get("/question/999999/values/t-place").status_code == 404
    assert client.get("/question/12abc").status_code == 404
    # Signed out: to the login page, and back here afterwards.
    anonymous = app.test_client()
    assert anonymous.get(f"/question/{hidden}").headers["Location"] == f"/auth/login?redirect=/question/{hidden}"


def set_data_access(admin, db: int, view: str, queries: str) -> None:
    revision = ok(admin.get("/api/permissions/graph-v2"))["revision"]
    ok(admin.put("/api/permissions/graph", json={"revision": revision, "groups": {
        str(ALL_USERS_GROUP_ID): {str(db): {"view-data": view, "create-queries": queries}}}}))


def test_without_data_access_the_card_shows_but_no_rows_and_no_sql(app, admin, shop):
    set_data_access(admin, shop["db"], "blocked", "no")
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    for card_id, name in ((shop["native"], "Sales in SQL"), (shop["every_sale"], "Every sale")):
        response = client.get(f"/question/{card_id}")
        page = text(response)
        assert response.status_code == 200 and f"<h1>{name}</h1>" in page
        assert "not the data it reads" in page
        assert "<tbody>" not in page and "<svg" not in page
        assert '<details class="sql">' not in page and "FROM sales" not in page and ">Amount<" not in page
        assert 'class="downloads"' not in page and "X-ray this" not in page


def test_a_new_question_refused_says_so_where_a_saved_one_still_runs(app, admin, shop):
    # Data they may view, but no new queries: the saved question's rows yes, the same query ad hoc no.
    set_data_access(admin, shop["db"], "unrestricted", "no")
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    saved = text(client.get(f"/question/{shop['every_sale']}"))
    assert "<tbody>" in saved and "not the data it reads" not in saved
    query = {"database": shop["db"], "type": "query", "query": {"source-table": shop["table"]}}
    link = adhoc_link({"dataset_query": query, "display": "table", "visualization_settings": {}})
    adhoc = text(client.get("/question/adhoc", query_string={"q": link}, headers=HTMX))
    assert "You may not ask new questions of this data." in adhoc and "<tbody>" not in adhoc


def test_sql_is_shown_only_to_those_who_may_write_it(app, admin, shop):
    # Data they may view, questions they may build, but no native SQL: rows yes, the SQL no.
    set_data_access(admin, shop["db"], "unrestricted", "query-builder")
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    page = text(client.get(f"/question/{shop['native']}"))
    assert "Rows 1–50 of 130" in page
    assert '<details class="sql">' not in page and "{{min}}" not in page and "FROM sales" not in page
    # The admin sees it.
    assert '<details class="sql">' in text(sign_in(app).get(f"/question/{shop['native']}"))


def adhoc_link(question: dict) -> str:
    return base64.b64encode(orjson.dumps(question)).decode()


def test_an_adhoc_question_from_a_links_hash(app, admin, shop):
    client = sign_in(app)
    shell = client.get("/question")
    assert shell.status_code == 200 and "data-adhoc-shell" in text(shell)
    assert "/app/assets/question.js" in text(shell) and "<script>" not in text(shell)
    assert client.get("/app/assets/question.js").status_code == 200

    rows_of_north = {"dataset_query": {"database": shop["db"], "type": "query", "query": {
        "source-table": shop["table"], "filter": ["=", ["field", shop["fields"]["region"], None], "North"]}},
        "display": "table", "visualization_settings": {}}
    q = adhoc_link(rows_of_north)
    found = client.get("/question/adhoc", query_string={"q": q}, headers=HTMX)
    page = text(found)
    north = [i for i, r, _, _ in SALES if r == "North"]
    assert found.status_code == 200 and "<h1>Sales</h1>" in page
    assert sorted(column(cells(page), 0, int)) == north
    assert "/auto/dashboard/adhoc/" in page and '<details class="sql">' in page
    # Sorting and paging work on it too, by links that keep the question.
    down = text(client.get("/question/adhoc", query_string={"q": q, "sort": "amount", "dir": "desc"}))
    assert column(cells(down), 2) == sorted((a for _, r, a, _ in SALES if r == "North"), reverse=True)
    every = adhoc_link({"dataset_query": {"database": shop["db"], "type": "query",
                                          "query": {"source-table": shop["table"]}}})
    two = text(client.get("/question/adhoc", query_string={"q": every, "page": 2}))
    assert "Rows 51–100 of 130" in two and re.search(r'href="/question/adhoc\?q=[^"]+&amp;view=table&amp;page=3"', two)
    # A "+" that came unescaped through a query string (a space), URL-safe base64 without padding and a
    # bare dataset_query are read as well.
    spaced = base64.b64encode(orjson.dumps({**rows_of_north, "visualization_settings": {"x": ">>>??"}})).decode()
    assert "+" in spaced
    assert sorted(column(cells(text(client.get(f"/question/adhoc?q={spaced}"))), 0, int)) == north
    bare = base64.urlsafe_b64encode(orjson.dumps(rows_of_north["dataset_query"])).decode().rstrip("=")
    assert sorted(column(cells(text(client.get("/question/adhoc", query_string={"q": bare}))), 0, int)) == north

    # A chart ad hoc: the display the link carries.
    chart = adhoc_link({**rows_of_north, "display": "bar", "dataset_query": {
        "database": shop["db"], "type": "query", "query": {
            "source-table": shop["table"], "aggregation": [["count"]],
            "breakout": [["field", shop["fields"]["region"], None]]}}})
    assert '<svg role="group"' in text(client.get("/question/adhoc", query_string={"q": chart}))  # drillable bars


@pytest.mark.parametrize("q", ["", "not base64!", base64.b64encode(b"not json").decode(),
                               base64.b64encode(b'{"display": "table"}').decode(),
                               base64.b64encode(b"[1, 2]").decode()])
def test_a_bad_adhoc_link_is_a_clear_message(app, admin, q):
    client = sign_in(app)
    response = client.get("/question/adhoc", query_string={"q": q}, headers=HTMX)
    assert response.status_code == 400
    assert 'id="question"' in text(response) and "base64-encoded JSON" in text(response)


def test_an_adhoc_query_the_api_refuses_shows_its_message(app, admin, shop):
    client = sign_in(app)
    bad = adhoc_link({"dataset_query": {"database": shop["db"], "type": "query",
                                        "query": {"source-table": shop["table"], "aggregation": [["bogus"]]}}})
    response = client.get("/question/adhoc", query_string={"q": bad})
    assert response.status_code == 200 and 'role="alert"' in text(response) and "<tbody>" not in text(response)


def download_form(page_html: str) -> tuple[dict, dict]:
    """The download form's actions by format and its hidden fields, as a browser would post them."""
    form = re.search(r'<form class="downloads"(.*?)</form>', page_html, re.S).group(1)
    actions = {m.group(2).lower(): html.unescape(m.group(1))
               for m in re.finditer(r'formaction="([^"]+)"[^>]*>(\w+)</button>', form)}
    fields = {name: html.unescape(value) for name, value in re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', form)}
    return actions, fields


def test_downloads_post_the_form_to_the_apis_export_routes(app, admin, shop):
    client = sign_in(app)
    page = text(client.get(f"/question/{shop['native']}?min=90"))
    actions, fields = download_form(page)
    assert set(actions) == {"csv", "xlsx", "json", "png"}
    assert actions["csv"] == f"/api/card/{shop['native']}/query/csv"
    # A form post, as the browser sends it with the session cookie (the export routes take form posts).
    got = client.post(actions["csv"], data=fields)
    assert got.status_code == 200 and got.mimetype == "text/csv"
    rows = list(csv.reader(io.StringIO(got.get_data(as_text=True))))
    assert [int(r[0]) for r in rows[1:]] == [i for i, _, a, _ in SALES if a >= 90]  # with the URL's parameter
    assert client.post(actions["json"], data=fields).mimetype == "application/json"
    xlsx = client.post(actions["xlsx"], data=fields)
    assert xlsx.status_code == 200 and xlsx.data[:2] == b"PK"
    png = client.post(actions["png"], data=fields)
    assert png.status_code == 200 and png.data[:8] == b"\x89PNG\r\n\x1a\n"
    # The same cookie cannot run the card by a form post to a route that is not a download.
    assert client.post(f"/api/card/{shop['native']}/query", data=fields).status_code == 403

    adhoc = text(client.get("/question/adhoc", query_string={"q": adhoc_link({"dataset_query": {
        "database": shop["db"], "type": "query", "query": {"source-table": shop["table"]}}})}))
    actions, fields = download_form(adhoc)
    assert actions["csv"] == "/api/dataset/csv"
    got = client.post(actions["csv"], data=fields)
    assert got.status_code == 200 and len(list(csv.reader(io.StringIO(got.get_data(as_text=True))))) == 131


def test_a_model_lives_at_model_urls(app, admin, shop):
    model = ok(admin.post("/api/card", json={
        "name": "Sales model", "type": "model", "display": "table", "visualization_settings": {},
        "dataset_query": {"database": shop["db"], "type": "query", "query": {"source-table": shop["table"]}}}))["id"]
    client = sign_in(app)
    page = client.get(f"/model/{model}-sales-model")
    assert page.status_code == 200 and "Model" in text(page) and "Rows 1–50 of 130" in text(page)
    assert f'href="/auto/dashboard/model/{model}"' in text(page)
    moved = client.get(f"/question/{model}?page=2")
    assert moved.status_code == 303 and moved.headers["Location"] == f"/model/{model}-sales-model?page=2"
    assert client.get(f"/model/{shop['every_sale']}").headers["Location"] == f"/question/{shop['every_sale']}-every-sale"
    ok(admin.put(f"/api/card/{model}", json={"archived": True}))
    assert "This model is in the trash." in text(client.get(f"/model/{model}"))


# -- in a real browser ---------------------------------------------------------------------------------

def settle(browser, expression: str, timeout: float = 20):
    """Wait until `expression` is truthy in the page, with htmx's swap settled (new links are boosted
    once it has: a click before that is an ordinary page load)."""
    return browser.wait_for("document.readyState === 'complete' && !document.querySelector("
                            "'.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')"
                            f" && !!({expression})", timeout, what=expression)


def click(browser, selector: str) -> None:
    browser.evaluate(f"document.querySelector({json.dumps(selector)}).click(), true")


def first_column(browser, index: int) -> list[str]:
    return browser.evaluate(f"[...document.querySelectorAll('table.result tbody tr')]"
                            f".map(r => r.children[{index}].textContent)")


@pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package")
def test_in_a_browser_switch_sort_page_and_open_an_adhoc_link(app, admin, shop):
    token = ok(admin.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))["id"]
    with Server(app) as server, Browser(chromium_path()) as browser:
        browser.send("Network.enable")
        browser.send("Network.setCookie", name="metabase.SESSION", value=token, url=server.url, httpOnly=True)
        browser.watch_errors()  # script errors, console errors, refusals of the Content-Security-Policy

        browser.send("Page.navigate", url=f"{server.url}/question/{shop['by_region']}-sales-by-region")
        settle(browser, "document.querySelector('.chart svg')")
        assert browser.evaluate("document.title").startswith("Sales by region")
        assert serious_violations(browser) == []
        light = colours(browser.screenshot())
        assert len(light) > 12  # the chart's colours, not a blank page
        # Dark theme: the page follows the switch, and the chart (drawn on the server) is drawn again.
        drawn = browser.evaluate("document.querySelector('.chart svg').outerHTML")
        click(browser, "[data-theme-toggle]")
        settle(browser, f"document.querySelector('.chart svg').outerHTML !== {json.dumps(drawn)}")
        assert browser.evaluate("document.documentElement.dataset.theme") == "dark"
        assert colours(browser.screenshot()) != light and serious_violations(browser) == []

        # Chart -> table, by the switch: the URL says so, the rows are there, nothing else reloaded.
        browser.evaluate("window.__kept = true")
        click(browser, ".switch a:nth-child(2)")
        settle(browser, "document.querySelector('table.result')")
        assert browser.evaluate("location.search") == "?view=table" and browser.evaluate("window.__kept") is True
        assert sorted(first_column(browser, 0)) == sorted(REGIONS)

        # A long table: sort by a column header, then the next page, keyboard-reachable links.
        browser.send("Page.navigate", url=f"{server.url}/question/{shop['every_sale']}")
        settle(browser, "document.querySelectorAll('table.result tbody tr').length === 50")
        amounts = sorted((a for _, _, a, _ in SALES), reverse=True)
        click(browser, "th:nth-child(3) a")
        settle(browser, "document.querySelector('th[aria-sort=ascending]')")
        click(browser, "th:nth-child(3) a")
        settle(browser, "document.querySelector('th[aria-sort=descending]')")
        assert [float(v) for v in first_column(browser, 2)] == amounts[:50]
        click(browser, "a[rel=next]")
        settle(browser, "document.querySelector('a[rel=prev]')")
        assert [float(v) for v in first_column(browser, 2)] == amounts[50:100]
        assert "sort=amount" in browser.evaluate("location.search") and "page=2" in browser.evaluate("location.search")
        assert serious_violations(browser) == []
        assert browser.errors() == []

        # A native question's widgets at a phone's width, filled in and applied: the URL carries them.
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=900, deviceScaleFactor=1, mobile=True)
        browser.send("Page.navigate", url=f"{server.url}/question/{shop['native']}")
        settle(browser, "document.querySelector('table.result')")
        assert browser.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")
        browser.evaluate("document.querySelector('input[name=region]').value = 'West', true")
        click(browser, ".params button[type=submit]")
        settle(browser, "location.search.includes('region=West')")
        assert set(first_column(browser, 1)) == {"West"}
        assert serious_violations(browser) == []
        # The date widget's parts (static/filters.js) write its value into the URL, in Metabase's syntax.
        browser.evaluate("""(function () {
          var mode = document.getElementById('filter-day-mode');
          mode.value = 'on'; mode.dispatchEvent(new Event('change', {bubbles: true}));
          var start = document.getElementById('filter-day-start');
          start.value = '2024-01-05'; start.dispatchEvent(new Event('change', {bubbles: true}));
          return true; })()""")
        assert browser.evaluate("document.getElementById('filter-day-start').offsetParent !== null")
        click(browser, ".params button[type=submit]")
        settle(browser, "location.search.includes('day=2024-01-05')")
        assert [int(v) for v in first_column(browser, 0)] == [
            i for i, r, _, d in SALES if r == "West" and d == "2024-01-05"]
        assert "region=West" in browser.evaluate("location.search")
        browser.send("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=1, mobile=False)

        # An ad-hoc link: the hash is read in the page, sorting keeps the link as it was.
        link = adhoc_link({"dataset_query": {"database": shop["db"], "type": "query", "query": {
            "source-table": shop["table"], "filter": ["=", ["field", shop["fields"]["region"], None], "South"]}},
            "display": "table", "visualization_settings": {}})
        browser.send("Page.navigate", url=f"{server.url}/question#{link}")
        settle(browser, "document.querySelector('table.result')")
        assert browser.evaluate("document.querySelector('h1').textContent") == "Sales"
        click(browser, "th:nth-child(1) a")
        settle(browser, "document.querySelector('th[aria-sort=ascending]')")
        click(browser, "th:nth-child(1) a")
        settle(browser, "document.querySelector('th[aria-sort=descending]')")
        assert [int(v) for v in first_column(browser, 0)] == sorted((i for i, r, _, _ in SALES if r == "South"),
                                                                    reverse=True)
        assert browser.evaluate("location.pathname + location.hash") == f"/question#{link}"
        assert serious_violations(browser) == []
        assert browser.errors() == []
        browser.send("Page.navigate", url=f"{server.url}/question#bm90IGpzb24")  # a hashchange: read again
        settle(browser, "document.querySelector('#question [role=alert]')")
        assert "base64-encoded JSON" in browser.text()
        # The 400 answer is the browser's one logged failed load; nothing else went wrong.
        assert all("400" in error for error in browser.errors())


def test_the_sample_database_sorts_joined_columns_and_stops_at_the_row_limit(app, admin, sample_database_file):
    from tests.plugins.test_tables import sample

    db, tables = sample(app, admin)
    field = {(table, f["name"]): f["id"] for table in tables for f in tables[table]["fields"]}
    via_product = {"source-field": field[("ORDERS", "PRODUCT_ID")]}
    query = {"source-table": tables["ORDERS"]["id"], "fields": [
        ["field", field[("ORDERS", "ID")], None], ["field", field[("ORDERS", "TOTAL")], None],
        ["field", field[("PRODUCTS", "CATEGORY")], via_product]]}
    orders = ok(admin.post("/api/card", json={"name": "Orders and categories", "display": "table",
                                              "visualization_settings": {},
                                              "dataset_query": {"database": db, "type": "query", "query": query}}))
    with sqlite3.connect(sample_database_file) as warehouse:
        every_order = warehouse.execute("SELECT o.ID, o.TOTAL, p.CATEGORY FROM ORDERS o "
                                        "LEFT JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID").fetchall()
    client = sign_in(app)
    first = text(client.get(f"/question/{orders['id']}"))
    assert "Rows 1–50 of 2,000" in first and "page 1 of 40" in first and "stopped at 2,000 rows" in first
    last = text(client.get(f"/question/{orders['id']}?page=40"))
    assert "Rows 1,951–2,000 of 2,000" in last and len(cells(last)) == 50
    # Sorted by the database over every order (18,000 and more), not over the 2,000 shown unsorted.
    assert len(every_order) > 2000
    top = sorted((row[1] for row in every_order), reverse=True)[:50]
    by_total = cells(text(client.get(f"/question/{orders['id']}?view=table&sort=TOTAL&dir=desc")))
    assert column(by_total, 1) == top
    # A column of the joined table sorts the same way.
    categories = column(cells(text(client.get(f"/question/{orders['id']}?view=table&sort=CATEGORY&dir=desc"))), 2, str)
    assert set(categories) == {max(row[2] for row in every_order)}


def test_the_x_ray_links_of_a_question_open_its_x_ray(app, admin, shop):
    client = sign_in(app)
    saved = text(client.get(f"/question/{shop['by_region']}-sales-by-region"))
    link = re.search(r'href="(/auto/dashboard/question/\d+)"', saved).group(1)
    xray = client.get(link)
    assert xray.status_code == 200 and 'class="dashcard' in text(xray)
    rows_of_north = {"dataset_query": {"database": shop["db"], "type": "query", "query": {
        "source-table": shop["table"]}}, "display": "table", "visualization_settings": {}}
    adhoc = text(client.get("/question/adhoc", query_string={"q": adhoc_link(rows_of_north)}))
    link = re.search(r'href="(/auto/dashboard/adhoc/[^"]+)"', adhoc).group(1)
    assert client.get(link).status_code == 200
    assert client.get("/auto/dashboard/adhoc/not%20base64!").status_code == 404
    assert client.get("/auto/dashboard/question/999999").status_code == 404
