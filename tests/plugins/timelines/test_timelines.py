"""/api/timeline and /api/timeline-event: shapes, defaults, validation, archiving with events, deletion,
the start/end range with time_matters, and the timelines of a card or a collection."""
from __future__ import annotations

from core.testing import add_collection

from .support import add_card, event, timeline


def test_create_get_update_delete_a_timeline(admin):
    created = timeline(admin, "Releases", description="Product launches")
    assert created["icon"] == "star" and created["default"] is False and created["archived"] is False
    assert created["collection_id"] is None and created["collection"]["id"] == "root"
    assert created["collection"]["name"] == "Our analytics" and created["collection"]["can_write"] is True
    assert created["creator_id"] == admin.user["id"] and created["creator"]["email"] == admin.user["email"]
    assert len(created["entity_id"]) == 21 and created["created_at"].endswith("Z")
    tid = created["id"]
    fetched = admin.get(f"/api/timeline/{tid}").json
    assert fetched["name"] == "Releases" and fetched["description"] == "Product launches" and "events" not in fetched
    changed = admin.put(f"/api/timeline/{tid}", json={"name": "Launches", "icon": "cake", "default": True})
    assert changed.status_code == 200
    assert (changed.json["name"], changed.json["icon"], changed.json["default"]) == ("Launches", "cake", True)
    # null clears nullable fields and leaves the name alone.
    cleared = admin.put(f"/api/timeline/{tid}", json={"name": None, "description": None}).json
    assert cleared["name"] == "Launches" and cleared["description"] is None
    ev = event(admin, tid, "v1", "2024-03-01")
    assert admin.delete(f"/api/timeline/{tid}").status_code == 204
    assert admin.get(f"/api/timeline/{tid}").status_code == 404
    assert admin.get(f"/api/timeline-event/{ev['id']}").status_code == 404
    assert admin.delete(f"/api/timeline/{tid}").status_code == 404


def test_timeline_in_a_collection_shows_that_collection(app, admin):
    cid = add_collection(app, "Marketing")
    created = timeline(admin, "Campaigns", collection_id=cid, icon="mail")
    assert created["collection_id"] == cid and created["collection"]["id"] == cid
    assert created["collection"]["name"] == "Marketing" and created["collection"]["is_personal"] is False
    assert admin.post("/api/timeline", json={"name": "x", "collection_id": 99999}).status_code == 404
    snippets = add_collection(app, "SQL", namespace="snippets")
    assert admin.post("/api/timeline", json={"name": "x", "collection_id": snippets}).status_code == 400


def test_validation_errors_have_metabases_shape(admin):
    bad_icon = admin.post("/api/timeline", json={"name": "x", "icon": "balloons"})
    assert bad_icon.status_code == 400
    assert bad_icon.json["errors"] == {"icon": "nullable enum of star, cake, mail, warning, bell, cloud"}
    assert "specific-errors" in bad_icon.json
    assert admin.post("/api/timeline", json={"name": ""}).json["errors"] == {
        "name": "value must be a non-blank string."}
    tid = timeline(admin, "T")["id"]
    bad_date = admin.post("/api/timeline-event", json={"name": "e", "timestamp": "next tuesday", "timezone": "UTC",
                                                       "timeline_id": tid})
    assert bad_date.status_code == 400 and bad_date.json["errors"] == {
        "timestamp": "value must be a valid date string"}
    missing = admin.post("/api/timeline-event", json={"name": "e", "timestamp": "2024-01-01", "timeline_id": tid})
    assert missing.status_code == 400 and set(missing.json["errors"]) == {"timezone"}
    assert admin.get(f"/api/timeline/{tid}?include=events&start=2024-13-45").json["errors"] == {
        "start": "nullable value must be a valid date string"}
    assert admin.get(f"/api/timeline/{tid}?include=everything").status_code == 400
    assert admin.get("/api/timeline?archived=yes").status_code == 400
    assert admin.get("/api/timeline/0").status_code == 400


