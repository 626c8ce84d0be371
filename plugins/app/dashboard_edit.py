"""Making and editing dashboards: `/dashboard/new` (name, description, a collection the user may write;
POST /api/dashboard), the editor `/dashboard/:id-slug/edit`, and the history `/dashboard/:id-slug/history`
(GET /api/revision, POST /api/revision/revert).

The editor's state is the draft (dashboard_edit_draft.py), carried by the page's form: every change is a
POST of the form to `<edit>/apply`, which answers the editor drawn again with the new draft; Save is one
POST of it to `<edit>/save`, which sends the whole dashboard as one PUT /api/dashboard/:id (the API's
single transaction) unless the dashboard changed since the editor opened (409: the draft keeps a digest of
what it replaces); Cancel leaves the page,
and nothing was written. Only a user the API lets write the dashboard (`can_write`) gets the editor.
"""
from __future__ import annotations

import base64
import hashlib
import zlib
from urllib.parse import urlencode

import orjson
from flask import request

from core.charts.combine import COMBINABLE
from core.export.dashcard_settings import merged, overrides
from core.http.internal import Answer, call

from . import cards, render, viz_settings
from . import dashboard_edit_columns as columns
from .dashboard_edit_draft import FILTER_TYPES, VIRTUAL_KINDS, Draft, DraftError, slugged, version
from .filters import read_value
from .render import Failed, go, page, signed_in_user
from .views import as_args, blueprint, fragment, id_of, posted, slug

PICKED_MODELS = ("card", "dataset")
DISPLAY_NAMES = {"scalar": "Number", "table": "Table", "bar": "Bar chart", "line": "Line chart", "pie": "Pie chart",
                 "area": "Area chart", "row": "Row chart", "combo": "Combo chart", "map": "Map", "funnel": "Funnel",
                 "pivot": "Pivot table", "progress": "Progress", "gauge": "Gauge", "scatter": "Scatter plot",
                 "smartscalar": "Trend", "waterfall": "Waterfall", "object": "Detail"}


def _path(dashboard: dict) -> str:
    return f"/dashboard/{dashboard['id']}-{slug(dashboard.get('name'))}".rstrip("-")


def writable(id_slug: str) -> dict:
    """The dashboard, when the API lets this user write it (else its refusal, or 403, as the error page)."""
    dashboard = render.read(f"/api/dashboard/{id_of(id_slug)}", ignore_view=True)
    if not dashboard.get("can_write") or dashboard.get("archived"):
        raise Failed(_refusal())
    return dashboard


def _refusal() -> Answer:
    return Answer(403, {"message": "You don't have permissions to do that."})


def error(message: str, status: int = 400):
    return fragment("app/_form_error.html", status=status, message=message)


# -- a new dashboard ------------------------------------------------------------------------------------

def writable_collections() -> list[tuple[str, str]]:
    """(value, name) of each collection the user may write, root first, as GET /api/collection lists them."""
    listed = call("GET", "/api/collection", query={"archived": "false"})
    out = []
    for c in listed.body if listed.ok and isinstance(listed.body, list) else []:
        if isinstance(c, dict) and c.get("can_write") and not c.get("archived") and not c.get("is_sample"):
            out.append(("root" if c.get("id") == "root" else str(c.get("id")), str(c.get("name") or "")))
    return sorted(out, key=lambda c: (c[0] != "root", c[1].lower()))


@blueprint.get("/dashboard/new")
def new_dashboard():
    user = signed_in_user()
    return page("app/dashboard_edit_new.html", name="dashboard-new", title="New dashboard", user=user,
                collections=writable_collections(), chosen=request.args.get("collection") or "root")


@blueprint.post("/dashboard/new")
def create_dashboard():
    signed_in_user()
    body = posted()
    collection = str(body.get("collection_id") or "root")
    if collection != "root" and not (collection.isdigit() and len(collection) < 16):
        return error("Choose a collection to keep the dashboard in.")
    answer = call("POST", "/api/dashboard", json={
        "name": str(body.get("name") or "").strip(), "description": str(body.get("description") or "").strip() or None,
        "collection_id": None if collection == "root" else int(collection)})
    if not answer.ok or not isinstance(answer.body, dict):
        return error(answer.message or "The dashboard could not be made.", answer.status if answer.status >= 400 else 400)
    return go(_path(answer.body) + "/edit")


