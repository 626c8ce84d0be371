"""Several cards drawn as one chart (a dashcard's series, core.charts.combine through chart_spec and
render_card's `series`): each card a series named by the card, on the main card's axes and display."""
from __future__ import annotations

from core.charts import chart_spec, render_card

from .graph_data import BY_CATEGORY, BY_MONTH, MONTH, SLICES, TWO_METRICS, card
from .support import col, result
from .test_graph_settings import marks, texts

RETURNS_COL = col("returned", "type/Integer", display_name="Returned", source="aggregation")
# Returns by month, under its own column name: 7, 9, 4 (no row for April).
RETURNS = result([dict(MONTH, name="RETURNED_AT", display_name="Returned At"), RETURNS_COL],
                 [["2024-01-01T00:00:00", 7], ["2024-02-01T00:00:00", 9], ["2024-03-01T00:00:00", 4]])


def named(name: str, display: str, **settings) -> dict:
    return {**card(display, **settings), "name": name}


def by_series(spec: dict) -> dict[str, list]:
    found: dict[str, list] = {}
    for row in spec["data"]["values"]:
        found.setdefault(row["series"], []).append((row["x"][:7], row["y"]))
    return found


def test_two_line_cards_make_one_chart_with_a_series_per_card():
    spec = chart_spec(named("Orders", "line"), BY_MONTH, series=[(named("Returns", "line"), RETURNS)])
    assert by_series(spec) == {
        "Orders": [("2024-01", 120), ("2024-02", 150), ("2024-03", 90), ("2024-04", 180)],
        "Returns": [("2024-01", 7), ("2024-02", 9), ("2024-03", 4)]}
    (lines,) = marks(spec, "line")
    assert lines["encoding"]["x"]["type"] == "temporal"
    assert lines["encoding"]["color"]["scale"]["domain"] == ["Orders", "Returns"]
    # The main card's axis titles; a legend naming both cards.
    shown = texts(render_card(named("Orders", "line"), BY_MONTH, "svg", series=[(named("Returns", "line"), RETURNS)]))
    assert {"Orders", "Returns", "Created At", "Count"} <= set(shown)


def test_a_card_of_several_series_names_each_after_the_card():
    spec = chart_spec(named("Orders", "line"), BY_MONTH, series=[(named("Sales", "line"), TWO_METRICS),
                                                                (named("Mix", "line"), BY_CATEGORY)])
    assert list(by_series(spec)) == ["Orders", "Sales: Count", "Sales: Sum of Total", "Mix: Gadget",
                                     "Mix: Widget", "Mix: Gizmo"]
    assert by_series(spec)["Sales: Sum of Total"][3] == ("2024-04", 4000.25)


def test_the_main_cards_display_and_settings_decide_the_chart():
    # A bar main card: the cards' bars side by side; a line card on it is drawn as a line (its display is
    # its series' default, as in Metabase).
    bars = chart_spec(named("Orders", "bar"), BY_MONTH, series=[(named("Returns", "bar"), RETURNS)])
    (bar,) = marks(bars, "bar")
    assert bar["encoding"]["xOffset"]["scale"]["domain"] == ["Orders", "Returns"]
    mixed = chart_spec(named("Orders", "bar"), BY_MONTH, series=[(named("Returns", "line"), RETURNS)])
    assert marks(mixed, "bar") and marks(mixed, "line")
    # The main card's series_settings name a series by its card; a stacked area stacks both cards.
    coloured = chart_spec(named("Orders", "line", series_settings={"Returns": {"color": "#123456",
                                                                                "title": "Back"}}),
                          BY_MONTH, series=[(named("Returns", "line"), RETURNS)])
    (line,) = marks(coloured, "line")
    assert line["encoding"]["color"]["scale"] == {"domain": ["Orders", "Back"],
                                                  "range": [line["encoding"]["color"]["scale"]["range"][0], "#123456"]}
    area = chart_spec(named("Orders", "area"), BY_MONTH, series=[(named("Returns", "area"), RETURNS)])
    (areas,) = marks(area, "area")
    assert areas["encoding"]["y"]["stack"] == "zero"


def test_displays_that_combine_nothing_draw_the_main_card_alone():
    pie = chart_spec(named("Share", "pie"), SLICES, series=[(named("Returns", "line"), RETURNS)])
    assert chart_spec(named("Share", "pie"), SLICES) == pie
    # A series card with nothing to plot is left out; the main card is drawn.
    empty = result([col("NAME", "type/Text")], [["a"]])
    spec = chart_spec(named("Orders", "line"), BY_MONTH, series=[(named("Names", "table"), empty)])
    assert list(by_series(spec)) == ["Orders"]
