"""Scatter and bubble charts: a point per row at (graph.dimensions[0], each of graph.metrics), sized by
`scatter.bubble` when set, coloured per series (a breakout dimension or each metric). Without stored
columns the first two numbers of the result are x and y, and a text column, if any, the breakout.
Axes, goal and trend line are the graphs' (displays.axes, displays.overlays).
"""
from __future__ import annotations

import dataclasses

from ..registry import DISPLAYS, FALLBACK, ChartInput, display
from .axes import x_axis, y_encoding
from .overlays import empty_spec, goal_layers, trend_layer, trend_rows
from .series import build_graph, number, sort_key


def _with_default_columns(chart: ChartInput) -> ChartInput:
    """The chart with graph.dimensions/graph.metrics filled as a scatter wants them when not stored."""
    if chart.settings.get("graph.dimensions") and chart.settings.get("graph.metrics"):
        return chart
    numbers = [i for i in range(len(chart.cols)) if chart.is_number(i)]
    if len(numbers) < 2:
        return chart
    others = [i for i in range(len(chart.cols)) if i not in numbers and not chart.is_temporal(i)
              and chart.cols[i].get("source") != "aggregation"]
    bubble = chart.col_index(chart.settings.get("scatter.bubble"))
    metrics = [i for i in numbers[1:] if i != bubble][:1]
    if not metrics:
        return chart
    names = [chart.cols[numbers[0]]["name"]] + [chart.cols[i]["name"] for i in others[:1]]
    settings = {**chart.settings, "graph.dimensions": names, "graph.metrics": [chart.cols[metrics[0]]["name"]]}
    return dataclasses.replace(chart, settings=settings)


@display("scatter")
def scatter_spec(chart: ChartInput) -> dict:
    chart = _with_default_columns(chart)
    graph = build_graph(chart)
    if graph is None:
        return DISPLAYS[FALLBACK](chart)
    for one in graph.series:
        one.display = "line"   # a scatter's x axis follows graph.x_axis.scale as a line chart's does
    axis = x_axis(chart, graph, has_bars=False)
    bubble = chart.col_index(chart.settings.get("scatter.bubble"))
    data = []
    for order, one in enumerate(graph.series):
        for (raw, y), row in zip(one.points, one.rows):
            x = axis.value(chart, graph.x, raw)
            if x is None or y is None:
                continue
            point = {"x": x, "y": y, "series": one.title, "order": order}
            if bubble is not None:
                size = number(chart.rows[row][bubble])
                if size is None:
                    continue
                point["size"] = size
            data.append(point)
    if not data:
        return empty_spec(chart)
    several = len(graph.series) > 1
    color = {"field": "series", "type": "nominal", "title": None,
             "scale": {"domain": [one.title for one in graph.series], "range": [one.color for one in graph.series]},
             "legend": {"title": None} if several else None}
    encoding = {"x": axis.encoding, "y": {**y_encoding(chart, graph, None), "stack": None}, "color": color}
    if bubble is not None:
        encoding["size"] = {"field": "size", "type": "quantitative", "title": chart.title(bubble),
                            "scale": {"range": [20, 900]}, "legend": None}
    layers = [{"mark": {"type": "point", "filled": True, "opacity": 0.75, "size": 60}, "encoding": encoding}]
    if chart.settings.get("graph.show_trendline"):
        by_series: dict = {}
        for point in data:
            t = axis.domain.index(point["x"]) if axis.kind == "ordinal" else sort_key(point["x"])[1]
            by_series.setdefault(point["series"], []).append((point["x"], t, point["y"]))
        rows = trend_rows(list(by_series.items()))
        if rows:
            layers.append(trend_layer(rows, axis.encoding, color))
    layers.extend(goal_layers(chart))
    return {"data": {"values": data}, "layer": layers}
