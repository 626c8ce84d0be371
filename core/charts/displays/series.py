"""Which columns a graph draws and the series they make: the x dimension, an optional breakout
dimension, the metrics (`graph.dimensions` / `graph.metrics`, with Metabase's defaults when absent or
naming missing columns) and, per series, its key, title, colour and display (`series_settings`).

Every graph-like display (bar, line, area, row, combo, and waterfall/scatter for their columns) reads
its columns here, so that a card draws the same series whatever display it is switched to.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from ..format import parse_temporal
from ..registry import ChartInput

# Metabase drops a breakout whose values would make more series than this (getDefaultDimensionsAndMetrics).
MAX_SERIES = 100
EMPTY = "(empty)"
INFINITY = float("inf")
SERIES_DISPLAYS = ("bar", "line", "area")


def is_metric(chart: ChartInput, index: int) -> bool:
    """Metabase's isMetric: a summable number that is not a breakout (ids and extraction units are not)."""
    return chart.cols[index].get("source") != "breakout" and chart.is_number(index)


def is_dimension(chart: ChartInput, index: int) -> bool:
    return chart.cols[index].get("source") != "aggregation"


def cardinality(chart: ChartInput, index: int) -> int:
    return len({_hashable(row[index]) for row in chart.rows})


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None), dt.date)) else repr(value)


def _named(chart: ChartInput, names: Any) -> list[int] | None:
    """Column indexes of a stored list of names; None when the list is absent or names a missing column."""
    if not isinstance(names, list) or not names or any(not isinstance(name, str) for name in names):
        return None
    indexes = [chart.col_index(name) for name in names]
    return None if any(index is None for index in indexes) else indexes


def default_columns(chart: ChartInput, max_dimensions: int = 2) -> tuple[list[int], list[int]]:
    """Metabase's defaults: dimensions are the non-metric columns (x first, then the breakout), metrics the
    metric columns. With more dimensions than a graph takes, the first one is the x axis."""
    metrics = [i for i in range(len(chart.cols)) if is_metric(chart, i)]
    dimensions = [i for i in range(len(chart.cols)) if is_dimension(chart, i) and i not in metrics]
    if len(dimensions) == 2:
        first, second = dimensions
        # A date reads best along the x axis, and the column with more values too (fewer series).
        if chart.is_temporal(second) and not chart.is_temporal(first):
            dimensions.reverse()
        elif not chart.is_temporal(first) and cardinality(chart, first) < cardinality(chart, second):
            dimensions.reverse()
        if cardinality(chart, dimensions[1]) > MAX_SERIES:
            dimensions.pop()
    if len(dimensions) > max_dimensions:
        dimensions = dimensions[:1]
    if not dimensions and len(metrics) > 1:
        # A query of numbers only (SQL): the first number is the axis, as Metabase's fallback does.
        dimensions = metrics[:1]
        metrics = metrics[1:]
    return dimensions[:max_dimensions], metrics


def graph_columns(chart: ChartInput, max_dimensions: int = 2) -> tuple[list[int], list[int]]:
    """(dimension indexes, metric indexes) from graph.dimensions/graph.metrics, else the defaults."""
    dimensions = _named(chart, chart.settings.get("graph.dimensions"))
    metrics = _named(chart, chart.settings.get("graph.metrics"))
    if dimensions is None or metrics is None:
        default_dims, default_metrics = default_columns(chart, max_dimensions)
        dimensions = default_dims if dimensions is None else dimensions
        metrics = default_metrics if metrics is None else metrics
    return dimensions[:max_dimensions], [m for m in metrics if m not in dimensions]


def number(value: Any) -> float | int | None:
    """A cell as a number to plot; None for anything else (null, text, NaN)."""
    kind = type(value)
    if kind is int:
        return value
    if kind is float:
        return value if value == value and value not in (INFINITY, -INFINITY) else None
    if value is None or kind is bool:
        return None
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return result if result == result and result not in (float("inf"), float("-inf")) else None


def sort_key(value: Any) -> tuple:
    """Orders x values of one column: nulls last, numbers and dates in their order, text as text."""
    if value is None:
        return (2, "")
    parsed = number(value)
    if parsed is not None:
        return (0, parsed)
    moment = parse_temporal(value)
    if isinstance(moment, dt.datetime):
        return (0, moment.timestamp() if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc).timestamp())
    if isinstance(moment, dt.date):
        return (0, dt.datetime(moment.year, moment.month, moment.day, tzinfo=dt.timezone.utc).timestamp())
    return (1, str(value))


