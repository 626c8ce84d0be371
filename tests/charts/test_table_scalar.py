"""The table family (table, pivot, object, unknown displays) and the single-number displays (scalar,
smartscalar, progress, gauge): a golden SVG each over a small fixed result, and a test per setting."""
from __future__ import annotations

import re

import pytest

from core.charts import render_card

from .support import COUNT, MONTH, MONTHLY, check_golden, col, result

CATEGORY = col("category", "type/Text", display_name="Category")
PRICE = col("price", "type/Float", display_name="Price")
PRODUCTS = result([CATEGORY, PRICE, MONTH], [["Gizmo", 12.5, "2024-01-01T00:00:00"],
                                             ["Widget", 1234.125, "2024-02-01T00:00:00"],
                                             ["Gadget", None, "2024-03-01T00:00:00"]], row_count=3)
MONEY = {"column_settings": {'["name","price"]': {"number_style": "currency", "currency": "USD"}}}
GROUPING = col("pivot-grouping", display_name="pivot-grouping")


def texts(svg: bytes) -> list[str]:
    return [t.decode() for t in re.findall(rb">([^<>]+)</text>", svg)]


def x_of(svg: bytes, text: str) -> float:
    """The x position of the text mark reading `text` (the first one)."""
    found = re.search(rb'translate\(([-\d.]+),[-\d.]+\)"[^>]*>' + re.escape(text.encode()) + rb"</text>", svg)
    assert found, f"{text!r} is not drawn"
    return float(found.group(1))


def svg(display: str, data: dict, settings: dict | None = None, **kw) -> bytes:
    return render_card({"display": display, "visualization_settings": settings or {}}, data, "svg", **kw)


GOLDEN_CASES = {
    "table": ("table", PRODUCTS, MONEY, {}),
    "table-dark": ("table", PRODUCTS, MONEY, {"theme": "dark"}),
    "table-truncated": ("table", result([CATEGORY, COUNT], [[f"Row {i}", i] for i in range(40)], 120), {},
                        {"height": 200}),
    "pivot": ("pivot", result([CATEGORY, COUNT, GROUPING], [["Gizmo", 3, 0], ["Widget", 4, 0], [None, 7, 1]]), {}, {}),
    "object": ("object", PRODUCTS, MONEY, {}),
    "unknown-display": ("hologram", PRODUCTS, {}, {}),
    "scalar": ("scalar", MONTHLY, {}, {}),
    "scalar-dark": ("scalar", MONTHLY, {}, {"theme": "dark"}),
    "smartscalar": ("smartscalar", MONTHLY, {}, {}),
    "progress": ("progress", MONTHLY, {"progress.goal": 200}, {}),
    "gauge": ("gauge", MONTHLY, {"gauge.segments": [{"min": 0, "max": 100, "color": "#ED6E6E", "label": "Low"},
                                                    {"min": 100, "max": 300, "color": "#84BB4C", "label": "Ok"}]}, {}),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_svg(name):
    display, data, settings, options = GOLDEN_CASES[name]
    check_golden(name, svg(display, data, settings, **options))


def test_table_formats_cells_and_counts_rows():
    drawn = svg("table", PRODUCTS, MONEY)
    words = texts(drawn)
    assert x_of(drawn, "Category") < x_of(drawn, "Price") < x_of(drawn, "Created At")
    assert "$1,234.13" in words and "$12.50" in words and "January, 2024" in words
    assert "Showing 3 rows" in words
    many = texts(svg("table", result([CATEGORY, COUNT], [[f"Row {i}", i] for i in range(40)], 120), height=200))
    assert "Showing first 6 of 120 rows" in many and "Row 5" in many and "Row 6" not in many


def test_table_columns_setting_orders_and_hides():
    settings = {"table.columns": [{"name": "price", "enabled": True}, {"name": "category", "enabled": False},
                                  {"name": "CREATED_AT", "enabled": True}]}
    drawn = svg("table", PRODUCTS, settings)
    assert "Category" not in texts(drawn) and "Gizmo" not in texts(drawn)
    assert x_of(drawn, "Price") < x_of(drawn, "Created At")
    reordered = svg("table", PRODUCTS, {"table.columns": [{"name": "CREATED_AT"}, {"name": "price"}]})
    assert x_of(reordered, "Created At") < x_of(reordered, "Price")


def test_narrow_table_says_which_columns_it_left_out():
    assert any("2 more columns not shown" in w for w in texts(svg("table", PRODUCTS, width=90)))


def test_pivot_hides_its_grouping_column_and_object_lists_fields():
    words = texts(svg("pivot", GOLDEN_CASES["pivot"][1]))
    assert "pivot-grouping" not in words and "Category" in words
    words = texts(svg("object", PRODUCTS, MONEY))
    assert words[:2] == ["Field", "Value"] or {"Field", "Value"} <= set(words)
    assert {"Category", "Gizmo", "Price", "$12.50"} <= set(words)


def test_scalar_field_and_compact_setting():
    two = result([col("a"), col("b")], [[1234567, 7]])
    assert "7" in texts(svg("scalar", two))  # the last numeric column by default
    assert "1,234,567" in texts(svg("scalar", two, {"scalar.field": "a"}))
    assert "1.2M" in texts(svg("scalar", two, {"scalar.field": "a", "scalar.compact_primary_number": True}))
    assert "1.2M" in texts(svg("scalar", two, {"scalar.field": "a"}, width=90))  # too wide: compacted


def test_smartscalar_change_and_switch_positive_negative():
    words = texts(svg("smartscalar", MONTHLY))
    assert "90" in words and "↓ 40%" in words and "vs. previous month: 150" in words and "March, 2024" in words
    down = svg("smartscalar", MONTHLY)
    switched = svg("smartscalar", MONTHLY, {"scalar.switch_positive_negative": True})
    assert b'fill="#ED6E6E"' in down and b'fill="#84BB4C"' in switched
    single = texts(svg("smartscalar", result([MONTH, COUNT], [["2024-01-01T00:00:00", 5]])))
    assert "No data for the previous month" in single


def test_progress_goal_and_colour():
    words = texts(svg("progress", MONTHLY, {"progress.goal": 100}))
    assert "120" in words and "Goal exceeded 100" in words
    assert "Goal 500" in texts(svg("progress", MONTHLY, {"progress.goal": 500}))
    assert b"#123456" in svg("progress", MONTHLY, {"progress.goal": 500, "progress.color": "#123456"})


def test_gauge_segments_and_default_range():
    drawn = svg("gauge", MONTHLY, GOLDEN_CASES["gauge"][2])
    assert b"#ED6E6E" in drawn and b"#84BB4C" in drawn and "300" in texts(drawn)
    assert {"Low", "Ok"} <= set(texts(drawn))
    assert "200" in texts(svg("gauge", MONTHLY))  # 120 * 1.5 rounded up to a nice 200
