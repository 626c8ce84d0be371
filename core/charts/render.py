"""Card + result -> ChartInput -> Vega-Lite spec -> SVG/PNG/PDF bytes, through vl-convert; a dashcard's
series (more cards and their results) are combined into the main card's input (core.charts.combine).

vl-convert starts its JavaScript runtime on the first conversion of a process (about a second) and keeps
it, so a worker pays that once; `warm()` lets a server pay it before the first request. What makes the
output the same bytes for the same card and data lives here: rows become JSON-ready values in one way,
sizes and the theme config are added in one place, and temporal values are UTC text (no machine zone).
"""
from __future__ import annotations

import copy
import datetime as dt
import decimal
import math
import threading
import uuid
from dataclasses import replace
from typing import Any, Iterable

import orjson

from core.query.results import infer_base_types

from . import thin
from .combine import card_name, combined
from .drill import link_marks, mark_svg
from .registry import ChartInput, spec_for
from .theme import theme_named

FORMATS = ("svg", "png", "pdf")
DEFAULT_WIDTH, DEFAULT_HEIGHT = 540, 360
MIN_SIZE, MAX_SIZE = 80, 4000
MAX_SCALE = 4
# A request may ask for 4000 x 4000 at scale 4: the raster is held in memory, so the scale gives way
# past 8 M pixels (32 MiB of RGBA; a 1200 x 800 chart at retina scale 2 is 3.8 M).
MAX_PIXELS = 8_000_000
# Rows handed to a display: enough for any chart a person can read; the rest are only counted.
MAX_ROWS = 10000
COMPOSITE = ("vconcat", "hconcat", "concat", "facet", "repeat")
TEMPORAL_TEXT = frozenset({"type/Date", "type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
                           "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/Instant"})

_warm = threading.Event()


def _converter():
    import vl_convert

    return vl_convert


def warm() -> None:
    """Start vl-convert's runtime now (idempotent), so the first real chart is as fast as the next.
    Call it in a worker, never in a process that forks afterwards (gunicorn's master): the runtime's
    threads do not survive a fork, which is also why nothing draws a chart at app start-up."""
    if not _warm.is_set():
        _converter().vegalite_to_svg({"mark": "point", "data": {"values": [{}]}})
        _warm.set()


# ---- input ---------------------------------------------------------------------------------------


def json_cell(value: Any, temporal: bool = False) -> Any:
    """A cell as Vega-Lite data: numbers plain (non-finite -> null), datetimes as UTC-marked wall-clock
    ISO text, dates as ISO dates, anything else as text."""
    kind = type(value)
    if kind is int or kind is bool or value is None or (kind is str and not temporal):
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    return _convert(value)


def _convert(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else (float(value) if value.is_finite() else None)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.replace(tzinfo=None)
        return value.isoformat() + "Z"
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, str):
        # An engine that keeps datetimes as text ("2024-01-05 13:45:00", SQLite).
        if len(value) >= 19 and value[10] in " T" and value[4] == "-":
            try:
                return _convert(dt.datetime.fromisoformat(value))
            except ValueError:
                return value
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int):
        return value
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _cols_rows(result) -> tuple[list[dict], Iterable, int | None]:
    """Columns, rows and (when known) the total row count of a query-result dict ({"data": {"cols",
    "rows"}, "row_count"}, rows any iterable) or a core.query Result object."""
    if isinstance(result, dict):
        data = result.get("data") or result
        rows = data.get("rows")
        return list(data.get("cols") or []), [] if rows is None else rows, result.get("row_count")
    return list(result.cols), result, None


def chart_input(card, result, *, width: int | None = None, height: int | None = None,
                theme="light") -> ChartInput:
    """What a display is given: the card's (a dict or a Card row) display and settings, the first MAX_ROWS rows as JSON-ready
    values, the total row count, the theme and the size."""
    cols, source, total = _cols_rows(result)
    raw, seen = [], 0
    for row in source:
        if seen < MAX_ROWS:
            raw.append(row)
        seen += 1
    # A streamed native result knows no column type before its rows are read (SQLite): as the JSON
    # results do, take it from the first values, on copies so the caller's columns stay as they were.
    cols = copy.deepcopy(cols)
    infer_base_types(cols, raw)
    temporal = [(c.get("effective_type") or c.get("base_type")) in TEMPORAL_TEXT for c in cols]
    temporal += [False] * max(0, max((len(r) for r in raw), default=0) - len(temporal))
    rows = [[json_cell(v, temporal[i]) for i, v in enumerate(row)] for row in raw]
    if not isinstance(card, dict):  # a Card row (core.appdb.models) or anything with the two attributes
        card = {"display": getattr(card, "display", None),
                "visualization_settings": getattr(card, "visualization_settings", None)}
    settings = card.get("visualization_settings")
    return ChartInput(display=str(card.get("display") or "table"), settings=settings if isinstance(settings, dict)
                      else {}, cols=cols, rows=rows, row_count=seen if total is None else max(total, seen),
                      theme=theme_named(theme), width=_size(width, DEFAULT_WIDTH), height=_size(height, DEFAULT_HEIGHT))