@dataclass
class Series:
    key: str                 # the series_settings key: the metric's name, or the breakout value as text
    title: str
    color: str
    display: str             # bar, line or area
    metric: int              # the metric column drawn
    settings: dict           # its series_settings entry
    points: list = field(default_factory=list)   # [(x raw, y number or None)]
    rows: list = field(default_factory=list)     # the result row of each point (for a bubble's size)


@dataclass
class Graph:
    x: int                   # the x dimension column
    breakout: int | None
    metrics: list[int]
    series: list[Series]

    @property
    def xs(self) -> list:
        """The distinct x values in the order they first appear."""
        seen: dict = {}
        for one in self.series:
            for x, _ in one.points:
                seen.setdefault(_hashable(x), x)
        return list(seen.values())


def _series_settings(chart: ChartInput, *keys: str) -> dict:
    stored = chart.settings.get("series_settings") or {}
    for key in keys:
        entry = stored.get(key)
        if isinstance(entry, dict):
            return entry
    return {}


def _display(chart: ChartInput, entry: dict, position: int) -> str:
    wanted = entry.get("display")
    if chart.display == "combo":
        # Metabase's combo default: the first series a line, the others bars.
        return wanted if wanted in SERIES_DISPLAYS else ("line" if position == 0 else "bar")
    if chart.display in SERIES_DISPLAYS and wanted in SERIES_DISPLAYS:
        return wanted
    return "bar" if chart.display == "row" else chart.display


def _color(chart: ChartInput, entry: dict, position: int) -> str:
    colors = chart.settings.get("graph.colors")
    if isinstance(entry.get("color"), str):
        return entry["color"]
    if isinstance(colors, list) and position < len(colors) and isinstance(colors[position], str):
        return colors[position]
    return chart.theme.color(position)


def build_graph(chart: ChartInput, max_dimensions: int = 2) -> Graph | None:
    """The series of a graph; None when the result has no dimension and metric to draw."""
    dimensions, metrics = graph_columns(chart, max_dimensions)
    if not dimensions or not metrics:
        return None
    x = dimensions[0]
    breakout = dimensions[1] if len(dimensions) > 1 else None
    series: list[Series] = []
    if breakout is not None:
        # One metric per breakout value (Metabase draws only the first metric of a broken-out query).
        metric = metrics[0]
        by_value: dict = {}
        for position_in_result, row in enumerate(chart.rows):
            value = row[breakout]
            one = by_value.get(_hashable(value))
            if one is None:
                text = EMPTY if value is None else chart.format_value(breakout, value)
                key = "null" if value is None else str(value)
                entry = _series_settings(chart, key, text)
                position = len(series)
                one = Series(key, str(entry.get("title") or text), _color(chart, entry, position),
                             _display(chart, entry, position), metric, entry)
                by_value[_hashable(value)] = one
                series.append(one)
            one.points.append((row[x], number(row[metric])))
            one.rows.append(position_in_result)
        metrics = [metric]
    else:
        for position, metric in enumerate(metrics):
            key = chart.cols[metric].get("name") or str(metric)
            entry = _series_settings(chart, key)
            series.append(Series(key, str(entry.get("title") or chart.title(metric)),
                                 _color(chart, entry, position), _display(chart, entry, position), metric, entry,
                                 [(row[x], number(row[metric])) for row in chart.rows],
                                 list(range(len(chart.rows)))))
    return Graph(x, breakout, metrics, _ordered(chart, series) if breakout is not None else series)


def _ordered(chart: ChartInput, series: list[Series]) -> list[Series]:
    """A breakout's series in `graph.series_order` (Metabase's list of {key, enabled}), hidden ones left
    out; series the list does not name (new values) follow in their own order."""
    stored = chart.settings.get("graph.series_order")
    if not isinstance(stored, list):
        return series
    by_key = {one.key: one for one in series}
    ordered, named = [], set()
    for entry in stored:
        if not isinstance(entry, dict) or str(entry.get("key")) not in by_key:
            continue
        named.add(str(entry["key"]))
        if entry.get("enabled") is not False:
            ordered.append(by_key[str(entry["key"])])
    return ordered + [one for one in series if one.key not in named]
