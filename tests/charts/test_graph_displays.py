"""The pie, scatter/bubble, funnel and waterfall displays and their settings, and every graph display of
a card saved through the API drawn to PNG and PDF by the core renderer."""
from __future__ import annotations

import pytest

from core.charts import chart_spec, render_card
from core.charts.displays.pie import percent
from tests.plugins.cards.fixtures import card_body, native_query

from .graph_data import CHANGES, FUNNEL, POINTS, SLICES, card
from .support import read_png
from .test_graph_settings import marks, svg, texts


def slice_names(**settings) -> list[str]:
    return chart_spec(card("pie", **settings), SLICES)["layer"][0]["encoding"]["color"]["scale"]["domain"]


def test_pie_merges_small_slices_into_other():
    # Of 1000: Thing (1.2%) and Bit (0.8%) are under 2.5%; Doohickey (3%) is not.
    assert slice_names() == ["Widget (50%)", "Gadget (30%)", "Gizmo (15%)", "Doohickey (3%)", "Other (2%)"]
    assert slice_names(**{"pie.slice_threshold": 5}) == ["Widget (50%)", "Gadget (30%)", "Gizmo (15%)", "Other (5%)"]
    assert len(slice_names(**{"pie.slice_threshold": 0})) == 6
    # A single small slice stays itself.
    assert slice_names(**{"pie.slice_threshold": 1})[-2:] == ["Thing (1.2%)", "Bit (0.8%)"]


