"""An ad-hoc native question (/question/adhoc?q=<base64>) whose query has template tags: its parameters
drawn by the same widgets as a saved native question's, their values in the URL beside the question,
value lists of a field filter (searched, with the value list's own `q` beside the question's), and a plain
`date` tag offering what the API takes for it (one date: it refuses ranges and relative dates)."""
from __future__ import annotations

import base64
import re

import orjson

from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.plugins.app.test_question_pages import REGIONS, SALES, SQL, cells, column, ok, shop  # noqa: F401 (a fixture)


def native(shop: dict,  # noqa: F811 (the imported fixture's name)
            sql: str = SQL, tags: dict | None = None) -> dict:
    fields = shop["fields"]
    tags = tags or {
        "min": {"id": "t-min", "name": "min", "display-name": "Least amount", "type": "number", "required": True,
                "default": "0"},
        "region": {"id": "t-region", "name": "region", "display-name": "Region", "type": "text"},
        "place": {"id": "t-place", "name": "place", "display-name": "Place", "type": "dimension",
                  "dimension": ["field", fields["region"], None], "widget-type": "string/="},
        "day": {"id": "t-day", "name": "day", "display-name": "Day", "type": "date"}}
    return {"database": shop["db"], "type": "native", "native": {"query": sql, "template-tags": tags}}


def link(query: dict) -> str:
    return base64.b64encode(orjson.dumps({"dataset_query": query, "display": "table"})).decode()


def test_an_adhoc_native_question_gets_its_parameters_widgets(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    q = link(native(shop))
    everything = text(client.get("/question/adhoc", query_string={"q": q}))
    assert "Rows 1–50 of 130" in everything  # the required number's default (0) applies
    for label in ("Least amount", "Region", "Place", "Day"):
        assert f">{label}" in everything
    assert re.search(r'<input id="filter-min"[^>]* name="min" value="0"', everything)
    assert re.search(r'<input id="filter-region" type="text" name="region" value="">', everything)
    # The form keeps the question: applying values reloads the same ad-hoc question with them.
    assert f'<input type="hidden" name="q" value="{q}">' in everything
    assert 'hx-get="/question/adhoc/values/t-place"' in everything

    big = text(client.get("/question/adhoc", query_string={"q": q, "min": "90"}))
    assert column(cells(big), 0, int) == [i for i, _, a, _ in SALES if a >= 90] and 'name="min" value="90"' in big
    north = text(client.get("/question/adhoc", query_string={"q": q, "min": "50", "place": "North"}))
    assert column(cells(north), 0, int) == [i for i, r, a, _ in SALES if a >= 50 and r == "North"]
    # Sort and page links keep the question and the values.
    second = text(client.get("/question/adhoc", query_string={"q": q, "min": "20", "page": "2"}))
    prev = re.search(r'href="([^"]*)" rel="prev"', second).group(1)
    assert "min=20" in prev and "q=" in prev
    wrong = client.get("/question/adhoc", query_string={"q": q, "min": "lots"})
    assert wrong.status_code == 200 and 'role="alert"' in text(wrong) and "lots" in text(wrong)

    # The field filter's value list, as the filters form asks for it (its fields, the question among them),
    # and searched: the search box's `q` beside the question's.
    listed = text(client.get("/question/adhoc/values/t-place", query_string={"q": q}, headers=HTMX))
    assert all(f'name="place" value="{region}">' in listed for region in REGIONS)
    searched = client.get(f"/question/adhoc/values/t-place?q=Nor&q={q}", headers=HTMX)
    assert re.findall(r'value="([^"]*)"', text(searched)) == ["North"]
    assert client.get("/question/adhoc/values/t-nothing", query_string={"q": q}).status_code == 404
    assert client.get("/question/adhoc/values/t-place", query_string={"q": "junk!"}).status_code == 404
    assert client.get("/question/adhoc/values/t-region", query_string={"q": q}).status_code == 404  # a text box


def test_a_plain_date_tag_offers_one_date_as_the_api_takes(app, admin, shop):  # noqa: F811
    # What the API takes for a plain `date` tag: one date (or date-time); ranges and relative dates are
    # refused, as Metabase's substitution refuses them. So the widget offers "On a date" alone.
    query = native(shop)
    day = {"type": "date/single", "target": ["variable", ["template-tag", "day"]]}

    def run(value):
        return admin.post("/api/dataset", json={**query, "parameters": [{**day, "value": value}]})

    taken = ok(run("2024-01-05"))
    assert [row[0] for row in taken["data"]["rows"]] == [i for i, _, _, d in SALES if d == "2024-01-05"]
    for refused in ("past30days", "2024-01-03~2024-01-05", "thismonth", "2024-01"):
        answer = run(refused)
        assert answer.status_code in (202, 400) and answer.json["status"] == "failed", refused

    client = sign_in(app)
    q = link(query)
    page = text(client.get("/question/adhoc", query_string={"q": q, "day": "2024-01-05"}))
    assert column(cells(page), 0, int) == [i for i, _, _, d in SALES if d == "2024-01-05"]
    widget = re.search(r'<fieldset class="filter filter-date" data-date data-slug="day">(.*?)</fieldset>', page, re.S)
    modes = re.findall(r'<option value="([a-z]*)"', widget.group(1).split("</select>", 1)[0])
    assert modes == ["", "on"]
    assert '<input type="hidden" name="day" value="2024-01-05" data-date-value>' in page


def test_in_a_browser_an_adhoc_native_links_parameters_apply(app, admin, shop):  # noqa: F811
    import pytest

    from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
    from tests.plugins.app.test_question_pages import click, first_column, settle
    from tests.plugins.sharing.browser import Browser, Server, chromium_path
    from tests.plugins.sharing.test_pages_browser import serious_violations

    if chromium_path() is None:
        pytest.skip("the browser tests need Debian's chromium package")
    token = ok(admin.post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))["id"]
    with Server(app) as server, Browser(chromium_path()) as browser:
        browser.send("Network.enable")
        browser.send("Network.setCookie", name="metabase.SESSION", value=token, url=server.url, httpOnly=True)
        browser.watch_errors()
        browser.send("Page.navigate", url=f"{server.url}/question#{link(native(shop))}")
        settle(browser, "document.querySelector('table.result') && document.querySelector('#filter-min')")
        assert serious_violations(browser) == []
        browser.evaluate("document.querySelector('input[name=min]').value = '90', true")
        click(browser, ".params button[type=submit]")
        settle(browser, "document.querySelector('input[name=min]').value === '90'"
                        " && document.querySelectorAll('table.result tbody tr').length < 50")
        assert [int(v) for v in first_column(browser, 0)] == [i for i, _, a, _ in SALES if a >= 90]
        # The field filter's value list opens with the column's values.
        click(browser, "[data-slug=place] summary")
        settle(browser, "document.querySelectorAll('[data-slug=place] input[type=checkbox]').length === 4")
        assert serious_violations(browser) == []
        assert browser.errors() == []
