"""The table family: table (the first rows that fit, with a "Showing N of M rows" footer), pivot (drawn
as its flat table, without the pivot-grouping column), object (the first row as field/value pairs),
and the fallback every unknown display draws as.

A table is text marks placed at pixel positions computed here (x/y with `scale: null`): Vega-Lite has no
table mark, and measuring in Python keeps columns aligned the same way on every machine.
"""
from __future__ import annotations

from ..conditional import cell_colors
from ..registry import ChartInput, display

ROW_HEIGHT = 24
CHAR_WIDTH = 6.6           # the average advance of the 12 px theme font, for column widths
CELL_PADDING = 10
MIN_COLUMN, MAX_COLUMN = 40, 260
MAX_TABLE_ROWS = 50
HIDDEN_COLUMNS = ("pivot-grouping",)


def _clip(text: str, width: float) -> str:
    room = int((width - CELL_PADDING) / CHAR_WIDTH)
    return text if len(text) <= room else text[: max(room - 1, 1)] + "…"


def grid(chart: ChartInput, headers: list[str], body: list[list[str]], right: list[bool], footer: str | None,
         bold_first: bool = False, fills: list[list[str | None]] | None = None) -> dict:
    """A spec drawing `headers` over `body` (already formatted text) in columns that fit `chart.width`,
    numbers (`right`) right-aligned, and `footer` under it; `fills` are cells' backgrounds (rgba text or
    None, body's shape: conditional formatting)."""
    theme = chart.theme
    widths = []
    for j, header in enumerate(headers):
        longest = max([len(header)] + [len(row[j]) for row in body])
        widths.append(max(MIN_COLUMN, min(MAX_COLUMN, longest * CHAR_WIDTH + CELL_PADDING * 2)))
    shown, used = 0, 0.0
    for width in widths:
        if used + width > chart.width and shown:
            break
        used += width
        shown += 1
    if shown < len(headers):
        more = f"{len(headers) - shown} more column{'s' if len(headers) - shown != 1 else ''} not shown"
        footer = f"{footer} · {more}" if footer else more
    cells, boxes, x = [], [], 0.0
    for j in range(shown):
        width = widths[j]
        for i, row_fills in enumerate(fills or []):
            if j < len(row_fills) and row_fills[j]:
                boxes.append({"x": x, "x2": x + width, "y": ROW_HEIGHT * (i + 1), "y2": ROW_HEIGHT * (i + 2),
                              "fill": row_fills[j]})
        anchor_x = x + width - CELL_PADDING if right[j] else x + CELL_PADDING
        align = "right" if right[j] else "left"
        cells.append({"x": anchor_x, "y": ROW_HEIGHT / 2, "t": _clip(headers[j], width), "a": align, "k": "head"})
        for i, row in enumerate(body):
            kind = "first" if bold_first and j == 0 else "cell"
            cells.append({"x": anchor_x, "y": ROW_HEIGHT * (i + 1.5), "t": _clip(row[j], width), "a": align,
                          "k": kind})
        x += width
    rules = [{"x": 0, "x2": used, "y": ROW_HEIGHT * (i + 1), "k": "head" if i == 0 else "row"}
             for i in range(len(body) + 1)]
    pixel = {"type": "quantitative", "scale": None, "axis": None}
    layers = [
        {"data": {"values": boxes}, "mark": {"type": "rect"},
         "encoding": {"x": {"field": "x", **pixel}, "x2": {"field": "x2"}, "y": {"field": "y", **pixel},
                      "y2": {"field": "y2"}, "color": {"field": "fill", "type": "nominal", "scale": None,
                                                       "legend": None}}},
    ] if boxes else []
    layers += [
        {"data": {"values": rules}, "mark": {"type": "rule"},
         "encoding": {"x": {"field": "x", **pixel}, "x2": {"field": "x2"}, "y": {"field": "y", **pixel},
                      "color": {"field": "k", "type": "nominal", "legend": None,
                                "scale": {"domain": ["head", "row"], "range": [theme.border, theme.grid]}}}},
    ]
    for align in ("left", "right"):
        for bold in (True, False):
            # Weight is a mark property in Vega-Lite, not a channel: one layer per alignment and weight.
            chosen = [c for c in cells if c["a"] == align and (c["k"] != "cell") == bold]
            if not chosen:
                continue
            layers.append({
                "data": {"values": chosen},
                "mark": {"type": "text", "align": align, "baseline": "middle", "fontSize": theme.font_size,
                         "fontWeight": "bold" if bold else "normal"},
                "encoding": {"x": {"field": "x", **pixel}, "y": {"field": "y", **pixel}, "text": {"field": "t"},
                             "color": {"condition": {"test": "datum.k === 'head'", "value": theme.muted},
                                       "value": theme.text}}})
    if footer:
        y = ROW_HEIGHT * (len(body) + 1) + ROW_HEIGHT * 0.75
        layers.append({"data": {"values": [{"x": 0, "y": y, "t": footer}]},
                       "mark": {"type": "text", "align": "left", "baseline": "middle", "color": theme.muted,
                                "fontSize": theme.font_size - 1, "fontStyle": "italic"},
                       "encoding": {"x": {"field": "x", **pixel}, "y": {"field": "y", **pixel},
                                    "text": {"field": "t"}}})
    return {"layer": layers}


