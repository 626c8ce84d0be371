"""Bar, line, area, row and combo charts: one Vega-Lite layer per series display (bars grouped side
by side or stacked by `stackable.stack_type`, areas, lines with their series_settings style), then data
labels (`graph.show_values`), the trend line and the goal line. Columns and series come from
displays.series, axes from displays.axes, the overlays from displays.overlays.
"""
from __future__ import annotations

from ..drill import drill_payload
from ..registry import DISPLAYS, FALLBACK, ChartInput, display
from .axes import XAxis, x_axis, y_encoding
from .overlays import empty_spec, goal_layers, trend_layer, trend_rows
from .series import Graph, Series, build_graph, sort_key

STACKABLE = ("bar", "area")
# Lines draw last so that bars and areas never hide them.
LAYER_ORDER = ("area", "bar", "line")
DASHES = {"dashed": [6, 4], "dotted": [1, 3]}
# Pixels a data label needs along the x axis: with less, labels are dropped (graph.label_value_frequency
# "fit", Metabase's default) unless the card asks for "all".
LABEL_SPACE = 24
# Two metrics whose largest values differ by more than this get an axis each (Metabase's auto split).
SPLIT_RATIO = 10
INTERPOLATE = {"cardinal": "monotone", "step-after": "step-after", "linear": "linear"}


def stack_type(chart: ChartInput, graph: Graph) -> str | None:
    """stacked, normalized or None: as stored, else Metabase's default (an area of several series stacks)."""
    stored = chart.settings.get("stackable.stack_type", "unset")
    if stored in ("stacked", "normalized", None):
        value = stored
    else:
        value = "stacked" if chart.settings.get("stackable.stacked") or (
            chart.display == "area" and len(graph.series) > 1) else None
    if value and not any(one.display in STACKABLE for one in graph.series):
        return None
    return value


def label_text(chart: ChartInput, metric: int, value: float) -> str:
    """A data label: compact ("1.2k") when graph.label_value_formatting says so, or, by default, when the
    number is large enough that the full form would crowd the chart."""
    wanted = chart.setting("graph.label_value_formatting", "auto")
    compact = wanted == "compact" or (wanted == "auto" and abs(value) >= 100_000)
    return chart.format_value(metric, value, compact)


def _titles(graph: Graph) -> list[str]:
    """Unique series titles (the colour scale's domain): a repeated title gets its position appended."""
    seen: set = set()
    for position, one in enumerate(graph.series):
        if one.title in seen:
            one.title = f"{one.title} ({position + 1})"
        seen.add(one.title)
    return [one.title for one in graph.series]


def _data(chart: ChartInput, graph: Graph, axis: XAxis, show_values: bool) -> list[dict]:
    rows = []
    for order, one in enumerate(graph.series):
        for (raw, y), at in zip(one.points, one.rows):
            x = axis.value(chart, graph.x, raw)
            if x is None or y is None:
                continue  # a null is a gap, as Metabase draws it
            row = {"x": x, "y": y, "series": one.title, "order": order}
            if chart.drill:
                row["drill"] = drill_payload(chart, [graph.x, graph.breakout], one.metric, at)
            if show_values:
                row["label"] = label_text(chart, one.metric, y)
            rows.append(row)
    return rows  # in the result's order: Vega-Lite draws a line through its points sorted by x


def _mark(display_name: str, group: list[Series], chart: ChartInput) -> dict:
    first = group[0].settings
    if display_name == "bar":
        return {"type": "bar"}
    interpolate = INTERPOLATE.get(first.get("line.interpolate") or chart.setting("line.interpolate", "linear"),
                                  "linear")
    mark: dict = {"type": display_name, "interpolate": interpolate}
    if display_name == "area":
        mark.update({"opacity": 0.75, "line": True})
        return mark
    mark["strokeWidth"] = 2
    dash = DASHES.get(first.get("line.style"))
    if dash:
        mark["strokeDash"] = dash
    markers = first.get("line.marker_enabled", chart.settings.get("line.marker_enabled"))
    if markers is True or (markers is None and len(group[0].points) <= 30):
        mark["point"] = {"size": 30, "filled": True}
    return mark


