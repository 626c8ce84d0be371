"""Several cards drawn as one chart (a dashcard's series, core.charts.combine through chart_spec and
render_card's `series`): each card a series named by the card, on the main card's axes and display."""
from __future__ import annotations

from core.charts import chart_spec, render_card

from .graph_data import BY_CATEGORY, BY_MONTH, MONTH, SLICES, TWO_METRICS, card
from .support import col, result
from .test_graph_settings import marks, texts

RETURNS_COL = col("returned", "type/Integer", display_name="Returned", source="aggregation")
RETURNED_AT = dict(MONTH, name="RETURNED_AT", display_name="Returned At")
# Returns by month, under its own column name: 70, 90, 40 (no row for April), the size of the orders.
RETURNS = result([RETURNED_AT, RETURNS_COL],
                 [["2024-01-01T00:00:00", 70], ["2024-02-01T00:00:00", 90], ["2024-03-01T00:00:00", 40]])
# The same months' refunds, a hundred times smaller than the orders: 0.25, 1.5, 0.75.
REFUNDS = result([RETURNED_AT, col("refunded", "type/Float", display_name="Refunded", source="aggregation")],
                 [["2024-01-01T00:00:00", 0.25], ["2024-02-01T00:00:00", 1.5], ["2024-03-01T00:00:00", 0.75]])


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
        "Returns": [("2024-01", 70), ("2024-02", 90), ("2024-03", 40)]}
    (lines,) = marks(spec, "line")
    assert lines["encoding"]["x"]["type"] == "temporal"
    assert lines["encoding"]["color"]["scale"]["domain"] == ["Orders", "Returns"]
    assert "resolve" not in spec  # alike sizes share one y axis
    # The main card's x axis title; a legend naming both cards.
    shown = texts(render_card(named("Orders", "line"), BY_MONTH, "svg", series=[(named("Returns", "line"), RETURNS)]))
    assert {"Orders", "Returns", "Created At"} <= set(shown)


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


def test_each_series_keeps_its_own_cards_number_format():
    refunds = named("Refunds", "line", column_settings={'["name","refunded"]': {
        "number_style": "currency", "currency": "EUR", "currency_style": "symbol", "decimals": 2}})
    orders = named("Orders", "line", **{"graph.show_values": True, "graph.label_value_frequency": "all",
                                        "graph.y_axis.auto_split": False})
    shown = texts(render_card(orders, BY_MONTH, "svg", width=640, height=360, series=[(refunds, REFUNDS)]))
    # The refunds' labels in euros with two decimals, the orders' counts as plain numbers.
    assert {"€0.25", "€1.50", "€0.75", "120", "150", "90", "180"} <= set(shown)
    assert "0.25" not in shown and "€120.00" not in shown


def test_series_of_very_different_sizes_get_a_second_y_axis():
    orders = named("Orders", "line")
    spec = chart_spec(orders, BY_MONTH, series=[(named("Refunds", "line"), REFUNDS)])
    assert spec["resolve"] == {"scale": {"y": "independent"}}
    left, right = ([layer for layer in side["layer"] if layer["mark"]["type"] == "line"] for side in spec["layer"])
    assert left[0]["encoding"]["y"]["axis"]["title"] == "Count"
    assert right[0]["encoding"]["y"]["axis"]["orient"] == "right"
    assert right[0]["encoding"]["y"]["axis"]["title"] == "Refunded"
    drawn = render_card(orders, BY_MONTH, "svg", width=640, height=360, series=[(named("Refunds", "line"), REFUNDS)])
    shown = texts(drawn)
    assert {"Count", "Refunded", "Orders", "Refunds"} <= set(shown)
    # The right axis' ticks are the refunds' scale (fractions up to 1.6), the left's the orders' (up to 180).
    assert {"0.2", "0.8", "1.4"} <= set(shown) and any(t in shown for t in ("150", "180", "200"))
    # graph.y_axis.auto_split off: one axis for both, as Metabase.
    one = chart_spec(named("Orders", "line", **{"graph.y_axis.auto_split": False}), BY_MONTH,
                     series=[(named("Refunds", "line"), REFUNDS)])
    assert "resolve" not in one
