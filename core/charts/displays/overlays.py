"""What graphs draw over their series: the goal line (`graph.show_goal`, `graph.goal_value`,
`graph.goal_label`), the trend line (`graph.show_trendline`: a least-squares line per series, computed
here so that it is the same on every axis kind), the totals above stacked bars, and the "No results"
picture of an empty result. Each is a Vega-Lite layer (or spec) built from plain numbers.
"""
from __future__ import annotations

from typing import Any

from ..registry import ChartInput
from .series import number


def goal_layers(chart: ChartInput, value_channel: str = "y") -> list[dict]:
    """A dashed rule at the goal value with its label at the plot's end; [] without a goal."""
    if not chart.settings.get("graph.show_goal"):
        return []
    goal = number(chart.settings.get("graph.goal_value"))
    if goal is None:
        return []
    label = chart.settings.get("graph.goal_label")
    label = label if isinstance(label, str) else "Goal"
    # One row of its own: layered under the chart's data, a datum mark is drawn once per row of it. The
    # rule is left out of the accessibility tree (a graphics symbol without a name to screen readers);
    # its label is the text mark.
    one = {"values": [{}]}
    rule = {"data": one, "mark": {"type": "rule", "color": chart.theme.muted, "strokeDash": [5, 4],
                                  "strokeWidth": 1.5, "aria": False},
            "encoding": {value_channel: {"datum": goal, "type": "quantitative"}}}
    if value_channel == "y":
        text_mark = {"type": "text", "x": "width", "align": "right", "baseline": "bottom", "dy": -3}
    else:
        text_mark = {"type": "text", "y": 0, "align": "left", "baseline": "top", "dx": 4}
    text = {"data": one, "mark": {**text_mark, "color": chart.theme.muted, "fontSize": 11},
            "encoding": {value_channel: {"datum": goal, "type": "quantitative"}, "text": {"value": label}}}
    return [rule, text]


def least_squares(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(intercept, slope) of the line nearest the points; None for fewer than two distinct x."""
    n = len(points)
    if n < 2:
        return None
    mean_t = sum(t for t, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if spread == 0:
        return None
    slope = sum((t - mean_t) * (y - mean_y) for t, y in points) / spread
    return mean_y - slope * mean_t, slope


def trend_rows(series_points: list[tuple[str, list[tuple[Any, float, float]]]]) -> list[dict]:
    """Two rows per series, the fitted line's ends: series_points is [(title, [(x value, t, y)])] where t
    is x as a number (a timestamp, the number itself, or the band's position)."""
    rows: list[dict] = []
    for title, points in series_points:
        fit = least_squares([(t, y) for _, t, y in points])
        if fit is None:
            continue
        intercept, slope = fit
        first = min(points, key=lambda point: point[1])
        last = max(points, key=lambda point: point[1])
        for x, t, _ in (first, last):
            rows.append({"x": x, "y": round(intercept + slope * t, 10), "series": title})
    return rows


def trend_layer(rows: list[dict], x: dict, color: dict, swap: bool = False) -> dict:
    y = {"field": "y", "type": "quantitative"}
    x_channel, y_channel = ("y", "x") if swap else ("x", "y")
    return {"data": {"values": rows},
            "mark": {"type": "line", "strokeDash": [6, 4], "strokeWidth": 1.5, "opacity": 0.8},
            "encoding": {x_channel: x, y_channel: y, "color": color}}


def empty_spec(chart: ChartInput, text: str = "No results") -> dict:
    """The picture of a chart without data: its message, centred."""
    return {"data": {"values": [{}]},
            "mark": {"type": "text", "x": {"expr": "width / 2"}, "y": {"expr": "height / 2"},
                     "align": "center", "baseline": "middle", "text": text, "fontSize": 16,
                     "color": chart.theme.muted}}
