"""Issue 18's "Done when", end to end through the HTTP API: a new administrator enables actions on a
database, makes a model, adds an implicit update action, a query action and an HTTP action, places them as
buttons on a dashboard, runs each through the dashcard execute route and through a public link, sees the
rows change in the database, and an HTTP action aimed at 127.0.0.1 or 169.254.169.254 without an
allow-list is refused (and nothing is sent)."""
import sqlite3

import pytest

from core.testing import set_setting, setup_admin

from .support import (
    Recorder,
    enable_actions,
    http_action,
    implicit,
    make_model,
    param,
    query_action,
    register,
    table_id,
    tag,
)
from .test_dashcard import dashboard_with


def age_of(path: str, person: int) -> int:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT age FROM people WHERE id = ?", (person,)).fetchone()[0]
    finally:
        con.close()


@pytest.mark.security_row(10)
def test_done_when(app, app_config):
    admin = setup_admin(app)
    db = register(app, admin)
    path = admin.get(f"/api/database/{db}").json["details"]["db"]
    refused = admin.post("/api/action", json={"name": "x", "type": "implicit", "kind": "row/update",
                                              "model_id": make_model(admin, db, table_id(admin, db, "people"))})
    assert refused.status_code == 400 and refused.json == "Actions are not enabled."
    enable_actions(admin, db)
    model = make_model(admin, db, table_id(admin, db, "people"), name="People")

    update = implicit(admin, model, "row/update", name="Edit person").json
    birthday = query_action(admin, model, db, "UPDATE people SET age = age + 1 WHERE id = {{id}}",
                            {"id": tag("id", "number", required=True)}, [param("id", "number/=")],
                            name="Birthday").json
    server = Recorder(reply=(200, {"id": 1, "status": "noted"}, {}))
    try:
        set_setting(app, "http-actions-allowed-cidrs", "127.0.0.1/32")
        notify = http_action(admin, model, {"method": "POST", "url": server.url + "/notify/{{id}}",
                                            "body": '{"person": {{id}}}'},
                             name="Notify", parameters=[{"id": "id", "type": "number/="}],
                             response_handle=".body.status").json

        dashboard, dashcards = dashboard_with(admin, *({"action_id": a["id"]} for a in (update, birthday, notify)))
        shown = admin.get(f"/api/dashboard/{dashboard}").json["dashcards"]
        assert [d["action"]["name"] for d in shown] == ["Edit person", "Birthday", "Notify"]
        base = f"/api/dashboard/{dashboard}/dashcard"

        edited = admin.post(f"{base}/{dashcards[0]}/execute", json={"parameters": {"id": 1, "age": 40}})
        assert edited.json == {"rows-updated": [1]} and age_of(path, 1) == 40
        aged = admin.post(f"{base}/{dashcards[1]}/execute", json={"parameters": {"id": 1}})
        assert aged.json == {"rows-affected": 1} and age_of(path, 1) == 41
        noted = admin.post(f"{base}/{dashcards[2]}/execute", json={"parameters": {"id": 1}})
        assert noted.status_code == 200 and noted.json == "noted"
        assert server.requests[-1]["path"] == "/notify/1" and server.requests[-1]["body"] == '{"person": 1}'

        # The same three through public links, with no account at all.
        assert admin.put("/api/setting/enable-public-sharing", json={"value": True}).status_code == 204
        anonymous = app.test_client()
        uuids = [admin.post(f"/api/action/{a['id']}/public_link").json["uuid"] for a in (update, birthday, notify)]
        public = anonymous.get(f"/api/public/action/{uuids[0]}")
        assert public.status_code == 200 and public.json["name"] == "Edit person"
        assert "dataset_query" not in anonymous.get(f"/api/public/action/{uuids[1]}").json
        edited = anonymous.post(f"/api/public/action/{uuids[0]}/execute", json={"parameters": {"id": 2, "age": 50}})
        assert edited.status_code == 200 and age_of(path, 2) == 50
        aged = anonymous.post(f"/api/public/action/{uuids[1]}/execute", json={"parameters": {"id": 2}})
        assert aged.status_code == 200 and age_of(path, 2) == 51
        noted = anonymous.post(f"/api/public/action/{uuids[2]}/execute", json={"parameters": {"id": 2}})
        assert noted.status_code == 200 and server.requests[-1]["path"] == "/notify/2"

        # Without the allow-list, loopback and the metadata address are refused and nothing is sent.
        set_setting(app, "http-actions-allowed-cidrs", "")
        sent = len(server.requests)
        for url in (server.url + "/x", "http://169.254.169.254/latest/meta-data/"):
            inside = http_action(admin, model, {"method": "GET", "url": url}, name="Inside").json
            dashboard, (button,) = dashboard_with(admin, {"action_id": inside["id"]})
            answer = admin.post(f"/api/dashboard/{dashboard}/dashcard/{button}/execute", json={"parameters": {}})
            assert answer.status_code == 400 and answer.json
        assert len(server.requests) == sent
    finally:
        server.close()


def test_public_execution_is_rate_limited(app, admin):
    db = register(app, admin)
    enable_actions(admin, db)
    model = make_model(admin, db, table_id(admin, db, "people"))
    action = query_action(admin, model, db, "UPDATE people SET age = age + 1 WHERE id = 1", {}, []).json
    other = query_action(admin, model, db, "UPDATE people SET age = age + 1 WHERE id = 2", {}, []).json
    assert admin.put("/api/setting/enable-public-sharing", json={"value": True}).status_code == 204
    uuid = admin.post(f"/api/action/{action['id']}/public_link").json["uuid"]
    other_uuid = admin.post(f"/api/action/{other['id']}/public_link").json["uuid"]

    class Frozen:
        now = 5_000_000.0

        def __call__(self):
            return self.now

    from core.http.throttle import Throttler

    clock = Frozen()
    app.extensions["tessera"].throttlers["public-action-execute"] = Throttler(
        "public-action-execute", threshold=10, ttl=1.0, clock=clock)
    anonymous = app.test_client()
    answers = [anonymous.post(f"/api/public/action/{uuid}/execute", json={"parameters": {}}) for _ in range(11)]
    assert [a.status_code for a in answers] == [200] * 10 + [429]
    assert answers[-1].headers["Retry-After"] == "1"
    assert anonymous.post(f"/api/public/action/{other_uuid}/execute", json={"parameters": {}}).status_code == 200
    clock.now += 1.5
    assert anonymous.post(f"/api/public/action/{uuid}/execute", json={"parameters": {}}).status_code == 200
