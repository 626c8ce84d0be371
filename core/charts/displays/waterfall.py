"""Waterfall charts: each step of the x dimension a floating bar from the running total before it to
the total after it, coloured by `waterfall.increase_color` / `waterfall.decrease_color`, and a last
"Total" bar (`waterfall.show_total`, `waterfall.total_color`); labels with `graph.show_values`, the goal
line and the axes as on any graph (displays.axes, displays.overlays).
"""
from __future__ import annotations

from ..registry import DISPLAYS, FALLBACK, ChartInput, display
from .axes import x_axis, y_encoding
from .overlays import empty_spec, goal_layers
from .series import build_graph

TOTAL = "Total"


@display("waterfall")
def waterfall_spec(chart: ChartInput) -> dict:
    graph = build_graph(chart, max_dimensions=1)
    if graph is None:
        return DISPLAYS[FALLBACK](chart)
    one = graph.series[0]
    one.display = "bar"
    graph.series = [one]
    graph.metrics = [one.metric]
    axis = x_axis(chart, graph, has_bars=True)
    colors = {"increase": chart.setting("waterfall.increase_color", chart.theme.positive),
              "decrease": chart.setting("waterfall.decrease_color", chart.theme.negative),
              "total": chart.setting("waterfall.total_color", chart.theme.text)}
    data, running = [], 0
    for raw, value in one.points:
        x = axis.value(chart, graph.x, raw)
        if x is None or value is None:
            continue
        data.append({"x": x, "start": running, "end": running + value, "kind": "increase" if value >= 0 else "decrease",
                     "label": chart.format_value(one.metric, value)})
        running += value
    if not data:
        return empty_spec(chart)
    domain = list(axis.domain)
    if chart.settings.get("waterfall.show_total", True) is not False:
        total = TOTAL
        while total in domain:
            total += " "
        domain.append(total)
        data.append({"x": total, "start": 0, "end": running, "kind": "total",
                     "label": chart.format_value(one.metric, running)})
    x = {**axis.encoding, "scale": {**axis.encoding.get("scale", {}), "domain": domain}}
    y = {**y_encoding(chart, graph, None), "field": "start", "stack": None}
    kinds = [kind for kind in ("increase", "decrease", "total") if any(row["kind"] == kind for row in data)]
    layers = [{"mark": {"type": "bar"},
               "encoding": {"x": x, "y": y, "y2": {"field": "end"},
                            "color": {"field": "kind", "type": "nominal", "legend": None,
                                      "scale": {"domain": kinds, "range": [colors[kind] for kind in kinds]}}}}]
    if chart.settings.get("graph.show_values"):
        layers.append({"mark": {"type": "text", "fontSize": 10, "color": chart.theme.text, "baseline": "bottom",
                                "dy": -4},
                       "transform": [{"calculate": "max(datum.start, datum.end)", "as": "top"}],
                       "encoding": {"x": x, "y": {**y, "field": "top"}, "text": {"field": "label"}}})
    layers.extend(goal_layers(chart))
    return {"data": {"values": data}, "layer": layers}
