"""Managing collections from the web app (issue 32 items 2 and 5): create, edit, move, archive a collection.

Every action is a page (`/collection/new`, `/collection/:id-slug/edit`, `.../move`, `.../archive`) whose
form writes through the API with one internal call; static/manage.js opens the same page's
`.dialog-content` in a `<dialog>` on the collection page, so a confirmation never needs inline script and
every action also works as a plain page. A refusal is the API's message (`_form_error.html`), a success
sends the browser back to the collection (`render.go`). The collection picker lists the collections the
API says this user may write (`can_write` of GET /api/collection); the API itself refuses a move into the
collection itself or below it, and that refusal is what the page shows.
"""
from __future__ import annotations

from flask import Response, request

from core.http.internal import Answer, call

from .render import Failed, page, read, signed_in_user
from .views import blueprint, fragment, go, id_of, posted, slug


def collection_url(collection: dict | None) -> str:
    if not collection or collection.get("id") in (None, "root"):
        return "/collection/root"
    return f"/collection/{collection['id']}-{slug(collection.get('name'))}".rstrip("-")


def refused(answer) -> Response:
    return fragment("app/_form_error.html", status=answer.status if answer.status >= 400 else 400,
                    message=answer.message or "The server refused this change.")


def bad(message: str) -> Response:
    return fragment("app/_form_error.html", status=400, message=message)


def writable_targets(moving: set[int] | None = None) -> list[dict]:
    """Where something may go: the collections this user may write, each with its path, never an
    archived one, nor (for a collection being moved) itself or what lies below it."""
    moving = moving or set()
    collections = read("/api/collection", **{"exclude-other-user-collections": "true"})
    names = {c["id"]: c.get("name") or "" for c in collections if isinstance(c.get("id"), int)}
    out = []
    for c in collections:
        if not c.get("can_write") or c.get("archived"):
            continue
        ancestors = [int(p) for p in (c.get("location") or "/").strip("/").split("/") if p]
        if c["id"] in moving or moving.intersection(ancestors):
            continue
        path = ["Our analytics"] if c["id"] != "root" and not c.get("is_personal") else []
        path += [names.get(a, "…") for a in ancestors]
        out.append({"id": c["id"], "label": " / ".join([*path, c.get("name") or ""])})
    return sorted(out, key=lambda c: (c["id"] != "root", c["label"].lower()))


def target_id(value) -> int | None | str:
    """A picked collection from a form: None for the root, an id, or "" when nothing usable was sent."""
    if value in ("root", None):
        return None if value == "root" else ""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return ""
    return number if 0 < number < 2**63 else ""


def action_page(template: str, title: str, user, **context) -> Response:
    return page(template, name="collection-action", title=title, user=user, **context)


def writable(id_slug: str) -> dict:
    """The collection, when the API says this user may change it (otherwise its 403 page, before any form)."""
    collection = read(f"/api/collection/{id_of(id_slug)}")
    if not collection.get("can_write"):
        raise Failed(Answer(403, {"message": "You don't have permissions to do that."}, []))
    return collection


# -- create --------------------------------------------------------------------------------------------

@blueprint.get("/collection/new")
def new_collection():
    user = signed_in_user()
    parent = request.args.get("parent") or "root"
    return action_page("app/collection_form.html", "New collection", user, mode="new", collection={},
                       targets=writable_targets(), parent=parent, back=parent_url(parent))


def parent_url(parent: str) -> str:
    return "/collection/root" if parent in ("root", "") or not parent.isdigit() else f"/collection/{parent}"


@blueprint.post("/collection/new")
def create_collection():
    signed_in_user()
    body = posted()
    parent = target_id(body.get("parent_id"))
    if parent == "":
        return bad("Pick the collection the new one goes in.")
    answer = call("POST", "/api/collection", json={
        "name": body.get("name") or "", "description": body.get("description") or None, "parent_id": parent})
    if not answer.ok:
        return refused(answer)
    return go(collection_url(answer.body))


# -- edit ----------------------------------------------------------------------------------------------

@blueprint.get("/collection/<id_slug>/edit")
def edit_collection(id_slug: str):
    user = signed_in_user()
    collection = writable(id_slug)
    return action_page("app/collection_form.html", f"Edit {collection.get('name')}", user, mode="edit",
                       collection=collection, back=collection_url(collection))


@blueprint.post("/collection/<id_slug>/edit")
def save_collection(id_slug: str):
    signed_in_user()
    body = posted()
    answer = call("PUT", f"/api/collection/{id_of(id_slug)}", json={
        "name": body.get("name") or "", "description": body.get("description") or None})
    if not answer.ok:
        return refused(answer)
    return go(collection_url(answer.body))


# -- move ----------------------------------------------------------------------------------------------

@blueprint.get("/collection/<id_slug>/move")
def move_collection(id_slug: str):
    user = signed_in_user()
    collection = writable(id_slug)
    return action_page("app/collection_move.html", f"Move {collection.get('name')}", user,
                       things=[collection], action=f"/collection/{collection['id']}/move",
                       targets=writable_targets({collection["id"]}), current=collection.get("parent_id") or "root",
                       back=collection_url(collection))


@blueprint.post("/collection/<id_slug>/move")
def moved_collection(id_slug: str):
    signed_in_user()
    body = posted()
    parent = target_id(body.get("collection"))
    if parent == "":
        return bad("Pick the collection to move it to.")
    answer = call("PUT", f"/api/collection/{id_of(id_slug)}", json={"parent_id": parent})
    if not answer.ok:
        return refused(answer)
    return go(collection_url(answer.body))


# -- archive -------------------------------------------------------------------------------------------

def contents(collection_id: int) -> dict:
    """How much a collection holds directly, by kind (what archiving it sends to the trash with it)."""
    answer = call("GET", f"/api/collection/{collection_id}/items")
    items = answer.body.get("data", []) if answer.ok and isinstance(answer.body, dict) else []
    counts: dict[str, int] = {}
    for item in items:
        counts[item.get("model")] = counts.get(item.get("model"), 0) + 1
    return {"total": len(items), "counts": counts}


@blueprint.get("/collection/<id_slug>/archive")
def archive_collection(id_slug: str):
    user = signed_in_user()
    collection = writable(id_slug)
    return action_page("app/collection_archive.html", f"Archive {collection.get('name')}", user,
                       collection=collection, held=contents(collection["id"]), back=collection_url(collection))


@blueprint.post("/collection/<id_slug>/archive")
def archived_collection(id_slug: str):
    signed_in_user()
    posted()
    answer = call("PUT", f"/api/collection/{id_of(id_slug)}", json={"archived": True})
    if not answer.ok:
        return refused(answer)
    ancestors = [a for a in answer.body.get("effective_ancestors") or [] if a.get("id") != "root"]
    return go(collection_url(ancestors[-1] if ancestors else None))
