"""A dashcard as a dashboard page draws it: its frame (title, place on the 24-column grid, what kind
of card it is) and its body once its query answered (a chart, a number or a page of a table, or why it
shows no data). Text and heading cards are Markdown with the filters' values put in for their
{{variables}}; link cards point at a URL or at one of Tessera's own pages.
"""
from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup

from core.charts.combine import COMBINABLE
from core.export.dashcard_settings import merged
from core.http.internal import Answer

from . import buttons, results
from .filters import Filter
from .markdown import to_html
from .views import item_url

GRID_COLUMNS = 24
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}")
_SAFE_SCHEMES = ("http", "https", "mailto")


def settings(dashcard: dict) -> dict:
    """The card's visualization settings with the dashcard's own laid over them (as Metabase merges them)."""
    return merged((dashcard.get("card") or {}).get("visualization_settings"), dashcard.get("visualization_settings"))


def display(dashcard: dict) -> str:
    if dashcard.get("action_id") is not None:
        return "action"  # a button, whatever card (a model) Metabase's older dashcards also name
    virtual = (dashcard.get("visualization_settings") or {}).get("virtual_card")
    if dashcard.get("card_id") is None and isinstance(virtual, dict):
        return str(virtual.get("display") or "text")
    if dashcard.get("card_id") is None and not (dashcard.get("card") or {}).get("dataset_query"):
        return "text"
    return str((dashcard.get("card") or {}).get("display") or "table")


def readable(dashcard: dict) -> bool:
    """Whether the API showed this user the card (a card they may not read comes as its id alone)."""
    card = dashcard.get("card") or {}
    return "display" in card or "dataset_query" in card


@dataclass(frozen=True)
class Frame:
    """What the page draws of a dashcard before its data comes."""

    id: int
    kind: str            # "query", "text", "heading", "link", "action" or "hidden"
    title: str
    display: str
    classes: str         # the grid placement (col-N w-N h-N) and the kind
    row: int
    html: Markup | None  # the drawn content of a text, heading or link card
    card_id: int | None = None  # a saved question's: the title opens it
    enabled: bool = True        # an action button whose database runs actions


def frame(dashcard: dict, filters: list[Filter]) -> Frame | None:
    """The dashcard's frame, or None for cards this page does not draw (an editor's empty slot, a button
    whose action the user may not see)."""
    shown = display(dashcard)
    col = min(max(int(dashcard.get("col") or 0), 0), GRID_COLUMNS - 1)
    width = min(max(int(dashcard.get("size_x") or 4), 1), GRID_COLUMNS - col)
    height = min(max(int(dashcard.get("size_y") or 4), 1), 40)
    place = f"col-{col + 1} w-{width} h-{height}"
    row = max(int(dashcard.get("row") or 0), 0)
    viz = dashcard.get("visualization_settings") or {}
    if shown in ("text", "heading"):
        text = with_values(str(viz.get("text") or ""), dashcard, filters)
        html = to_html(text) if shown == "text" else Markup("<h2>{}</h2>").format(text)
        return Frame(dashcard["id"], shown, "", shown, f"{place} dashcard-{shown}", row, html)
    if shown == "link":
        return Frame(dashcard["id"], "link", "", shown, f"{place} dashcard-link", row, link(viz.get("link")))
    if shown == "iframe":
        # The pages frame nothing (CSP default-src 'none'): the embedded page is offered as a link.
        return Frame(dashcard["id"], "link", "", shown, f"{place} dashcard-link", row,
                     link({"url": embedded_url(viz.get("iframe"))}))
    if shown == "action":
        # The API shows the action only to those who may read its model; the button opens its form (buttons.py).
        action = dashcard.get("action")
        if dashcard.get("action_id") is None or not isinstance(action, dict):
            return None
        return Frame(dashcard["id"], "action", buttons.label(dashcard), shown, f"{place} dashcard-action", row, None,
                     enabled=action.get("database_enabled_actions") is not False)
    if shown == "placeholder":  # an editor's empty slot
        return None
    if not readable(dashcard):
        # Nothing of a card the user may not read: not even its name.
        return Frame(dashcard["id"], "hidden", "A card you don't have access to", shown,
                     f"{place} dashcard-hidden", row, None)
    card = dashcard.get("card") or {}
    title = str(viz.get("card.title") or card.get("name") or "")
    saved = card.get("id") if type(card.get("id")) is int and card["id"] > 0 else None  # an x-ray's are not
    return Frame(dashcard["id"], "query", title, shown, f"{place} dashcard-{results.shape(card)}", row, None,
                 saved)


def with_values(text: str, dashcard: dict, filters: list[Filter]) -> str:
    """A text card's {{variables}} replaced by the values of the filters mapped to them; a variable no
    filter is mapped to stays as written, one whose filter is empty becomes nothing."""
    by_tag = {}
    for mapping in dashcard.get("parameter_mappings") or []:
        target = mapping.get("target") if isinstance(mapping, dict) else None
        if isinstance(target, list) and len(target) == 2 and target[0] == "text-tag":
            by_tag[str(target[1])] = mapping.get("parameter_id")
    values = {f.id: f.value for f in filters}

    def put(match: re.Match) -> str:
        tag = match.group(1)
        if tag not in by_tag:
            return match.group(0)
        value = values.get(by_tag[tag])
        if value is None:
            return ""
        return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)

    return _VARIABLE.sub(put, text)