# -- the editor -----------------------------------------------------------------------------------------

def opened(dashboard: dict) -> Draft:
    cards = {}
    for d in dashboard.get("dashcards") or []:
        card_id = d.get("card_id") if isinstance(d, dict) else None
        if card_id and card_id not in cards:
            cards[card_id] = columns.card_info(card_id) or {"name": f"Question {card_id}", "display": "table",
                                                            "columns": [], "hidden": True}
    return Draft.of_dashboard(dashboard, cards)


@blueprint.get("/dashboard/<id_slug>/edit")
def edit(id_slug: str):
    user = signed_in_user()
    dashboard = writable(id_slug)
    draft = opened(dashboard)
    return page("app/dashboard_edit.html", name="dashboard-edit", title=f"Editing {dashboard.get('name')}",
                obj=dashboard, user=user, path=_path(dashboard), **editor(draft, _path(dashboard)))


def editor(draft: Draft, path: str, announce: str = "") -> dict:
    """What the editor's template draws of a draft."""
    tab = draft.current_tab
    shown = draft.on_tab(tab)
    query_cards = [d for d in draft.dashcards if d.get("card_id")]
    wiring = {}
    for p in draft.parameters:
        for d in query_cards:
            for card_id in [d["card_id"], *(x["id"] for x in d.get("series") or [])]:
                info = draft.data["_cards"].get(str(card_id)) or {}
                offered = columns.fitting(p, info.get("columns") or [])
                current = draft.target_of(p.get("id"), d, card_id)
                wiring[(p.get("id"), d["id"], card_id)] = ([(c[0], columns.key(c[1])) for c in offered],
                                                           columns.key(current) if current is not None else "")
    return {"draft": draft, "draft_json": draft.dumps(), "combinable": combinable(draft, shown), "tab": tab, "shown": shown, "query_cards": query_cards,
            "previews": {d["id"]: preview_args(d) for d in draft.dashcards if d.get("card_id")}, **viz_panel(draft, path),
            "wiring": wiring, "suggestions": {p.get("id"): suggestions(draft, p) for p in draft.parameters},
            "filter_types": [(k, v[2]) for k, v in FILTER_TYPES.items()], "virtual_kinds": VIRTUAL_KINDS,
            "display_names": DISPLAY_NAMES, "edit_path": path + "/edit", "announce": announce,
            "defaults": {p.get("id"): default_text(p) for p in draft.parameters}}


def looks(dashcard: dict) -> dict:
    """The dashcard's overrides the visualization settings panel governs (what its preview draws)."""
    return {k: v for k, v in (dashcard.get("visualization_settings") or {}).items() if viz_settings.governs(k)}


def preview_args(dashcard: dict) -> tuple[str, str]:
    """(the preview's query: size and the card's overrides, packed; a digest of them for its element's id)."""
    args = {"w": dashcard["size_x"], "h": dashcard["size_y"]}
    over = looks(dashcard)
    if over:
        args["vs"] = base64.urlsafe_b64encode(zlib.compress(orjson.dumps(over, option=orjson.OPT_SORT_KEYS))).decode()
    return urlencode(args), hashlib.sha256(args.get("vs", "").encode()).hexdigest()[:10]


def unpacked(text: str) -> dict:
    """A preview's packed overrides (`vs`); DraftError when they are not."""
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(base64.urlsafe_b64decode(text.encode("ascii")), 1 << 16)
        value = orjson.loads(raw) if not inflater.unconsumed_tail else None
    except (ValueError, zlib.error, orjson.JSONDecodeError):
        value = None
    if not isinstance(value, dict):
        raise DraftError("The card's settings in this link are unreadable.")
    return value


