"""core.charts.format: the number and date settings people use most, one test each, read through a
ChartInput (column_settings keyed by name or field ref) as displays read them."""
from __future__ import annotations

import pytest

from core.charts.render import chart_input

from .support import col, result


def fmt(column: dict, value, settings: dict | None = None, compact: bool = False, key: str | None = None) -> str:
    viz = {"column_settings": {key or f'["name","{column["name"]}"]': settings}} if settings else {}
    chart = chart_input({"display": "table", "visualization_settings": viz}, result([column], [[value]]))
    return chart.format_value(0, chart.rows[0][0], compact)


AMOUNT = col("amount", "type/Float")


def test_plain_numbers_group_thousands_and_keep_two_decimals():
    assert fmt(AMOUNT, 1234567.891) == "1,234,567.89"
    assert fmt(col("n"), 42) == "42"
    assert fmt(col("id", semantic_type="type/PK"), 12345) == "12345"


def test_currency():
    assert fmt(AMOUNT, 1234.5, {"number_style": "currency", "currency": "USD"}) == "$1,234.50"
    assert fmt(AMOUNT, 1.125, {"number_style": "currency"}) == "$1.13"  # halves away from zero, as Intl
    assert fmt(AMOUNT, -3, {"number_style": "currency", "currency": "EUR"}) == "-€3.00"
    assert fmt(AMOUNT, 3, {"number_style": "currency", "currency": "EUR", "currency_style": "code"}) == "EUR 3.00"
    assert fmt(AMOUNT, 3, {"number_style": "currency", "currency_style": "name"}) == "3.00 US dollars"


def test_percent_multiplies_by_100():
    assert fmt(AMOUNT, 0.256, {"number_style": "percent"}) == "25.6%"
    assert fmt(AMOUNT, 0.256, {"number_style": "percent", "decimals": 0}) == "26%"


def test_decimals_scale_prefix_suffix_separators():
    assert fmt(AMOUNT, 2.5, {"decimals": 3}) == "2.500"
    assert fmt(AMOUNT, 2.5, {"scale": 1000, "suffix": " g"}) == "2,500 g"
    assert fmt(AMOUNT, 7, {"prefix": "~"}) == "~7"
    assert fmt(AMOUNT, 1234.5, {"number_separators": ",."}) == "1.234,5"
    assert fmt(AMOUNT, 12345, {"number_style": "scientific"}) == "1.23e+4"


def test_compact_numbers():
    assert fmt(AMOUNT, 1234, compact=True) == "1.2k"
    assert fmt(AMOUNT, 1_500_000, compact=True) == "1.5M"
    assert fmt(AMOUNT, 2_000_000_000, {"number_style": "currency"}, compact=True) == "$2B"
    assert fmt(AMOUNT, 0.5, compact=True) == "0.50"


def test_settings_by_field_ref_and_column_title():
    column = col("total", "type/Float", field_ref=["field", 7, None])
    assert fmt(column, 5, {"prefix": "#"}, key='["ref",["field",7,null]]') == "#5"
    viz = {"column_settings": {'["name","total"]': {"column_title": "Revenue"}}}
    assert chart_input({"visualization_settings": viz}, result([column], [])).title(0) == "Revenue"


@pytest.mark.parametrize(("unit", "value", "text"), [
    ("year", "2024-01-01T00:00:00", "2024"),
    ("quarter", "2024-04-01T00:00:00", "Q2 - 2024"),
    ("month", "2024-03-01T00:00:00", "March, 2024"),
    ("week", "2024-01-07T00:00:00", "January 7, 2024 - January 13, 2024"),
    ("day", "2024-01-05T00:00:00", "Friday, January 5, 2024"),
    (None, "2024-01-05T13:45:00", "January 5, 2024, 1:45 PM"),
])
def test_dates_by_temporal_unit(unit, value, text):
    assert fmt(col("at", "type/DateTime", unit=unit), value) == text


def test_date_style_setting():
    column = col("at", "type/Date", unit="month")
    assert fmt(column, "2024-03-01", {"date_style": "MMMM", "date_abbreviate": True}) == "Mar"


@pytest.mark.parametrize(("unit", "value", "text"), [
    ("day-of-week", 2, "Monday"), ("month-of-year", 12, "December"), ("quarter-of-year", 3, "Q3"),
    ("hour-of-day", 15, "3 PM"),
])
def test_extraction_units_read_as_names(unit, value, text):
    assert fmt(col("x", "type/Integer", unit=unit), value) == text


def test_axis_formats():
    month = chart_input({}, result([col("at", "type/DateTime", unit="month")], []))
    assert month.axis_format(0) == {"format": "%B %Y", "formatType": "time"}
    viz = {"column_settings": {'["name","amount"]': {"number_style": "currency", "currency": "EUR"}}}
    money = chart_input({"visualization_settings": viz}, result([AMOUNT], []))
    assert money.axis_format(0)["labelExpr"].startswith("'€' + (abs(datum.value")
    assert chart_input({}, result([col("c", "type/Text")], [])).axis_format(0) == {}


def test_nulls_and_booleans():
    assert fmt(AMOUNT, None) == ""
    assert fmt(col("b", "type/Boolean"), True) == "true"
