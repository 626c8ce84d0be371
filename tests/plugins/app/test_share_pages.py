"""The share page of a dashboard and a question (plugins/app/sharing.py, sharing_code.py,
sharing_preview.py) through HTTP: the public link made and removed (and opened signed out), the
embedding's rules stored, the token code without the secret, and the preview's iframe page drawn with
its locked filter; refusals for a user who is not an administrator, as the API's."""
from __future__ import annotations

import base64
import json
import re
from html import unescape

import pytest

from core.testing import USER_PASSWORD, make_user, setup_admin
from tests.plugins.app.test_dashboard_pages import build_shop, ok
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.support import module_app

pytestmark = pytest.mark.xdist_group("app-share-pages")


class Site:
    def __init__(self, app, admin, shop):
        self.app, self.admin, self.shop = app, admin, shop


@pytest.fixture(scope="module")
def site(tmp_path_factory, app_db_template):
    data_dir = tmp_path_factory.mktemp("app-share")
    app = module_app(data_dir, app_db_template)
    admin = setup_admin(app)
    shop = build_shop(app, admin)
    ok(admin.put("/api/setting/enable-embedding-static", json={"value": True}), 204)
    ok(admin.put("/api/setting/enable-public-sharing", json={"value": True}), 204)
    yield Site(app, admin, shop)
    app.extensions["tessera"].db.dispose()


def field(html: str, name: str) -> str:
    return unescape(re.search(rf'id="{name}"[^>]*value="([^"]*)"', html).group(1))


def public_uuid(html: str) -> str:
    return re.search(r"/public/(?:dashboard|question)/([0-9a-f-]{36})", html).group(1)


def test_a_public_link_is_made_opened_signed_out_and_removed(site):
    client = sign_in(site.app)
    page = text(client.get(site.shop["path"] + "/share"))
    assert "Create a public link" in page and "/share/public-link" in page
    made = client.post(site.shop["path"] + "/share/public-link", json={"public": "on"}, headers=HTMX)
    assert made.status_code == 200, text(made)
    uuid = public_uuid(text(made))
    assert ok(site.admin.get(f"/api/dashboard/{site.shop['dashboard']}"))["public_uuid"] == uuid
    assert field(text(made), "public-link") == f"http://localhost/public/dashboard/{uuid}"
    assert f'<iframe src="http://localhost/public/dashboard/{uuid}"' in field_text(text(made), "public-iframe")
    stranger = site.app.test_client()
    assert stranger.get(f"/public/dashboard/{uuid}").status_code == 200
    assert ok(stranger.get(f"/api/public/dashboard/{uuid}"))["name"] == "Shop overview"
    # The share page shows the link as it now is.
    assert public_uuid(text(client.get(site.shop["path"] + "/share"))) == uuid
    gone = client.post(site.shop["path"] + "/share/public-link", json={"public": "off"}, headers=HTMX)
    assert gone.status_code == 200 and "has no public link" in text(gone)
    assert stranger.get(f"/api/public/dashboard/{uuid}").status_code == 404


def test_a_question_gets_a_public_link_too(site):
    client = sign_in(site.app)
    path = f"/question/{site.shop['chart']}-revenue-by-city"
    question = text(client.get(path))
    assert f'href="{path}/share"' in question
    made = client.post(path + "/share/public-link", json={"public": "on"}, headers=HTMX)
    uuid = public_uuid(text(made))
    stranger = site.app.test_client()
    assert ok(stranger.get(f"/api/public/card/{uuid}"))["name"] == "Revenue by city"
    assert stranger.get(f"/public/question/{uuid}").status_code == 200
    client.post(path + "/share/public-link", json={"public": "off"}, headers=HTMX)
    assert stranger.get(f"/api/public/card/{uuid}").status_code == 404


def field_text(html: str, name: str) -> str:
    return unescape(re.search(rf'<textarea id="{name}"[^>]*>(.*?)</textarea>', html, re.DOTALL).group(1))


