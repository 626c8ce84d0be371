"""A query result as a page shows it: a card's chart as the chart renderer draws it (SVG, the same
picture as in exports and e-mails), a number, or a table of its rows. Shared by the pages that show
cards (dashboards, questions, x-rays).

The theme follows the person's choice, which static/theme.js keeps in the `tessera-theme` cookie, so
a chart drawn on the server matches the page around it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from flask import request
from markupsafe import Markup, escape

from core.charts.render import render_card
from core.export.formatting import formatter, titles

THEME_COOKIE = "tessera-theme"
# Displays drawn as HTML rather than as a picture: the rows themselves, or one number. The chart
# renderer draws no maps (it pictures their rows), so a map's rows are shown as a table here.
TABLE_DISPLAYS = frozenset({"table", "pivot", "object", "map"})
NUMBER_DISPLAYS = frozenset({"scalar", "smartscalar", "gauge", "progress"})
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*>\s*")


def theme() -> str:
    return "dark" if request.cookies.get(THEME_COOKIE) == "dark" else "light"


def shape(card: dict) -> str:
    """How a card is shown: "table", "number" or "chart"."""
    display = str(card.get("display") or "table")
    if display in TABLE_DISPLAYS:
        return "table"
    if display in NUMBER_DISPLAYS:
        return "number"
    return "chart"


def chart_svg(card: dict, result: dict, *, width: int | None = None, height: int | None = None) -> Markup:
    """The card's chart over `result` (the API's query answer) as inline SVG, named for screen readers."""
    svg = render_card(card, result, "svg", width=width, height=height, theme=theme()).decode("utf-8")
    svg = _XML_DECLARATION.sub("", svg)
    label = escape(card.get("name") or "Chart")
    return Markup(svg.replace("<svg", f'<svg role="img" aria-label="{label}"', 1))


def columns(result: dict) -> list[dict]:
    return list(((result.get("data") or {}).get("cols")) or [])


def rows(result: dict) -> list[list]:
    return list(((result.get("data") or {}).get("rows")) or [])


def number(result: dict):
    """The first value of the first row (a scalar card's number), or None."""
    first = rows(result)[:1]
    return first[0][0] if first and first[0] else None


# -- a result's rows as a table: formatted cells, sorted by a clicked column, a page at a time ----------

@dataclass(frozen=True)
class TablePage:
    """The rows of one page of a result, each cell formatted as Metabase shows it."""

    titles: list[str]
    rows: list[list[str]]
    sort: int | None        # the column sorted by, or None for the result's own order
    descending: bool
    page: int               # 1-based
    pages: int
    total: int              # rows in the result
    per_page: int

    @property
    def first(self) -> int:
        return (self.page - 1) * self.per_page + 1

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1


def _sort_key(value):
    # None last, then numbers before text, so a column of mixed values still sorts without an error.
    if value is None:
        return (2, 0, "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    return (1, 0, str(value))


def table_page(result: dict, settings: dict | None, *, sort: int | None = None, descending: bool = False,
               page: int = 1, per_page: int = 20) -> TablePage:
    """A page of the result's rows (the rows the query returned, as Metabase's tables sort them: in the page)."""
    cols = columns(result)
    all_rows = rows(result)
    if sort is not None and 0 <= sort < len(cols):
        all_rows = sorted(all_rows, key=lambda row: _sort_key(row[sort] if sort < len(row) else None),
                          reverse=descending)
    else:
        sort = None
    pages = max(1, -(-len(all_rows) // per_page))
    page = min(max(1, page), pages)
    shown = all_rows[(page - 1) * per_page:page * per_page]
    writers = [formatter(column, settings, True) for column in cols]
    cells = [["" if value is None else str(write(value)) for write, value in zip(writers, row)] for row in shown]
    return TablePage(titles(cols, settings, True), cells, sort, descending, page, pages, len(all_rows), per_page)


def number_text(result: dict, settings: dict | None, *, last: bool = False) -> str | None:
    """A number card's value as Metabase shows it (the first cell; the last row's last for a trend)."""
    cols, found = columns(result), rows(result)
    if not cols or not found or not found[0]:
        return None
    row = found[-1] if last else found[0]
    index = len(row) - 1 if last else 0
    value = row[index]
    return None if value is None else str(formatter(cols[index], settings, True)(value))
