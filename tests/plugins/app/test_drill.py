"""Drill-through on the question pages (plugins/app/drill.py, drill_menu.py, core.charts.drill): the
exact MBQL of each drill, the menu a click on a bar, point or cell answers (ad-hoc question links whose
queries run through the API), and the chart's marks that carry what they draw."""
from __future__ import annotations

import base64
import html
import re

import orjson
import pytest

from plugins.app import drill
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.plugins.app.test_question_pages import REGIONS, SALES, ok, shop  # noqa: F401 - the fixture

REGION = {"name": "region", "source": "breakout", "base_type": "type/Text", "field_ref": ["field", 7, None]}
MONTH = {"name": "sold_on", "source": "breakout", "base_type": "type/Date", "unit": "month",
         "field_ref": ["field", 9, {"temporal-unit": "month"}]}
TOTAL = {"name": "sum", "source": "aggregation", "base_type": "type/Float", "field_ref": ["aggregation", 0]}
QUERY = {"database": 1, "type": "query", "query": {
    "source-table": 3, "filter": [">", ["field", 8, None], 10], "aggregation": [["sum", ["field", 8, None]]],
    "breakout": [["field", 9, {"temporal-unit": "month"}], ["field", 7, None]],
    "order-by": [["asc", ["field", 9, {"temporal-unit": "month"}]]], "limit": 100}}


def test_view_these_rows_filters_on_the_clicked_values_without_the_summary():
    rows = drill.view_rows(QUERY, [(MONTH, "2024-01-01T00:00:00Z"), (REGION, "North"), (TOTAL, 12.5)])
    assert rows == {"database": 1, "type": "query", "query": {"source-table": 3, "filter": [
        "and", [">", ["field", 8, None], 10], ["=", ["field", 9, {"temporal-unit": "month"}], "2024-01-01T00:00:00Z"],
        ["=", ["field", 7, None], "North"]]}}
    assert QUERY["query"]["limit"] == 100  # the question's own query is left as it was
    empty = drill.view_rows({**QUERY, "query": {"source-table": 3, "aggregation": [["count"]],
                                                "breakout": [["field", 7, None]]}}, [(REGION, None)])
    assert empty["query"] == {"source-table": 3, "filter": ["is-null", ["field", 7, None]]}
    binned = {"name": "amount", "source": "breakout", "base_type": "type/Float", "binning_info": {"bin_width": 10},
              "field_ref": ["field", 8, {"binning": {"strategy": "default"}}]}
    assert drill.dimension_filter(binned, 20) == ["between", ["field", 8, None], 20, 30]
    with pytest.raises(drill.NotDrillable):
        drill.view_rows({"database": 1, "type": "query", "query": {"source-table": 3}}, [])
    with pytest.raises(drill.NotDrillable):
        drill.view_rows({"database": 1, "type": "native", "native": {"query": "select 1"}}, [])


def test_break_out_and_zoom_in():
    other = ["field", 11, None]
    assert drill.break_out(QUERY, [(MONTH, "2024-01-01T00:00:00Z")], other)["query"] == {
        "source-table": 3, "aggregation": [["sum", ["field", 8, None]]], "breakout": [other], "limit": 100,
        "filter": ["and", [">", ["field", 8, None], 10],
                   ["=", ["field", 9, {"temporal-unit": "month"}], "2024-01-01T00:00:00Z"]]}
    zoomed = drill.zoom_in(QUERY, [(REGION, "North"), (MONTH, "2024-01-01T00:00:00Z")])
    assert zoomed["query"] == {
        "source-table": 3, "aggregation": [["sum", ["field", 8, None]]], "limit": 100,
        "breakout": [["field", 9, {"temporal-unit": "week"}], ["field", 7, None]],
        "filter": ["and", [">", ["field", 8, None], 10],
                   ["=", ["field", 9, {"temporal-unit": "month"}], "2024-01-01T00:00:00Z"]]}
    assert drill.temporal_dimension([(REGION, "North")]) is None
    minute = {**MONTH, "field_ref": ["field", 9, {"temporal-unit": "minute"}]}
    assert drill.temporal_dimension([(minute, "2024-01-01T00:00:00Z")]) is None  # nothing finer


