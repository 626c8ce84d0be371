"""One test per visualization setting the bar/line/area/row/combo displays honour, drawn for real:
what the SVG shows (its text, its colours) or, where a picture cannot say it, the spec's encoding."""
from __future__ import annotations

import re

import pytest

from core.charts import chart_spec, render_card
from core.charts.displays.overlays import least_squares

from .graph_data import BY_CATEGORY, BY_MONTH, CATEGORY, COUNT, MONTH, TWO_METRICS, card
from .support import col, result

CURRENCY = {'["name","count"]': {"number_style": "currency", "currency": "USD"}}


def texts(svg: bytes) -> list[str]:
    """The words an SVG shows."""
    return [t.replace("&amp;", "&") for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg.decode())]


def svg(display: str, data: dict, **settings) -> bytes:
    return render_card(card(display, **settings), data, "svg", width=480, height=300)


def layers(spec: dict) -> list[dict]:
    """Every layer of a spec, nested ones included."""
    found = []
    for layer in spec.get("layer", []):
        found.extend(layers(layer) if "layer" in layer else [layer])
    return found


def marks(spec: dict, kind: str) -> list[dict]:
    return [layer for layer in layers(spec) if isinstance(layer.get("mark"), dict) and layer["mark"]["type"] == kind]


def test_default_columns_put_the_date_on_x_and_the_other_dimension_in_series():
    swapped = result([CATEGORY, MONTH, COUNT], [[row[1], row[0], row[2]] for row in BY_CATEGORY["data"]["rows"]])
    shown = texts(svg("bar", swapped))
    assert {"January, 2024", "April, 2024", "Gadget", "Widget", "Gizmo", "Created At", "Count"} <= set(shown)
    (bar,) = marks(chart_spec(card("bar"), swapped), "bar")
    assert bar["encoding"]["color"]["scale"]["domain"] == ["Gadget", "Widget", "Gizmo"]


def test_graph_dimensions_and_metrics_choose_the_columns():
    spec = chart_spec(card("line", **{"graph.dimensions": ["CREATED_AT"], "graph.metrics": ["sum"]}), TWO_METRICS)
    assert [row["y"] for row in spec["data"]["values"]] == [2400.5, 3100.0, 1800.0, 4000.25]
    assert "Sum of Total" in texts(svg("line", TWO_METRICS, **{"graph.metrics": ["sum"]}))
    # Columns that do not exist are ignored for Metabase's defaults, not an error.
    fallback = chart_spec(card("line", **{"graph.metrics": ["gone"]}), BY_MONTH)
    assert [row["y"] for row in fallback["data"]["values"]] == [120, 150, 90, 180]


def test_several_metrics_are_series_named_after_their_columns():
    shown = texts(svg("line", TWO_METRICS))
    assert "Count" in shown and "Sum of Total" in shown


def test_series_settings_colour_title_and_display():
    settings = {"series_settings": {"count": {"color": "#123456", "title": "Orders", "display": "bar"},
                                    "sum": {"display": "line", "color": "#654321"}}}
    drawn = svg("combo", TWO_METRICS, **settings)
    assert b'fill="#123456"' in drawn and b'stroke="#654321"' in drawn and "Orders" in texts(drawn)
    spec = chart_spec(card("combo", **settings), TWO_METRICS)
    assert [layer["transform"][0]["filter"]["oneOf"] for layer in marks(spec, "bar")] == [["Orders"]]
    assert [layer["transform"][0]["filter"]["oneOf"] for layer in marks(spec, "line")] == [["Sum of Total"]]
    # A breakout's series are keyed by their value.
    assert b'fill="#ABCDEF"' in svg("bar", BY_CATEGORY, series_settings={"Widget": {"color": "#ABCDEF"}})


def test_combo_defaults_to_a_line_then_bars():
    spec = chart_spec(card("combo"), TWO_METRICS)
    assert [layer["transform"][0]["filter"]["oneOf"] for layer in marks(spec, "line")] == [["Count"]]
    assert [layer["transform"][0]["filter"]["oneOf"] for layer in marks(spec, "bar")] == [["Sum of Total"]]


def test_metrics_of_different_sizes_get_a_second_axis_unless_told_not_to():
    split = chart_spec(card("line"), TWO_METRICS)
    assert split["resolve"] == {"scale": {"y": "independent"}}
    assert [line["encoding"]["y"]["axis"].get("orient") for line in marks(split, "line")] == [None, "right"]
    assert "resolve" not in chart_spec(card("line", **{"graph.y_axis.auto_split": False}), TWO_METRICS)
    close = result([MONTH, COUNT, col("other", source="aggregation")], [[m, 10, 20] for m in ("2024-01-01",)])
    assert "resolve" not in chart_spec(card("line"), close)


