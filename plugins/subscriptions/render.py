"""A card's part of a subscription: its query run as a given user (core.query.processor, with that
user's permissions), drawn as a PNG chart (core.charts) or, for tables, scalars and charts that cannot
be drawn, as an HTML table; and its CSV/XLSX files (core.export writers).

Everything is drawn with the visualization settings it is given: a dashboard subscription passes the
card's merged with its dashcard's (core.export.dashcard_settings.merged), so the e-mail shows the
dashcard's title, series names, goal and column formats as the dashboard does. The HTML table shows
the columns a drawn table shows (visible_columns: `table.columns`' order and on/off), each value as the
app writes it (value_formatter) and the cells conditional formatting colours (cell_colors).

The HTML uses inline styles only: mail clients drop style sheets.
"""
from __future__ import annotations

import html
import logging
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.charts import chart_input
from core.charts.conditional import cell_colors
from core.charts.displays.scalar import number_text
from core.charts.displays.table import visible_columns
from core.charts.format import value_formatter
from core.http.errors import ApiError
from core.outbound.mail import Part
from core.policy import permissions as perms
from core.query import processor
from core.query.errors import QueryFailed

log = logging.getLogger(__name__)

TABLE_DISPLAYS = frozenset({"table", "pivot", "object"})
SCALAR_DISPLAYS = frozenset({"scalar", "smartscalar", "gauge", "progress"})
TABLE_ROWS, TABLE_COLUMNS = 20, 10
CHART_WIDTH = 540
CELL = "padding:4px 8px;border-bottom:1px solid #eee;text-align:left;font-size:12px;"


@dataclass
class CardOutput:
    """One card rendered for a message: its HTML, the inline images it refers to, its row count."""

    card_id: int
    name: str
    html: str
    row_count: int = 0
    kind: str = "table"
    inline: list[Part] = field(default_factory=list)
    result: dict | None = None


def run_card(session: Session, user: User, card: Card, parameters: list | None = None) -> dict:
    """The card's completed result (a dict), or a failed one with `error`, run as `user`."""
    if not perms.can_read_item(session, user, card.collection_id):
        return {"status": "failed", "error": "You don't have permissions to do that."}
    try:
        result, _ = processor.run_query(session, user, card.dataset_query, context="pulse", card_id=card.id,
                                        parameters=parameters)
    except (QueryFailed, ApiError) as exc:
        return {"status": "failed", "error": getattr(exc, "message", None) or str(exc)}
    return result


def _cols_rows(result: dict) -> tuple[list[dict], list]:
    data = result.get("data") or {}
    return list(data.get("cols") or []), list(data.get("rows") or [])


def _cell(value: Any) -> str:
    return "" if value is None else html.escape(str(value))


def table_html(cols: list[dict], rows: list, settings: dict | None = None) -> str:
    """The first rows of the shown columns (at most TABLE_ROWS by TABLE_COLUMNS), formatted and
    coloured as `settings` say."""
    shown = visible_columns(cols, settings)
    picked = shown[:TABLE_COLUMNS]
    formats = {i: value_formatter(cols[i], settings) for i in picked}
    page = rows[:TABLE_ROWS]
    colors = cell_colors(cols, page, settings, bounds_rows=rows) or [[None] * len(cols) for _ in page]
    head = "".join(f'<th style="{CELL}color:#949aab;">{_cell(cols[i].get("display_name") or cols[i].get("name"))}</th>'
                   for i in picked)

    def td(row, fills, i):
        fill = f"background-color:{fills[i]};" if i < len(fills) and fills[i] else ""
        return f'<td style="{CELL}{fill}">{_cell(formats[i](row[i]) if i < len(row) else None)}</td>'

    body = "".join("<tr>" + "".join(td(row, fills, i) for i in picked) + "</tr>" for row, fills in zip(page, colors))
    more = ""
    if len(rows) > TABLE_ROWS or len(shown) > TABLE_COLUMNS:
        more = (f'<p style="font-size:12px;color:#949aab;">Showing {min(len(rows), TABLE_ROWS)} of {len(rows)} rows'
                f' and {len(picked)} of {len(shown)} columns.</p>')
    return f'<table style="border-collapse:collapse;"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}'