def visible_columns(cols: list[dict], settings: dict | None) -> list[int]:
    """Indexes of the columns a table shows: table.columns' enabled entries in their order when set (a
    column the list does not name, new in the result, follows at the end as Metabase shows it), else
    all but the pivot bookkeeping column. Every table of a result (drawn, or the app's) shows these."""
    configured = (settings or {}).get("table.columns")
    names = [c.get("name") for c in cols]
    shown = [i for i, name in enumerate(names) if name not in HIDDEN_COLUMNS]
    if isinstance(configured, list) and configured:
        chosen, named = [], set()
        for entry in configured:
            if not isinstance(entry, dict) or entry.get("name") not in names:
                continue
            index = names.index(entry.get("name"))
            named.add(index)
            if entry.get("enabled", True) and index not in chosen:
                chosen.append(index)
        chosen += [i for i in shown if i not in named]
        if chosen:
            return chosen
    return shown


def _visible(chart: ChartInput) -> list[int]:
    return visible_columns(chart.cols, chart.settings)


def _footer(shown: int, total: int) -> str | None:
    if total == 0:
        return "No results"
    if shown < total:
        return f"Showing first {shown:,} of {total:,} rows"
    return f"Showing {total:,} row{'s' if total != 1 else ''}"


@display("table", "pivot")
def table(chart: ChartInput) -> dict:
    columns = _visible(chart)
    fits = max(1, int(chart.height / ROW_HEIGHT) - 2)
    rows = chart.rows[: min(fits, MAX_TABLE_ROWS)]
    body = [[chart.format_value(j, row[j]) if j < len(row) else "" for j in columns] for row in rows]
    right = [chart.is_number(j) for j in columns]
    colors = cell_colors(chart.cols, rows, chart.settings, bounds_rows=chart.rows)
    fills = [[row[j] for j in columns] for row in colors] if colors else None
    return grid(chart, [chart.title(j) for j in columns], body, right, _footer(len(rows), chart.row_count),
                fills=fills)


@display("object")
def object_detail(chart: ChartInput) -> dict:
    columns = _visible(chart)
    row = chart.rows[0] if chart.rows else None
    if row is None:
        return grid(chart, ["Field", "Value"], [], [False, False], "No results")
    body = [[chart.title(j), chart.format_value(j, row[j]) if j < len(row) else ""] for j in columns]
    fits = max(1, int(chart.height / ROW_HEIGHT) - 2)
    footer = None if len(body) <= fits else f"Showing first {fits} of {len(body)} fields"
    return grid(chart, ["Field", "Value"], body[:fits], [False, False], footer, bold_first=True)
