"""Bookmarks in the web app (plugins/app/bookmarks.py): the toggle on a question, dashboard and collection
page and in a collection's item menus, the navigation's list in the user's order, and reordering."""
from __future__ import annotations

import re

from core.testing import USER_PASSWORD, make_user
from tests.plugins.app.test_collections_edit import card, collection
from tests.plugins.app.test_pages import HTMX, sign_in, text


def nav(page: str) -> list[str]:
    menu = re.search(r'<details class="nav-bookmarks" id="nav-bookmarks".*?</details>', page, re.S).group(0)
    return re.findall(r"<li><a href=\"[^\"]+\">([^<]+)</a></li>", menu)


def test_bookmark_from_pages_and_find_them_in_the_navigation(app, admin):
    client = sign_in(app)
    shelf = collection(admin, "Shelf")
    question = card(admin, "Weekly revenue", shelf["id"])
    board = admin.post("/api/dashboard", json={"name": "Overview", "collection_id": shelf["id"]}).json
    assert nav(text(client.get("/"))) == []
    page = text(client.get(f"/question/{question['id']}"))
    assert re.search(r'aria-pressed="false"\s+hx-post="/bookmarks/toggle" hx-vals=\'[^\']*"type":\s*"card"', page)
    for kind, number in (("card", question["id"]), ("dashboard", board["id"]), ("collection", shelf["id"])):
        on = client.post("/bookmarks/toggle", json={"type": kind, "id": number, "bookmarked": True}, headers=HTMX)
        assert on.status_code == 200 and 'aria-pressed="true"' in text(on) and 'hx-swap-oob="true"' in text(on)
    assert {(b["type"], b["item_id"]) for b in admin.get("/api/bookmark").json} == {
        ("card", question["id"]), ("dashboard", board["id"]), ("collection", shelf["id"])}
    home = text(client.get("/"))
    assert set(nav(home)) == {"Weekly revenue", "Overview", "Shelf"}
    assert f'href="/question/{question["id"]}-weekly-revenue"' in home
    assert 'aria-pressed="true"' in text(client.get(f"/dashboard/{board['id']}"))
    # Asking twice for the same state changes nothing (the API's "already exists" is not an error here).
    again = client.post("/bookmarks/toggle", json={"type": "card", "id": question["id"], "bookmarked": True},
                        headers=HTMX)
    assert again.status_code == 200
    off = client.post("/bookmarks/toggle", json={"type": "dashboard", "id": board["id"], "bookmarked": False},
                      headers=HTMX)
    assert off.status_code == 200 and 'aria-pressed="false"' in text(off)
    assert ("dashboard", board["id"]) not in {(b["type"], b["item_id"]) for b in admin.get("/api/bookmark").json}
    bad = client.post("/bookmarks/toggle", json={"type": "user", "id": 1, "bookmarked": True}, headers=HTMX)
    assert bad.status_code == 400


def test_reorder_bookmarks(app, admin):
    client = sign_in(app)
    first, second, third = (collection(admin, name) for name in ("Alpha", "Beta", "Gamma"))
    for c in (first, second, third):
        admin.post(f"/api/bookmark/collection/{c['id']}")
    page = text(client.get("/bookmarks")).split('id="bookmark-list"')[1]
    assert page.index("Gamma") < page.index("Beta") < page.index("Alpha")  # the API's order: newest first
    moved = client.post("/bookmarks/order", json={"key": f"collection-{first['id']}", "direction": "up"},
                        headers=HTMX)
    assert moved.status_code == 200 and 'id="nav-bookmarks" hx-swap-oob="true"' in text(moved)
    assert [b["name"] for b in admin.get("/api/bookmark").json] == ["Gamma", "Alpha", "Beta"]
    assert nav(text(client.get("/"))) == ["Gamma", "Alpha", "Beta"]
    assert client.post("/bookmarks/order", json={"key": "collection-999999", "direction": "up"},
                       headers=HTMX).status_code == 400


def test_a_user_bookmarks_what_they_may_read_only(app, admin):
    hidden = collection(admin, "Hidden shelf")
    graph = admin.get("/api/collection/graph").json
    admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {"1": {str(hidden["id"]): "none"}}})
    make_user(app)
    client = sign_in(app, "user@example.com", USER_PASSWORD)
    refused = client.post("/bookmarks/toggle", json={"type": "collection", "id": hidden["id"], "bookmarked": True},
                          headers=HTMX)
    assert refused.status_code == 403 and "Hidden shelf" not in text(refused)