def test_pie_percentages_total_legend_and_colours():
    shown = texts(svg("pie", SLICES))
    assert "1,000" in shown and "TOTAL" in shown and "Widget (50%)" in shown
    assert "TOTAL" not in texts(svg("pie", SLICES, **{"pie.show_total": False}))
    assert slice_names(**{"pie.percent_visibility": "off"})[:2] == ["Widget", "Gadget"]
    inside = texts(svg("pie", SLICES, **{"pie.percent_visibility": "inside"}))
    assert "50%" in inside and "Widget" in inside
    assert "Widget" not in texts(svg("pie", SLICES, **{"pie.show_legend": False, "pie.percent_visibility": "off"}))
    assert b'fill="#111111"' in svg("pie", SLICES, **{"pie.colors": {"Widget": "#111111"}})
    unsorted = chart_spec(card("pie", **{"pie.sort_rows": False, "pie.slice_threshold": 0}),
                          {"data": {"cols": SLICES["data"]["cols"], "rows": [["Small", 1], ["Big", 9]]}})
    assert unsorted["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["Small (10%)", "Big (90%)"]
    assert percent(1 / 3) == "33.3%" and percent(0.25) == "25%"


def test_pie_dimension_and_metric_settings():
    data = {"data": {"cols": SLICES["data"]["cols"] + [dict(SLICES["data"]["cols"][1], name="other",
                                                             display_name="Other")],
                     "rows": [row + [10] for row in SLICES["data"]["rows"]]}}
    values = chart_spec(card("pie", **{"pie.metric": "other", "pie.dimension": ["CATEGORY"]}), data)["data"]["values"]
    assert [row["value"] for row in values] == [10] * 6


def test_scatter_takes_the_first_two_numbers_and_a_text_breakout():
    spec = chart_spec(card("scatter"), POINTS)
    (points,) = marks(spec, "point")
    assert points["encoding"]["x"]["type"] == "quantitative"
    assert points["encoding"]["color"]["scale"]["domain"] == ["A", "B"]
    assert {(row["x"], row["y"]) for row in spec["data"]["values"]} >= {(20, 0.0), (25, 1300.0)}
    assert "size" not in points["encoding"]
    shown = texts(svg("scatter", POINTS))
    assert "Age" in shown and "Income" in shown


def test_bubble_size_follows_its_column():
    spec = chart_spec(card("scatter", **{"scatter.bubble": "SIZE"}), POINTS)
    (points,) = marks(spec, "point")
    assert points["encoding"]["size"]["field"] == "size"
    assert sorted(row["size"] for row in spec["data"]["values"]) == sorted(1 + (i * 7) % 10 for i in range(8))
    drawn = svg("scatter", POINTS, **{"scatter.bubble": "SIZE"})
    assert drawn != svg("scatter", POINTS)


def test_scatter_with_graph_columns_and_trend():
    spec = chart_spec(card("scatter", **{"graph.dimensions": ["INCOME"], "graph.metrics": ["AGE"],
                                         "graph.show_trendline": True}), POINTS)
    assert {row["x"] for row in spec["data"]["values"]} >= {0.0, 1300.0}
    assert [layer for layer in marks(spec, "line") if layer["mark"].get("strokeDash")]


def test_funnel_steps_share_of_the_first():
    shown = texts(svg("funnel", FUNNEL))
    assert {"Visits", "1,000 (100%)", "400 (40%)", "250 (25%)", "100 (10%)"} <= set(shown)
    reordered = texts(svg("funnel", FUNNEL, **{"funnel.rows": [
        {"key": "Visits", "name": "Sessions", "enabled": True}, {"key": "Trials", "enabled": True},
        {"key": "Signups", "enabled": False}]}))
    assert "Sessions" in reordered and "Signups" not in reordered and "Paid" in reordered
    steps = [row["step"] for row in chart_spec(card("funnel", **{"funnel.rows": [{"key": "Paid"}]}),
                                               FUNNEL)["data"]["values"]]
    assert steps == ["Paid", "Visits", "Signups", "Trials"]


def test_waterfall_running_totals_and_total_bar():
    spec = chart_spec(card("waterfall"), CHANGES)
    assert [(row["x"], row["start"], row["end"], row["kind"]) for row in spec["data"]["values"]] == [
        ("Start", 0, 1000, "increase"), ("Refunds", 1000, 700, "decrease"), ("Upsell", 700, 1200, "increase"),
        ("Churn", 1200, 1000, "decrease"), ("Total", 0, 1000, "total")]
    colours = svg("waterfall", CHANGES, **{"waterfall.increase_color": "#00AA00",
                                           "waterfall.decrease_color": "#AA0000", "waterfall.total_color": "#0000AA"})
    assert all(colour in colours for colour in (b'fill="#00AA00"', b'fill="#AA0000"', b'fill="#0000AA"'))
    assert "Total" not in texts(svg("waterfall", CHANGES, **{"waterfall.show_total": False}))
    assert "-300" in texts(svg("waterfall", CHANGES, **{"graph.show_values": True}))


SAVED = ("bar", "line", "area", "row", "combo", "pie", "scatter", "funnel", "waterfall")


@pytest.mark.parametrize("display", SAVED)
def test_a_card_saved_through_the_api_renders_to_png_and_pdf(admin, warehouse, display):
    query = native_query(warehouse["db"], "SELECT first_name, age FROM people ORDER BY id")
    saved = admin.post("/api/card", json=card_body(display.title(), query, display=display,
                                                   visualization_settings={"graph.show_values": True})).json
    data = admin.post(f"/api/card/{saved['id']}/query").json
    stored = admin.get(f"/api/card/{saved['id']}").json
    png = render_card(stored, data, "png", width=360, height=240)
    assert read_png(png)[:2] == (360, 240)
    assert render_card(stored, data, "pdf").startswith(b"%PDF-")
    # Drawn as its display, not as the table fallback.
    assert chart_spec(stored, data) != chart_spec({**stored, "display": "table"}, data)


def test_funnel_as_bars():
    spec = chart_spec(card("funnel", **{"funnel.type": "bar"}), FUNNEL)
    (bar,) = marks(spec, "bar")
    assert bar["encoding"]["x"]["scale"]["domain"] == ["Visits", "Signups", "Trials", "Paid"]
    assert [row["y"] for row in spec["data"]["values"]] == [1000, 400, 250, 100]