def _groups(graph: Graph) -> list[tuple[str, list[Series]]]:
    """Series grouped into layers: bars and areas each one layer (they stack or group together), lines
    one layer per style (interpolation, dash, markers are mark properties)."""
    groups: list[tuple[str, list[Series]]] = []
    for display_name in LAYER_ORDER:
        members = [one for one in graph.series if one.display == display_name]
        if not members:
            continue
        if display_name != "line":
            groups.append((display_name, members))
            continue
        styles: dict = {}
        for one in members:
            style = (one.settings.get("line.interpolate"), one.settings.get("line.style"),
                     one.settings.get("line.marker_enabled"))
            styles.setdefault(style, []).append(one)
        groups.extend(("line", styled) for styled in styles.values())
    return groups


def _stack_totals(chart: ChartInput, graph: Graph, axis: XAxis) -> list[dict]:
    totals: dict = {}
    for one in graph.series:
        if one.display not in STACKABLE:
            continue
        for raw, y in one.points:
            x = axis.value(chart, graph.x, raw)
            if x is not None and y is not None:
                totals[x] = totals.get(x, 0) + y
    return [{"x": x, "y": total, "label": label_text(chart, graph.metrics[0], total)}
            for x, total in totals.items()]


def _trend(chart: ChartInput, graph: Graph, axis: XAxis, data: list[dict]) -> list[dict]:
    by_series: dict = {}
    for row in data:
        if axis.kind == "ordinal":
            t = axis.domain.index(row["x"])
        else:
            t = sort_key(row["x"])[1]
        by_series.setdefault(row["series"], []).append((row["x"], t, row["y"]))
    return trend_rows(list(by_series.items()))


def sides(chart: ChartInput, graph: Graph, stack: str | None) -> list[str]:
    """"left" or "right" per series: series_settings' `axis` when stored, else Metabase's auto split
    (graph.y_axis.auto_split, on by default) of metrics whose sizes differ by more than SPLIT_RATIO
    onto a second axis. A breakout's series share one metric, and stacked series one scale: no split."""
    stored = [one.settings.get("axis") for one in graph.series]
    if graph.breakout is not None or stack or len(graph.series) < 2 or chart.display == "row":
        return ["left"] * len(graph.series)
    if any(side in ("left", "right") for side in stored):
        return [side if side in ("left", "right") else "left" for side in stored]
    if chart.settings.get("graph.y_axis.auto_split") is False:
        return ["left"] * len(graph.series)
    sizes = [max((abs(y) for _, y in one.points if y is not None), default=0) for one in graph.series]
    first = sizes[0]
    result = ["left" if _alike(size, first) else "right" for size in sizes]
    return result if "right" in result else ["left"] * len(graph.series)


def _alike(size: float, other: float) -> bool:
    small, large = sorted((abs(size), abs(other)))
    return large == 0 or (small > 0 and large / small <= SPLIT_RATIO)


def _series_layers(chart: ChartInput, graph: Graph, axis: XAxis, members: list[Series], y_stacked: dict,
                   y_plain: dict, color: dict, stack: str | None, show_values: bool) -> list[dict]:
    """The layers drawing `members` (series on one y axis): one per display group, with data labels."""
    swap = chart.display == "row"
    x_channel, y_channel, offset = ("y", "x", "yOffset") if swap else ("x", "y", "xOffset")
    layers: list[dict] = []
    groups = _groups(Graph(graph.x, graph.breakout, graph.metrics, members))
    for display_name, group in groups:
        names = [one.title for one in group]
        stacked = stack is not None and display_name in STACKABLE
        encoding = {x_channel: axis.encoding, y_channel: y_stacked if stacked else y_plain, "color": color}
        if stacked:
            encoding["order"] = {"field": "order", "type": "quantitative"}
        if display_name == "bar" and len(group) > 1 and not stacked:
            encoding[offset] = {"field": "series", "type": "nominal", "scale": {"domain": names}}
        layer = {"mark": _mark(display_name, group, chart), "encoding": encoding}
        if len(groups) > 1 or len(members) < len(graph.series):
            # Filtering 10,000 points costs Vega as much as drawing them: only when layers split the series.
            layer["transform"] = [{"filter": {"field": "series", "oneOf": names}}]
        layers.append(layer)
        if show_values and not stacked:
            text = {x_channel: axis.encoding, y_channel: y_plain, "text": {"field": "label"}}
            if offset in encoding:
                text[offset] = encoding[offset]
            layers.append({**({"transform": layer["transform"]} if "transform" in layer else {}),
                           "mark": _label_mark(chart), "encoding": text})
    return layers