def claims(token: str) -> dict:
    body = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


def test_embedding_rules_are_stored_and_the_code_names_no_secret(site):
    client = sign_in(site.app)
    saved = client.post(site.shop["path"] + "/share/embedding", headers=HTMX, json={
        "enable_embedding": "on", "rule.city": "locked", "value.city": "Oslo", "rule.name": "enabled",
        "rule.amount": "bogus"})
    assert saved.status_code == 200, text(saved)
    assert saved.headers["HX-Redirect"] == site.shop["path"] + "/share?value.city=Oslo#embedding"
    dashboard = ok(site.admin.get(f"/api/dashboard/{site.shop['dashboard']}"))
    assert dashboard["enable_embedding"] is True
    assert dashboard["embedding_params"] == {"city": "locked", "name": "enabled", "date": "disabled",
                                             "amount": "disabled", "invoice": "disabled"}
    page = text(client.get(site.shop["path"] + "/share?value.city=Oslo"))
    secret = ok(site.admin.get("/api/setting/embedding-secret-key"))
    # Nowhere in the page: not in what it shows and offers to copy, nor in its bootstrap JSON (the
    # public settings only, as Metabase's).
    assert isinstance(secret, str) and len(secret) == 64 and secret not in page
    assert '"site-name"' in page.split('id="_metabaseBootstrap">', 1)[1].split("</script>", 1)[0]
    python = field_text(page, "code-python")
    assert python == (
        "# You will need to install via 'pip install pyjwt' or in a similar manner\n"
        "import jwt\nimport time\n\n"
        'METABASE_SITE_URL = "http://localhost"\n'
        'METABASE_SECRET_KEY = "YOUR_EMBEDDING_SECRET_KEY"\n\n'
        "payload = {\n"
        f'  "resource": {{"dashboard": {site.shop["dashboard"]}}},\n'
        '  "params": {\n    "city": "Oslo"\n  },\n'
        '  "exp": round(time.time()) + (60 * 10)  # 10 minute expiration\n'
        "}\n"
        'token = jwt.encode(payload, METABASE_SECRET_KEY, algorithm="HS256")\n\n'
        'iframeUrl = METABASE_SITE_URL + "/embed/dashboard/" + token + "#bordered=true&titled=true"\n')
    compile(python, "embed.py", "exec")  # the shown code is valid Python
    node, ruby = field_text(page, "code-node"), field_text(page, "code-ruby")
    assert f"resource: {{ dashboard: {site.shop['dashboard']} }}" in node and '"city": "Oslo"' in node
    assert f":resource => {{:dashboard => {site.shop['dashboard']}}}" in ruby and '"city" => "Oslo"' in ruby
    for code in (python, node, ruby):
        assert "YOUR_EMBEDDING_SECRET_KEY" in code and secret not in code


def preview_src(page: str) -> str:
    return unescape(re.search(r'<iframe class="embed-preview" src="([^"]+)"', page).group(1))


