"""The display picker and the visualization settings of the question pages (plugins/app/viz_settings.py)
through HTTP: each setting changes the picture the page draws (the SVG from core.charts) or its table,
the picker offers what suits the result, a change lives in the ad-hoc link it answers, and bad input is a
clear 400."""
from __future__ import annotations

import base64
import html
import re
from urllib.parse import parse_qs, urlencode, urlparse

import orjson

from tests.plugins.app import test_question_pages
from tests.plugins.app.test_pages import sign_in, text
from tests.plugins.app.test_question_pages import cells, ok

shop = test_question_pages.shop  # the Shop database's fixture, shared with the question pages' tests

COLS = ("region", "sum")


def adhoc(shop: dict, **extra) -> str:
    """The ad-hoc link (q) of a question over the Shop database: by default sales summed by region."""
    query = {"database": shop["db"], "type": "query", "query": {
        "source-table": shop["table"], "aggregation": [["sum", ["field", shop["fields"]["amount"], None]]],
        "breakout": [["field", shop["fields"]["region"], None]]}}
    question = {"dataset_query": query, "display": "bar", "visualization_settings": {}, **extra}
    return base64.b64encode(orjson.dumps(question)).decode()


def by_day_and_region(shop: dict) -> dict:
    return {"database": shop["db"], "type": "query", "query": {
        "source-table": shop["table"], "aggregation": [["sum", ["field", shop["fields"]["amount"], None]]],
        "breakout": [["field", shop["fields"]["sold_on"], {"temporal-unit": "week"}],
                     ["field", shop["fields"]["region"], None]]}}


def change(client, start: dict, fields: list[tuple[str, str]], cols=COLS) -> tuple[str, str]:
    """Apply the panel's `fields` to the question `start` ({"q": ...} or {"card": id}): (the page of the
    question it leads to, its q)."""
    pairs = [*start.items(), ("form", "1"), *(("cols", c) for c in cols), *fields]
    answer = client.get("/question/viz?" + urlencode(pairs))
    assert answer.status_code == 303, text(answer)
    location = answer.headers["Location"]
    assert urlparse(location).path == "/question/adhoc"
    q = parse_qs(urlparse(location).query)["q"][0]
    page = client.get(location)
    assert page.status_code == 200, text(page)
    return text(page), q


def settings_of(q: str) -> dict:
    raw = q.replace("-", "+").replace("_", "/")
    return orjson.loads(base64.b64decode(raw + "=" * (-len(raw) % 4)))


def svg(page: str) -> str:
    found = re.search(r"<svg.*?</svg>", page, re.S)
    assert found, page[:2000]
    return found.group(0)


