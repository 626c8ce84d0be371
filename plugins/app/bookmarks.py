"""Bookmarks in the web app (issue 32 item 2): the bookmark toggle of a question, model, dashboard or
collection (its page and the collection list), the user's bookmarks in the navigation (render.page reads
GET /api/bookmark for every signed-in page), and `/bookmarks`, where they are reordered and removed.

A toggle is POST /bookmarks/toggle {type, id, bookmarked} (the state wanted, so a double click never
flips twice) -> POST or DELETE /api/bookmark/:type/:id; it answers the new button and, out of band, the
navigation's list. Reordering moves one bookmark up or down and saves the whole order through PUT
/api/bookmark/ordering, as Metabase's sidebar does after a drag.
"""
from __future__ import annotations

from flask import Response, render_template
from werkzeug.exceptions import NotFound

from core.http.internal import call, exists

from . import render
from .render import page, read, signed_in_user
from .views import blueprint, fragment, posted

TYPES = ("card", "dashboard", "collection")


def user_bookmarks() -> list[dict]:
    """The signed-in user's bookmarks as the API lists them (none when the bookmarks plugin is off)."""
    return render.bookmarks(True)


def marked(bookmarks: list[dict]) -> set[str]:
    return {f"{b.get('type')}-{b.get('item_id')}" for b in bookmarks}


@blueprint.app_template_filter("bookmark_url")
def bookmark_url(bookmark: dict) -> str:
    from .views import item_url

    model = {"card": "dataset" if bookmark.get("card_type") == "model" else "card"}.get(bookmark.get("type"),
                                                                                       bookmark.get("type"))
    return item_url({"model": model, "id": bookmark.get("item_id"), "name": bookmark.get("name")})


def _wanted(body: dict) -> tuple[str, int, bool] | None:
    kind, number, on = body.get("type"), body.get("id"), body.get("bookmarked")
    if isinstance(number, str) and number.isdigit():
        number = int(number)
    if isinstance(on, str) and on in ("true", "false"):
        on = on == "true"
    if kind not in TYPES or type(number) is not int or not 0 < number < 2**31 or not isinstance(on, bool):
        return None
    return kind, number, on


@blueprint.post("/bookmarks/toggle")
def toggle():
    signed_in_user()
    wanted = _wanted(posted())
    if wanted is None:
        return fragment("app/_form_error.html", status=400,
                        message="Say what to bookmark: a question, dashboard or collection, and whether.")
    kind, number, on = wanted
    answer = call("POST" if on else "DELETE", f"/api/bookmark/{kind}/{number}")
    if not answer.ok and not (on and answer.status == 400 and "already" in answer.message):
        return fragment("app/_form_error.html", status=answer.status, message=answer.message)
    bookmarks = user_bookmarks()
    html = render_template("app/_bookmark.html", kind=kind, number=number, on=f"{kind}-{number}" in marked(bookmarks),
                           bookmarks=bookmarks, oob=True)
    return Response(html, mimetype="text/html")


@blueprint.get("/bookmarks")
def bookmarks_page():
    user = signed_in_user()
    if not exists("GET", "/api/bookmark"):
        raise NotFound()
    return page("app/bookmarks.html", name="bookmarks", title="Bookmarks", user=user, listed=read("/api/bookmark"))


@blueprint.post("/bookmarks/order")
def reorder():
    """Move one bookmark ({key: "card-5", direction: "up"|"down"}) and save the whole order."""
    signed_in_user()
    body = posted()
    listed = user_bookmarks()
    keys = [f"{b['type']}-{b['item_id']}" for b in listed]
    key, direction = body.get("key"), body.get("direction")
    if key not in keys or direction not in ("up", "down"):
        return fragment("app/_form_error.html", status=400, message="Say which bookmark to move, up or down.")
    at = keys.index(key)
    to = at - 1 if direction == "up" else at + 1
    if 0 <= to < len(listed):
        listed[at], listed[to] = listed[to], listed[at]
    answer = call("PUT", "/api/bookmark/ordering",
                  json={"orderings": [{"type": b["type"], "item_id": b["item_id"]} for b in listed]})
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=answer.message)
    listed = user_bookmarks()
    return Response(render_template("app/_bookmark_list.html", listed=listed, bookmarks=listed, moved=key,
                                    oob=True), mimetype="text/html")


@blueprint.app_template_filter("bookmark_keys")
def bookmark_keys(bookmarks) -> set[str]:
    return marked(bookmarks or [])