def viz_panel(draft: Draft, path: str) -> dict:
    """The open visualization settings panel (viz_settings.panel for the card, its overrides laid over
    the question's settings and drawn over the question's result), or nothing when none is open."""
    open_id = draft.data.get("viz")
    d = next((d for d in draft.dashcards if d["id"] == open_id and d.get("card_id")), None)
    if d is None or draft.card_info(d).get("hidden"):
        return {"viz": None, "viz_card": None}
    info = draft.card_info(d)
    card = {"display": info.get("display") or "table",
            "visualization_settings": merged(info.get("settings"), d.get("visualization_settings"))}
    answer = call("POST", f"/api/card/{d['card_id']}/query", json={})
    body = answer.body if answer.ok and isinstance(answer.body, dict) and answer.body.get("status") != "failed" else None
    return {"viz": viz_settings.panel(card, body, dashcard=d["id"], apply=path + "/edit/apply"), "viz_card": d}


def combinable(draft: Draft, shown: list[dict]) -> dict:
    """dashcard id -> (id, name) of the questions the user may read that may be drawn on it (Metabase's
    series: a bar, line, area or combo chart takes questions of those displays), read once per change."""
    charts = [d for d in shown if d.get("card_id") and draft.card_info(d).get("display") in COMBINABLE]
    if not charts:
        return {}
    found = call("GET", "/api/search", query={"models": "card"})
    items = [(i["id"], str(i.get("name"))) for i in (found.body.get("data") or [] if found.ok and isinstance(found.body, dict) else [])
             if isinstance(i, dict) and i.get("model") == "card" and i.get("display") in COMBINABLE and not i.get("archived")]
    return {d["id"]: [(card_id, name) for card_id, name in items if card_id != d["card_id"]
                      and card_id not in {x["id"] for x in d["series"]}] for d in charts}


def default_text(parameter: dict) -> str:
    value = parameter.get("default")
    if value in (None, [], ""):
        return ""
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def suggestions(draft: Draft, parameter: dict) -> list[tuple[dict, list]]:
    """Cards not yet wired to a filter that have a column of the same field as a card that is (Metabase's
    auto-wiring), each with that column's target."""
    fields = {columns.field_id_of(draft.target_of(parameter.get("id"), d)) for d in draft.dashcards if d.get("card_id")}
    fields.discard(None)
    found = []
    for d in draft.dashcards:
        if not d.get("card_id") or draft.target_of(parameter.get("id"), d) is not None:
            continue
        for column in columns.fitting(parameter, draft.card_info(d).get("columns") or []):
            if columns.field_id_of(column[1]) in fields:
                found.append((d, column[1]))
                break
    return found


def sync(draft: Draft, body: dict) -> None:
    """The form's fields into the draft: names, card texts and links, overrides, tab names, filter settings
    and wiring. A card's or filter's fields are read only when the form drew them."""
    if isinstance(body.get("name"), str):
        draft.data["name"] = body["name"].strip()
    if isinstance(body.get("description"), str):
        draft.data["description"] = body["description"]
    for tab in draft.tabs:
        name = body.get(f"tabname.{tab['id']}")
        if isinstance(name, str) and name.strip():
            tab["name"] = name.strip()[:254]
    drawn = {str(x) for x in _listed(body.get("drawn"))}
    for d in draft.dashcards:
        if str(d["id"]) not in drawn:
            continue
        settings = d.setdefault("visualization_settings", {})
        kind = (settings.get("virtual_card") or {}).get("display")
        if kind in ("text", "heading") and isinstance(body.get(f"text.{d['id']}"), str):
            settings["text"] = body[f"text.{d['id']}"]
        elif kind == "link" and isinstance(body.get(f"url.{d['id']}"), str):
            settings["link"] = {"url": body[f"url.{d['id']}"].strip()}
        elif d.get("card_id"):
            title = body.get(f"title.{d['id']}")
            if isinstance(title, str) and title.strip():
                settings["card.title"] = title.strip()
            else:
                settings.pop("card.title", None)
            if body.get(f"hide.{d['id']}"):
                settings["card.hide_empty"] = True
            else:
                settings.pop("card.hide_empty", None)
    if body.get("vizcard") is not None and str(body["vizcard"]) == str(draft.data.get("viz")):
        restyle(draft, draft.dashcard(body["vizcard"]), body)
    for p in draft.parameters:
        pid = p.get("id")
        if f"pname.{pid}" not in body:
            continue
        name = str(body.get(f"pname.{pid}") or "").strip()
        if name:
            p["name"] = name[:254]
            p["slug"] = slugged(name)
        value = read_value(p, [str(body.get(f"pdefault.{pid}") or "")])
        if value is None:
            p.pop("default", None)
        else:
            p["default"] = value
        # Keys a filter never had stay absent, so an unchanged save stores it as it was.
        if body.get(f"prequired.{pid}") or p.get("required"):
            p["required"] = bool(body.get(f"prequired.{pid}"))
        linked = [str(x) for x in _listed(body.get(f"plinked.{pid}"))]
        linked = [q.get("id") for q in draft.parameters if q.get("id") in linked and q is not p]
        if linked or "filteringParameters" in p:
            p["filteringParameters"] = linked
        for d in draft.dashcards:
            field = f"wire.{pid}.{d['id']}"
            if d.get("card_id") and field in body:
                draft.wire(pid, d, _target(body.get(field), draft.card_info(d)))
            for x in d.get("series") or []:  # a series card is wired on its own, as in Metabase
                if f"{field}.{x['id']}" in body:
                    info = draft.data["_cards"].get(str(x["id"])) or {}
                    draft.wire(pid, d, _target(body.get(f"{field}.{x['id']}"), info), x["id"])