def labels(picture: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", picture)]


def picker(page: str) -> list[str]:
    nav = re.search(r'<nav class="viz-picker".*?</nav>', page, re.S)
    assert nav, page[:2000]
    return re.findall(r'data-display="([^"]+)"', nav.group(0))


GRAPH = [("sections", "graph"), ("graph.x", "region"), ("graph.metrics", "sum")]


def test_the_picker_offers_what_suits_the_result(app, admin, shop):
    client = sign_in(app)
    summed = text(client.get(f"/question/adhoc?q={adhoc(shop)}"))
    assert {"table", "bar", "line", "pie", "row", "pivot"} <= set(picker(summed))
    assert "scalar" not in picker(summed) and "gauge" not in picker(summed)
    one_number = {"database": shop["db"], "type": "query", "query": {"source-table": shop["table"],
                                                                    "aggregation": [["count"]]}}
    number = text(client.get(f"/question/adhoc?q={adhoc(shop, dataset_query=one_number, display='scalar')}"))
    assert {"table", "scalar", "gauge", "progress"} <= set(picker(number))
    assert not {"bar", "line", "pie"} & set(picker(number))
    # Choosing one leads to the same question with that display.
    link = re.search(r'href="([^"]+)" [^>]*data-display="line"', summed).group(1)
    answer = client.get(html.unescape(link))
    assert answer.status_code == 303
    assert settings_of(parse_qs(urlparse(answer.headers["Location"]).query)["q"][0])["display"] == "line"


def test_a_goal_line_appears(app, admin, shop):
    client = sign_in(app)
    plain, _ = change(client, {"q": adhoc(shop)}, GRAPH)
    goal, q = change(client, {"q": adhoc(shop)}, [*GRAPH, ("graph.show_goal", "1"), ("graph.goal_value", "900"),
                                                   ("graph.goal_label", "Target")])
    assert "Target" not in labels(svg(plain)) and "Target" in labels(svg(goal))
    assert 'aria-roledescription="rule mark"' in svg(goal) or "rule" in svg(goal)
    stored = settings_of(q)["visualization_settings"]
    assert stored["graph.show_goal"] is True and stored["graph.goal_value"] == 900
    # The page shows its settings back: the box is ticked, the value filled in.
    assert re.search(r'id="viz-show-goal"[^>]*checked', goal) and 'value="900"' in goal


def bar_boxes(picture: str) -> list[tuple[float, float]]:
    """(x, width) of each drawn bar."""
    return [(float(x), float(w)) for x, w in re.findall(
        r'aria-roledescription="bar"[^>]*d="M([-\d.]+),[-\d.]+h([-\d.]+)', picture)]


def test_stacked_bars_stack(app, admin, shop):
    client = sign_in(app)
    start = {"q": adhoc(shop, dataset_query=by_day_and_region(shop))}
    cols = ("sold_on", "region", "sum")
    fields = [("sections", "graph"), ("graph.x", "sold_on"), ("graph.breakout", "region"), ("graph.metrics", "sum")]
    grouped, _ = change(client, start, [*fields, ("stackable.stack_type", "none")], cols)
    stacked, q = change(client, start, [*fields, ("stackable.stack_type", "stacked")], cols)
    assert settings_of(q)["visualization_settings"]["graph.dimensions"] == ["sold_on", "region"]
    side_by_side, on_top = bar_boxes(svg(grouped)), bar_boxes(svg(stacked))
    assert len(side_by_side) == len(on_top) > 4
    # Stacked, the regions of a week share one x and the band's width; grouped, each has its own.
    weeks = len({x for x, _ in on_top})
    assert 3 <= weeks < len(on_top)
    assert len({x for x, _ in side_by_side}) == len(side_by_side)
    assert min(w for _, w in on_top) > max(w for _, w in side_by_side)


def test_a_log_scale(app, admin, shop):
    client = sign_in(app)
    linear, _ = change(client, {"q": adhoc(shop)}, [*GRAPH, ("graph.y_axis.scale", "linear")])
    log, q = change(client, {"q": adhoc(shop)}, [*GRAPH, ("graph.y_axis.scale", "log")])
    assert settings_of(q)["visualization_settings"]["graph.y_axis.scale"] == "log"
    assert "0" in labels(svg(linear)) and "0" not in labels(svg(log))


def test_axis_titles_and_series_colours(app, admin, shop):
    client = sign_in(app)
    page, _ = change(client, {"q": adhoc(shop)}, [*GRAPH, ("graph.x_axis.title_text", "Where"),
                                                  ("graph.y_axis.title_text", "How much"),
                                                  ("sections", "series"), ("series.key", "sum"),
                                                  ("series.color", "#123456")])
    picture = svg(page)
    assert {"Where", "How much"} <= set(labels(picture))
    assert 'fill="#123456"' in picture


def test_a_columns_currency_format_in_the_table(app, admin, shop):
    client = sign_in(app)
    fields = [("sections", "columns"), ("col.1.kind", "number"), ("col.1.number_style", "currency"),
              ("col.1.currency", "EUR"), ("col.1.decimals", "1")]
    page, q = change(client, {"q": adhoc(shop)}, fields)
    assert settings_of(q)["visualization_settings"]["column_settings"] == {
        '["name","sum"]': {"number_style": "currency", "currency": "EUR", "decimals": 1}}
    table = text(client.get(f"/question/adhoc?q={q}&view=table"))
    amounts = [row[1] for row in cells(table)]
    assert amounts and all(re.fullmatch(r"€[\d,]+\.\d", amount) for amount in amounts), amounts
    # The chart's axis writes them the same way.
    assert any(label.startswith("€") for label in labels(svg(page)))


def test_a_hidden_column_is_absent_and_the_order_is_kept(app, admin, shop):
    client = sign_in(app)
    start = {"q": adhoc(shop, display="table", dataset_query={"database": shop["db"], "type": "query", "query": {
        "source-table": shop["table"], "limit": 5}})}
    cols = ("id", "region", "amount", "sold_on")
    fields = [("sections", "table"), *(("table.column", c) for c in cols),
              *(("table.enabled", c) for c in ("id", "region", "sold_on"))]
    page, q = change(client, start, [*fields, ("move", "1:down")], cols)
    assert settings_of(q)["visualization_settings"]["table.columns"] == [
        {"name": "id", "enabled": True}, {"name": "amount", "enabled": False},
        {"name": "region", "enabled": True}, {"name": "sold_on", "enabled": True}]
    headers = re.findall(r'<th scope="col"[^>]*>\s*<a [^>]*>([^<]*)<', page)
    assert headers == ["ID", "Region", "Sold On"]
    assert all(len(row) == 3 for row in cells(page))


def test_a_conditional_colour_on_a_cell(app, admin, shop):
    client = sign_in(app)
    fields = [("sections", "rules"), ("add_rule", "1"), ("rule.column", "region"), ("rule.type", "single"),
              ("rule.operator", "="), ("rule.value", "West"), ("rule.color", "#ff0000")]
    page, q = change(client, {"q": adhoc(shop, display="table")}, fields)
    rule = settings_of(q)["visualization_settings"]["table.column_formatting"]
    assert rule == [{"type": "single", "columns": ["region"], "operator": "=", "value": "West",
                     "color": "#ff0000", "highlight_row": False}]
    coloured = re.findall(r'<td[^>]*data-cell-color="rgba\(255, 0, 0, 0.65\)"[^>]*>([^<]*)</td>', page)
    assert coloured == ["West"]
    # Removing it takes the colour away.
    again, q = change(client, {"q": q}, [("sections", "rules"), ("remove_rule", "0")])
    assert "data-cell-color=\"rgba" not in again.split('<table class="result">')[1]
    assert "table.column_formatting" not in settings_of(q)["visualization_settings"]


def test_a_saved_question_shows_its_settings_and_a_change_makes_an_adhoc_view(app, admin, shop):
    ok(admin.put(f"/api/card/{shop['by_region']}", json={"visualization_settings": {
        "graph.show_trendline": True, "graph.y_axis.title_text": "Takings"}}))
    client = sign_in(app)
    saved = text(client.get(f"/question/{shop['by_region']}"))
    assert re.search(r'id="viz-trend"[^>]*checked', saved) and 'value="Takings"' in saved
    assert f'name="card" value="{shop["by_region"]}"' in saved
    page, q = change(client, {"card": str(shop["by_region"])}, [*GRAPH, ("graph.show_values", "1"),
                                                                 ("graph.y_axis.title_text", "Takings")])
    question = settings_of(q)
    assert question["original_card_id"] == shop["by_region"] and question["display"] == "bar"
    assert question["visualization_settings"]["graph.show_values"] is True
    assert "graph.show_trendline" not in question["visualization_settings"]   # unticked in the form
    assert "Takings" in labels(svg(page))


def test_bad_settings_are_a_clear_400(app, admin, shop):
    client = sign_in(app)
    for fields, message in (([*GRAPH, ("graph.goal_value", "lots")], "The goal is a number."),
                            ([*GRAPH, ("graph.y_axis.scale", "cubic")], "y axis scale"),
                            ([("sections", "series"), ("series.key", "sum"), ("series.color", "red")], "#rrggbb"),
                            ([("sections", "columns"), ("col.1.kind", "number"), ("col.1.decimals", "99")],
                             "Decimals")):
        answer = client.get("/question/viz?" + urlencode([("q", adhoc(shop)), ("form", "1"),
                                                          *(("cols", c) for c in COLS), *fields]))
        assert answer.status_code == 400 and message in html.unescape(text(answer)), fields
    assert client.get(f"/question/viz?q={adhoc(shop)}&display=nonsense").status_code == 400
    assert client.get("/question/viz?q=bm90IGpzb24").status_code == 400


def test_only_what_was_changed_is_stored(app, admin, shop):
    """The panel shows effective values (the theme's colours, the display's stacking); sent back unchanged
    they are not written as choices, which would stop them following the theme or the display."""
    client = sign_in(app)
    _, q = change(client, {"q": adhoc(shop)}, [*GRAPH, ("stackable.stack_type", "none"),
                                               ("was.stackable.stack_type", "none"), ("sections", "series"),
                                               ("series.key", "sum"), ("series.color", "#509EE3"),
                                               ("series.was", "#509ee3")])
    stored = settings_of(q)["visualization_settings"]
    assert "stackable.stack_type" not in stored and "series_settings" not in stored
    _, q = change(client, {"q": adhoc(shop)}, [*GRAPH, ("stackable.stack_type", "stacked"),
                                               ("was.stackable.stack_type", "none"), ("sections", "series"),
                                               ("series.key", "sum"), ("series.color", "#112233"),
                                               ("series.was", "#509ee3")])
    stored = settings_of(q)["visualization_settings"]
    assert stored["stackable.stack_type"] == "stacked" and stored["series_settings"] == {"sum": {"color": "#112233"}}


def test_a_trend_line_and_value_labels(app, admin, shop):
    client = sign_in(app)
    plain, _ = change(client, {"q": adhoc(shop)}, GRAPH)
    marked, _ = change(client, {"q": adhoc(shop)}, [*GRAPH, ("graph.show_trendline", "1"), ("graph.show_values", "1")])
    assert 'stroke-dasharray="6,4"' not in svg(plain) and 'stroke-dasharray="6,4"' in svg(marked)
    totals = {round(sum(a for _, r, a, _ in test_question_pages.SALES if r == region), 2)
              for region in test_question_pages.REGIONS}
    written = {float(label.replace(",", "")) for label in labels(svg(marked)) if re.fullmatch(r"[\d,]+\.\d+", label)}
    assert totals <= written and not totals & {float(v.replace(",", "")) for v in labels(svg(plain))
                                               if re.fullmatch(r"[\d,]+\.\d+", v)}


def test_a_columns_date_style(app, admin, shop):
    client = sign_in(app)
    start = {"q": adhoc(shop, display="table", dataset_query={"database": shop["db"], "type": "query", "query": {
        "source-table": shop["table"], "order-by": [["asc", ["field", shop["fields"]["id"], None]]], "limit": 3}})}
    cols = ("id", "region", "amount", "sold_on")
    page, q = change(client, start, [("sections", "columns"), ("col.3.kind", "date"),
                                     ("col.3.date_style", "YYYY/M/D")], cols)
    assert [row[3] for row in cells(page)] == [f"2024/1/{day}" for day in (2, 3, 4)]
    assert settings_of(q)["visualization_settings"]["column_settings"] == {'["name","sold_on"]': {"date_style": "YYYY/M/D"}}