def test_events_crud_and_icons(admin):
    tid = timeline(admin, "Weather", icon="cloud")["id"]
    missing = admin.post("/api/timeline-event", json={"name": "e", "timestamp": "2024-01-01", "timezone": "UTC",
                                                      "timeline_id": 98765})
    assert missing.status_code == 404 and missing.json == "Timeline with id 98765 not found"
    storm = event(admin, tid, "Storm", "2024-02-03T04:05:06-02:00", time_matters=True, description="big one",
                  source="collections", question_id=3)
    assert storm["icon"] == "cloud" and storm["timestamp"] == "2024-02-03T06:05:06Z"
    assert storm["time_matters"] is True and storm["timezone"] == "UTC" and storm["archived"] is False
    assert storm["creator"]["id"] == admin.user["id"] and storm["timeline_id"] == tid
    plain = event(admin, tid, "Sun", "2024-02-05", icon="bell")
    assert plain["icon"] == "bell" and plain["time_matters"] is False and plain["timestamp"] == "2024-02-05T00:00:00Z"
    assert admin.get(f"/api/timeline-event/{storm['id']}").json["name"] == "Storm"
    changed = admin.put(f"/api/timeline-event/{storm['id']}", json={"name": "Hail", "timestamp": "2024-02-04",
                                                                     "icon": "warning", "archived": True})
    assert changed.status_code == 200
    assert (changed.json["name"], changed.json["timestamp"], changed.json["icon"], changed.json["archived"]) == (
        "Hail", "2024-02-04T00:00:00Z", "warning", True)
    other = timeline(admin, "Other")["id"]
    moved = admin.put(f"/api/timeline-event/{plain['id']}", json={"timeline_id": other})
    assert moved.json["timeline_id"] == other
    assert admin.put(f"/api/timeline-event/{plain['id']}", json={"timeline_id": 98765}).status_code == 404
    assert admin.delete(f"/api/timeline-event/{plain['id']}").status_code == 204
    assert admin.get(f"/api/timeline-event/{plain['id']}").status_code == 404
    assert admin.put("/api/timeline-event/98765", json={"name": "x"}).status_code == 404


def test_archiving_a_timeline_archives_its_events_and_unarchiving_restores_them(admin):
    tid = timeline(admin, "Ops")["id"]
    first = event(admin, tid, "Outage", "2024-01-01")
    second = event(admin, tid, "Old", "2024-01-02", archived=True)
    assert [e["name"] for e in admin.get(f"/api/timeline/{tid}?include=events").json["events"]] == ["Outage"]
    assert [e["name"] for e in admin.get(f"/api/timeline/{tid}?include=events&archived=true").json["events"]] == [
        "Outage", "Old"]
    archived = admin.put(f"/api/timeline/{tid}", json={"archived": True})
    assert archived.status_code == 200 and archived.json["archived"] is True and "events" not in archived.json
    assert admin.get(f"/api/timeline-event/{first['id']}").json["archived"] is True
    assert admin.get("/api/timeline").json == []
    listed = admin.get("/api/timeline?archived=true&include=events").json
    assert [t["id"] for t in listed] == [tid] and len(listed[0]["events"]) == 2
    assert admin.get(f"/api/timeline/{tid}?include=events").json["events"] == []
    admin.put(f"/api/timeline/{tid}", json={"archived": False})
    # As in Metabase, unarchiving sets every event of the timeline unarchived.
    assert admin.get(f"/api/timeline-event/{second['id']}").json["archived"] is False
    assert [t["id"] for t in admin.get("/api/timeline").json] == [tid]


def test_list_is_sorted_by_name_and_can_include_events(admin):
    for name in ("beta", "Alpha", "gamma"):
        timeline(admin, name)
    listed = admin.get("/api/timeline").json
    assert [t["name"] for t in listed] == ["Alpha", "beta", "gamma"] and "events" not in listed[0]
    event(admin, listed[1]["id"], "e", "2024-05-05")
    with_events = admin.get("/api/timeline?include=events").json
    assert [len(t["events"]) for t in with_events] == [0, 1, 0]