def test_filter_by_a_cells_value():
    raw = {"database": 1, "type": "query", "query": {"source-table": 3}}
    amount = {"name": "amount", "base_type": "type/Float", "field_ref": ["field", 8, None]}
    assert drill.filter_cell(raw, amount, 12.5, "<")["query"] == {"source-table": 3,
                                                                 "filter": ["<", ["field", 8, None], 12.5]}
    assert drill.filter_cell(raw, REGION, None, "!=")["query"]["filter"] == ["not-null", ["field", 7, None]]
    with pytest.raises(drill.NotDrillable):
        drill.filter_cell(raw, REGION, "North", ">")  # text is not ordered
    # A summary's own value is filtered in one more stage, as Metabase filters an aggregation.
    assert drill.filter_cell(QUERY, TOTAL, 50, ">")["query"] == {
        "source-query": QUERY["query"], "filter": [">", ["field", "sum", {"base-type": "type/Float"}], 50]}


def decoded(href: str) -> dict:
    assert href.startswith("/question#"), href
    return orjson.loads(base64.b64decode(href.split("#", 1)[1]))


def menu_links(page: str) -> dict[str, str]:
    return {html.unescape(label): html.unescape(href)
            for href, label in re.findall(r'<a href="([^"]*)" hx-boost="false">([^<]*)</a>', page)}


def marks(page: str) -> list[dict]:
    return [orjson.loads(html.unescape(one)) for one in re.findall(r'class="drill-mark" tabindex="0" data-drill="([^"]*)"', page)]


def test_a_bar_carries_its_row_and_its_menu_drills_into_the_rows(app, admin, shop):  # noqa: F811 - the imported fixture
    client = sign_in(app)
    page = text(client.get(f"/question/{shop['by_region']}-sales-by-region"))
    assert f'data-drill="/question/drill?card={shop["by_region"]}"' in page
    clicked = marks(page)
    assert sorted(one["dims"][0][1] for one in clicked) == sorted(REGIONS)
    north = next(one for one in clicked if one["dims"] == [[0, "North"]])
    assert north["col"] == 1 and round(north["value"], 2) == round(sum(a for _, r, a, _ in SALES if r == "North"), 2)

    menu = client.get(f"/question/drill?card={shop['by_region']}&at=" + orjson.dumps(north).decode(), headers=HTMX)
    assert menu.status_code == 200
    links = menu_links(text(menu))
    rows = decoded(links["View these rows"])
    fields, table = shop["fields"], shop["table"]
    assert rows == {"dataset_query": {"database": shop["db"], "type": "query", "query": {
        "source-table": table, "filter": ["=", ["field", fields["region"], None], "North"]}},
        "display": "table", "visualization_settings": {}, "original_card_id": shop["by_region"]}
    ran = ok(admin.post("/api/dataset", json=rows["dataset_query"]))
    assert sorted(row[0] for row in ran["data"]["rows"]) == [i for i, r, _, _ in SALES if r == "North"]
    # Break out by another column: the date by month (time); the summary kept, North alone.
    by_date = decoded(links["Sold On"])
    assert by_date["dataset_query"]["query"] == {
        "source-table": table, "aggregation": [["sum", ["field", fields["amount"], None]]],
        "breakout": [["field", fields["sold_on"], {"temporal-unit": "month"}]],
        "filter": ["=", ["field", fields["region"], None], "North"]}
    assert by_date["display"] == "line"
    assert ok(admin.post("/api/dataset", json=by_date["dataset_query"]))["row_count"] == 1
    assert "Zoom in" not in links  # no period was clicked
    assert links["X-ray this"].startswith("/auto/dashboard/adhoc/")
    assert client.get(links["X-ray this"]).status_code == 200
    # The ad-hoc question the link holds is a page of North's rows.
    adhoc = text(client.get("/question/adhoc", query_string={"q": links["View these rows"].split("#", 1)[1]}))
    north_rows = len([1 for _, r, _, _ in SALES if r == "North"])
    assert f"Rows 1–{north_rows} of {north_rows}" in adhoc


