"""Golden SVGs of the graph displays (bar, line, area, row, combo, stacked, pie, scatter/bubble, funnel,
waterfall) over small fixed results, and every one of them drawn to PNG and PDF, with no rows and with
nulls, without error."""
from __future__ import annotations

import pytest

from core.charts import render_card

from .graph_data import BY_CATEGORY, CHANGES, COUNT, FUNNEL, MONTH, POINTS, SLICES, TWO_METRICS, card
from .support import check_golden, colours, read_png, result

GOLDEN_CARDS = {
    "bar": (card("bar"), BY_CATEGORY),
    "line": (card("line", **{"graph.show_values": True}), TWO_METRICS),
    "area": (card("area"), BY_CATEGORY),
    "row": (card("row", **{"graph.dimensions": ["CATEGORY"], "graph.metrics": ["count"]}),
            result(SLICES["data"]["cols"], SLICES["data"]["rows"][:4])),
    "combo": (card("combo", **{"graph.show_goal": True, "graph.goal_value": 160, "graph.goal_label": "Target"}),
              TWO_METRICS),
    "bar_stacked": (card("bar", **{"stackable.stack_type": "stacked", "graph.show_values": True}), BY_CATEGORY),
    "area_normalized": (card("area", **{"stackable.stack_type": "normalized"}), BY_CATEGORY),
    "line_trend": (card("line", **{"graph.show_trendline": True, "graph.dimensions": ["CREATED_AT"],
                                   "graph.metrics": ["count"]}), TWO_METRICS),
    "pie": (card("pie"), SLICES),
    "scatter": (card("scatter"), POINTS),
    "bubble": (card("scatter", **{"scatter.bubble": "SIZE"}), POINTS),
    "funnel": (card("funnel"), FUNNEL),
    "waterfall": (card("waterfall", **{"graph.show_values": True}), CHANGES),
}
DISPLAYS = ("bar", "line", "area", "row", "combo", "pie", "scatter", "funnel", "waterfall")


@pytest.mark.parametrize("name", sorted(GOLDEN_CARDS))
def test_golden_svg(name):
    the_card, data = GOLDEN_CARDS[name]
    svg = render_card(the_card, data, "svg", width=480, height=300)
    check_golden(f"graph_{name}", svg)
    assert render_card(the_card, data, "svg", width=480, height=300) == svg


@pytest.mark.parametrize("name", ["bar", "line", "pie", "waterfall"])
def test_png_and_pdf(name):
    the_card, data = GOLDEN_CARDS[name]
    png = render_card(the_card, data, "png", width=400, height=250)
    assert read_png(png)[:2] == (400, 250)
    # Series colours, text and background: a chart, not a blank page.
    assert len(colours(png)) > 10
    assert render_card(the_card, data, "pdf", width=400, height=250).startswith(b"%PDF-")


@pytest.mark.parametrize("display", DISPLAYS)
def test_no_rows_draws_the_no_results_message(display):
    svg = render_card(card(display), result([MONTH, COUNT], []), "svg", width=300, height=200)
    assert b"No results" in svg
    png = render_card(card(display), result([MONTH, COUNT], []), "png", width=300, height=200)
    assert read_png(png)[:2] == (300, 200)


@pytest.mark.parametrize("display", DISPLAYS)
def test_null_values_are_gaps_not_errors(display):
    rows = [["2024-01-01T00:00:00", 5], [None, 7], ["2024-02-01T00:00:00", None], ["2024-03-01T00:00:00", 9]]
    svg = render_card(card(display), result([MONTH, COUNT], rows), "svg", width=300, height=200)
    assert svg.startswith(b"<svg") and b"No results" not in svg


@pytest.mark.parametrize("display", DISPLAYS)
def test_results_without_a_number_fall_back_to_the_table(display):
    text_only = result([col_text("A"), col_text("B")], [["x", "y"], ["z", "w"]])
    assert render_card(card(display), text_only, "svg") == render_card(card("table"), text_only, "svg")


def col_text(name: str) -> dict:
    return {"name": name, "display_name": name, "base_type": "type/Text", "effective_type": "type/Text"}
