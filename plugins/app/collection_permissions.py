"""Collection permissions in the web app (issue 32 item 5), for administrators: `/collection/:id-slug/permissions`
(each group's access to one collection, optionally its sub-collections too) and
`/admin/permissions/collections` (the grid of groups x collections).

Both read GET /api/collection/graph (with its revision), the groups (GET /api/permissions/group) and the
collections (GET /api/collection), and save through PUT /api/collection/graph with the revision the page
was drawn from: a save over someone else's newer one is the API's 409, whose message the page shows.
Only the cells sent are written (the API merges a graph fragment). The Administrators group always
curates everything (the API ignores it), so it is drawn but not editable. Everyone else gets the API's
403: the graph is superuser-only.
"""
from __future__ import annotations

from flask import Response

from core.appdb.models import ADMIN_GROUP_ID
from core.http.internal import call

from .collections_edit import collection_url, refused
from .render import page, read, signed_in_user
from .views import blueprint, fragment, go, id_of, posted

LEVELS = (("write", "Curate"), ("read", "View"), ("none", "No access"))
ADMINISTRATORS = ADMIN_GROUP_ID  # the API ignores this group's cells: it curates everything


def graph_context() -> dict:
    graph = read("/api/collection/graph")
    groups = sorted(read("/api/permissions/group"), key=lambda g: (g["id"] != ADMINISTRATORS, g["id"] != 1,
                                                                    g.get("name", "").lower()))
    shared = set()
    for levels in graph["groups"].values():
        shared.update(str(key) for key in levels)
    collections = [c for c in read("/api/collection") if str(c["id"]) in shared]
    names = {c["id"]: c["name"] for c in collections}
    for c in collections:
        ancestors = [int(p) for p in (c.get("location") or "/").strip("/").split("/") if p]
        c["depth"] = len(ancestors) + (c["id"] != "root")
        c["path"] = [names.get(a, "") for a in ancestors]
    collections.sort(key=lambda c: (c["id"] != "root", [p.lower() for p in c["path"]] + [c["name"].lower()]))
    return {"revision": graph["revision"], "levels": graph["groups"], "groups": groups, "collections": collections,
            "choices": LEVELS, "administrators": ADMINISTRATORS}


@blueprint.get("/admin/permissions/collections")
def permissions_grid():
    user = signed_in_user()
    return page("app/collection_permissions.html", name="collection-permissions", title="Collection permissions",
                user=user, one=None, **graph_context())


@blueprint.get("/collection/<id_slug>/permissions")
def collection_permissions(id_slug: str):
    user = signed_in_user()
    context = graph_context()  # first: someone who may not see the graph gets its 403 before anything else
    collection = read(f"/api/collection/{id_of(id_slug)}")
    if str(collection["id"]) not in {str(c["id"]) for c in context["collections"]}:
        return render_not_governed(user, collection)
    below = [c for c in context["collections"] if c["id"] != "root"
             and str(collection["id"]) in (c.get("location") or "").strip("/").split("/")]
    return page("app/collection_permissions.html", name="collection-permissions",
                title=f"Permissions for {collection['name']}", user=user, one=collection, below=below,
                back=collection_url(collection), **context)


def render_not_governed(user, collection) -> Response:
    from .render import error_page

    return error_page(400, f"{collection['name']} is personal or in the trash: its permissions follow its owner "
                           "and are not set here.", user)


def cell_levels(body: dict) -> dict[str, dict[str, str]] | None:
    """The form's cells (`g<group>-c<collection or root>`: level) as a graph fragment; None if one is not."""
    groups: dict[str, dict[str, str]] = {}
    for name, level in body.items():
        if not name.startswith("g") or "-c" not in name:
            continue
        group, _, collection = name[1:].partition("-c")
        if not group.isdigit() or not (collection.isdigit() or collection == "root") or level not in dict(LEVELS):
            return None
        if int(group) != ADMINISTRATORS:
            groups.setdefault(group, {})[collection] = level
    return groups


@blueprint.post("/admin/permissions/collections")
def save_grid():
    signed_in_user()
    body = posted()
    return save(body, cell_levels(body), "/admin/permissions/collections")


@blueprint.post("/collection/<id_slug>/permissions")
def save_collection_permissions(id_slug: str):
    signed_in_user()
    number = id_of(id_slug)
    body = posted()
    groups = cell_levels(body)
    if groups is not None:
        if any(key != str(number) for levels in groups.values() for key in levels):
            groups = None
        elif body.get("subcollections") in (True, "true", "on"):
            # "Also change sub-collections": every collection below gets the same level, as in Metabase.
            below = [str(c["id"]) for c in read("/api/collection")
                     if str(number) in (c.get("location") or "").strip("/").split("/")]
            for levels in groups.values():
                levels.update({key: levels[str(number)] for key in below})
    return save(body, groups, f"/collection/{number}/permissions")


def save(body: dict, groups: dict | None, back: str) -> Response:
    revision = body.get("revision")
    if isinstance(revision, str) and revision.isdigit():
        revision = int(revision)
    if groups is None or type(revision) is not int or revision < 0:
        return fragment("app/_form_error.html", status=400,
                        message="Send each group's level (Curate, View or No access) and the revision you saw.")
    answer = call("PUT", "/api/collection/graph", json={"revision": revision, "groups": groups})
    if not answer.ok:
        return refused(answer)
    return go(back + "?saved=1")