def _label_mark(chart: ChartInput) -> dict:
    mark = {"type": "text", "fontSize": 10, "color": chart.theme.text}
    mark.update({"align": "left", "baseline": "middle", "dx": 4} if chart.display == "row" else
                {"align": "center", "baseline": "bottom", "dy": -4})
    return mark


@display("bar", "line", "area", "row", "combo")
def graph_spec(chart: ChartInput) -> dict:
    graph = build_graph(chart)
    if graph is None:
        return DISPLAYS[FALLBACK](chart)
    if chart.display == "row":
        for one in graph.series:
            one.display = "bar"
    titles = _titles(graph)
    stack = stack_type(chart, graph)
    has_bars = any(one.display == "bar" for one in graph.series)
    axis = x_axis(chart, graph, has_bars)
    show_values = bool(chart.settings.get("graph.show_values")) and stack != "normalized" and (
        chart.setting("graph.label_value_frequency") == "all"
        or len(axis.domain or graph.xs) * (1 if stack else len(graph.series)) <= chart.width / LABEL_SPACE)
    data = _data(chart, graph, axis, show_values)
    if not data:
        return empty_spec(chart)
    swap = chart.display == "row"
    x_channel, y_channel = ("y", "x") if swap else ("x", "y")
    color = {"field": "series", "type": "nominal", "title": None,
             "scale": {"domain": titles, "range": [one.color for one in graph.series]},
             "legend": {"title": None} if len(graph.series) > 1 else None}
    placed = sides(chart, graph, stack)
    left = [one for one, side in zip(graph.series, placed) if side == "left"]
    right = [one for one, side in zip(graph.series, placed) if side == "right"]
    y_stacked = y_encoding(chart, graph if not right else _on(graph, left), stack)
    y_plain = {**y_stacked, "stack": None}
    layers = _series_layers(chart, graph, axis, left, y_stacked, y_plain, color, stack, show_values)
    if show_values and stack == "stacked":
        layers.append({"data": {"values": _stack_totals(chart, graph, axis)}, "mark": _label_mark(chart),
                       "encoding": {x_channel: axis.encoding, y_channel: y_plain, "text": {"field": "label"}}})
    if chart.settings.get("graph.show_trendline") and stack != "normalized":
        rows = _trend(chart, Graph(graph.x, graph.breakout, graph.metrics, left), axis, data)
        if rows:
            layers.append(trend_layer(rows, axis.encoding, color, swap))
    if stack != "normalized":
        layers.extend(goal_layers(chart, y_channel))
    if not right:
        return {"data": {"values": data}, "layer": layers}
    y_right = y_encoding(chart, _on(graph, right), None)
    y_right = {**y_right, "stack": None, "axis": {**(y_right.get("axis") or {}), "orient": "right", "grid": False}
               if y_right.get("axis") is not None else None}
    right_layers = _series_layers(chart, graph, axis, right, y_right, y_right, color, None, show_values)
    both = [{"layer": layers}, {"layer": right_layers}]
    # The side drawing lines goes on top, so that bars on the other axis never hide them.
    both.sort(key=lambda side: max(LAYER_ORDER.index(layer["mark"]["type"]) for layer in side["layer"]
                                   if isinstance(layer.get("mark"), dict) and layer["mark"]["type"] in LAYER_ORDER))
    return {"data": {"values": data}, "layer": both, "resolve": {"scale": {"y": "independent"}}}


def _on(graph: Graph, members: list[Series]) -> Graph:
    """The graph restricted to some series (for the title and format of the axis they are drawn on)."""
    metrics = list(dict.fromkeys(one.metric for one in members))
    return Graph(graph.x, graph.breakout, metrics, members)
