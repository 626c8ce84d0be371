"""Which displays suit a result: Metabase's `isSensible` rules per visualization, over the result's
columns and rows, limited to the displays this renderer draws (core.charts.registry). The web app's
display picker offers these; anything that picks a display for a result asks here, so the app, exports
and e-mails agree on what a result can be drawn as.

A column is a *metric* when it is a summable number that is not a breakout, a *dimension* when it is not
an aggregation (Metabase's isMetric / isDimension; displays.series uses the same rules to pick columns).
"""
from __future__ import annotations

from . import format as fmt
from .registry import DISPLAYS

# The picker's order (Metabase's), each with the name a person reads.
ORDER = (("table", "Table"), ("bar", "Bar"), ("line", "Line"), ("area", "Area"), ("combo", "Combo"),
         ("row", "Row"), ("pie", "Pie"), ("scatter", "Scatter"), ("waterfall", "Waterfall"),
         ("funnel", "Funnel"), ("scalar", "Number"), ("smartscalar", "Trend"), ("gauge", "Gauge"),
         ("progress", "Progress"), ("pivot", "Pivot table"), ("object", "Detail"))
NAMES = dict(ORDER)


def _metric(col: dict) -> bool:
    return col.get("source") != "breakout" and fmt.is_number(col)


def _dimension(col: dict) -> bool:
    return col.get("source") != "aggregation"


def _numeric(col: dict) -> bool:
    return (col.get("effective_type") or col.get("base_type") or "") in fmt.NUMERIC_TYPES


def sensible(display: str, cols: list[dict], row_count: int) -> bool:
    """Whether `display` makes sense for a result of these columns and this many rows."""
    metrics = sum(1 for col in cols if _metric(col))
    dimensions = sum(1 for col in cols if _dimension(col))
    if display == "table":
        return True
    if display == "object":  # one record's fields
        return row_count == 1
    if display in ("bar", "line", "area", "combo", "row"):
        return row_count > 1 and len(cols) >= 2 and dimensions > 0 and metrics > 0
    if display == "pie":
        return row_count >= 2 and len(cols) >= 2 and dimensions >= 1 and metrics >= 1
    if display == "waterfall":
        only_dimensions = sum(1 for col in cols if _dimension(col) and not _metric(col))
        return row_count > 1 and len(cols) >= 2 and only_dimensions == 1 and metrics > 0
    if display == "funnel":
        return row_count > 1 and len(cols) >= 2 and dimensions >= 1 and metrics >= 1
    if display == "scatter":
        return row_count > 1 and sum(1 for col in cols if _numeric(col)) >= 2
    if display in ("scalar", "gauge"):
        return row_count == 1 and len(cols) == 1
    if display == "progress":
        return row_count == 1 and any(_numeric(col) for col in cols)
    if display == "smartscalar":
        dated = any(fmt.is_temporal(col) and col.get("unit") for col in cols)
        return row_count >= 1 and dated and metrics >= 1
    if display == "pivot":
        return any(col.get("source") == "aggregation" for col in cols) and \
            any(col.get("source") == "breakout" for col in cols)
    return False


def sensible_displays(cols: list[dict], row_count: int) -> list[str]:
    """The drawable displays that suit the result, in the picker's order."""
    return [name for name, _ in ORDER if name in DISPLAYS and sensible(name, cols, row_count)]
