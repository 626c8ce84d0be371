"""core.charts.render: formats, sizes, retina scale, themes, determinism, the table fallback and the
registry's rules, through vl-convert for real."""
from __future__ import annotations

import pytest

from core.charts import chart_spec, render_card
from core.charts.registry import DISPLAYS, display
from core.charts.render import chart_input, json_cell

from .support import COUNT, MONTH, MONTHLY, col, colours, png_size, read_png, result

SCALAR = {"display": "scalar", "visualization_settings": {}}


def test_png_has_the_asked_size_and_is_not_blank():
    png = render_card(SCALAR, MONTHLY, "png", width=300, height=200)
    width, height, _ = read_png(png)
    assert (width, height) == (300, 200)
    assert len(colours(png)) > 3  # background, text and its anti-aliasing at least


def test_retina_scale_doubles_the_pixels():
    width, height, _ = read_png(render_card(SCALAR, MONTHLY, "png", width=300, height=200, scale=2))
    assert (width, height) == (600, 400)


def test_pdf_and_svg():
    assert render_card(SCALAR, MONTHLY, "pdf").startswith(b"%PDF-")
    svg = render_card(SCALAR, MONTHLY, "svg", width=320, height=180)
    assert svg.startswith(b"<svg") and b'width="320"' in svg and b'height="180"' in svg
    with pytest.raises(ValueError, match="Unknown chart format"):
        render_card(SCALAR, MONTHLY, "gif")


def test_same_card_same_data_same_bytes():
    for fmt in ("svg", "png"):
        assert render_card(SCALAR, MONTHLY, fmt) == render_card(SCALAR, MONTHLY, fmt)


def test_dark_theme_paints_the_dark_background():
    light = render_card(SCALAR, MONTHLY, "png", width=200, height=120)
    dark = render_card(SCALAR, MONTHLY, "png", width=200, height=120, theme="dark")
    _, _, rows = read_png(dark)
    assert rows[0][:3] == bytes.fromhex("2B2F36")
    assert read_png(light)[2][0][:3] == bytes.fromhex("FFFFFF")
    with pytest.raises(ValueError, match="known: dark, light"):
        render_card(SCALAR, MONTHLY, "svg", theme="sepia")


def test_unknown_display_is_drawn_as_a_table():
    table = render_card({"display": "table"}, MONTHLY, "svg")
    assert render_card({"display": "hologram"}, MONTHLY, "svg") == table
    assert render_card({}, MONTHLY, "svg") == table
    assert b"Showing 3 rows" in table


@pytest.mark.parametrize("name", ["table", "pivot", "object", "scalar", "smartscalar", "progress", "gauge"])
def test_no_rows_and_null_values_draw(name):
    empty = render_card({"display": name}, result([MONTH, COUNT], []), "png", width=240, height=160)
    assert read_png(empty)[:2] == (240, 160)
    nulls = result([MONTH, COUNT], [[None, None], ["2024-02-01T00:00:00", None], [None, 3]])
    assert read_png(render_card({"display": name}, nulls, "png", width=240, height=160))[:2] == (240, 160)
    assert render_card({"display": name}, result([], []), "svg").startswith(b"<svg")


def test_sizes_are_clamped_and_the_spec_is_complete():
    spec = chart_spec(SCALAR, MONTHLY, width=10, height=100000, theme="dark")
    assert (spec["width"], spec["height"]) == (80, 4000)
    assert spec["background"] == "#2B2F36" and spec["config"]["font"] == "Liberation Sans"


def test_rows_become_json_ready_values():
    import datetime as dt
    import decimal

    assert json_cell(decimal.Decimal("2.50")) == 2.5 and json_cell(decimal.Decimal("3")) == 3
    assert json_cell(float("nan")) is None
    assert json_cell(dt.datetime(2024, 1, 5, 13, 45, tzinfo=dt.timezone.utc)) == "2024-01-05T13:45:00Z"
    assert json_cell("2024-01-05 13:45:00", temporal=True) == "2024-01-05T13:45:00Z"
    assert json_cell(dt.date(2024, 1, 5)) == "2024-01-05"
    chart = chart_input({"display": "table"}, {"data": {"cols": [col("n")], "rows": iter([[1]] * 12001)}})
    assert len(chart.rows) == 10000 and chart.row_count == 12001


def test_a_display_registered_twice_names_both_functions():
    def first(chart):
        return {}

    def second(chart):
        return {}

    display("test-only-display")(first)
    try:
        with pytest.raises(ValueError, match=r"test_render\..*first.*test_render\..*second"):
            display("test-only-display")(second)
        with pytest.raises(ValueError, match="'table' is registered twice"):
            display("table")(second)
    finally:
        DISPLAYS.pop("test-only-display")


def test_a_huge_raster_gives_way_on_scale():
    from core.charts.render import MAX_PIXELS, raster_scale

    assert raster_scale({"width": 4000, "height": 4000}, 4) == pytest.approx((MAX_PIXELS / 16_000_000) ** 0.5)
    assert raster_scale({"width": 600, "height": 400}, 2) == 2 and raster_scale({}, 9) == 4
    width, height = png_size(render_card(SCALAR, MONTHLY, "png", width=2000, height=2000, scale=2))
    assert width * height <= MAX_PIXELS and width == height and width >= 2820


def test_a_card_row_renders_like_its_dict():
    from core.appdb.models import Card

    row = Card(display="scalar", visualization_settings={"scalar.field": "count"})
    assert render_card(row, MONTHLY, "svg") == render_card({"display": "scalar", "visualization_settings":
                                                           {"scalar.field": "count"}}, MONTHLY, "svg")
