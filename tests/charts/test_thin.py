"""core.charts.thin: a long multi-series result thinned to the chart's width keeps its ends, order,
every series' extremes, and leaves short results alone."""
from __future__ import annotations

import math

from core.charts.thin import thin_rows


def test_short_results_are_left_alone():
    rows = [[i, i] for i in range(10)]
    assert thin_rows(rows, [1], 20) == rows
    assert thin_rows(rows, [1], 2) == rows


def test_thinned_rows_keep_ends_order_and_peaks():
    rows = [[i, math.sin(i / 50) * 100, (500 if i == 617 else 0), None if i % 7 else 1] for i in range(1000)]
    thinned = thin_rows(rows, [1, 2, 3], 200)
    assert len(thinned) == 200
    assert thinned[0] is rows[0] and thinned[-1] is rows[-1]
    xs = [r[0] for r in thinned]
    assert xs == sorted(xs)
    assert any(r[0] == 617 for r in thinned)  # a one-row spike of the third series survives
    assert max(r[1] for r in thinned) > 99.5 and min(r[1] for r in thinned) < -99.5


def test_long_line_charts_are_thinned_to_their_width_and_others_are_not():
    from core.charts.render import chart_input
    from core.charts.thin import for_chart

    from .support import col, result

    day = col("day", "type/Date", unit="day")
    rows = [[f"2024-01-01T00:00:{i // 100:02d}", i % 37, i % 11] for i in range(2000)]
    data = result([day, col("a"), col("b")], rows)
    line = for_chart(chart_input({"display": "line"}, data, width=300))
    assert len(line.rows) == 230 and line.row_count == 2000  # the width less the y axis
    assert for_chart(chart_input({"display": "bar"}, data, width=300)).rows == line_rows(data)
    breakout = {"display": "line", "visualization_settings": {"graph.dimensions": ["day", "a"]}}
    assert len(for_chart(chart_input(breakout, data, width=300)).rows) == 2000
    shuffled = result([day, col("a"), col("b")], rows[::-1])
    assert len(for_chart(chart_input({"display": "area"}, shuffled, width=300)).rows) == 2000


def line_rows(data):
    from core.charts.render import chart_input

    return chart_input({}, data).rows


def test_a_default_breakout_is_not_thinned():
    """No graph.dimensions stored: the graph's default columns (a date and a text breakout) decide, so
    each series keeps every point."""
    import datetime

    from core.charts.render import chart_input
    from core.charts.thin import for_chart

    from .support import col, result

    day = col("day", "type/Date", unit="day")
    category = col("category", "type/Text")
    start = datetime.date(2024, 1, 1)
    rows = [[(start + datetime.timedelta(days=i // 3)).isoformat(), ("A", "B", "C")[i % 3], i % 17]
            for i in range(900)]
    chart = for_chart(chart_input({"display": "line"}, result([day, category, col("count")], rows), width=300))
    assert len(chart.rows) == 900
    assert sorted({row[1] for row in chart.rows}) == ["A", "B", "C"]
