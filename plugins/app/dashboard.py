"""The dashboard pages: a saved dashboard (/dashboard/:id-slug) and an x-ray (/auto/dashboard/table/:id
and the other entities, their cells and comparisons, with "Save this"), drawn by one template from a
board (boards.py).

The page holds the filters, the tabs and each card's frame; every query card then loads its body with
htmx (GET <page>/card/<dashcard id>?<filters>), so cards draw in parallel and a filter change redraws
the cards alone. Filter values live in the page's URL (`?city=Oslo&date=past30days`), so a filtered
view can be sent as a link.
"""
from __future__ import annotations

import re
from urllib.parse import urlencode

from flask import request
from werkzeug.exceptions import NotFound

from core.http.internal import call

from . import boards, cards, filters, results
from .render import go, page, signed_in_user
from .views import blueprint, fragment, id_of, posted, slug

EXPORT_FORMATS = ("csv", "xlsx", "json", "png")
REFRESH_CHOICES = ((0, "Off"), (60, "1 minute"), (300, "5 minutes"), (600, "10 minutes"), (900, "15 minutes"),
                   (1800, "30 minutes"), (3600, "1 hour"))
# What a card's own links add to the page's filters in its fragment URL (the table's sort and page),
# named as the question page names them.
CARD_STATE = ("sort", "dir", "page")


def _int_arg(name: str, default: int | None) -> int | None:
    text = request.args.get(name, "")
    return int(text) if text.isdigit() and len(text) < 7 else default


def _dashcard_id(text: str) -> int:
    """A dashcard id of the URL: saved ones are positive, an x-ray's are negative."""
    body = text.removeprefix("-")
    if not body.isdigit() or len(body) > 15:
        raise NotFound()
    return int(text)


# The x-ray API's related links, each an x-ray page of this app (an entity, a cell, a comparison).
RELATED_KINDS = (("zoom-in", "Zoom in"), ("zoom-out", "Zoom out"), ("related", "Related"), ("compare", "Compare"))
_ID = r"[A-Za-z0-9+_=-]+"
OPENED = re.compile(rf"/auto/dashboard/(table|question|model|segment|field|adhoc)/{_ID}(/cell/{_ID})?"
                    rf"(/compare/(table|segment|adhoc)/{_ID})?")


def related_xrays(data: dict) -> list[tuple[str, list[dict]]]:
    """An x-ray's related links by kind (zoom in, zoom out, related), as the x-ray API gives them."""
    related = data.get("related") if isinstance(data.get("related"), dict) else {}
    found = []
    for key, heading in RELATED_KINDS:
        links = [item for item in related.get(key) or () if isinstance(item, dict)
                 and OPENED.fullmatch(str(item.get("url") or ""))]
        if links:
            found.append((heading, links))
    return found


def draw(board: boards.Board, user):
    """The whole page of a board, with the filters and tab of the URL."""
    current = filters.from_url(board.parameters, request.args)
    tab = board.tab(request.args.get("tab"))
    frames = [f for f in (cards.frame(d, current) for d in board.dashcards(tab)) if f is not None]
    tab_key = _tab_key(tab) if tab and len(board.tabs) > 1 else None
    tab_links = [(t.get("name") or "Tab", f"{board.path}?{filters.query_string(current, tab=_tab_key(t))}",
                  t is tab) for t in board.tabs] if tab_key else []
    cleared = [filters.Filter(f.parameter, (), None) for f in current]
    return page("app/dashboard.html", related=related_xrays(board.data), name="dashboard", title=board.name or "Dashboard", obj=board.data, user=user,
                board=board, filters=current, tab_key=tab_key, tab_links=tab_links, frames=frames,
                card_query=filters.query_string(current), clear_query=filters.query_string(cleared, tab=tab_key),
                refresh_choices=REFRESH_CHOICES, **filters.widget_context())


def _tab_key(tab: dict) -> str:
    """A tab as Metabase's URLs name it: `<id>-<slug of its name>`."""
    return f"{tab['id']}-{slug(tab.get('name'))}".rstrip("-")


def draw_card(board: boards.Board, dashcard_id: str):
    """One query card's body (an htmx fragment): its chart, number or page of rows, or why it has none,
    and its downloads when the API lets the user have them."""
    dashcard = board.dashcard(_dashcard_id(dashcard_id))
    current = filters.from_url(board.parameters, request.args)
    path, query = board.card_path(dashcard), filters.query_pairs(current)
    state = {key: request.args.get(key) for key in CARD_STATE if request.args.get(key)}

    def link(**change) -> str:
        """This card's fragment URL with the page's filters and the table's sort and page (changed)."""
        pairs = query + [(key, str(value)) for key, value in {**state, **change}.items() if value not in (None, "")]
        return f"{path}?{urlencode(pairs)}" if pairs else path

    shown = cards.frame(dashcard, current)
    if shown is None or shown.kind == "hidden":
        body = cards.Body("error", message="You don't have permission to see this card's data.")
    elif shown.kind != "query":
        raise NotFound()
    else:
        answer = board.run(dashcard, current)
        # A dashcard's series cards are run only for a chart that draws them, once its own query answered.
        series = board.series(dashcard, current) if answer.ok and cards.combines(dashcard) else []
        body = cards.body(dashcard, answer, sort=state.get("sort"), descending=state.get("dir") == "desc",
                          page=_int_arg("page", 1), url=link, series=series)
    downloads = [(fmt, *download(board, dashcard, current, fmt)) for fmt in EXPORT_FORMATS] if body.downloadable else []
    return fragment("app/_card_body.html", body=body, here=link(), downloads=downloads,
                    title=shown.title if shown else "")