def restyle(draft: Draft, dashcard: dict, body: dict) -> None:
    """The visualization settings panel's fields (viz_settings.applied, as on the question pages) into the
    card's overrides: applied to what the card shows, then kept only where that differs from the question."""
    info = draft.card_info(dashcard)
    if not dashcard.get("card_id") or info.get("hidden"):
        raise DraftError("That card has no visualization settings to change.")
    own = info.get("settings") or {}
    try:
        shown = viz_settings.applied(merged(own, dashcard["visualization_settings"]), as_args(body),
                                     str(info.get("display") or "table"))
    except viz_settings.BadSettings as exc:
        raise DraftError(str(exc)) from None
    dashcard["visualization_settings"] = overrides(own, shown)


def _listed(value) -> list:
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return [v for v in value.split(",") if v]
    return []


def _target(text, info: dict):
    """The target a wiring select chose: one the card offers (else none)."""
    if not isinstance(text, str) or not text:
        return None
    for column in info.get("columns") or []:
        if columns.key(column[1]) == text:
            return column[1]
    raise DraftError("That column is not one this card offers.")


def change(draft: Draft, op: str, body: dict) -> str:
    """Make the change `op` names; answers what a screen reader is told."""
    verb, _, arg = op.partition(":")
    if verb == "add-card":
        if not arg.isdigit() or len(arg) > 15:
            raise DraftError("Choose a question to add.")
        info = columns.card_info(int(arg))
        if info is None:
            raise DraftError("You may not read that question, or it is not there any more.")
        draft.add_card(int(arg), info)
        return f"Added {info['name']}."
    if verb == "add-virtual":
        draft.add_virtual(arg)
        return f"Added a {arg} card."
    if verb == "remove":
        draft.remove_card(arg)
        return "Removed the card."
    if verb == "place":
        numbers = [body.get(k) for k in ("col", "row", "size_x", "size_y")]
        if not all(type(n) is int or (isinstance(n, str) and n.lstrip("-").isdigit() and len(n) < 5) for n in numbers):
            raise DraftError("Say where the card goes.")
        col, row, width, height = (int(n) for n in numbers)
        draft.place(arg, col, row, width, height)
        d = draft.dashcard(arg)
        return (f"{_title(draft, d)}: column {d['col'] + 1}, row {d['row'] + 1}, "
                f"{d['size_x']} wide, {d['size_y']} tall.")
    if verb == "tab":
        draft.data["tab"] = draft._tab(arg)["id"]
        return ""
    if verb == "add-tab":
        tab = draft.add_tab()
        return f"Added {tab['name']}."
    if verb in ("tab-left", "tab-right"):
        draft.move_tab(arg, -1 if verb == "tab-left" else 1)
        return "Moved the tab."
    if verb == "delete-tab":
        draft.delete_tab(arg)
        return "Deleted the tab and its cards."
    if verb == "to-tab":
        draft.card_to_tab(arg, body.get(f"totab.{arg}"))
        return "Moved the card to the other tab."
    if verb == "add-filter":
        parameter = draft.add_filter(str(body.get("filter_kind") or ""))
        return f"Added the filter {parameter['name']}."
    if verb == "remove-filter":
        draft.remove_filter(arg)
        return "Removed the filter."
    if verb == "autowire":
        parameter = draft.parameter(arg)
        found = suggestions(draft, parameter)
        for d, target in found:
            draft.wire(parameter["id"], d, target)
        return f"Wired {parameter.get('name')} to {len(found)} more cards."
    if verb == "add-series":
        card = str(body.get(f"series.{arg}") or "")
        info = columns.card_info(int(card)) if card.isdigit() and len(card) < 16 else None
        main = draft.card_info(draft.dashcard(arg))
        if info is None:
            raise DraftError("You may not read that question, or it is not there any more.")
        if info.get("display") not in COMBINABLE or main.get("display") not in COMBINABLE:
            raise DraftError("Only bar, line, area and combo charts are drawn together.")
        draft.add_series(arg, int(card), info)
        return f"{info['name']} is drawn on {_title(draft, draft.dashcard(arg))} too."
    if verb == "remove-series":
        dashcard_id, _, card = arg.partition(":")
        draft.remove_series(dashcard_id, card)
        return "Took the question off the card."
    if verb == "viz":
        d = draft.dashcard(arg)
        if not d.get("card_id") or draft.card_info(d).get("hidden"):
            raise DraftError("That card has no visualization settings to change.")
        draft.data["viz"] = d["id"]
        return f"The visualization settings of {_title(draft, d)} are open below the cards."
    if verb == "viz-close":
        draft.data["viz"] = None
        return "Closed the visualization settings."
    if verb == "viz-reset":
        d = draft.dashcard(arg)
        d["visualization_settings"] = {k: v for k, v in d["visualization_settings"].items() if not viz_settings.governs(k)}
        return f"{_title(draft, d)} is drawn with its question's settings again."
    if verb == "sync":
        return ""
    raise DraftError("The editor did not understand that change.")


