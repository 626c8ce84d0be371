"""A query result as a page shows it: a card's chart as the chart renderer draws it (SVG, the same
picture as in exports and e-mails), a number, or a table of its rows. Shared by the pages that show
cards (dashboards, questions, x-rays).

The theme follows the person's choice, which static/theme.js keeps in the `tessera-theme` cookie, so
a chart drawn on the server matches the page around it.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable

from flask import request
from markupsafe import Markup, escape

from core.charts.conditional import cell_colors
from core.charts.displays.table import visible_columns
from core.charts.format import value_formatter
from core.charts.render import render_card
from core.export.formatting import formatter

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


def chart_svg(card: dict, result: dict, *, width: int | None = None, height: int | None = None,
              series: list[tuple[dict, dict]] = (), drill: bool = False) -> Markup:
    """The card's chart over `result` (the API's query answer) as inline SVG, named for screen readers,
    with a dashcard's `series` ((card, result) pairs) combined into it as more series; with `drill`,
    its bars and points carry the rows they draw (core.charts.drill)."""
    svg = render_card(card, result, "svg", width=width, height=height, theme=theme(),
                      series=series, drill=drill).decode("utf-8")
    svg = _XML_DECLARATION.sub("", svg)
    names = [str(one.get("name") or "") for one in (card, *(extra for extra, _ in series))]
    label = escape(", ".join(name for name in names if name) or "Chart")
    # A picture whose marks are focusable (drill) is a group: an image's children are not reachable.
    role = "group" if drill and 'class="drill-mark"' in svg else "img"
    return Markup(svg.replace("<svg", f'<svg role="{role}" aria-label="{label}"', 1))


def columns(result: dict) -> list[dict]:
    return list(((result.get("data") or {}).get("cols")) or [])


def rows(result: dict) -> list[list]:
    return list(((result.get("data") or {}).get("rows")) or [])


def number(result: dict):
    """The first value of the first row (a scalar card's number), or None."""
    first = rows(result)[:1]
    return first[0][0] if first and first[0] else None


def number_text(result: dict, settings: dict | None, *, last: bool = False) -> str | None:
    """A number card's value as Metabase shows it, formatted by its column's settings ("1,073,397.69"):
    the first cell, or for a trend (smartscalar) the last row's last one."""
    cols, found = columns(result), rows(result)
    if not cols or not found or not found[0]:
        return None
    row = found[-1] if last else found[0]
    index = len(row) - 1 if last else 0
    value = row[index]
    return None if value is None else str(formatter(cols[index], settings, True)(value))


# -- a result's table: its rows sorted and cut into pages -----------------------------------------------

def _sort_key(value):
    # Numbers by value, text without regard to case, anything else by its text; empty cells last.
    if value is None:
        return (2, 0, "")
    if isinstance(value, bool):
        return (0, int(value), "")
    if isinstance(value, (int, float)):
        return (0, value, "")
    return (1, 0, str(value).casefold())


def sort_rows(rows: list[list], index: int, descending: bool) -> list[list]:
    """All of a result's rows ordered by column `index`; empty cells stay last either way."""
    filled = [row for row in rows if row[index] is not None]
    empty = [row for row in rows if row[index] is None]
    return sorted(filled, key=lambda row: _sort_key(row[index]), reverse=descending) + empty


def page_count(total: int, size: int) -> int:
    return max(1, -(-total // size))


def page_rows(rows: list[list], page: int, size: int) -> list[list]:
    """Page `page` (1-based, past the last one: the last) of `size` rows."""
    page = min(max(page, 1), page_count(len(rows), size))
    return rows[(page - 1) * size: page * size]


def cell(value) -> str:
    """A value as a table cell shows it: empty for null, true/false for booleans, a float without the
    noise of binary fractions (17744.99, not 17744.989999999987)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.12g}" if abs(value) < 1e12 else str(value)
    return str(value)


NUMERIC = frozenset({"type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Number"})


def table_of(cols: list[dict], rows: list[list], *, sort: str | None, descending: bool, page: int, size: int,
             url: Callable[..., str], truncated=None, viz: dict | None = None) -> dict:
    """A page of `rows` (already sorted by the column named `sort`) as app/_result_table.html draws it:
    headers that sort (a click ascending, a second click on the same column descending), the page's
    cells, links to the pages around it. `url(sort=, dir=, page=)` is the link for a change of state."""
    pages = page_count(len(rows), size)
    number = min(page, pages)
    # table.columns' order and visibility, and table.column_formatting's colours, as a drawn table has them.
    shown_cols = visible_columns(cols, viz)
    columns = []
    for col in (cols[i] for i in shown_cols):
        name = col.get("name")
        current = sort == name
        columns.append({"label": col.get("display_name") or name, "name": name,
                        "numeric": str(col.get("base_type") or "") in NUMERIC,
                        "sorted": ("descending" if descending else "ascending") if current else None,
                        "url": url(sort=name, dir="desc" if current and not descending else None, page=None)})
    first = (number - 1) * size
    # Each value as the chart renderer and the exports write it: numbers grouped, dates in words,
    # identifiers plain, a time grouping by its name (core.charts.format).
    formats = [value_formatter(col, viz) for col in cols]
    raw = page_rows(rows, number, size)
    shown_rows = [[formats[i](row[i]) if i < len(row) else "" for i in shown_cols] for row in raw]
    colors = cell_colors(cols, raw, viz, bounds_rows=rows)
    return {"columns": columns, "rows": shown_rows,
            "colors": [[line[i] for i in shown_cols] for line in colors] if colors else None, "total": len(rows), "page": number, "pages": pages,
            "first": first + 1 if rows else 0, "last": first + len(shown_rows), "truncated": truncated,
            "previous": url(page=number - 1) if number > 1 else None,
            "next": url(page=number + 1) if number < pages else None}