def test_axis_titles_and_their_visibility():
    shown = texts(svg("bar", BY_MONTH, **{"graph.x_axis.title_text": "Month", "graph.y_axis.title_text": "Orders"}))
    assert "Month" in shown and "Orders" in shown and "Created At" not in shown
    hidden = texts(svg("bar", BY_MONTH, **{"graph.x_axis.labels_enabled": False, "graph.y_axis.labels_enabled": False}))
    assert "Created At" not in hidden and "Count" not in hidden and "January, 2024" in hidden
    no_axis = texts(svg("bar", BY_MONTH, **{"graph.x_axis.axis_enabled": False, "graph.y_axis.axis_enabled": False}))
    assert "January, 2024" not in no_axis and "100" not in no_axis
    rotated = chart_spec(card("bar", **{"graph.x_axis.axis_enabled": "rotate-90"}), BY_MONTH)
    assert marks(rotated, "bar")[0]["encoding"]["x"]["axis"]["labelAngle"] == -90


@pytest.mark.parametrize("display, settings, kind, scale_type", [
    ("line", {}, "temporal", "utc"),
    ("line", {"graph.x_axis.scale": "timeseries"}, "temporal", "utc"),
    ("line", {"graph.x_axis.scale": "ordinal"}, "ordinal", None),
    ("bar", {}, "ordinal", "band"),
])
def test_x_axis_scale_of_dates(display, settings, kind, scale_type):
    spec = chart_spec(card(display, **settings), BY_MONTH)
    x = layers(spec)[0]["encoding"]["x"]
    assert (x["type"], x["scale"].get("type")) == (kind, scale_type)


@pytest.mark.parametrize("setting, scale_type", [(None, None), ("linear", None), ("log", "log"), ("pow", "pow")])
def test_x_axis_scale_of_numbers(setting, scale_type):
    numbers = result([col("SIZE", source="breakout"), COUNT], [[1, 5], [10, 7], [100, 9]])
    x = layers(chart_spec(card("line", **{"graph.x_axis.scale": setting}), numbers))[0]["encoding"]["x"]
    assert x["type"] == "quantitative" and x["scale"].get("type") == scale_type
    assert [row["x"] for row in chart_spec(card("line"), numbers)["data"]["values"]] == [1, 10, 100]


@pytest.mark.parametrize("setting", ["log", "pow"])
def test_y_axis_scale(setting):
    y = layers(chart_spec(card("line", **{"graph.y_axis.scale": setting}), BY_MONTH))[0]["encoding"]["y"]
    assert y["scale"]["type"] == setting


def test_y_axis_manual_range():
    shown = texts(svg("line", BY_MONTH, **{"graph.y_axis.auto_range": False, "graph.y_axis.min": 0,
                                            "graph.y_axis.max": 500}))
    assert "500" in shown


def test_goal_line_is_drawn_and_labelled():
    with_goal = svg("line", BY_MONTH, **{"graph.show_goal": True, "graph.goal_value": 1000, "graph.goal_label": "Target"})
    assert "Target" in texts(with_goal) and "1,000" in texts(with_goal)  # the axis reaches the goal
    without = svg("line", BY_MONTH, **{"graph.goal_value": 1000, "graph.goal_label": "Target"})
    assert "Target" not in texts(without) and "1,000" not in texts(without)
    assert "Goal" in texts(svg("bar", BY_MONTH, **{"graph.show_goal": True, "graph.goal_value": 100}))


def test_trend_line_is_the_least_squares_line():
    assert least_squares([(0, 1), (1, 3), (2, 5)]) == (1.0, 2.0)
    assert least_squares([(1, 1)]) is None
    spec = chart_spec(card("bar", **{"graph.show_trendline": True}), BY_MONTH)
    (trend,) = [layer for layer in marks(spec, "line") if layer["mark"].get("strokeDash")]
    # Counts 120, 150, 90, 180 on bands 0..3: y = 117 + 12 x.
    assert [(row["x"], row["y"]) for row in trend["data"]["values"]] == [("January, 2024", 117), ("April, 2024", 153)]
    assert b'stroke-dasharray="6,4"' in svg("line", BY_MONTH, **{"graph.show_trendline": True})
    assert b'stroke-dasharray="6,4"' not in svg("line", BY_MONTH)


def test_data_labels():
    assert "2,400.5" in texts(svg("line", TWO_METRICS, **{"graph.show_values": True}))
    assert "2,400.5" not in texts(svg("line", TWO_METRICS))
    # Stacked bars are labelled with their totals: January is 10 + 20 + 5.
    stacked = texts(svg("bar", BY_CATEGORY, **{"stackable.stack_type": "stacked", "graph.show_values": True}))
    assert "35" in stacked and "71" in stacked
    big = result([MONTH, COUNT], [["2024-01-01T00:00:00", 1234567]])
    assert "1.2M" in texts(svg("bar", big, **{"graph.show_values": True}))
    assert "1,234,567" in texts(svg("bar", big, **{"graph.show_values": True, "graph.label_value_formatting": "full"}))


