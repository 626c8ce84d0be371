"""What a result can be drawn as (core.charts.sensible) and conditional formatting of table cells
(core.charts.conditional), checked in the drawn SVG."""
from __future__ import annotations

import re

from core.charts import render_card
from core.charts.conditional import cell_colors
from core.charts.sensible import sensible_displays

from .support import COUNT, MONTH, col, result

CATEGORY = col("category", "type/Text", display_name="Category", source="breakout")
TOTAL = col("total", "type/Float", display_name="Total", source="aggregation")
ID = col("id", "type/Integer", semantic_type="type/PK")


def test_one_number_is_a_number_or_a_table():
    shown = sensible_displays([TOTAL], 1)
    assert {"scalar", "gauge", "progress", "table"} <= set(shown)
    assert not {"bar", "line", "pie"} & set(shown)


def test_a_metric_by_a_category_is_a_graph_and_a_pie():
    shown = sensible_displays([CATEGORY, TOTAL], 4)
    assert {"table", "bar", "line", "area", "row", "pie", "funnel", "waterfall", "pivot"} <= set(shown)
    assert "scalar" not in shown and "scatter" not in shown


def test_a_time_series_can_be_a_trend():
    shown = sensible_displays([{**MONTH, "source": "breakout"}, {**COUNT, "source": "aggregation"}], 3)
    assert "smartscalar" in shown and "line" in shown


def test_raw_rows_of_text_are_only_tables():
    shown = sensible_displays([ID, col("name", "type/Text")], 10)
    assert shown == ["table"]
    assert "object" in sensible_displays([ID, col("name", "type/Text")], 1)   # one record


def test_two_numbers_scatter():
    assert "scatter" in sensible_displays([col("a", "type/Float"), col("b", "type/Float")], 5)


ROWS = result([col("name", "type/Text"), col("amount", "type/Float")], [["a", 10], ["b", 50], ["c", 90]])


def colours(settings: dict) -> list[list]:
    return cell_colors(ROWS["data"]["cols"], ROWS["data"]["rows"], settings)


def test_a_single_rule_colours_matching_cells_and_rows():
    rule = {"type": "single", "columns": ["amount"], "operator": ">", "value": 40, "color": "#ff0000"}
    assert colours({"table.column_formatting": [rule]}) == [
        [None, None], [None, "rgba(255, 0, 0, 0.65)"], [None, "rgba(255, 0, 0, 0.65)"]]
    row_rule = {**rule, "highlight_row": True}
    assert colours({"table.column_formatting": [row_rule]})[1] == ["rgba(255, 0, 0, 0.2)"] * 2


def test_a_range_shades_between_the_columns_extremes():
    rule = {"type": "range", "columns": ["amount"], "colors": ["#ffffff", "#000000"]}
    found = [row[1] for row in colours({"table.column_formatting": [rule]})]
    assert found == ["rgba(255, 255, 255, 0.75)", "rgba(128, 128, 128, 0.75)", "rgba(0, 0, 0, 0.75)"]
    custom = {**rule, "min_type": "custom", "min_value": 0, "max_type": "custom", "max_value": 100}
    assert [row[1] for row in colours({"table.column_formatting": [custom]})][0] == "rgba(230, 230, 230, 0.75)"


def test_the_drawn_table_paints_the_cells_a_rule_colours():
    rule = {"type": "single", "columns": ["amount"], "operator": "=", "value": 50, "color": "#00ff00"}
    plain = render_card({"display": "table", "visualization_settings": {}}, ROWS, "svg").decode()
    painted = render_card({"display": "table", "visualization_settings": {"table.column_formatting": [rule]}},
                          ROWS, "svg").decode()
    assert "rgba(0, 255, 0, 0.65)" not in plain
    boxes = re.findall(r'<path aria-label="([^"]*)"[^>]*fill="rgba\(0, 255, 0, 0.65\)"', painted)
    assert len(boxes) == 1 and "y: 48; " in boxes[0]   # the second body row (the header is 0 to 24)
