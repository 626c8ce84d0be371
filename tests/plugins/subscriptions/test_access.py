"""Who sees and changes which subscription (API-SPEC's Pulses table): a plain user lists only the pulses
they created, sees those addressed to them with creator_or_recipient (without cards and recipients where
the collection is hidden), cannot change another's, can unsubscribe; sends run with the creator's
permissions; the webhook channel stays unconfigured, so no subscription makes an outbound request."""
from __future__ import annotations

import http.server
import threading

import pytest

from core.schedule.runner import run_due

from .support import add_card, card_ref, daily, parts
from .test_send import at


def ok(response):
    assert response.status_code in (200, 204), (response.status_code, response.json)
    return response.json


def hidden_collection(admin, name="Hidden") -> int:
    collection_id = ok(admin.post("/api/collection", json={"name": name}))["id"]
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                                "groups": {"1": {str(collection_id): "none"}}}))
    return collection_id


def test_plain_user_sees_own_and_addressed_pulses(admin, user, warehouse):
    public = add_card(admin, warehouse, "Public card")
    secret_collection = hidden_collection(admin)
    secret = add_card(admin, warehouse, "Secret card", collection_id=secret_collection)
    me = user.user
    own = ok(user.post("/api/pulse", json={"name": "Mine", "cards": [card_ref(public)], "channels": [daily()]}))
    addressed = ok(admin.post("/api/pulse", json={
        "name": "To user", "cards": [card_ref(secret)], "collection_id": secret_collection,
        "channels": [daily(recipients=[{"id": me["id"]}, {"email": "boss@example.com"}])]}))
    unrelated = ok(admin.post("/api/pulse", json={"name": "Admin only", "cards": [card_ref(secret)],
                                                  "collection_id": secret_collection, "channels": [daily()]}))
    assert [p["id"] for p in ok(user.get("/api/pulse"))] == [own["id"]]
    assert {p["id"] for p in ok(admin.get("/api/pulse"))} == {own["id"], addressed["id"], unrelated["id"]}
    listed = {p["id"]: p for p in ok(user.get("/api/pulse?creator_or_recipient=true"))}
    assert set(listed) == {own["id"], addressed["id"]}
    stripped = listed[addressed["id"]]
    assert "cards" not in stripped and all("recipients" not in c for c in stripped["channels"])
    assert stripped["can_write"] is False and listed[own["id"]]["can_write"] is True
    got = ok(user.get(f"/api/pulse/{addressed['id']}"))
    assert "cards" not in got and "Secret card" not in str(got) and "boss@example.com" not in str(got)
    assert user.get(f"/api/pulse/{unrelated['id']}").status_code == 403
    assert user.put(f"/api/pulse/{addressed['id']}", json={"name": "Taken"}).status_code == 403
    assert user.put(f"/api/pulse/{own['id']}", json={"name": "Still mine"}).status_code == 200
    # unsubscribe: once, then the pulse is no longer addressed to the user
    assert user.delete(f"/api/pulse/{addressed['id']}/subscription").status_code == 204
    assert user.delete(f"/api/pulse/{addressed['id']}/subscription").status_code == 404
    assert {p["id"] for p in ok(user.get("/api/pulse?creator_or_recipient=true"))} == {own["id"]}
    recipients = ok(admin.get(f"/api/pulse/{addressed['id']}"))["channels"][0]["recipients"]
    assert recipients == [{"email": "boss@example.com"}]


def test_plain_user_cannot_subscribe_to_hidden_content(admin, user, warehouse):
    secret_collection = hidden_collection(admin)
    secret = add_card(admin, warehouse, "Secret card", collection_id=secret_collection)
    dashboard = ok(admin.post("/api/dashboard", json={"name": "Secret dash", "collection_id": secret_collection}))
    public = add_card(admin, warehouse, "Public card")
    assert user.post("/api/pulse", json={"name": "P", "cards": [card_ref(secret)],
                                         "channels": [daily()]}).status_code == 403
    assert user.post("/api/pulse", json={"name": "P", "cards": [card_ref(public)], "dashboard_id": dashboard["id"],
                                         "channels": [daily()]}).status_code == 403
    assert user.post("/api/pulse", json={"name": "P", "cards": [card_ref(public)], "collection_id": secret_collection,
                                         "channels": [daily()]}).status_code == 403
    for path in ("preview_card", "preview_card_info", "preview_card_png"):
        assert user.get(f"/api/pulse/{path}/{secret['id']}").status_code == 403
    assert user.get(f"/api/pulse/preview_dashboard/{dashboard['id']}").status_code == 403
    assert ok(user.get("/api/pulse")) == []


