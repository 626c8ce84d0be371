"""The SQL editor (plugins/app/native_editor.py) through HTTP as the browser sends it: the page opened from
a native link's base64 or a saved question, its variables panel read from the SQL by the API's parser,
the schema browser and snippets, runs with values and without (an optional clause left out), a field
filter with a date value, the database's error as a 4xx fragment, and a user without native permission
refused with the API's own message."""
from __future__ import annotations

import base64
import html
import re
from urllib.parse import parse_qs, urlencode, urlsplit

import orjson
import pytest

from core.testing import USER_PASSWORD, make_user
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.plugins.app.test_question_pages import SALES, cells, column, set_data_access, shop  # noqa: F401

EDITOR_SQL = ("SELECT id, region, amount FROM sales WHERE amount >= {{min}} [[AND region = {{region}}]] "
              "[[AND {{day}}]] ORDER BY id")


def link(dataset_query: dict) -> str:
    question = {"dataset_query": dataset_query, "display": "table", "visualization_settings": {}}
    return base64.urlsafe_b64encode(orjson.dumps(question)).decode().rstrip("=")


def run(client, fields: dict, **headers):
    return client.post("/question/native/run", json=fields, headers={**HTMX, **headers})


def editor_fields(db: int, sql: str = EDITOR_SQL, **more) -> dict:
    return {"native-db": str(db), "native-sql": sql, "tag-type.min": "number", "tag-default.min": "0",
            "tag-type.region": "text", **more}


def ids(response) -> list[int]:
    return column(cells(text(response)), 0, int)


