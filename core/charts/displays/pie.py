"""Pie charts, drawn as Metabase draws them: a donut of one metric by one dimension (`pie.dimension`,
`pie.metric`, else the first dimension and metric), slices largest first (`pie.sort_rows`), slices
under `pie.slice_threshold` percent (2.5 by default) merged into one "Other" slice, the total in the
hole (`pie.show_total`), percentages in the legend or on the slices (`pie.percent_visibility`), the
legend on the right (`pie.show_legend`) and colours from `pie.colors` or the theme.
"""
from __future__ import annotations

from ..registry import DISPLAYS, FALLBACK, ChartInput, display
from .overlays import empty_spec
from .series import EMPTY, default_columns, number

DEFAULT_THRESHOLD = 2.5     # percent, as Metabase stores pie.slice_threshold
OTHER = "Other"


def percent(fraction: float) -> str:
    """12.34% -> "12.3%", 25% -> "25%"."""
    text = f"{fraction * 100:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"


def _column(chart: ChartInput, key: str, default: int | None) -> int | None:
    stored = chart.settings.get(key)
    if isinstance(stored, list):    # newer Metabase keeps pie.dimension as a list (rings); the first is the pie
        stored = stored[0] if stored else None
    index = chart.col_index(stored) if isinstance(stored, str) else None
    return default if index is None else index


def pie_columns(chart: ChartInput) -> tuple[int | None, int | None]:
    dimensions, metrics = default_columns(chart, max_dimensions=1)
    if not dimensions:
        dimensions = [i for i in range(len(chart.cols)) if i not in metrics][:1]
    return (_column(chart, "pie.dimension", dimensions[0] if dimensions else None),
            _column(chart, "pie.metric", metrics[0] if metrics else None))


def slices(chart: ChartInput, dimension: int, metric: int) -> list[dict]:
    """[{key, label, value, fraction}] largest first, the small ones merged into "Other". Slices of no or
    negative value cannot be drawn as angles and are left out, as Metabase does."""
    rows = []
    for row in chart.rows:
        value = number(row[metric])
        if value is None or value <= 0:
            continue
        raw = row[dimension]
        label = EMPTY if raw is None else chart.format_value(dimension, raw)
        rows.append({"key": "null" if raw is None else str(raw), "label": label, "value": value})
    total = sum(row["value"] for row in rows)
    if not total:
        return []
    if chart.settings.get("pie.sort_rows", True) is not False:
        rows.sort(key=lambda row: -row["value"])
    threshold = number(chart.settings.get("pie.slice_threshold"))
    threshold = (DEFAULT_THRESHOLD if threshold is None else threshold) / 100
    kept = [row for row in rows if row["value"] / total >= threshold]
    small = [row for row in rows if row["value"] / total < threshold]
    if len(small) > 1:
        kept.append({"key": OTHER, "label": OTHER, "value": sum(row["value"] for row in small)})
    else:
        kept = rows    # one small slice is drawn as itself: an "Other" of one says less
    for row in kept:
        row["fraction"] = row["value"] / total
    return kept


def _colors(chart: ChartInput, parts: list[dict]) -> list[str]:
    stored = chart.settings.get("pie.colors") or {}
    colors = []
    for position, part in enumerate(parts):
        wanted = stored.get(part["key"]) if isinstance(stored, dict) else None
        if isinstance(wanted, str):
            colors.append(wanted)
        elif part["key"] == OTHER:
            colors.append(chart.theme.muted)
        else:
            colors.append(chart.theme.color(position))
    return colors


@display("pie")
def pie_spec(chart: ChartInput) -> dict:
    dimension, metric = pie_columns(chart)
    if dimension is None or metric is None:
        return DISPLAYS[FALLBACK](chart)
    parts = slices(chart, dimension, metric)
    if not parts:
        return empty_spec(chart)
    visibility = chart.setting("pie.percent_visibility", "legend")
    in_legend = visibility in ("legend", "both")
    seen: set = set()
    data = []
    for order, part in enumerate(parts):
        name = f"{part['label']} ({percent(part['fraction'])})" if in_legend else part["label"]
        while name in seen:  # two values written alike stay two slices
            name += " "
        seen.add(name)
        data.append({"slice": name, "value": part["value"], "order": order, "percent": percent(part["fraction"])})
    show_legend = chart.settings.get("pie.show_legend", True) is not False
    legend_width = 160 if show_legend else 0
    radius = max(20, min(chart.width - legend_width, chart.height) / 2 - 12)
    inner = radius * 0.6
    theta = {"field": "value", "type": "quantitative", "stack": True}
    order = {"field": "order", "type": "quantitative"}
    color = {"field": "slice", "type": "nominal", "sort": None,
             "scale": {"domain": [row["slice"] for row in data], "range": _colors(chart, parts)},
             "legend": {"orient": "right", "title": None, "labelLimit": 200} if show_legend else None}
    layers = [{"mark": {"type": "arc", "innerRadius": inner, "outerRadius": radius, "stroke": chart.theme.background,
                        "strokeWidth": 1},
               "encoding": {"theta": theta, "color": color, "order": order}}]
    if visibility in ("inside", "both"):
        layers.append({"transform": [{"filter": "datum.value > 0"}],
                       "mark": {"type": "text", "radius": (radius + inner) / 2, "fontSize": 11, "color": "#FFFFFF"},
                       "encoding": {"theta": theta, "order": order, "text": {"field": "percent"}}})
    if chart.settings.get("pie.show_total", True) is not False:
        total = sum(part["value"] for part in parts)
        center = {"x": {"expr": "width / 2"}, "align": "center", "color": chart.theme.text}
        layers.append({"data": {"values": [{"total": chart.format_value(metric, total, total >= 100_000)}]},
                       "mark": {"type": "text", **center, "y": {"expr": "height / 2 - 4"}, "fontSize": 22,
                                "fontWeight": "bold", "baseline": "bottom"},
                       "encoding": {"text": {"field": "total"}}})
        layers.append({"data": {"values": [{}]},
                       "mark": {"type": "text", **center, "y": {"expr": "height / 2 + 4"}, "fontSize": 11,
                                "baseline": "top", "text": "TOTAL", "color": chart.theme.muted}})
    return {"data": {"values": data}, "layer": layers, "view": {"stroke": None}}