def test_send_runs_with_the_creators_permissions(app, admin, user, warehouse, inbox):
    collection_id = ok(admin.post("/api/collection", json={"name": "Shared"}))["id"]
    card = add_card(admin, warehouse, "People", collection_id=collection_id)
    ok(user.post("/api/pulse", json={"name": "Mine", "cards": [card_ref(card, include_csv=True)],
                                     "channels": [daily(hour=8, recipients=[{"email": "me@example.com"}])]}))
    run_due(app, at(26, 7))
    assert len(run_due(app, at(26, 8))) == 1
    first = parts(inbox.wait(1)[0][1])
    assert "Lovelace" in first["html"][0] and len(first["files"]) == 1
    graph = ok(admin.get("/api/collection/graph"))  # the creator loses access to the card's collection
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"],
                                                "groups": {"1": {str(collection_id): "none"}}}))
    assert len(run_due(app, at(27, 8))) == 1
    second = parts(inbox.wait(2)[1][1])
    assert "Lovelace" not in second["html"][0] and "permissions" in second["html"][0]
    assert second["files"] == []


def test_previews(admin, warehouse):
    bar = add_card(admin, warehouse, "Ages", display="bar", sql="SELECT first_name, age FROM people ORDER BY id",
                   visualization_settings={"graph.dimensions": ["first_name"], "graph.metrics": ["age"]})
    table = add_card(admin, warehouse, "People")
    page = admin.get(f"/api/pulse/preview_card/{table['id']}")
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert "Lovelace" in page.get_data(as_text=True)
    info = ok(admin.get(f"/api/pulse/preview_card_info/{bar['id']}"))
    assert set(info) == {"id", "pulse_card_type", "pulse_card_html", "pulse_card_name", "pulse_card_url",
                         "row_count", "col_count"}
    assert (info["id"], info["pulse_card_name"], info["row_count"], info["col_count"]) == (bar["id"], "Ages", 3, 2)
    assert info["pulse_card_url"].endswith(f"/question/{bar['id']}") and "<img" in info["pulse_card_html"]
    png = admin.get(f"/api/pulse/preview_card_png/{bar['id']}?width=300")
    assert png.status_code == 200 and png.headers["Content-Type"] == "image/png"
    assert png.data.startswith(b"\x89PNG\r\n\x1a\n")
    width = int.from_bytes(png.data[16:20], "big")
    assert 300 <= width <= 300 * 2  # drawn 300 wide (at most twice for a retina scale)
    assert admin.get(f"/api/pulse/preview_card_png/{bar['id']}?width=-3").status_code == 400
    assert admin.get("/api/pulse/preview_card/99999").status_code == 404
    from tests.plugins.dashboards.layout_helpers import dashcard

    dash = ok(admin.post("/api/dashboard", json={"name": "Board"}))
    ok(admin.put(f"/api/dashboard/{dash['id']}", json={"dashcards": [dashcard(-1, table["id"])]}))
    board = admin.get(f"/api/pulse/preview_dashboard/{dash['id']}")
    assert board.status_code == 200 and "Board" in board.get_data(as_text=True)
    assert "Lovelace" in board.get_data(as_text=True)


@pytest.fixture
def listener():
    """A loopback HTTP server that counts the requests it gets."""
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the standard library's name
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        do_GET = do_POST  # noqa: N815

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", hits
    server.shutdown()
    server.server_close()


@pytest.mark.security_row(10)
@pytest.mark.parametrize("url", ["loopback", "http://169.254.169.254/latest/meta-data", "http://2130706433/",
                                 "file:///etc/passwd"])
def test_webhook_channel_posts_only_to_an_allowed_destination(admin, warehouse, listener, url):
    """An http channel posts only to a /api/channel destination (a URL in the pulse channel's own
    details is never used), and without the allow-list an internal or non-HTTP URL cannot become one:
    no subscription can make the server request an internal address."""
    address, hits = listener
    url = address if url == "loopback" else url
    card = add_card(admin, warehouse, "People")
    assert ok(admin.get("/api/pulse/form_input"))["channels"]["http"]["configured"] is False
    channel = {"channel_type": "http", "enabled": True, "schedule_type": "hourly", "details": {"url": url}}
    for path in ("/api/pulse", "/api/pulse/test"):
        response = admin.post(path, json={"name": "Hook", "cards": [card_ref(card)], "channels": [channel]})
        assert response.status_code == 400 and "channel_id" in response.json["errors"]["channels"]
    for path in ("/api/channel", "/api/channel/test"):
        response = admin.post(path, json={"name": "Hook", "type": "channel/http", "details": {"url": url}})
        assert response.status_code == 400, response.json
    assert ok(admin.get("/api/pulse")) == [] and ok(admin.get("/api/channel")) == [] and hits == []
