"""Collection permissions in the web app (plugins/app/collection_permissions.py): the per-collection page
and the grid show the graph's levels, save through PUT /api/collection/graph with the drawn revision, and
show the API's conflict message for a stale save; everyone but administrators gets the API's 403."""
from __future__ import annotations

import re

from core.testing import USER_PASSWORD, make_user
from tests.plugins.app.test_collections_edit import collection
from tests.plugins.app.test_pages import HTMX, sign_in, text


def revision(page: str) -> int:
    return int(re.search(r'name="revision" value="(\d+)"', page).group(1))


def selected(page: str, name: str) -> str:
    select = re.search(rf'<select name="{name}".*?</select>', page, re.S).group(0)
    return re.search(r'<option value="(\w+)" selected>', select).group(1)


def test_one_collections_permissions_are_shown_and_saved(app, admin):
    shelf = collection(admin, "Team shelf")
    below = collection(admin, "Below", shelf["id"])
    team = admin.post("/api/permissions/group", json={"name": "Team"}).json
    client = sign_in(app)
    page = text(client.get(f"/collection/{shelf['id']}/permissions"))
    assert "Team" in page and "Administrators" in page and "Also change its 1 sub-collection" in page
    assert selected(page, f"g{team['id']}-c{shelf['id']}") == "none"
    assert selected(page, f"g1-c{shelf['id']}") == "write"  # All Users curate a new top-level collection
    saved = client.post(f"/collection/{shelf['id']}/permissions", json={
        "revision": str(revision(page)), f"g{team['id']}-c{shelf['id']}": "write", f"g1-c{shelf['id']}": "read",
        "subcollections": "true"}, headers=HTMX)
    assert saved.status_code == 200 and saved.headers["HX-Redirect"] == f"/collection/{shelf['id']}/permissions?saved=1"
    groups = admin.get("/api/collection/graph").json["groups"]
    assert groups[str(team["id"])][str(shelf["id"])] == "write" and groups["1"][str(shelf["id"])] == "read"
    assert groups[str(team["id"])][str(below["id"])] == "write"  # "also change sub-collections"
    shown = text(client.get(f"/collection/{shelf['id']}/permissions?saved=1"))
    assert selected(shown, f"g{team['id']}-c{shelf['id']}") == "write" and "Saved." in shown

    # A save drawn from an older revision is the API's conflict, shown; nothing changes.
    stale = client.post(f"/collection/{shelf['id']}/permissions", json={
        "revision": str(revision(page)), f"g{team['id']}-c{shelf['id']}": "none"}, headers=HTMX)
    assert stale.status_code == 409 and "someone else edited the permissions" in text(stale)
    assert admin.get("/api/collection/graph").json["groups"][str(team["id"])][str(shelf["id"])] == "write"
    # A cell of another collection is not this page's to send.
    other = client.post(f"/collection/{shelf['id']}/permissions", json={
        "revision": str(revision(shown)), f"g{team['id']}-c{below['id']}": "none"}, headers=HTMX)
    assert other.status_code == 400


def test_the_grid_of_groups_and_collections(app, admin):
    shelf = collection(admin, "Grid shelf")
    team = admin.post("/api/permissions/group", json={"name": "Analysts"}).json
    client = sign_in(app)
    page = text(client.get("/admin/permissions/collections"))
    assert "Grid shelf" in page and "Analysts" in page and "Our analytics" in page
    assert f'name="g{team["id"]}-croot"' in page and f'name="g2-c{shelf["id"]}"' not in page  # administrators: fixed
    saved = client.post("/admin/permissions/collections", json={
        "revision": revision(page), f"g{team['id']}-croot": "read", f"g{team['id']}-c{shelf['id']}": "write"},
        headers=HTMX)
    assert saved.status_code == 200
    groups = admin.get("/api/collection/graph").json["groups"][str(team["id"])]
    assert groups["root"] == "read" and groups[str(shelf["id"])] == "write"
    junk = client.post("/admin/permissions/collections", json={"revision": revision(page) + 1,
                                                                 f"g{team['id']}-croot": "everything"}, headers=HTMX)
    assert junk.status_code == 400


def test_only_administrators_see_or_save_permissions(app, admin):
    shelf = collection(admin, "Private shelf")
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    assert client.get("/admin/permissions/collections").status_code == 403
    assert client.get(f"/collection/{shelf['id']}/permissions").status_code == 403
    assert "/permissions" not in text(client.get(f"/collection/{shelf['id']}"))
    graph = admin.get("/api/collection/graph").json
    refused = client.post("/admin/permissions/collections", json={"revision": graph["revision"],
                                                                   f"g1-c{shelf['id']}": "none"}, headers=HTMX)
    assert refused.status_code == 403 and 'role="alert"' in text(refused)
    assert admin.get("/api/collection/graph").json["groups"]["1"][str(shelf["id"])] == "write"
