"""Marks a page can drill into: with `drill=True` (render_card), each bar and point of a graph carries the
result row it draws as `data-drill` JSON ({"dims": [[column index, value], ...], "col": metric column
index, "value": y}) and is focusable, so a page knows what was clicked without reading the picture.
Exports and e-mails never ask for it, so their SVG, PNG and PDF are unchanged.

Vega draws no custom attributes, but it wraps an item whose `href` channel is set in `<a xlink:href>`:
the spec's drillable layers get an href naming the item's payload (`drill-N`), and the drawn SVG's
anchors are then replaced by the attributes on the mark itself (lines and areas are unwrapped: a point
on them is the thing to click, drawn unseen when the line has no markers). The aria-label Vega writes from the encoding loses the href field.
"""
from __future__ import annotations

import re

import orjson
from markupsafe import escape

from .registry import ChartInput

FIELD = "drill_ref"
# Vega's loader puts its base URL before a relative href.
_ANCHOR = re.compile(r'<a xlink:href="[^"]*?drill-(\d+)"[^>]*>(<path[^>]*>)</a>')
_CLICKABLE = ("bar", "point", "circle", "square")


def drill_payload(chart: ChartInput, dimensions: list[int | None], metric: int, at: int) -> dict:
    """What a click on the mark drawing row `at`'s `metric` means: the row's dimension values, the
    metric's column and value (as the API answered them)."""
    row = chart.rows[at]
    dims = [[index, row[index]] for index in dimensions if index is not None and index < len(row)]
    return {"dims": dims, "col": metric, "value": row[metric] if metric < len(row) else None}


def link_marks(spec: dict) -> list[dict]:
    """Give every data row carrying a payload an href `drill-N` and every mark layer over those rows the
    href channel; the payloads in N's order."""
    values = (spec.get("data") or {}).get("values")
    if not isinstance(values, list):
        return []
    payloads: list[dict] = []
    for row in values:
        if isinstance(row, dict) and "drill" in row:
            row[FIELD] = f"drill-{len(payloads)}"
            payloads.append(row.pop("drill"))
    if payloads:
        _href_layers(spec)
    return payloads


def _href_layers(node: dict) -> None:
    for layer in node.get("layer") or ():
        if "layer" in layer:
            _href_layers(layer)
            continue
        mark = layer.get("mark")
        kind = mark.get("type") if isinstance(mark, dict) else mark
        if kind in ("bar", "line", "area", "point") and "data" not in layer:
            layer.setdefault("encoding", {})["href"] = {"field": FIELD}
            if kind in ("line", "area") and not (isinstance(mark, dict) and mark.get("point")):
                # A line drawn without markers still needs something to click: unseen points (the
                # page's style shows one when it is hovered or focused).
                layer["mark"] = {**(mark if isinstance(mark, dict) else {"type": kind}),
                                 "point": {"filled": True, "size": 60, "opacity": 0}}


def mark_svg(svg: str, payloads: list[dict]) -> str:
    """The drawn SVG with each linked mark's anchor replaced by its payload on the mark."""

    def replace(match: re.Match) -> str:
        path = re.sub(r';? ?' + FIELD + r': drill-\d+', "", match.group(2))
        role = re.search(r'aria-roledescription="([^"]*)"', path)
        if not role or role.group(1) not in _CLICKABLE:
            return path
        payload = payloads[int(match.group(1))] if int(match.group(1)) < len(payloads) else None
        if payload is None:
            return path
        data = escape(orjson.dumps(payload, default=str).decode())
        path = path.replace('role="graphics-symbol"', 'role="button"', 1)
        return path.replace("<path", f'<path class="drill-mark" tabindex="0" data-drill="{data}"', 1)

    return _ANCHOR.sub(replace, svg)