def _title(draft: Draft, d: dict) -> str:
    settings = d.get("visualization_settings") or {}
    virtual = (settings.get("virtual_card") or {}).get("display")
    if virtual:
        return f"{virtual.capitalize()} card"
    return str(settings.get("card.title") or draft.card_info(d).get("name") or "Card")


def posted_to(id_slug: str) -> tuple[dict, dict]:
    """(the dashboard its user may write, the posted editor form) of a change to the editor."""
    signed_in_user()
    body = posted()
    return writable(id_slug), body


def posted_draft(dashboard: dict, body: dict) -> Draft:
    """The posted draft with the form's fields applied; DraftError when it is not this dashboard's."""
    draft = Draft.parse(body.get("draft"), dashboard["id"])
    sync(draft, body)
    return draft


@blueprint.post("/dashboard/<id_slug>/edit/apply")
def edit_apply(id_slug: str):
    dashboard, body = posted_to(id_slug)
    op = str(body.get("op") or "sync")
    try:
        draft = posted_draft(dashboard, body)
        was_open = draft.data.get("viz")
        said = change(draft, op, body)
    except DraftError as exc:
        return error(str(exc))
    # Opening a card's visualization settings takes the keyboard to them; closing them, back to its button.
    focus = {"viz": "viz", "viz-close": "card"}.get(op.partition(":")[0])
    # The picker keeps what was typed in it across the change.
    return fragment("app/_dashedit_editor.html", path=_path(dashboard), q=str(body.get("q") or "")[:200],
                    focus=focus, closed=was_open, **editor(draft, _path(dashboard), said))


@blueprint.post("/dashboard/<id_slug>/edit/save")
def edit_save(id_slug: str):
    """The whole draft as one PUT /api/dashboard/:id; refused (409) when the dashboard changed meanwhile."""
    dashboard, body = posted_to(id_slug)
    try:
        draft = posted_draft(dashboard, body)
    except DraftError as exc:
        return error(str(exc))
    needing = [str(p.get("name")) for p in draft.parameters if p.get("required") and p.get("default") in (None, [], "")]
    if needing:
        return error(f"A filter that always requires a value needs a default one: {', '.join(needing)}.")
    if version(dashboard) != draft.data.get("version"):
        return error("Someone changed this dashboard after you opened the editor, so saving would undo their "
                     "changes. Nothing was saved: cancel and edit it again.", 409)
    answer = call("PUT", f"/api/dashboard/{dashboard['id']}", json=draft.put_body())
    if not answer.ok or not isinstance(answer.body, dict):
        return error(answer.message or "The dashboard could not be saved.", answer.status if answer.status >= 400 else 400)
    return go(_path(answer.body))