def test_zoom_in_on_a_month_and_filter_by_a_cell(app, admin, shop):  # noqa: F811 - the imported fixture
    fields, table = shop["fields"], shop["table"]
    monthly = {"database": shop["db"], "type": "query", "query": {
        "source-table": table, "aggregation": [["count"]],
        "breakout": [["field", fields["sold_on"], {"temporal-unit": "month"}]]}}
    card = {"dataset_query": monthly, "display": "bar", "visualization_settings": {}}
    q = base64.b64encode(orjson.dumps(card)).decode()
    client = sign_in(app)
    page = text(client.get("/question/adhoc", query_string={"q": q}))
    clicked = marks(page)
    assert len(clicked) == 1 and clicked[0]["value"] == 130
    menu = text(client.get("/question/drill", query_string={"q": q, "at": orjson.dumps(clicked[0]).decode()}))
    links = menu_links(menu)
    zoomed = decoded(links["Zoom in"])
    assert zoomed["dataset_query"]["query"] == {
        "source-table": table, "aggregation": [["count"]],
        "breakout": [["field", fields["sold_on"], {"temporal-unit": "week"}]],
        "filter": ["=", ["field", fields["sold_on"], {"temporal-unit": "month"}], clicked[0]["dims"][0][1]]}
    weeks = ok(admin.post("/api/dataset", json=zoomed["dataset_query"]))
    assert sum(row[1] for row in weeks["data"]["rows"]) == 130 and weeks["row_count"] > 1
    assert "original_card_id" not in zoomed

    # A table cell: its row's raw values are on the page; "<" on an amount filters the rows.
    every = text(client.get(f"/question/{shop['every_sale']}"))
    block = orjson.loads(html.unescape(re.search(r'<script type="application/json" class="drill-rows">(.*?)</script>',
                                                 every, re.S).group(1)))
    raw = block["rows"]
    assert raw[0][:3] == [1, SALES[0][1], SALES[0][2]] and block["cols"] == [0, 1, 2, 3]
    at = {"dims": [[i, v] for i, v in enumerate(raw[0])], "col": 2, "value": raw[0][2], "cell": True}
    cell_links = menu_links(text(client.get("/question/drill", query_string={"card": shop["every_sale"],
                                            "at": orjson.dumps(at).decode()})))
    assert {"= this value", "≠ this value", "< this value", "> this value"} <= set(cell_links)
    assert "View these rows" not in cell_links  # the question already shows its rows
    less = decoded(cell_links["< this value"])["dataset_query"]
    assert less["query"] == {"source-table": table, "order-by": [["asc", ["field", fields["id"], None]]],
                             "filter": ["<", ["field", fields["amount"], None], SALES[0][2]]}
    assert ok(admin.post("/api/dataset", json=less))["row_count"] == len([1 for s in SALES if s[2] < SALES[0][2]])
    text_at = {**at, "col": 1, "value": raw[0][1]}
    region_links = menu_links(text(client.get("/question/drill", query_string={"card": shop["every_sale"],
                                              "at": orjson.dumps(text_at).decode()})))
    assert "< this value" not in region_links and "= this value" in region_links


