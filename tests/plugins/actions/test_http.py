"""HTTP actions against a small server on 127.0.0.1 that the allow-list setting lets in: the template
filled ({{param}}, [[optional]] blocks), X-Metabase-Action, JSON content type, response_handle and
error_handle evaluated with jq; refused destinations (loopback without the allow-list, the metadata
address, a name resolving to loopback, a redirect to loopback) are a 400 and nothing reaches the server;
parameter values cannot move the host or add headers (compat/security.md rows 10 and 11)."""
import pytest

from core.testing import set_setting

from .support import Recorder, enable_actions, http_action, make_model, register, table_id


@pytest.fixture
def hook(app, admin):
    db = register(app, admin)
    enable_actions(admin, db)
    model = make_model(admin, db, table_id(admin, db, "people"))
    server = Recorder()
    try:
        yield model, server
    finally:
        server.close()


def allow_loopback(app):
    set_setting(app, "http-actions-allowed-cidrs", "127.0.0.1/32")


def make(admin, model, template, **extra):
    response = http_action(admin, model, template, **extra)
    assert response.status_code == 200, response.json
    return response.json["id"]


def run(admin, action, parameters):
    return admin.post(f"/api/action/{action}/execute", json={"parameters": parameters})


@pytest.mark.security_row(11)
def test_template_filled_and_sent(app, admin, hook):
    model, server = hook
    allow_loopback(app)
    action = make(admin, model, {
        "method": "POST", "url": server.url + "/people/{{id}}[[?note={{note}}]]",
        "body": '{"name": "{{name}}", "id": {{id}}}', "headers": '{"X-Tag": "{{tag}}"}',
        "parameters": [{"id": "id"}, {"id": "name"}, {"id": "note"}, {"id": "tag"}]},
        name="Notify", parameters=[{"id": k, "type": "string/="} for k in ("id", "name", "note", "tag")],
        response_handle=".body.ok")
    server.reply = (200, {"ok": "yes"}, {})
    answer = run(admin, action, {"id": 7, "name": "Ada", "tag": "t1"})
    assert answer.status_code == 200 and answer.json == "yes"
    sent = server.requests[-1]
    assert sent["method"] == "POST" and sent["path"] == "/people/7"
    assert sent["body"] == '{"name": "Ada", "id": 7}'
    assert sent["headers"]["X-Metabase-Action"] == "Notify" and sent["headers"]["X-Tag"] == "t1"
    assert sent["headers"]["Content-Type"] == "application/json"
    run(admin, action, {"id": 7, "name": "Ada", "note": "a b/../c?d=1&e", "tag": "t"})
    assert server.requests[-1]["path"] == "/people/7?note=a%20b%2F..%2Fc%3Fd%3D1%26e"
    # A value cannot leave the path: "@evil.com/" and "../admin" stay encoded under the fixed host.
    run(admin, action, {"id": "@evil.com/../admin", "name": "x", "tag": "t"})
    assert server.requests[-1]["path"] == "/people/%40evil.com%2F..%2Fadmin"
    # Nor end its header string and add another, nor smuggle CR/LF: refused before sending.
    count = len(server.requests)
    injected = run(admin, action, {"id": 1, "name": "x", "tag": 'a", "Host": "evil'})
    assert injected.status_code in (200, 204) and server.requests[-1]["headers"]["X-Tag"] == 'a", "Host": "evil'
    assert server.requests[-1]["headers"]["Host"].startswith("127.0.0.1")
    count = len(server.requests)
    crlf = run(admin, action, {"id": 1, "name": "x", "tag": "a\r\nX-Evil: 1"})
    assert crlf.status_code == 400 and len(server.requests) == count
    missing = run(admin, action, {"name": "x", "tag": "t"})
    assert missing.status_code == 400
    assert missing.json == 'Cannot call the service: missing required parameters: #{"id"}'
    assert len(server.requests) == count


def test_handles(app, admin, hook):
    model, server = hook
    allow_loopback(app)
    plain = make(admin, model, {"method": "GET", "url": server.url + "/x"})
    server.reply = (200, {"id": 5}, {})
    assert run(admin, plain, {}).status_code == 204
    server.reply = (503, {"error": "down"}, {})
    failed = run(admin, plain, {})
    assert failed.status_code == 400 and failed.json == {"remote-status": 503}
    custom = make(admin, model, {"method": "GET", "url": server.url + "/y"}, error_handle=".body.error",
                  response_handle=".body")
    failed = run(admin, custom, {})
    assert failed.status_code == 400 and failed.json == "down"
    server.reply = (200, {"id": 5}, {})
    ok = run(admin, custom, {})
    assert ok.status_code == 200 and ok.json == {"id": 5}


@pytest.mark.security_row(10)
@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/x", "http://localhost:{port}/x", "http://169.254.169.254/x",
                                 "http://[::ffff:127.0.0.1]:{port}/x", "http://2130706433:{port}/x"])
def test_refused_destinations_send_nothing(app, admin, hook, url):
    model, server = hook
    action = make(admin, model, {"method": "POST", "url": url.format(port=server.port), "body": "{}"})
    refused = run(admin, action, {})
    assert refused.status_code == 400 and isinstance(refused.json, str) and refused.json
    assert server.requests == []


@pytest.mark.security_row(10)
def test_redirect_to_loopback_is_refused(app, admin, hook):
    model, server = hook
    allow_loopback(app)
    # Another loopback address, outside the allow-list (127.0.0.1/32): without the guard it would answer.
    target = Recorder(host="127.0.0.2")
    try:
        server.reply = (302, None, {"Location": f"{target.url}/inside"})
        action = make(admin, model, {"method": "GET", "url": server.url + "/out"})
        refused = run(admin, action, {})
        assert refused.status_code == 400
        assert len(server.requests) == 1 and target.requests == []
    finally:
        target.close()
