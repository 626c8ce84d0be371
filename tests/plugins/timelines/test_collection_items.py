"""Timelines as items of their collection (/items), archived with their collection, and the core
flows on each app-DB backend."""
from __future__ import annotations

from core.testing import add_collection, setup_admin

from .support import event, timeline


def names(listing):
    return [(i["model"], i["name"]) for i in listing["data"]]


def test_timelines_are_items_of_their_collection(app, admin):
    cid = add_collection(app, "Events")
    tl = timeline(admin, "Holidays", collection_id=cid, icon="bell", description="not shown")
    timeline(admin, "Archived", collection_id=cid, archived=True)
    at_root = timeline(admin, "Root timeline")
    items = admin.get(f"/api/collection/{cid}/items").json
    assert items["data"] == [{"id": tl["id"], "collection_id": cid, "name": "Holidays", "model": "timeline",
                              "entity_id": tl["entity_id"], "icon": "bell"}]
    assert "timeline" in items["models"]
    assert names(admin.get(f"/api/collection/{cid}/items?models=timeline&archived=true").json) == [
        ("timeline", "Archived")]
    assert admin.get(f"/api/collection/{cid}/items?pinned_state=is_pinned").json["data"] == []
    root = admin.get("/api/collection/root/items?models=timeline").json
    assert [(i["id"], i["collection_id"]) for i in root["data"]] == [(at_root["id"], None)]
    assert ("timeline", "Root timeline") in names(admin.get("/api/collection/root/items").json)
    # Metabase ranks timelines last when sorting by model.
    admin.post("/api/collection", json={"name": "Sub", "parent_id": cid})
    by_model = admin.get(f"/api/collection/{cid}/items?sort_column=model").json
    assert [i["model"] for i in by_model["data"]] == ["collection", "timeline"]


def test_archiving_a_collection_archives_its_timelines(app, admin):
    parent = admin.post("/api/collection", json={"name": "Parent"}).json["id"]
    child = admin.post("/api/collection", json={"name": "Child", "parent_id": parent}).json["id"]
    up = timeline(admin, "Upper", collection_id=parent)
    down = timeline(admin, "Lower", collection_id=child)
    ev = event(admin, down["id"], "e", "2024-01-01")
    assert admin.put(f"/api/collection/{parent}", json={"archived": True}).status_code == 200
    assert admin.get(f"/api/timeline/{up['id']}").json["archived"] is True
    assert admin.get(f"/api/timeline/{down['id']}").json["archived"] is True
    # Events keep their own state, as in Metabase (the collection's archive touches timelines only).
    assert admin.get(f"/api/timeline-event/{ev['id']}").json["archived"] is False
    assert {up["id"], down["id"]}.isdisjoint(t["id"] for t in admin.get("/api/timeline").json)
    assert admin.put(f"/api/collection/{parent}", json={"archived": False}).status_code == 200
    assert admin.get(f"/api/timeline/{down['id']}").json["archived"] is False


def test_timelines_on_each_app_db_backend(any_app):
    admin = setup_admin(any_app)
    cid = admin.post("/api/collection", json={"name": "Backend"}).json["id"]
    tl = timeline(admin, "Deploys", collection_id=cid)
    event(admin, tl["id"], "timed", "2022-01-10T12:00:00Z", time_matters=True)
    event(admin, tl["id"], "dated", "2022-01-10T23:30:00+00:00")
    got = admin.get(f"/api/timeline/{tl['id']}", query_string={
        "include": "events", "start": "2022-01-10T13:00:00Z", "end": "2022-01-10T14:00:00Z"}).json
    assert [e["name"] for e in got["events"]] == ["dated"]
    assert got["events"][0]["timestamp"] == "2022-01-10T23:30:00Z"
    admin.put(f"/api/timeline/{tl['id']}", json={"archived": True})
    assert [e["archived"] for e in admin.get(f"/api/timeline/{tl['id']}?include=events&archived=true").json[
        "events"]] == [True, True]
    assert names(admin.get(f"/api/collection/{cid}/items?archived=true").json) == [("timeline", "Deploys")]
    assert admin.delete(f"/api/timeline/{tl['id']}").status_code == 204
    assert admin.get(f"/api/collection/{cid}/timelines?archived=true").json == []