def test_number_formatting_from_column_settings():
    shown = texts(svg("bar", BY_MONTH, column_settings=CURRENCY, **{"graph.show_values": True}))
    assert "$150.00" in shown and any(text.startswith("$") and text != "$150.00" for text in shown)


def test_stacking():
    def stack_of(display, **settings):
        return [layer["encoding"]["y"]["stack"] for layer in marks(chart_spec(card(display, **settings), BY_CATEGORY),
                                                                      display)]
    assert stack_of("bar") == [None]
    assert stack_of("bar", **{"stackable.stack_type": "stacked"}) == ["zero"]
    assert stack_of("bar", **{"stackable.stack_type": "normalized"}) == ["normalize"]
    assert stack_of("area") == ["zero"]          # Metabase stacks an area of several series by default
    assert stack_of("area", **{"stackable.stack_type": None}) == [None]
    assert "100%" in texts(svg("bar", BY_CATEGORY, **{"stackable.stack_type": "normalized"}))
    # Unstacked bars of several series stand side by side.
    assert marks(chart_spec(card("bar"), BY_CATEGORY), "bar")[0]["encoding"]["xOffset"]["field"] == "series"


def test_row_chart_is_horizontal():
    spec = chart_spec(card("row", **{"graph.show_goal": True, "graph.goal_value": 20}), BY_MONTH)
    (bar,) = marks(spec, "bar")
    assert (bar["encoding"]["y"]["type"], bar["encoding"]["x"]["type"]) == ("ordinal", "quantitative")
    assert marks(spec, "rule")[0]["encoding"] == {"x": {"datum": 20, "type": "quantitative"}}


def test_line_style_from_series_settings():
    spec = chart_spec(card("line", series_settings={"count": {"line.style": "dashed", "line.interpolate": "step-after",
                                                                "line.marker_enabled": False}}), BY_MONTH)
    (line,) = marks(spec, "line")
    assert line["mark"]["strokeDash"] == [6, 4] and line["mark"]["interpolate"] == "step-after"
    assert "point" not in line["mark"]


def test_dark_theme_labels_use_the_theme_text_colour():
    drawn = render_card(card("bar", **{"graph.show_values": True}), BY_MONTH, "svg", theme="dark")
    assert b'fill="#E8EAED"' in drawn


def test_extraction_units_are_named_bands_in_order():
    weekday = col("DOW", unit="day-of-week", source="breakout")
    spec = chart_spec(card("line"), result([weekday, COUNT], [[3, 5], [1, 7], [2, 9]]))
    x = layers(spec)[0]["encoding"]["x"]
    assert x["type"] == "ordinal" and x["scale"]["domain"] == ["Sunday", "Monday", "Tuesday"]


def test_data_labels_that_cannot_fit_are_left_out_unless_all_are_asked_for():
    many = result([MONTH, COUNT], [[f"2024-01-{d:02d}T00:00:00", 1000 + d] for d in range(1, 31)])
    assert "1,015" not in texts(svg("line", many, **{"graph.show_values": True}))
    assert "1,015" in texts(svg("line", many, **{"graph.show_values": True, "graph.label_value_frequency": "all"}))


def test_series_order_reorders_and_hides_breakout_series():
    order = [{"key": "Gizmo", "enabled": True}, {"key": "Gadget", "enabled": False}]
    (bar,) = marks(chart_spec(card("bar", **{"graph.series_order": order}), BY_CATEGORY), "bar")
    assert bar["encoding"]["color"]["scale"]["domain"] == ["Gizmo", "Widget"]
    assert "Gadget" not in texts(svg("bar", BY_CATEGORY, **{"graph.series_order": order}))


def test_a_crowded_category_axis_offers_only_labels_that_can_show():
    # Vega measures every label it is given before dropping the overlapping ones (365 bars took seconds):
    # it is given every k-th of them, the first one included, and draws no other.
    many = result([CATEGORY, COUNT], [[f"product {n:03}", n] for n in range(365)])
    axis = marks(chart_spec(card("bar"), many, width=480, height=300), "bar")[0]["encoding"]["x"]["axis"]
    offered = axis["values"]
    step = int(offered[1].split()[1])
    assert 2 <= len(offered) <= 25 and step > 1
    assert offered == [f"product {n:03}" for n in range(0, 365, step)]
    shown = texts(svg("bar", many))
    assert offered[1] in shown and "product 001" not in shown
    # A few categories keep every label.
    assert "values" not in marks(chart_spec(card("bar"), BY_CATEGORY), "bar")[0]["encoding"]["x"]["axis"]
