"""The single-number displays: scalar (the number), smartscalar (the last period's number and its
change from the one before), progress (a bar towards `progress.goal`) and gauge (a half dial over
`gauge.segments`). Each draws text and marks at pixel positions computed from the chart's size, with
the theme's colours; numbers are written by core.charts.format (compacted when too wide to fit).
"""
from __future__ import annotations

import math

from ..registry import ChartInput, display

DIGIT_WIDTH = 0.58          # advance of a digit as a fraction of the font size
PIXEL = {"type": "quantitative", "scale": None, "axis": None}


def _metric(chart: ChartInput, key: str = "scalar.field") -> int | None:
    """The column the number comes from: the named setting, else the last numeric column, else the first."""
    named = chart.col_index(chart.setting(key))
    if named is not None:
        return named
    numeric = [i for i in range(len(chart.cols)) if chart.is_number(i)]
    return numeric[-1] if numeric else (0 if chart.cols else None)


def _cell(chart: ChartInput, row: int, index: int | None):
    if index is None or not chart.rows or len(chart.rows[row]) <= index:
        return None
    return chart.rows[row][index]


def number_text(chart: ChartInput) -> str:
    """The number a single-number display shows, written as it draws it (formatted by its column's
    settings): the scalar's and gauge's first row, the smartscalar's last period, the progress value.
    For places that write the number as text rather than draw it (e-mailed subscriptions and alerts)."""
    if chart.display == "smartscalar":
        index = _metric(chart)
        rows = [r for r in chart.rows if index is not None and len(r) > index and r[index] is not None]
        value = rows[-1][index] if rows else None
    else:
        index = _metric(chart, "progress.value" if chart.display == "progress" else "scalar.field")
        value = _cell(chart, 0, index)
    if index is None or value is None:
        return "–"
    return chart.format_value(index, value, compact=bool(chart.setting("scalar.compact_primary_number", False)))


def _fitted(chart: ChartInput, index: int | None, value, size: float, room: float) -> tuple[str, float]:
    """The number's text and font size: full while it fits `room`, else compact, else a smaller font."""
    if index is None or value is None:
        return "–", size
    text = chart.format_value(index, value, compact=bool(chart.setting("scalar.compact_primary_number", False)))
    if len(text) * size * DIGIT_WIDTH > room:
        text = chart.format_value(index, value, compact=True)
    return text, min(size, room / max(len(text) * DIGIT_WIDTH, 1))


def _texts(marks: list[dict]) -> dict:
    """A layer of text marks, one per dict (x, y, t, size, color, weight)."""
    return {"layer": [{"data": {"values": [{}]},
                       "mark": {"type": "text", "align": "center", "baseline": "middle", "x": m["x"], "y": m["y"],
                                "text": m["t"], "fontSize": m["size"], "color": m["color"],
                                "fontWeight": m.get("weight", "normal")}} for m in marks]}


@display("scalar")
def scalar(chart: ChartInput) -> dict:
    index = _metric(chart)
    value = _cell(chart, 0, index)
    size = min(chart.height * 0.45, 72)
    text, size = _fitted(chart, index, value, size, chart.width * 0.9)
    marks = [{"x": chart.width / 2, "y": chart.height / 2 - size * 0.15, "t": text, "size": size,
              "color": chart.theme.text, "weight": "bold"}]
    if index is not None:
        marks.append({"x": chart.width / 2, "y": chart.height / 2 + size * 0.6 + 8, "t": chart.title(index),
                      "size": chart.theme.font_size + 1, "color": chart.theme.muted})
    return _texts(marks)


UNIT_WORDS = {"minute": "minute", "hour": "hour", "day": "day", "week": "week", "month": "month",
              "quarter": "quarter", "year": "year"}


@display("smartscalar")
def smartscalar(chart: ChartInput) -> dict:
    index = _metric(chart)
    rows = [r for r in chart.rows if index is not None and len(r) > index and r[index] is not None]
    current = rows[-1][index] if rows else None
    previous = rows[-2][index] if len(rows) > 1 else None
    theme = chart.theme
    size = min(chart.height * 0.38, 64)
    text, size = _fitted(chart, index, current, size, chart.width * 0.9)
    centre = chart.width / 2
    marks = [{"x": centre, "y": chart.height * 0.4, "t": text, "size": size, "color": theme.text, "weight": "bold"}]
    dates = next((i for i in range(len(chart.cols)) if chart.is_temporal(i)), None)
    unit = UNIT_WORDS.get((chart.cols[dates].get("unit") if dates is not None else None) or "", "period")
    if rows and dates is not None:
        marks.append({"x": centre, "y": chart.height * 0.4 - size * 0.5 - 14,
                      "t": chart.format_value(dates, rows[-1][dates]), "size": theme.font_size,
                      "color": theme.muted})
    below = chart.height * 0.4 + size * 0.55 + 16
    if previous is None or not isinstance(current, (int, float)) or not isinstance(previous, (int, float)):
        marks.append({"x": centre, "y": below, "t": f"No data for the previous {unit}",
                      "size": theme.font_size + 1, "color": theme.muted})
        return _texts(marks)
    change = (current - previous) / abs(previous) if previous else None
    up = current > previous
    good = up != bool(chart.setting("scalar.switch_positive_negative", False))
    if change is None or current == previous:
        arrow, color, pct = "", theme.muted, "No change"
    else:
        arrow = "↑ " if up else "↓ "
        color = theme.positive if good else theme.negative
        pct = f"{abs(change) * 100:,.2f}".rstrip("0").rstrip(".") + "%"
    marks.append({"x": centre, "y": below, "t": arrow + pct, "size": theme.font_size + 4, "color": color,
                  "weight": "bold"})
    marks.append({"x": centre, "y": below + 22, "t": f"vs. previous {unit}: {chart.format_value(index, previous)}",
                  "size": theme.font_size, "color": theme.muted})
    return _texts(marks)


