"""What a collection page does to the items in it (issue 32 item 2): move, archive, pin and unpin, duplicate,
and delete from the trash for good.

Items are named `<kind>-<id>` in forms (`card-5`, `dashboard-2`, `collection-7`), the API kind that
writes them; several may be picked with the page's checkboxes (move, archive). Each item is one internal
API call (PUT /api/card|dashboard/:id with `collection_id`, `archived` or `collection_position`, PUT
/api/collection/:id with `parent_id` or `archived`); a refusal stops there and the page says which items
were already done. Duplicates use the API's copy routes; only dashboards can be deleted for good (DELETE
/api/card/:id archives, collections are never deleted): the trash offers deletion where the API does.
"""
from __future__ import annotations

from flask import Response, request

from core.http.internal import Answer, call

from .collections_edit import action_page, bad, collection_url, refused, target_id, writable_targets
from .render import Failed, read, signed_in_user
from .views import RESTORED_THROUGH, blueprint, fragment, go, id_of, posted

KINDS = ("card", "dashboard", "collection")
PINNABLE = ("card", "dashboard")


def parse_keys(values) -> list[tuple[str, int]] | None:
    """`card-5` strings (one, or a list from the checkboxes) as (kind, id); None when any is not one."""
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not values or len(values) > 200:
        return None
    out = []
    for value in values:
        kind, _, number = str(value).partition("-")
        if kind not in KINDS or not number.isdigit() or not 0 < int(number) < 2**63:
            return None
        if (kind, int(number)) not in out:
            out.append((kind, int(number)))
    return out


def home_of(key: str):
    """The collection a page of actions belongs to ("root" or an id) and its URL."""
    if key == "root":
        return "root", "/collection/root"
    number = id_of(key)
    return number, f"/collection/{number}"


def described(keys: list[tuple[str, int]]) -> list[dict]:
    """What the API says of each picked item (its name; a collection's content count): a page never names
    what its user may not read (a refusal is the error page)."""
    things = []
    for kind, number in keys:
        thing = read(f"/api/{kind}/{number}")
        entry = {"key": f"{kind}-{number}", "kind": kind, "id": number, "name": thing.get("name"),
                 "type": thing.get("type")}
        if kind == "collection":
            answer = call("GET", f"/api/collection/{number}/items")
            entry["held"] = answer.body.get("total", 0) if answer.ok and isinstance(answer.body, dict) else 0
        things.append(entry)
    return things


def picked() -> list[tuple[str, int]]:
    """The items a GET of an action page names (`?item=card-5&item=...`); none is the 400 error page."""
    keys = parse_keys(request.args.getlist("item"))
    if keys is None:
        raise Failed(Answer(400, {"message": "Pick one or more items: questions, models, dashboards or "
                                             "collections."}, []))
    return keys


@blueprint.app_template_filter("item_key")
def item_key(item: dict) -> str:
    """How a listed item is named in forms: the API kind that writes it, then its id."""
    return f"{RESTORED_THROUGH.get(item.get('model'), item.get('model'))}-{item.get('id')}"


def apply_each(keys: list[tuple[str, int]], change) -> Response | None:
    """Run `change(kind, id)` -> (method, path, body) through the API for each item; the first refusal
    is answered with what was done before it."""
    done = []
    for kind, number in keys:
        method, path, body = change(kind, number)
        answer = call(method, path, json=body)
        if not answer.ok:
            prefix = f"{len(done)} of {len(keys)} done; the {kind} with id {number} was refused: " if done else ""
            return fragment("app/_form_error.html", status=answer.status if answer.status >= 400 else 400,
                            message=prefix + (answer.message or "The server refused this change."))
        done.append(number)
    return None


# -- move ----------------------------------------------------------------------------------------------

@blueprint.get("/collection/<key>/items/move")
def move_items(key: str):
    user = signed_in_user()
    home, back = home_of(key)
    keys = picked()
    moving = {number for kind, number in keys if kind == "collection"}
    return action_page("app/collection_move.html", "Move items", user, things=described(keys),
                       action=f"/collection/{key}/items/move", targets=writable_targets(moving), current=home,
                       back=back)


@blueprint.post("/collection/<key>/items/move")
def moved_items(key: str):
    signed_in_user()
    _, back = home_of(key)
    body = posted()
    keys, target = parse_keys(body.get("item")), target_id(body.get("collection"))
    if keys is None or target == "":
        return bad("Pick the items to move and the collection to move them to.")

    def change(kind, number):
        field = "parent_id" if kind == "collection" else "collection_id"
        return "PUT", f"/api/{kind}/{number}", {field: target}

    return apply_each(keys, change) or go(collection_url({"id": target or "root"}))


# -- archive -------------------------------------------------------------------------------------------

@blueprint.get("/collection/<key>/items/archive")
def archive_items(key: str):
    user = signed_in_user()
    _, back = home_of(key)
    return action_page("app/collection_confirm.html", "Move to the trash?", user, things=described(picked()),
                       action=f"/collection/{key}/items/archive", verb="archive", back=back)