def test_range_filter_compares_timestamps_or_dates_by_time_matters(admin):
    tid = timeline(admin, "Range")["id"]
    event(admin, tid, "noon", "2022-01-10T12:00:00Z", time_matters=True)
    event(admin, tid, "late day", "2022-01-10T23:00:00Z", time_matters=False)
    event(admin, tid, "next day", "2022-01-11T08:00:00Z", time_matters=True)
    event(admin, tid, "much later", "2022-03-01", time_matters=False)

    def names(**params):
        response = admin.get(f"/api/timeline/{tid}", query_string={"include": "events", **params})
        assert response.status_code == 200, response.json
        return [e["name"] for e in response.json["events"]]

    # 13:00 is after noon on the 10th: the timed event is out, the all-day one of the 10th is in.
    assert names(start="2022-01-10T13:00:00Z", end="2022-01-11") == ["late day"]
    assert names(start="2022-01-10T13:00:00Z", end="2022-01-11T09:00:00Z") == ["late day", "next day"]
    assert names(end="2022-01-10T11:00:00Z") == ["late day"]
    assert names(start="2022-01-10") == ["noon", "late day", "next day", "much later"]
    assert names(start="2022-02", end="2022-03-01T00:00:00+01:00") == []
    assert names(start="2022-02", end="2022-03-01") == ["much later"]


def test_card_and_collection_timelines(app, admin):
    cid = add_collection(app, "Finance")
    in_finance = timeline(admin, "Quarters", collection_id=cid)
    archived = timeline(admin, "Old quarters", collection_id=cid, archived=True)
    at_root = timeline(admin, "Company")
    event(admin, in_finance["id"], "Q1 close", "2024-03-31")
    event(admin, in_finance["id"], "Q4 close", "2023-12-31")
    event(admin, in_finance["id"], "Hidden", "2024-02-01", archived=True)
    card_id = add_card(app, "Revenue", collection_id=cid)
    root_card = add_card(app, "Users")

    for path in (f"/api/card/{card_id}/timelines", f"/api/timeline/card/{card_id}"):
        got = admin.get(f"{path}?include=events&start=2024-01-01&end=2024-12-31").json
        assert [t["id"] for t in got] == [in_finance["id"]]
        assert [e["name"] for e in got[0]["events"]] == ["Q1 close"]
        assert "events" not in admin.get(path).json[0]
    assert [t["id"] for t in admin.get(f"/api/card/{root_card}/timelines").json] == [at_root["id"]]
    assert admin.get("/api/card/98765/timelines").status_code == 404
    assert admin.get(f"/api/card/{card_id}/timelines?start=soon").status_code == 400

    for path in (f"/api/collection/{cid}/timelines", f"/api/timeline/collection/{cid}"):
        assert [t["id"] for t in admin.get(path).json] == [in_finance["id"]]
        assert [t["id"] for t in admin.get(f"{path}?archived=true").json] == [archived["id"]]
        events = admin.get(f"{path}?include=events").json[0]["events"]
        assert [e["name"] for e in events] == ["Q4 close", "Q1 close"]
    for path in ("/api/collection/root/timelines", "/api/timeline/collection/root"):
        got = admin.get(path).json
        assert [t["id"] for t in got] == [at_root["id"]] and got[0]["collection"]["id"] == "root"
    assert admin.get("/api/collection/98765/timelines").status_code == 404
    assert admin.get("/api/timeline/collection/98765").status_code == 404


def test_a_timestamp_out_of_range_in_utc_is_a_400(admin):
    """Year 1 at +01:00 is before datetime's first instant in UTC: a validation error, not a 500."""
    tid = timeline(admin, "Edge")["id"]
    body = {"name": "e", "timestamp": "0001-01-01T00:01:00+01:00", "timezone": "UTC", "timeline_id": tid}
    created = admin.post("/api/timeline-event", json=body)
    assert created.status_code == 400 and set(created.json["errors"]) == {"timestamp"}
    assert admin.get(f"/api/timeline/{tid}?include=events&start=9999-12-31T23:00:00-05:00").status_code == 400