def test_a_bad_click_is_a_400_and_sql_has_nothing_to_drill(app, admin, shop):  # noqa: F811 - the imported fixture
    client = sign_in(app)
    for at in ("nope", '{"dims": [[99, 1]]}', '{"dims": "x"}', '{"col": true}', '{"dims": [[0, {"a": 1}]]}',
               '{"col": 1, "value": [1]}'):
        answer = client.get("/question/drill", query_string={"card": shop["by_region"], "at": at})
        assert answer.status_code == 400 and 'role="alert"' in text(answer), at
    assert client.get("/question/drill?card=abc&at={}").status_code == 400
    assert client.get("/question/drill?q=!!!&at={}").status_code == 400
    native = text(client.get(f"/question/{shop['native']}"))
    assert "data-drill=" not in native
    menu = client.get("/question/drill", query_string={"card": shop["native"], "at": '{"dims": []}'})
    assert menu.status_code == 200 and "nothing to drill" in text(menu)


def test_chart_marks_carry_their_rows_only_when_asked():
    from core.charts.render import render_card

    cols = [{"name": "month", "base_type": "type/Date", "source": "breakout", "unit": "month"},
            {"name": "region", "base_type": "type/Text", "source": "breakout"},
            {"name": "count", "base_type": "type/Integer", "source": "aggregation"}]
    rows = [["2024-01-01", "North", 3], ["2024-01-01", "South", 4], ["2024-02-01", "North", 5]]
    result = {"data": {"cols": cols, "rows": rows}}
    for display, settings in (("bar", {"stackable.stack_type": "stacked"}), ("line", {}), ("area", {})):
        card = {"display": display, "visualization_settings": settings}
        plain = render_card(card, result, "svg")
        assert b"drill" not in plain and b"<a " not in plain  # exports and e-mails: unchanged
        drawn = render_card(card, result, "svg", drill=True).decode()
        assert "<a " not in drawn and "drill_ref" not in drawn
        found = sorted((one["dims"][0][1], one["dims"][1][1], one["col"], one["value"]) for one in marks(drawn))
        assert found == [("2024-01-01", "North", 2, 3), ("2024-01-01", "South", 2, 4),
                         ("2024-02-01", "North", 2, 5)], display
        assert drawn.count('role="button"') == 3
    assert render_card({"display": "bar"}, result, "png", drill=True)[:4] == b"\x89PNG"


def test_no_drill_for_one_who_may_not_ask_ad_hoc_questions(app, admin, shop):  # noqa: F811
    from core.testing import USER_PASSWORD, make_user

    graph = ok(admin.get("/api/permissions/graph"))
    ok(admin.put("/api/permissions/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(shop["db"]): {"view-data": "unrestricted", "create-queries": "no"}}}}))
    make_user(app, "viewer@example.com")
    viewer = sign_in(app, "viewer@example.com", USER_PASSWORD)
    page = text(viewer.get(f"/question/{shop['by_region']}"))
    assert "<svg" in page and "data-drill" not in page and 'class="drill-mark"' not in page
    assert 'role="img"' in page


def test_a_summary_cell_offers_its_rows_and_filters_the_summary(app, admin, shop):  # noqa: F811
    client = sign_in(app)
    page = text(client.get(f"/question/{shop['by_region']}?view=table"))
    raw = orjson.loads(html.unescape(re.search(r'class="drill-rows">(.*?)</script>', page, re.S).group(1)))["rows"]
    row = next(one for one in raw if one[0] == "South")
    at = {"dims": [[0, "South"], [1, row[1]]], "col": 1, "value": row[1], "cell": True}
    links = menu_links(text(client.get("/question/drill", query_string={"card": shop["by_region"],
                                                                      "at": orjson.dumps(at).decode()})))
    assert decoded(links["View these rows"])["dataset_query"]["query"]["filter"] == [
        "=", ["field", shop["fields"]["region"], None], "South"]
    bigger = decoded(links["> this value"])["dataset_query"]
    assert bigger["query"]["filter"] == [">", ["field", "sum", {"base-type": "type/Float"}], row[1]]
    totals = {region: sum(a for _, r, a, _ in SALES if r == region) for region in REGIONS}
    shown = ok(admin.post("/api/dataset", json=bigger))["data"]["rows"]
    assert sorted(one[0] for one in shown) == sorted(r for r, total in totals.items() if total > row[1])
