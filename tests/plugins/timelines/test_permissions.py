"""Who may see and change timelines and events: their collection decides (read to see, write to change),
personal collections belong to their owner, and a card's timelines need the card's collection."""
from __future__ import annotations

from core.appdb.models import ALL_USERS_GROUP_ID
from core.testing import add_collection

from .support import add_card, event, set_perm, timeline


def test_without_collection_access_a_user_gets_403(app, admin, user):
    cid = add_collection(app, "Secret")
    set_perm(app, ALL_USERS_GROUP_ID, cid, "none")
    tl = timeline(admin, "Hidden plans", collection_id=cid)
    ev = event(admin, tl["id"], "Launch", "2024-06-01")
    visible = timeline(admin, "Public")
    card_id = add_card(app, "Secret card", collection_id=cid)

    assert user.get(f"/api/timeline/{tl['id']}").status_code == 403
    assert [t["id"] for t in user.get("/api/timeline").json] == [visible["id"]]
    assert user.put(f"/api/timeline/{tl['id']}", json={"name": "mine"}).status_code == 403
    assert user.delete(f"/api/timeline/{tl['id']}").status_code == 403
    assert user.post("/api/timeline", json={"name": "x", "collection_id": cid}).status_code == 403
    assert user.get(f"/api/timeline-event/{ev['id']}").status_code == 403
    assert user.put(f"/api/timeline-event/{ev['id']}", json={"name": "x"}).status_code == 403
    assert user.delete(f"/api/timeline-event/{ev['id']}").status_code == 403
    assert user.post("/api/timeline-event", json={"name": "e", "timestamp": "2024-01-01", "timezone": "UTC",
                                                  "timeline_id": tl["id"]}).status_code == 403
    assert user.get(f"/api/card/{card_id}/timelines").status_code == 403
    assert user.get(f"/api/collection/{cid}/timelines").status_code == 403
    assert user.get(f"/api/timeline/collection/{cid}").status_code == 403
    # Nothing changed.
    assert admin.get(f"/api/timeline/{tl['id']}").json["name"] == "Hidden plans"
    assert admin.get(f"/api/timeline-event/{ev['id']}").json["name"] == "Launch"


def test_read_access_reads_and_write_access_writes(app, admin, user):
    cid = add_collection(app, "Shared")
    set_perm(app, ALL_USERS_GROUP_ID, cid, "read")
    tl = timeline(admin, "Readable", collection_id=cid)
    ev = event(admin, tl["id"], "Day one", "2024-01-01")
    card_id = add_card(app, "Shared card", collection_id=cid)
    got = user.get(f"/api/timeline/{tl['id']}?include=events")
    assert got.status_code == 200 and [e["id"] for e in got.json["events"]] == [ev["id"]]
    assert got.json["collection"]["can_write"] is False
    assert user.get(f"/api/timeline-event/{ev['id']}").status_code == 200
    assert [t["id"] for t in user.get(f"/api/card/{card_id}/timelines").json] == [tl["id"]]
    assert user.put(f"/api/timeline/{tl['id']}", json={"archived": True}).status_code == 403
    assert user.put(f"/api/timeline-event/{ev['id']}", json={"archived": True}).status_code == 403
    assert user.post("/api/timeline-event", json={"name": "e", "timestamp": "2024-01-01", "timezone": "UTC",
                                                  "timeline_id": tl["id"]}).status_code == 403
    set_perm(app, ALL_USERS_GROUP_ID, cid, "write")
    assert user.put(f"/api/timeline/{tl['id']}", json={"name": "Written"}).json["name"] == "Written"
    assert user.post("/api/timeline-event", json={"name": "e", "timestamp": "2024-01-01", "timezone": "UTC",
                                                  "timeline_id": tl["id"]}).status_code == 200


def test_moving_needs_write_on_both_collections(app, admin, user):
    mine = add_collection(app, "Mine")
    theirs = add_collection(app, "Theirs")
    set_perm(app, ALL_USERS_GROUP_ID, mine, "write")
    set_perm(app, ALL_USERS_GROUP_ID, theirs, "read")
    tl = timeline(user, "Movable", collection_id=mine)
    assert user.put(f"/api/timeline/{tl['id']}", json={"collection_id": theirs}).status_code == 403
    assert admin.get(f"/api/timeline/{tl['id']}").json["collection_id"] == mine
    other = timeline(admin, "Theirs", collection_id=theirs)
    ev = event(user, tl["id"], "e", "2024-01-01")
    assert user.put(f"/api/timeline-event/{ev['id']}", json={"timeline_id": other["id"]}).status_code == 403
    assert user.put(f"/api/timeline/{tl['id']}", json={"collection_id": None}).json["collection_id"] is None


def test_root_timelines_follow_root_permissions(app, admin, user):
    tl = timeline(admin, "Root one")
    set_perm(app, ALL_USERS_GROUP_ID, None, "none")
    assert user.get(f"/api/timeline/{tl['id']}").status_code == 403
    assert user.get("/api/collection/root/timelines").status_code == 403
    assert user.get("/api/timeline").json == []
    assert user.post("/api/timeline", json={"name": "x"}).status_code == 403
    set_perm(app, ALL_USERS_GROUP_ID, None, "read")
    assert [t["id"] for t in user.get("/api/collection/root/timelines").json] == [tl["id"]]
    assert user.post("/api/timeline", json={"name": "x"}).status_code == 403


def test_personal_collections_belong_to_their_owner(app, admin, user):
    own = user.user["personal_collection_id"]
    mine = timeline(user, "My notes", collection_id=own)
    assert mine["collection"]["is_personal"] is True and mine["collection"]["can_write"] is True
    event(user, mine["id"], "Birthday", "2024-07-07", icon="cake")
    admins = timeline(admin, "Admin notes", collection_id=admin.user["personal_collection_id"])
    assert user.get(f"/api/timeline/{admins['id']}").status_code == 403
    assert user.post("/api/timeline", json={"name": "x", "collection_id": admin.user["personal_collection_id"]}
                     ).status_code == 403
    assert admins["id"] not in [t["id"] for t in user.get("/api/timeline").json]
    # Administrators see every timeline, personal ones included.
    assert {mine["id"], admins["id"]} <= {t["id"] for t in admin.get("/api/timeline").json}
    assert admin.get(f"/api/timeline/{mine['id']}?include=events").json["events"][0]["icon"] == "cake"
