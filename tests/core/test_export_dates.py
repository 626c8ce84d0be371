"""core.export.dates: formatted temporal cells by unit, type and column settings, checked against the
examples of Metabase's own formatter tests (2020-07-16 18:04)."""
from __future__ import annotations

import datetime as dt

import pytest

from core.export.dates import render, temporal_formatter

NOW = dt.datetime(2020, 7, 16, 18, 4)


@pytest.mark.parametrize(("unit", "expected"), [
    ("minute", "July, 2020, 6:04 PM"),
    ("hour", "July 16, 2020, 6 PM"),
    ("day", "Thursday, July 16, 2020"),
    ("week", "July 16, 2020 - July 22, 2020"),
    ("month", "July, 2020"),
    ("quarter", "Q3 - 2020"),
    ("year", "2020"),
    ("default", "July 16, 2020, 6:04 PM"),
])
def test_units(unit, expected):
    assert temporal_formatter({"unit": unit, "base_type": "type/DateTime"}, {})(NOW) == expected


@pytest.mark.parametrize(("settings", "expected"), [
    ({"date_style": "D MMMM, YYYY"}, "16 July, 2020, 6:04 PM"),
    ({"date_style": "dddd, MMMM D, YYYY", "date_abbreviate": True}, "Thu, Jul 16, 2020, 6:04 PM"),
    ({"date_style": "M/D/YYYY", "date_separator": "-"}, "7-16-2020, 6:04 PM"),
    ({"date_style": "YYYY/M/D", "date_separator": "."}, "2020.7.16, 6:04 PM"),
    ({"time_enabled": None}, "July 16, 2020"),
    ({"time_enabled": "seconds"}, "July 16, 2020, 6:04:00 PM"),
    ({"time_enabled": "milliseconds", "time_style": "HH:mm"}, "July 16, 2020, 18:04:00.000"),
])
def test_column_settings(settings, expected):
    assert temporal_formatter({"base_type": "type/DateTime"}, settings)(NOW) == expected


def test_dates_times_and_literal_text():
    fmt = temporal_formatter({"base_type": "type/Date"}, {})
    assert fmt(dt.date(2023, 12, 31)) == "December 31, 2023"  # the calendar year, not the week-based one
    assert fmt(dt.time(8, 5, 6)) == "8:05 AM"
    assert temporal_formatter({}, {"time_enabled": None})(dt.time(8, 5)) == ""
    assert render("[Week of] MMM D", dt.date(2024, 3, 3)) == "Week of Mar 3"
    assert render("hh:mm A", dt.time(0, 7)) == "12:07 AM"