def test_the_preview_is_a_valid_token_and_its_page_applies_the_locked_filter(site):
    client = sign_in(site.app)
    client.post(site.shop["path"] + "/share/embedding", headers=HTMX, json={
        "rule.city": "locked", "value.city": "Oslo", "rule.name": "enabled"})
    page = text(client.get(site.shop["path"] + "/share?value.city=Oslo"))
    src = preview_src(page)
    assert src.startswith("/embed-preview/dashboard/")
    token = src.rsplit("/", 1)[1]
    payload = claims(token)
    assert payload["resource"] == {"dashboard": site.shop["dashboard"]}
    assert payload["params"] == {"city": "Oslo"}
    assert payload["_embedding_params"] == {"city": "locked", "name": "enabled", "date": "disabled",
                                            "amount": "disabled", "invoice": "disabled"}
    # The API itself accepts the token (it verifies the signature with the secret).
    assert ok(site.admin.get(f"/api/preview-embed/dashboard/{token}"))["name"] == "Shop overview"
    preview = client.get(src)
    assert preview.status_code == 200, text(preview)
    assert "frame-ancestors 'self'" in preview.headers["Content-Security-Policy"]
    assert "X-Frame-Options" not in preview.headers
    assert preview.headers["Cache-Control"] == "no-store" and preview.headers["Referrer-Policy"] == "no-referrer"
    html = text(preview)
    assert 'data-slug="name"' in html and 'data-slug="city"' not in html  # the editable filter only
    total = site.shop["dashcard"][site.shop["total"]]
    body = text(client.get(f"{src}/card/{total}", headers=HTMX))
    assert re.search(r'<p class="scalar">([^<]*)</p>', body).group(1) == "16.5"  # Oslo's invoices alone
    named = text(client.get(f"{src}/card/{total}?name=Ann", headers=HTMX))
    assert re.search(r'<p class="scalar">([^<]*)</p>', named).group(1) == "15.5"
    # The share page itself may frame it: its policy allows frames from this server.
    assert "frame-src 'self'" in client.get(site.shop["path"] + "/share").headers["Content-Security-Policy"]


def test_a_question_preview_draws_its_result(site):
    client = sign_in(site.app)
    path = f"/question/{site.shop['total']}-invoice-total"
    page = text(client.get(path + "/share"))
    src = preview_src(page)
    assert src.startswith("/embed-preview/question/") and claims(src.rsplit("/", 1)[1])["params"] == {}
    assert re.search(r'<p class="scalar">([^<]*)</p>', text(client.get(src))).group(1) == "23.5"


def test_someone_not_an_administrator_is_refused_as_by_the_api(site):
    make_user(site.app, email="plain@example.com")
    client = sign_in(site.app, "plain@example.com", USER_PASSWORD)
    page = client.get(site.shop["path"] + "/share")
    assert page.status_code == 200
    assert "Only an administrator" in text(page) and "embed-preview" not in text(page)
    made = client.post(site.shop["path"] + "/share/public-link", json={"public": "on"}, headers=HTMX)
    assert made.status_code == 403 and 'class="form-error"' in text(made)
    saved = client.post(site.shop["path"] + "/share/embedding", json={"enable_embedding": "on"}, headers=HTMX)
    assert saved.status_code == 403
    admin = sign_in(site.app)
    src = preview_src(text(admin.get(site.shop["path"] + "/share")))
    assert client.get(src).status_code == 403
    assert site.app.test_client().get(src).status_code in (302, 303)  # signed out: to the sign-in page


def test_a_preview_of_a_token_that_is_not_one_is_the_apis_refusal(site):
    client = sign_in(site.app)
    for path in ("/embed-preview/dashboard/junk", "/embed-preview/question/junk",
                 "/embed-preview/dashboard/junk/card/1", "/embed-preview/dashboard/junk/values/p_city",
                 "/embed-preview/dashboard/" + "x" * 9000):
        response = client.get(path)
        assert 400 <= response.status_code < 500, (path, response.status_code)


def test_a_section_shows_only_while_the_apis_toggle_is_on(site):
    client = sign_in(site.app)
    try:
        ok(site.admin.put("/api/setting/enable-public-sharing", json={"value": False}), 204)
        page = text(client.get(site.shop["path"] + "/share"))
        assert "Public link" not in page and "Static embedding" in page
        refused = client.post(site.shop["path"] + "/share/public-link", json={"public": "on"}, headers=HTMX)
        assert refused.status_code == 400 and "Public sharing is not enabled." in text(refused)
        ok(site.admin.put("/api/setting/enable-embedding-static", json={"value": False}), 204)
        page = text(client.get(site.shop["path"] + "/share"))
        assert "Static embedding" not in page and "embed-preview" not in page and "both off" in page
    finally:
        ok(site.admin.put("/api/setting/enable-public-sharing", json={"value": True}), 204)
        ok(site.admin.put("/api/setting/enable-embedding-static", json={"value": True}), 204)