@blueprint.get("/dashboard/<id_slug>/edit/questions")
def edit_questions(id_slug: str):
    """The picker's questions and models the user may read, those matching what was typed."""
    signed_in_user()
    writable(id_slug)
    q = (request.args.get("q") or "").strip()[:200]
    found = render.read("/api/search", q=q or None, models=list(PICKED_MODELS))
    items = [i for i in found.get("data") or [] if isinstance(i, dict) and i.get("model") in PICKED_MODELS
             and not i.get("archived")][:30]
    return fragment("app/_dashedit_picker.html", items=items, q=q)


@blueprint.get("/dashboard/<id_slug>/edit/preview/<int:card_id>")
def edit_preview(id_slug: str, card_id: int):
    """A question drawn as it would be on the dashboard at the draft's size with the card's overrides
    (`vs`, packed by preview_args) (an htmx fragment): the card read and run as the user (GET
    /api/card/:id, POST /api/card/:id/query), drawn by cards.body."""
    signed_in_user()
    base = f"{_path(writable(id_slug))}/edit/preview/{card_id}"
    size = {key: _size(key, default) for key, default in (("w", 6), ("h", 4))}
    state = {key: request.args.get(key) for key in ("sort", "dir", "page", "vs") if request.args.get(key)}
    try:
        over = unpacked(state["vs"]) if "vs" in state else {}
    except DraftError as exc:
        return error(str(exc))

    def link(**change) -> str:
        pairs = {**size, **state, **change}
        return f"{base}?{urlencode({k: v for k, v in pairs.items() if v not in (None, '')})}"

    card = call("GET", f"/api/card/{card_id}")
    if not card.ok or not isinstance(card.body, dict):
        shown = cards.Body("error", message="You don't have permission to see this card's data.")
    else:
        dashcard = {"card": card.body, "size_x": size["w"], "size_y": size["h"], "visualization_settings": over}
        answer = call("POST", f"/api/card/{card_id}/query", json={})
        shown = cards.body(dashcard, answer, sort=state.get("sort"), descending=state.get("dir") == "desc",
                           page=_size("page", 1), url=link)
    return fragment("app/_card_body.html", body=shown, here=link(), downloads=[], title=card.body.get("name")
                    if card.ok and isinstance(card.body, dict) else "")


def _size(name: str, default: int) -> int:
    text = request.args.get(name, "")
    return min(int(text), 99) if text.isdigit() and 0 < len(text) < 3 and int(text) > 0 else default


# -- history --------------------------------------------------------------------------------------------

@blueprint.get("/dashboard/<id_slug>/history")
def history(id_slug: str):
    user = signed_in_user()
    dashboard = render.read(f"/api/dashboard/{id_of(id_slug)}", ignore_view=True)
    revisions = render.read("/api/revision", entity="dashboard", id=dashboard["id"])
    return page("app/dashboard_edit_history.html", name="dashboard-history", title=f"History of {dashboard.get('name')}",
                obj=dashboard, user=user, path=_path(dashboard), revisions=revisions if isinstance(revisions, list) else [])


@blueprint.post("/dashboard/<id_slug>/history/revert")
def history_revert(id_slug: str):
    signed_in_user()
    body = posted()
    dashboard = writable(id_slug)
    revision = body.get("revision_id")
    if isinstance(revision, str) and revision.isdigit() and len(revision) < 16:
        revision = int(revision)
    if type(revision) is not int or revision <= 0:
        return error("Choose the version to go back to.")
    answer = call("POST", "/api/revision/revert", json={"entity": "dashboard", "id": dashboard["id"],
                                                       "revision_id": revision})
    if not answer.ok:
        return error(answer.message or "The dashboard could not be reverted.", answer.status if answer.status >= 400 else 400)
    return go(_path(dashboard) + "/history")