def test_the_editor_opens_a_native_link_with_its_variables(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    tags = {"min": {"id": "a1", "name": "min", "display-name": "Least", "type": "number", "default": "10",
                    "required": True},
            "day": {"id": "a2", "name": "day", "display-name": "Day", "type": "dimension",
                    "dimension": ["field", shop["fields"]["sold_on"], None], "widget-type": "date/all-options"}}
    query = {"database": shop["db"], "type": "native", "native": {"query": EDITOR_SQL, "template-tags": tags}}
    response = client.get(f"/question/native?q={link(query)}&region=North")
    page = text(response)
    assert response.status_code == 200
    # The SQL in the labelled textarea, the database chosen, the scripts from the app's assets only.
    assert '<label for="native-sql">SQL</label>' in page and "amount &gt;= {{min}}" in page
    assert f'<option value="{shop["db"]}" selected>Shop</option>' in page
    assert "/app/assets/prism-core.min.js" in page and "/app/assets/native.js" in page and "<script>" not in page
    # The variables panel: one group per tag the API's parser finds, with the link's settings.
    assert '<legend><code>min</code></legend>' in page and '<legend><code>region</code></legend>' in page
    assert 'name="tag-label.min" value="Least"' in page and 'name="tag-required.min" value="true" checked' in page
    assert re.search(r'name="tag-type.day">.*?<option value="dimension" selected>Field filter', page, re.S)
    assert f'<option value="{shop["fields"]["sold_on"]}" selected>' in page
    assert '<option value="date/all-options" selected>' in page
    # The widgets are the filters': a number box with its default, a text box with the link's value, a date.
    assert re.search(r'<input id="filter-min"[^>]* name="min" value="10"', page)
    assert re.search(r'<input id="filter-region" type="text" name="region" value="North">', page)
    assert '<input type="hidden" name="day" value="" data-date-value>' in page
    # The schema browser (the API's metadata) and the database's columns as insertable names.
    assert 'data-insert="sales"' in page and 'data-insert="sold_on"' in page
    # Opening does not run it: the person presses Run.
    assert "<tbody>" not in page

    # An MBQL link is no SQL: it goes to the ad-hoc question page; junk is a 400 page saying so.
    mbql = link({"database": shop["db"], "type": "query", "query": {"source-table": shop["table"]}})
    moved = client.get(f"/question/native?q={mbql}")
    assert moved.status_code == 303 and moved.headers["Location"].startswith("/question/adhoc?q=")
    # And the other way round: SQL in an ad-hoc link opens in the editor, not run by following the link
    # (a link from anywhere must not run a query as whoever follows it, as Metabase stopped doing).
    sql_link = link({"database": shop["db"], "type": "native", "native": {"query": "SELECT 1 AS one"}})
    shown = client.get(f"/question/adhoc?q={sql_link}")
    assert shown.status_code == 303 and shown.headers["Location"] == f"/question/native?q={sql_link}"
    # A database this user may not write SQL for is not silently kept: said, and another one chosen.
    other = text(client.get("/question/native?native-db=999&native-sql=SELECT+1"))
    assert "You may not write SQL for database 999" in other and f'<option value="{shop["db"]}" selected>' in other
    junk = client.get("/question/native?q=not-base64!")
    assert junk.status_code == 400 and 'role="alert"' in text(junk)


def test_the_variables_panel_follows_the_sql(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    sql = "SELECT * FROM sales WHERE {{place}} [[AND amount > {{least}}]] {{snippet: recent}} {{#7-orders}}"
    fields = {"native-db": shop["db"], "native-sql": sql, "tag-type.place": "dimension",
              "tag-field.place": shop["fields"]["region"], "tag-widget.place": "string/="}
    page = text(client.get("/question/native?" + urlencode(fields), headers=HTMX))
    assert '<legend><code>place</code></legend>' in page and '<legend><code>least</code></legend>' in page
    assert 'name="tag-label.least" value="Least"' in page  # named as Metabase first names a tag
    assert "Snippet <strong>recent</strong>" in page and "no snippet has this name" in page
    assert "Question <strong>#7-orders</strong>" in page and 'href="/question/7"' in page
    # The field filter's widget follows its widget type (string/= is a list of the column's values).
    assert 'hx-get="/question/native/values/place"' in page
    listed = text(client.get("/question/native/values/place?" + urlencode(fields)))
    assert all(f'name="place" value="{region}">' in listed for region in ("North", "South", "East", "West"))
    assert client.get("/question/native/values/nothing?" + urlencode(fields)).status_code == 404
    # An unclosed tag is the parser's own message, not a 500.
    broken = client.get("/question/native?" + urlencode({"native-db": shop["db"], "native-sql": "SELECT {{x"}))
    assert broken.status_code == 200 and "found &#39;{{&#39; with no matching &#39;}}&#39;" in text(broken)
    refused = run(client, {"native-db": shop["db"], "native-sql": "SELECT {{x"})
    assert refused.status_code == 400 and "no matching" in text(refused)


def test_a_run_with_values_and_without_the_optional_clause(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    everything = run(client, editor_fields(shop["db"]))
    assert everything.status_code == 200
    assert "Rows 1–50 of 130" in text(everything) and ids(everything) == list(range(1, 51))
    # The URL now holds the editor's state and the values, so a reload opens the same query.
    url = everything.headers["HX-Replace-Url"]
    kept = parse_qs(urlsplit(url).query)
    assert url.startswith("/question/native?") and kept["native-sql"] == [EDITOR_SQL]
    assert kept["tag-type.min"] == ["number"] and kept["min"] == ["0"] and "region" not in kept
    reopened = text(client.get(url))
    assert "amount &gt;= {{min}}" in reopened and '<option value="number" selected>' in reopened

    north = run(client, editor_fields(shop["db"], min="50", region="North"))
    assert ids(north) == [i for i, r, a, _ in SALES if a >= 50 and r == "North"]
    assert parse_qs(urlsplit(north.headers["HX-Replace-Url"]).query)["region"] == ["North"]
    # Sorting and paging a run's rows: every returned row is ordered before the page is cut.
    amounts = sorted((a for _, _, a, _ in SALES if a >= 20), reverse=True)
    second = run(client, editor_fields(shop["db"], min="20", **{"native-sort": "amount", "native-dir": "desc",
                                                                  "native-page": "2"}))
    assert column(cells(text(second)), 2) == amounts[50:100]
    # A required variable with no value and no default: the API's refusal, as a 4xx fragment.
    required = run(client, editor_fields(shop["db"], **{"tag-default.min": "", "tag-required.min": "true"}))
    assert 400 <= required.status_code < 500 and 'role="alert"' in text(required)
    # Nothing to run, no database: said, as 400s.
    assert run(client, {"native-db": str(shop["db"]), "native-sql": "  "}).status_code == 400
    assert run(client, {"native-sql": "SELECT 1"}).status_code == 400


def test_a_field_filter_with_a_date_value(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    fields = editor_fields(shop["db"], **{"tag-type.day": "dimension", "tag-field.day": str(shop["fields"]["sold_on"]),
                                          "tag-widget.day": "date/all-options"})
    page = text(client.get("/question/native?" + urlencode(fields)))
    assert re.search(r'<select id="filter-day-mode" data-local data-part="mode">', page)
    one_day = run(client, {**fields, "day": "2024-01-05"})
    assert ids(one_day) == [i for i, _, _, d in SALES if d == "2024-01-05"]
    span = run(client, {**fields, "day": "2024-01-03~2024-01-04", "min": "30"})
    assert ids(span) == [i for i, _, a, d in SALES if d in ("2024-01-03", "2024-01-04") and a >= 30]
    assert parse_qs(urlsplit(span.headers["HX-Replace-Url"]).query)["day"] == ["2024-01-03~2024-01-04"]


def test_a_sql_error_is_the_databases_message(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    failed = run(client, {"native-db": str(shop["db"]), "native-sql": "SELECT nope FROM sales"})
    assert failed.status_code == 400
    assert 'role="alert"' in text(failed) and "no such column: nope" in text(failed)


def test_snippets_are_listed_and_run(app, admin, shop):  # noqa: F811
    created = admin.post("/api/native-query-snippet", json={"name": "big ones", "content": "amount > 95"})
    assert created.status_code == 200, created.json
    client = sign_in(app)
    page = text(client.get(f"/question/native?native-db={shop['db']}"))
    assert 'data-insert="{{snippet: big ones}}"' in page
    ran = run(client, {"native-db": str(shop["db"]),
                       "native-sql": "SELECT id FROM sales WHERE {{snippet: big ones}} ORDER BY id"})
    assert ids(ran) == [i for i, _, a, _ in SALES if a > 95]


def test_without_native_permission_the_api_refuses(app, admin, shop):  # noqa: F811
    set_data_access(admin, shop["db"], "unrestricted", "query-builder")
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    page = text(client.get(f"/question/native?native-db={shop['db']}&native-sql=SELECT+1"))
    assert "You may not write SQL for any database." in page and 'id="native-run"' in page
    assert re.search(r'id="native-run"[^>]*disabled', page)
    refused = run(client, {"native-db": str(shop["db"]), "native-sql": "SELECT id FROM sales"})
    api = admin_free_answer(app, shop["db"])
    assert refused.status_code == 403 and api in html.unescape(text(refused))
    assert "<tbody>" not in text(refused)
    # Nor does their saved native question offer the editor.
    assert "Open editor" not in text(client.get(f"/question/{shop['native']}"))


def admin_free_answer(app, db: int) -> str:
    """What the API itself answers the same user for the same query (the message the page must show)."""
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    answer = client.post("/api/dataset", json={"database": db, "type": "native", "native": {"query": "SELECT 1"}})
    assert answer.status_code == 403
    body = answer.get_json(silent=True)
    message = body.get("message") if isinstance(body, dict) else body
    assert isinstance(message, str) and message
    return message


def test_a_saved_native_question_offers_open_editor(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    page = text(client.get(f"/question/{shop['native']}"))
    found = re.search(r'<a class="xray" href="(/question/native\?q=[^"]+)"[^>]*>Open editor</a>', page)
    assert found
    opened = text(client.get(found.group(1).replace("&amp;", "&")))
    assert "[[AND region = {{region}}]]" in opened and 'name="tag-label.min" value="Least amount"' in opened


@pytest.mark.parametrize("path", ["/question/native", "/question/native/values/x"])
def test_signed_out_is_sent_to_sign_in(app, admin, path):
    response = app.test_client().get(path)
    assert response.status_code in (302, 303) and "/auth/login" in response.headers["Location"]


def test_an_mbql5_native_link_opens_too(app, admin, shop):  # noqa: F811
    query = {"lib/type": "mbql/query", "database": shop["db"], "stages": [
        {"lib/type": "mbql.stage/native", "native": "SELECT id FROM sales WHERE id < {{top}}",
         "template-tags": {"top": {"id": "x", "name": "top", "display-name": "Top", "type": "number"}}}]}
    page = text(sign_in(app).get(f"/question/native?q={link(query)}"))
    assert "WHERE id &lt; {{top}}" in page and '<option value="number" selected>' in page