def download(board: boards.Board, dashcard: dict, current: list[filters.Filter], export_format: str):
    """A card's download form (where it posts, its fields); a picture drawn in the page's theme."""
    action, fields = board.download(dashcard, current, export_format)
    return (f"{action}?theme={results.theme()}" if export_format == "png" else action), fields


def draw_values(board: boards.Board, parameter_id: str):
    """A category filter's list of values (an htmx fragment): those chosen first, then the API's list
    for what was typed, chained by the other filters' values."""
    parameter = next((p for p in board.parameters if str(p.get("id")) == parameter_id), None)
    if parameter is None:
        raise NotFound()
    current = filters.from_url(board.parameters, request.args)
    query = (request.args.get("q") or "").strip()
    answer = board.values(parameter, current, query or None)
    chosen = next(f for f in current if f.id == parameter_id)
    return fragment("app/_filter_values.html", **filters.offer(chosen, answer, query))


# -- saved dashboards ------------------------------------------------------------------------------------

@blueprint.get("/dashboard/<id_slug>")
def dashboard(id_slug: str):
    user = signed_in_user()
    # A filter change or tab switch (htmx) is the same visit: it reads the dashboard without counting a view.
    return draw(boards.saved(id_of(id_slug), count_view=not request.headers.get("HX-Request")), user)


@blueprint.get("/dashboard/<id_slug>/card/<dashcard_id>")
def dashboard_card(id_slug: str, dashcard_id: str):
    signed_in_user()
    return draw_card(boards.saved(id_of(id_slug), count_view=False), dashcard_id)


@blueprint.get("/dashboard/<id_slug>/values/<parameter_id>")
def dashboard_values(id_slug: str, parameter_id: str):
    signed_in_user()
    return draw_values(boards.saved(id_of(id_slug), count_view=False), parameter_id)


# -- x-rays -------------------------------------------------------------------------------------------

# Metabase's x-ray URLs: /auto/dashboard/<entity>/<id>, an ad-hoc query's id being its base64 MBQL; and the
# x-ray API's narrower views of one: a cell (a base64 filter clause), a comparison with a table, segment or
# ad-hoc query, or both. Each is a page (and its cards, value lists and "Save this") at the same path.
XRAYED = "<any(table, question, model, segment, field, adhoc):entity>/<entity_id>"
VERSUS = "compare/<any(table, segment, adhoc):versus>/<versus_id>"
XRAY_PATHS = (XRAYED, f"{XRAYED}/cell/<cell>", f"{XRAYED}/cell/<cell>/{VERSUS}", f"{XRAYED}/{VERSUS}")
ADHOC_ID = re.compile(r"[A-Za-z0-9+/_=-]{1,8000}")


def _xray_routes(suffix: str, method: str = "get"):
    """Register a view at `suffix` under every x-ray path."""
    def register(view):
        for path in XRAY_PATHS:
            view = getattr(blueprint, method)(f"/auto/dashboard/{path}{suffix}")(view)
        return view
    return register


def _entity_path(entity: str, entity_id: str) -> str:
    if entity == "adhoc":
        if not ADHOC_ID.fullmatch(entity_id):
            raise NotFound()
        return f"adhoc/{entity_id}"
    return f"{entity}/{id_of(entity_id)}"


def xray_board(entity: str, entity_id: str, cell: str | None = None, versus: str | None = None,
               versus_id: str | None = None):
    path = _entity_path(entity, entity_id)
    if cell is not None:
        if not ADHOC_ID.fullmatch(cell):
            raise NotFound()
        path += f"/cell/{cell}"
    if versus is not None and versus_id is not None:
        path += f"/compare/{_entity_path(versus, versus_id)}"
    return boards.xray(path)


@_xray_routes("")
def xray(**where):
    user = signed_in_user()
    return draw(xray_board(**where), user)


@_xray_routes("/card/<dashcard_id>")
def xray_card(dashcard_id: str, **where):
    signed_in_user()
    return draw_card(xray_board(**where), dashcard_id)


@_xray_routes("/values/<parameter_id>")
def xray_values(parameter_id: str, **where):
    signed_in_user()
    return draw_values(xray_board(**where), parameter_id)


@_xray_routes("/save", "post")
def xray_save(**where):
    """Save the x-ray as Metabase's "Save this" does (POST /api/dashboard/save with the dashboard the
    x-ray endpoint gives), then open the saved dashboard."""
    signed_in_user()
    posted()
    board = xray_board(**where)
    answer = call("POST", "/api/dashboard/save", json=board.data)
    if not answer.ok or not isinstance(answer.body, dict):
        return fragment("app/_form_error.html", status=answer.status if answer.status >= 400 else 500,
                        message=answer.message or "The x-ray could not be saved.")
    return go(f"/dashboard/{answer.body['id']}-{slug(answer.body.get('name'))}".rstrip("-"))
