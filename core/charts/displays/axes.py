"""The axes of a graph: what kind of x axis a card gets (`graph.x_axis.scale`: timeseries, ordinal,
linear, log, pow, histogram), how an x value is written into the chart data for it, and the Vega-Lite
encodings of both axes with their titles and visibility (`graph.{x,y}_axis.title_text`,
`*.labels_enabled`, `*.axis_enabled`), the y scale (`graph.y_axis.scale` linear/pow/log, its manual
range) and number formats (ChartInput.axis_format, or percent for a 100% stack).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..registry import ChartInput
from .series import EMPTY, Graph, number, sort_key

QUANTITATIVE_SCALES = ("linear", "log", "pow")
# Roughly how wide a label character is at the theme's font size: enough to decide to rotate labels.
CHAR_WIDTH = 6.5
# Time-axis tick intervals by the column's temporal unit: (Vega time interval, buckets per step).
TICK_UNITS = {"year": ("year", 1), "quarter": ("month", 3), "month": ("month", 1), "week": ("week", 1),
              "day": ("day", 1), "hour": ("hour", 1), "minute": ("minute", 1)}


@dataclass
class XAxis:
    kind: str                  # "temporal", "ordinal" or "quantitative" (the Vega-Lite type)
    encoding: dict             # the x (or, for a row chart, y) channel, field "x"
    domain: list               # ordinal labels in drawing order; [] otherwise

    def value(self, chart: ChartInput, index: int, raw: Any) -> Any:
        """The chart-data value of an x cell; None drops the point (a null date or number)."""
        if self.kind == "ordinal":
            return EMPTY if raw is None else chart.format_value(index, raw)
        if self.kind == "quantitative":
            return number(raw)
        return raw if isinstance(raw, str) and raw else None


def x_kind(chart: ChartInput, graph: Graph, has_bars: bool) -> str:
    """Vega-Lite type of the x axis. Bars want bands, so a bar chart's dates and numbers are ordinal (one
    band per value, as Metabase draws them); lines and areas follow graph.x_axis.scale."""
    wanted = chart.setting("graph.x_axis.scale")
    if chart.display == "row" or has_bars or wanted in ("ordinal", "histogram"):
        return "ordinal"
    if "-of-" in str(chart.cols[graph.x].get("unit") or ""):
        return "ordinal"   # day-of-week 1..7 are names ("Monday"), not quantities
    values = [x for one in graph.series for x, _ in one.points if x is not None]
    if chart.is_temporal(graph.x) and wanted in (None, "timeseries"):
        return "temporal"
    numeric = chart.is_number(graph.x) or (values and all(number(x) is not None for x in values))
    if numeric and wanted in (None, *QUANTITATIVE_SCALES):
        return "quantitative"
    return "ordinal"


def temporal_axis(chart: ChartInput, index: int, count: int) -> dict:
    """Labels and ticks of a time axis: one tick per bucket of the column's unit (every few buckets when
    they would crowd), written with the unit's format (ChartInput.axis_format)."""
    axis = dict(chart.axis_format(index))
    unit = chart.cols[index].get("unit")
    interval, step = TICK_UNITS.get(unit, (None, 1))
    if interval:
        fit = max(1, int(chart.width // (90 if unit in ("week", "day", "hour", "minute") else 75)))
        axis["tickCount"] = {"interval": interval, "step": step * max(1, -(-count // fit))}
    return axis


def _title(chart: ChartInput, axis: str, default: str | None) -> str | None:
    if chart.settings.get(f"graph.{axis}_axis.labels_enabled") is False:
        return None
    text = chart.settings.get(f"graph.{axis}_axis.title_text")
    return text if isinstance(text, str) and text else default


def _visible(chart: ChartInput, axis: str) -> bool:
    return chart.settings.get(f"graph.{axis}_axis.axis_enabled") is not False


# The least room an angled x label takes along the axis, in pixels (its 11-pixel font's line, and a gap).
LABEL_SPACING = 24


def x_axis(chart: ChartInput, graph: Graph, has_bars: bool) -> XAxis:
    kind = x_kind(chart, graph, has_bars)
    x = graph.x
    title = _title(chart, "x", chart.title(x))
    axis: dict = {"title": title, "grid": False, "labelOverlap": True}
    encoding: dict = {"field": "x", "type": kind}
    domain: list = []
    if kind == "ordinal":
        raws = graph.xs
        if chart.is_temporal(x) or all(number(raw) is not None for raw in raws if raw is not None):
            raws = sorted(raws, key=sort_key)
        seen: dict = {}
        for raw in raws:
            seen.setdefault(EMPTY if raw is None else chart.format_value(x, raw), None)
        domain = list(seen)
        longest = max((len(label) for label in domain), default=0)
        fits = len(domain) * (longest * CHAR_WIDTH + 8) <= chart.width * (0.5 if chart.display == "row" else 0.9)
        axis["labelAngle"] = 0 if fits or chart.display == "row" else -45
        axis["labelLimit"] = 120
        shown = max(2, int(chart.width // LABEL_SPACING))
        if not fits and chart.display != "row" and len(domain) > shown:
            # Vega measures every label before its overlap pass drops most of them: 365 bars took
            # seconds to draw. Offered every k-th label only, it measures what can show (and may thin more).
            axis["values"] = domain[::-(-len(domain) // shown)]
        encoding["scale"] = {"domain": domain}
        if has_bars:
            # Said outright: layered with lines (a combo), Vega-Lite would otherwise lose the bars' padding.
            encoding["scale"].update({"type": "band", "paddingInner": 0.2, "paddingOuter": 0.1})
        if chart.setting("graph.x_axis.scale") == "histogram":
            encoding["scale"]["paddingInner"] = 0.02   # a histogram's bars touch
    elif kind == "temporal":
        encoding["scale"] = {"type": "utc"}
        axis.update(temporal_axis(chart, x, len(graph.xs)))
    else:
        wanted = chart.setting("graph.x_axis.scale")
        encoding["scale"] = {"type": "pow", "exponent": 0.5} if wanted == "pow" else (
            {"type": "log"} if wanted == "log" else {"zero": False})
        axis.update(chart.axis_format(x))
    rotate = chart.settings.get("graph.x_axis.axis_enabled")
    if rotate in ("rotate-45", "rotate-90"):
        axis["labelAngle"] = -45 if rotate == "rotate-45" else -90
    encoding["axis"] = axis if _visible(chart, "x") else None
    if not _visible(chart, "x") and title:
        # The axis line and labels go, a title asked for stays (Metabase hides them separately).
        encoding["axis"] = {"title": title, "labels": False, "ticks": False, "domain": False, "grid": False}
    return XAxis(kind, encoding, domain)


def y_encoding(chart: ChartInput, graph: Graph, stack: str | None) -> dict:
    """The value channel: quantitative field "y", its scale, stacking and axis."""
    single = len(graph.metrics) == 1
    title = _title(chart, "y", chart.title(graph.metrics[0]) if single else None)
    axis: dict = {"title": title, "labelOverlap": True}
    if stack == "normalized":
        axis["format"] = ".0%"
    else:
        axis.update(chart.axis_format(graph.metrics[0]))
    scale: dict = {}
    wanted = chart.setting("graph.y_axis.scale")
    if wanted == "log" and stack is None:
        scale["type"] = "log"
    elif wanted == "pow":
        scale.update({"type": "pow", "exponent": 0.5})
    if chart.settings.get("graph.y_axis.auto_range") is False and stack != "normalized":
        low, high = number(chart.settings.get("graph.y_axis.min")), number(chart.settings.get("graph.y_axis.max"))
        if low is not None and high is not None and low < high:
            scale.update({"domain": [low, high]})
            scale["clamp"] = True
    encoding: dict = {"field": "y", "type": "quantitative",
                      "stack": {"stacked": "zero", "normalized": "normalize"}.get(stack or "")}
    if scale:
        encoding["scale"] = scale
    if not _visible(chart, "y"):
        axis = {"title": title, "labels": False, "ticks": False, "domain": False, "grid": True} if title else None
    encoding["axis"] = axis
    return encoding