@display("progress")
def progress(chart: ChartInput) -> dict:
    index = _metric(chart, "progress.value")
    value = _cell(chart, 0, index)
    number = value if isinstance(value, (int, float)) else 0
    goal = chart.setting("progress.goal", 0)
    goal = goal if isinstance(goal, (int, float)) else 0
    theme = chart.theme
    color = chart.setting("progress.color") or theme.positive
    share = 1.0 if goal <= 0 else max(0.0, min(1.0, number / goal))
    left, right = 16, chart.width - 16
    top, bar = chart.height * 0.4, min(40, chart.height * 0.2)
    reached = goal > 0 and number >= goal
    layers = [
        {"data": {"values": [{"x": left, "x2": right, "c": theme.grid},
                             {"x": left, "x2": left + (right - left) * share, "c": color}]},
         "mark": {"type": "rect", "y": top, "y2": top + bar, "cornerRadius": 4},
         "encoding": {"x": {"field": "x", **PIXEL}, "x2": {"field": "x2"},
                      "color": {"field": "c", "type": "nominal", "scale": None, "legend": None}}},
    ]
    text = chart.format_value(index, value) if index is not None and value is not None else "0"
    goal_text = chart.format_value(index, goal) if index is not None else str(goal)
    marks = [{"x": left, "y": top - 22, "t": text, "size": theme.font_size + 10, "color": theme.text,
              "weight": "bold"},
             {"x": right, "y": top + bar + 16, "t": ("Goal exceeded " if reached and number > goal else "Goal ")
              + goal_text, "size": theme.font_size, "color": theme.muted}]
    for mark, align in zip(marks, ("left", "right")):
        layers.append({"data": {"values": [{}]},
                       "mark": {"type": "text", "align": align, "baseline": "middle", "x": mark["x"],
                                "y": mark["y"], "text": mark["t"], "fontSize": mark["size"], "color": mark["color"],
                                "fontWeight": mark.get("weight", "normal")}})
    return {"layer": layers}


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _nice(value: float) -> float:
    """A round number at or above `value` (1, 2, 5 x 10^n)."""
    if value <= 0:
        return 1
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= value)


def _segments(chart: ChartInput, value: float) -> list[dict]:
    configured = chart.setting("gauge.segments")
    segments = []
    if isinstance(configured, list):
        for i, s in enumerate(configured):
            if isinstance(s, dict) and _is_number(s.get("min")) and _is_number(s.get("max")):
                segments.append({"min": s["min"], "max": s["max"], "color": s.get("color") or chart.theme.color(i),
                                 "label": s.get("label") or ""})
    if segments:
        return sorted(segments, key=lambda s: s["min"])
    top = _nice(abs(value) * 1.5 if value else 1)
    theme = chart.theme
    return [{"min": 0, "max": top / 3, "color": theme.negative, "label": ""},
            {"min": top / 3, "max": top * 2 / 3, "color": "#F9CF48", "label": ""},
            {"min": top * 2 / 3, "max": top, "color": theme.positive, "label": ""}]


@display("gauge")
def gauge(chart: ChartInput) -> dict:
    index = _metric(chart)
    value = _cell(chart, 0, index)
    number = value if isinstance(value, (int, float)) else 0
    segments = _segments(chart, number)
    low, high = segments[0]["min"], max(s["max"] for s in segments)
    theme = chart.theme
    cx, cy = chart.width / 2, chart.height * 0.68
    radius = max(20, min(chart.width / 2 - 40, chart.height * 0.55))  # room for segment labels outside
    angle = {"type": "quantitative", "scale": {"domain": [low, high], "range": [-math.pi / 2, math.pi / 2]}}
    needle = max(low, min(high, number))
    span = (high - low) * 0.004 or 0.004
    arcs = [{"a": s["min"], "b": s["max"], "c": s["color"], "inner": radius * 0.72, "outer": radius} for s in segments]
    arcs.append({"a": needle - span, "b": needle + span, "c": theme.text, "inner": 0, "outer": radius * 1.02})
    text, size = _fitted(chart, index, value, min(radius * 0.35, 40), radius * 1.3)
    layers = [{"data": {"values": arcs}, "mark": {"type": "arc", "x": cx, "y": cy},
               "encoding": {"theta": {"field": "a", **angle}, "theta2": {"field": "b"},
                            "radius": {"field": "inner", "type": "quantitative", "scale": None},
                            "radius2": {"field": "outer"},
                            "color": {"field": "c", "type": "nominal", "scale": None, "legend": None}}}]
    labels = [(cx - radius * 0.86, cy + 14, chart.format_value(index, low, True) if index is not None else str(low)),
              (cx + radius * 0.86, cy + 14, chart.format_value(index, high, True) if index is not None else str(high)),
              ]
    for segment in segments:
        if segment["label"]:
            # Vega's angles start at 12 o'clock and turn clockwise.
            middle = ((segment["min"] + segment["max"]) / 2 - low) / ((high - low) or 1) * math.pi - math.pi / 2
            labels.append((cx + radius * 1.1 * math.sin(middle), cy - radius * 1.1 * math.cos(middle),
                           segment["label"]))
    marks = [{"x": x, "y": y, "t": t, "size": theme.font_size, "color": theme.muted} for x, y, t in labels]
    marks.append({"x": cx, "y": cy + size * 0.8 + 6, "t": text, "size": size, "color": theme.text, "weight": "bold"})
    return {"layer": layers + _texts(marks)["layer"]}
