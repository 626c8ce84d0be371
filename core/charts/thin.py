"""Thinning a long series to the points a chart can show: a line of 1,000 x values drawn 500 pixels wide
puts two points on each pixel column, and drawing them costs Vega time (it dominates a 10-series chart)
for no visible difference. `thin_rows` keeps at most `target` rows chosen by Largest-Triangle-Three-
Buckets over every series at once (each series' areas scaled by its range, so a small series counts as
much as a large one), always the first and last row, in their order; peaks and troughs survive.

For line and area displays whose x is ordered (temporal or numeric) and rows far exceed the width.
"""
from __future__ import annotations

from typing import Sequence


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def thin_rows(rows: Sequence[Sequence], y_indexes: Sequence[int], target: int) -> list:
    """At most `target` of `rows` (wide rows: one x, the series' values at `y_indexes`), in order."""
    count = len(rows)
    if target < 3 or count <= target:
        return list(rows)
    columns = [[_number(row[i]) if i < len(row) else None for row in rows] for i in y_indexes]
    spans = []
    for values in columns:
        present = [v for v in values if v is not None]
        spans.append((max(present) - min(present)) or 1.0 if present else 1.0)
    every = (count - 2) / (target - 2)
    chosen, anchor = [0], 0
    for bucket in range(target - 2):
        start, end = int(bucket * every) + 1, int((bucket + 1) * every) + 1
        after_end = min(int((bucket + 2) * every) + 1, count)
        after = range(end, after_end) if after_end > end else range(count - 1, count)
        mean_x = sum(after) / len(after)
        means = []
        for values in columns:
            present = [values[k] for k in after if values[k] is not None]
            means.append(sum(present) / len(present) if present else None)
        best, best_area = start, -1.0
        for j in range(start, end):
            area = 0.0
            for values, mean, span in zip(columns, means, spans):
                a, y = values[anchor], values[j]
                if a is None or y is None or mean is None:
                    continue
                area += abs((anchor - mean_x) * (y - a) - (anchor - j) * (mean - a)) / span
            if area > best_area:
                best, best_area = j, area
        chosen.append(best)
        anchor = best
    chosen.append(count - 1)
    return [rows[k] for k in chosen]


# Displays that draw rows as connected points over an ordered x (one row per x, wide metrics).
LINE_DISPLAYS = frozenset({"line", "area"})
# Thin past one row per pixel of the plot: the chart's width less the y axis and padding.
AXIS_ALLOWANCE = 70


def for_chart(chart):
    """`chart` (a ChartInput) with its rows thinned to its plot's width in pixels when it is a line or
    area over one ordered temporal or numeric dimension with more rows than that; else `chart` itself.
    A breakout (two dimensions: rows per x and series) is never thinned, nor rows out of x order."""
    from dataclasses import replace

    plot = max(chart.width - AXIS_ALLOWANCE, 50)
    if chart.display not in LINE_DISPLAYS or len(chart.rows) <= plot:
        return chart
    from .displays.series import graph_columns  # the graph's own choice of columns, defaults included

    dimensions, ys = graph_columns(chart)
    if len(dimensions) != 1:
        return chart
    x = dimensions[0]
    if not (chart.is_temporal(x) or chart.is_number(x)):
        return chart
    xs = [row[x] for row in chart.rows]
    try:
        ordered = all(a is not None and b is not None and a <= b for a, b in zip(xs, xs[1:]))
    except TypeError:
        ordered = False
    if not ys or not ordered:
        return chart
    return replace(chart, rows=thin_rows(chart.rows, ys, plot), _formatters={})