@blueprint.post("/collection/<key>/items/archive")
def archived_items(key: str):
    signed_in_user()
    _, back = home_of(key)
    keys = parse_keys(posted().get("item"))
    if keys is None:
        return bad("Pick the items to move to the trash.")
    return apply_each(keys, lambda kind, number: ("PUT", f"/api/{kind}/{number}", {"archived": True})) or go(back)


# -- pin, duplicate ------------------------------------------------------------------------------------

@blueprint.post("/collection/<key>/items/pin")
def pin_item(key: str):
    """Pin (first place: collection_position 1) or unpin (null), as Metabase's pin toggle does."""
    signed_in_user()
    _, back = home_of(key)
    body = posted()
    keys = parse_keys(body.get("item"))
    if keys is None or len(keys) != 1 or keys[0][0] not in PINNABLE or not isinstance(body.get("pinned"), bool):
        return bad("Say which question, model or dashboard to pin or unpin.")
    kind, number = keys[0]
    position = 1 if body["pinned"] else None
    return apply_each(keys, lambda *_: ("PUT", f"/api/{kind}/{number}", {"collection_position": position})) \
        or go(back)


@blueprint.post("/collection/<key>/items/duplicate")
def duplicate_item(key: str):
    """A copy in the same collection: POST /api/card/:id/copy ("Copy of ..."), or POST
    /api/dashboard/:id/copy named as Metabase's duplicate names it ("... - Duplicate")."""
    signed_in_user()
    home, back = home_of(key)
    keys = parse_keys(posted().get("item"))
    if keys is None or len(keys) != 1 or keys[0][0] not in PINNABLE:
        return bad("Say which question, model or dashboard to duplicate.")
    kind, number = keys[0]
    if kind == "card":
        answer = call("POST", f"/api/card/{number}/copy")
    else:
        source = call("GET", f"/api/dashboard/{number}", query={"ignore_view": "true"})
        if not source.ok:
            return refused(source)
        answer = call("POST", f"/api/dashboard/{number}/copy", json={
            "name": f"{source.body.get('name')} - Duplicate", "is_deep_copy": False,
            "collection_id": source.body.get("collection_id")})
    if not answer.ok:
        return refused(answer)
    return go(back)


# -- the trash: delete for good --------------------------------------------------------------------------

DELETABLE = ("dashboard",)  # DELETE /api/card/:id archives; a collection is never deleted


@blueprint.get("/collection/trash/delete")
def delete_items():
    user = signed_in_user()
    keys = picked()
    if any(kind not in DELETABLE for kind, _ in keys):
        return bad("Only dashboards can be deleted for good; other items stay in the trash until restored.")
    return action_page("app/collection_confirm.html", "Delete for good?", user, things=described(keys),
                       action="/collection/trash/delete", verb="delete", back="/collection/trash")


@blueprint.post("/collection/trash/delete")
def deleted_items():
    signed_in_user()
    keys = parse_keys(posted().get("item"))
    if keys is None or any(kind not in DELETABLE for kind, _ in keys):
        return bad("Only dashboards can be deleted for good; other items stay in the trash until restored.")
    for kind, number in keys:  # only what is in the trash: a live item is archived first, never deleted
        thing = call("GET", f"/api/{kind}/{number}", query={"ignore_view": "true"})
        if not thing.ok:
            return refused(thing)
        if not thing.body.get("archived"):
            return bad(f"{thing.body.get('name')} is not in the trash: move it to the trash first.")
    return apply_each(keys, lambda kind, number: ("DELETE", f"/api/{kind}/{number}", None)) \
        or go("/collection/trash")



# -- the trash: what was archived anywhere ----------------------------------------------------------------

def trash_items() -> list[dict]:
    """What this user sees in the trash: the top level's archived items (GET /api/collection/root/items
    ?archived=true), and those archived inside collections that are not archived themselves, found by GET
    /api/search?archived=true and listed through each such collection's own archived items (which carry
    `can_restore`/`can_delete`). What was archived with its collection comes back with it, so it is shown
    as that collection."""
    items = read("/api/collection/root/items", archived=True).get("data", [])
    found = call("GET", "/api/search", query={"archived": "true"})
    results = found.body.get("data", []) if found.ok and isinstance(found.body, dict) else []
    archived_collections = {r["id"] for r in results if r.get("model") == "collection"}
    holders = {}
    for result in results:
        if result.get("model") == "collection":  # a collection's search result names itself: its parent holds it
            parents = [int(p) for p in (result.get("location") or "/").strip("/").split("/") if p.isdigit()]
            place = {"id": parents[-1], "name": None} if parents else {}
        else:
            place = result.get("collection") or {}
        if isinstance(place.get("id"), int) and place["id"] not in archived_collections:
            holders[place["id"]] = holders.get(place["id"]) or place.get("name")
    for collection_id, name in sorted(holders.items()):
        answer = call("GET", f"/api/collection/{collection_id}/items", query={"archived": "true"})
        if answer.ok and isinstance(answer.body, dict):
            if name is None:
                holder = call("GET", f"/api/collection/{collection_id}")
                name = holder.body.get("name") if holder.ok else None
            items += [{**item, "collection": {"id": collection_id, "name": name}} for item in answer.body.get("data", [])]
    return items