_IFRAME_SRC = re.compile(r"""<iframe[^>]*\ssrc\s*=\s*["']([^"']+)["']""", re.IGNORECASE)


def embedded_url(setting: Any) -> str:
    """An iframe card's address: its setting is a URL or the <iframe ...> HTML Metabase keeps."""
    text = str(setting or "").strip()
    found = _IFRAME_SRC.search(text)
    return html.unescape(found.group(1)) if found else text


def link(setting: Any) -> Markup:
    """A link card: a URL (web or mail only; anything else stays text) or an item of Tessera's."""
    setting = setting if isinstance(setting, dict) else {}
    entity = setting.get("entity")
    if isinstance(entity, dict) and entity.get("id") is not None:
        model = entity.get("model") or "card"
        href = item_url({"model": model, "id": entity.get("id"), "name": entity.get("name")})
        return Markup('<a class="link-card" href="{}">{}</a>').format(href, entity.get("name") or href)
    url = str(setting.get("url") or "").strip()
    if not url:
        return Markup('<p class="empty">An empty link card.</p>')
    own_page = url.startswith("/") and not url.startswith("//")
    if own_page or urlsplit(url).scheme.lower() in _SAFE_SCHEMES:
        href = url
    elif "://" not in url and ":" not in url.split("/", 1)[0]:
        href = "https://" + url  # "example.com/x", as Metabase's link cards take it
    else:
        return Markup('<p class="link-card">{}</p>').format(url)
    return Markup('<a class="link-card" href="{}" rel="noopener noreferrer nofollow">{}</a>').format(href, url)


# -- a query card's body ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Body:
    """What a query card shows once its query answered."""

    shape: str                      # "chart", "number", "table", "empty", "hidden" (empty) or "error"
    chart: Markup | None = None
    number: str | None = None
    table: dict | None = None       # as results.table_of gives it (app/_result_table.html)
    message: str | None = None
    downloadable: bool = False      # the API lets this user download the card's results


def combines(dashcard: dict) -> bool:
    """Whether the card draws its dashcard's series cards with it (a graph display and series to draw)."""
    card = dashcard.get("card") or {}
    return bool(dashcard.get("series")) and str(card.get("display") or "") in COMBINABLE


def body(dashcard: dict, answer: Answer, *, sort: str | None, descending: bool, page: int,
         url: Callable[..., str], series: list[tuple[dict, dict]] = ()) -> Body:
    """The card's body from its query's answer, its chart combining `series` ((card, result) pairs of
    the dashcard's series cards the user may read); a table's headers and pages link through `url`."""
    if answer.status == 403:
        return Body("error", message="You don't have permission to see this card's data.")
    result = answer.body if isinstance(answer.body, dict) else {}
    if not answer.ok or result.get("status") == "failed":
        return Body("error", message=answer.message or str(result.get("error") or "") or "This card could not be run.")
    downloadable = (result.get("data") or {}).get("download_perms") != "none"
    if not results.rows(result):
        # "Hide this card if there are no results" (card.hide_empty): the "hidden" shape, which dashboard.css hides.
        shape = "hidden" if settings(dashcard).get("card.hide_empty") else "empty"
        return Body(shape, message="No results.", downloadable=downloadable)
    card = {**(dashcard.get("card") or {}), "visualization_settings": settings(dashcard)}
    viz = card["visualization_settings"]
    shape = results.shape(card)
    if shape == "number":
        return Body("number", number=results.number_text(result, viz, last=card.get("display") == "smartscalar"),
                    downloadable=downloadable)
    if shape == "chart":
        width = int(dashcard.get("size_x") or 6) * 56
        height = max(int(dashcard.get("size_y") or 4) * 56 - 56, 120)
        try:
            chart = results.chart_svg(card, result, width=width, height=height, series=series)
            return Body("chart", chart=chart, downloadable=downloadable)
        except (ValueError, KeyError, TypeError, IndexError):
            pass  # a chart its settings cannot draw: its rows are still worth showing
    cols, rows = results.columns(result), results.rows(result)
    index = next((i for i, col in enumerate(cols) if col.get("name") == sort), None)
    if index is not None:
        # As Metabase's dashboard tables, a click sorts the rows the card's query returned.
        rows = results.sort_rows(rows, index, descending)
    # The rows a card of its height shows beside its title, column headers and pager (a grid row is 56 px).
    per_page = max(3, (int(dashcard.get("size_y") or 4) * 56 - 124) // 33)
    table = results.table_of(cols, rows, sort=sort if index is not None else None, descending=descending,
                             page=page, size=per_page, url=url,
                             truncated=(result.get("data") or {}).get("rows_truncated"),
                             viz=viz if isinstance(viz, dict) else None)
    return Body("table", table={**table, "sorted_here": index is not None}, downloadable=downloadable)
