"""Funnel charts: one step per row of `funnel.dimension` (else the first dimension) sized by
`funnel.metric` (else the first metric), drawn as bars centred on one axis, widest first, each with its
value and its share of the first step; `funnel.rows` (Metabase's step list: key, name, enabled) orders,
renames and hides steps; `funnel.type` "bar" draws the steps as a bar chart instead.
"""
from __future__ import annotations

import dataclasses

from ..registry import DISPLAYS, FALLBACK, ChartInput, display
from .graph import graph_spec
from .overlays import empty_spec
from .pie import percent
from .series import EMPTY, default_columns, number


def funnel_columns(chart: ChartInput) -> tuple[int | None, int | None]:
    dimensions, metrics = default_columns(chart, max_dimensions=1)
    if not dimensions:
        dimensions = [i for i in range(len(chart.cols)) if i not in metrics][:1]
    dimension = chart.col_index(chart.settings.get("funnel.dimension"))
    metric = chart.col_index(chart.settings.get("funnel.metric"))
    return (dimensions[0] if dimension is None and dimensions else dimension,
            metrics[0] if metric is None and metrics else metric)


def steps(chart: ChartInput, dimension: int, metric: int) -> list[dict]:
    """[{key, name, value}] in drawing order, after funnel.rows."""
    found = []
    for row in chart.rows:
        raw = row[dimension]
        found.append({"key": "null" if raw is None else str(raw),
                      "name": EMPTY if raw is None else chart.format_value(dimension, raw),
                      "value": number(row[metric]) or 0})
    stored = chart.settings.get("funnel.rows")
    if not isinstance(stored, list):
        return found
    by_key = {step["key"]: step for step in found}
    ordered = []
    for entry in stored:
        step = by_key.pop(str(entry.get("key")), None) if isinstance(entry, dict) else None
        if step is None or entry.get("enabled") is False:
            continue
        if isinstance(entry.get("name"), str) and entry["name"]:
            step["name"] = entry["name"]
        ordered.append(step)
    # Steps the stored list does not know (new data) follow it, as Metabase appends them.
    return ordered + [step for step in found if step["key"] in by_key]


@display("funnel")
def funnel_spec(chart: ChartInput) -> dict:
    if chart.settings.get("funnel.type") == "bar":
        # Metabase's "bar" funnel is the steps as an ordinary bar chart of the funnel's columns.
        dimension, metric = funnel_columns(chart)
        if dimension is not None and metric is not None:
            settings = {**chart.settings, "graph.dimensions": [chart.cols[dimension]["name"]],
                        "graph.metrics": [chart.cols[metric]["name"]]}
            return graph_spec(dataclasses.replace(chart, display="bar", settings=settings))
    dimension, metric = funnel_columns(chart)
    if dimension is None or metric is None:
        return DISPLAYS[FALLBACK](chart)
    found = steps(chart, dimension, metric)
    if not found:
        return empty_spec(chart)
    widest = max(max(step["value"] for step in found), 0) or 1
    first = found[0]["value"]
    data, names = [], []
    for order, step in enumerate(found):
        name = step["name"]
        while name in names:
            name += " "
        names.append(name)
        value = max(step["value"], 0)
        share = percent(step["value"] / first) if first else "–"
        data.append({"step": name, "x0": (widest - value) / 2, "x1": (widest + value) / 2, "mid": widest / 2,
                     "label": f"{chart.format_value(metric, step['value'])} ({share})", "order": order})
    y = {"field": "step", "type": "ordinal", "scale": {"domain": names, "paddingInner": 0.15},
         "axis": {"title": None, "domain": False, "ticks": False, "labelFontSize": 12, "labelLimit": 160}}
    hidden = {"axis": None, "scale": {"domain": [0, widest]}}
    return {"data": {"values": data}, "layer": [
        {"mark": {"type": "bar", "color": chart.theme.color(0)},
         "encoding": {"y": y, "x": {"field": "x0", "type": "quantitative", **hidden}, "x2": {"field": "x1"}}},
        {"mark": {"type": "text", "fontSize": 12, "fontWeight": "bold", "color": chart.theme.text},
         "encoding": {"y": y, "x": {"field": "mid", "type": "quantitative", **hidden}, "text": {"field": "label"}}},
    ]}