def settings_of(card: Card, settings: dict | None) -> dict:
    """The settings to draw `card` with: those given (a dashcard's merged ones), else the card's own."""
    return settings if settings is not None else (card.visualization_settings or {})


def _chart_png(card: Card, result: dict, width: int, settings: dict | None = None) -> bytes:
    from core.charts.render import render_card

    return render_card({"display": card.display, "visualization_settings": settings_of(card, settings)},
                       result, "png", width=width)


def render(card: Card, result: dict, *, width: int = CHART_WIDTH, cid: str | None = None,
           settings: dict | None = None) -> CardOutput:
    """The card over its result, drawn with `settings` (default: the card's own): an image referred to as
    cid:<cid> (or a data: URL when `cid` is None, for previews in a browser), a scalar, a table, or the
    error; headed by the settings' `card.title`, else the card's name."""
    settings = settings_of(card, settings)
    name = str(settings.get("card.title") or card.name or "")
    title = f'<h3 style="font-size:16px;margin:16px 0 8px;">{_cell(name)}</h3>'
    if result.get("status") != "completed":
        message = _cell(result.get("error") or "The query failed.")
        return CardOutput(card.id, name, f'{title}<p style="color:#ed6e6e;">{message}</p>', 0, "error",
                          result=result)
    cols, rows = _cols_rows(result)
    count = result.get("row_count", len(rows))
    display = card.display or "table"
    if display in SCALAR_DISPLAYS and rows and rows[0]:
        number = number_text(chart_input({"display": display, "visualization_settings": settings}, result))
        body = f'<p style="font-size:32px;font-weight:bold;margin:0;">{_cell(number)}</p>'
        return CardOutput(card.id, name, title + body, count, "scalar", result=result)
    if display not in TABLE_DISPLAYS and rows:
        try:
            png = _chart_png(card, result, width, settings)
        except Exception:  # a display the renderer cannot draw for this data: the table says the same
            log.warning("card %s could not be drawn; sent as a table", card.id, exc_info=True)
        else:
            if cid is None:
                import base64

                src = "data:image/png;base64," + base64.b64encode(png).decode()
                inline = []
            else:
                src, inline = f"cid:{cid}", [Part(cid, png, "image/png")]
            body = f'<img src="{src}" alt="{_cell(name)}" style="max-width:100%;" width="{width}">'
            return CardOutput(card.id, name, title + body, count, "chart", inline, result)
    if not rows:
        return CardOutput(card.id, name, f'{title}<p style="color:#949aab;">No results.</p>', 0, "table",
                          result=result)
    return CardOutput(card.id, name, title + table_html(cols, rows, settings), count, "table", result=result)


def card_png(card: Card, result: dict, width: int, settings: dict | None = None) -> bytes:
    """The card drawn as a PNG whatever its display (a table card as a table chart)."""
    if result.get("status") != "completed":
        raise QueryFailed(result.get("error") or "The query failed.", "query")
    return _chart_png(card, result, width, settings)


def attachments(card: Card, result: dict, include_csv: bool, include_xls: bool, format_rows: bool,
                settings: dict | None = None) -> list[Part]:
    """The card's result as CSV and/or XLSX files named after the card, written with `settings`
    (default: the card's own) as a download of it is."""
    if result.get("status") != "completed" or not (include_csv or include_xls):
        return []
    from core.export import csv, xlsx

    cols, rows = _cols_rows(result)
    options = {"visualization_settings": settings_of(card, settings), "format_rows": format_rows}
    stem = "".join(c if c.isalnum() or c in "-_ " else "_" for c in (card.name or "card")).strip() or "card"
    parts = []
    if include_csv:
        parts.append(Part(f"{stem}.csv", b"".join(csv.write(cols, rows, options)), "text/csv"))
    if include_xls:
        parts.append(Part(f"{stem}.xlsx", b"".join(xlsx.write(cols, rows, options)),
                          "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"))
    return parts