def _size(value: int | None, default: int) -> int:
    return default if value is None else max(MIN_SIZE, min(MAX_SIZE, int(value)))


# ---- spec ----------------------------------------------------------------------------------------


def complete(spec: dict, chart: ChartInput) -> dict:
    """The display's spec with the size, background, autosize and the theme's config (under any config
    the display set for itself)."""
    full = dict(spec)
    if not any(key in full for key in COMPOSITE):
        full.setdefault("width", chart.width)
        full.setdefault("height", chart.height)
        full.setdefault("autosize", {"type": "fit", "contains": "padding"})
    full["background"] = chart.theme.background
    full.setdefault("padding", 8)
    full["config"] = _merge(chart.theme.config(), spec.get("config") or {})
    return full


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def chart_spec(card: dict, result, *, width: int | None = None, height: int | None = None, theme="light",
               series: Iterable[tuple[Any, Any]] = (), drill: bool = False) -> dict:
    """The complete Vega-Lite spec drawing `card` over `result`, with the results of `series` ((card,
    result) pairs: a dashcard's extra cards) combined into its chart when its display combines cards;
    with `drill`, a graph's data rows carry what their marks draw (core.charts.drill)."""
    size = {"width": width, "height": height, "theme": theme}
    chart = thin.for_chart(replace(chart_input(card, result, **size), drill=drill and not series))
    extras = [(card_name(extra), thin.for_chart(chart_input(extra, extra_result, **size)), _display_of(extra))
              for extra, extra_result in series]
    if extras:
        chart = combined(card_name(card), chart, extras)
    return complete(spec_for(chart), chart)


def _display_of(card) -> str:
    return str((card.get("display") if isinstance(card, dict) else getattr(card, "display", None)) or "table")


# ---- drawing -------------------------------------------------------------------------------------


def raster_scale(spec: dict, scale: float) -> float:
    """The scale a raster is drawn at: the asked one (0.5 to MAX_SCALE), lowered to stay in MAX_PIXELS."""
    scale = max(0.5, min(MAX_SCALE, float(scale or 1)))
    width, height = spec.get("width"), spec.get("height")
    sized = isinstance(width, (int, float)) and isinstance(height, (int, float))
    if sized and width * height * scale ** 2 > MAX_PIXELS:
        scale = (MAX_PIXELS / (width * height)) ** 0.5
    return scale


def draw(spec: dict, fmt: str, scale: float = 1) -> bytes:
    """A complete spec drawn as svg, png (at `scale`, for retina screens) or pdf."""
    converter = _converter()
    scale = raster_scale(spec, scale)
    # JSON text crosses into vl-convert faster than a dict converted value by value (a third less time
    # for a 10,000-point chart); orjson writes it in a few milliseconds.
    spec = orjson.dumps(spec).decode()
    if fmt == "svg":
        out = converter.vegalite_to_svg(spec).encode()
    elif fmt == "png":
        out = converter.vegalite_to_png(spec, scale=scale)
    elif fmt == "pdf":
        out = converter.vegalite_to_pdf(spec, scale=scale)
    else:
        raise ValueError(f"Unknown chart format {fmt!r}; known: {', '.join(FORMATS)}")
    _warm.set()
    return out


def render_card(card: dict, result, fmt: str, *, width: int | None = None, height: int | None = None,
                theme="light", scale: float = 1, series: Iterable[tuple[Any, Any]] = (),
                drill: bool = False) -> bytes:
    """`card` (a dict with display and visualization_settings) over `result` (a query-result dict or a
    core.query Result) drawn as svg, png or pdf, with `series` ((card, result) pairs) combined into it
    (chart_spec). `drill` (svg only: a page's chart) puts on each bar and point the row it draws."""
    drill = drill and fmt == "svg"
    spec = chart_spec(card, result, width=width, height=height, theme=theme, series=series, drill=drill)
    payloads = link_marks(spec) if drill else []
    out = draw(spec, fmt, scale)
    return mark_svg(out.decode(), payloads).encode() if payloads else out


def writer(fmt: str):
    """The `write(cols, rows, options)` of the `fmt` download (a core Exporter): the chart of
    options' display (a table when absent) and visualization_settings, sized and themed by options'
    width, height, theme and scale (core.export.response.chart_options), with options' `series` ((card,
    result) pairs: a dashcard's series cards) combined into it, its own series named by options' `name`."""

    def write(cols: list[dict], rows: Iterable, options: dict):
        card = {"display": options.get("display") or "table", "name": options.get("name"),
                "visualization_settings": options.get("visualization_settings") or {}}
        yield render_card(card, {"data": {"cols": cols, "rows": rows}}, fmt, width=options.get("width"),
                          height=options.get("height"), theme=options.get("theme") or "light",
                          scale=options.get("scale") or 1, series=options.get("series") or ())

    return write
