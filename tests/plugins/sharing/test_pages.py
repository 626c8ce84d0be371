"""The public and embed pages over HTTP (the browser tests are in test_pages_browser.py): the shell,
its assets, the framing setting and headers, and the pages' absence when the plugin is disabled."""
import re

import pytest

from core.assembly.app import create_app
from core.testing import ApiClient

PAGES = ("/public/question/{t}", "/public/dashboard/{t}", "/embed/question/{t}", "/embed/dashboard/{t}")
UUID = "1c6d5b5a-8d0e-4e0a-9f59-3a3f5e7a2b11"


@pytest.mark.parametrize("page", PAGES)
def test_each_page_is_a_self_contained_shell(client, page):
    response = client.get(page.format(t=UUID))
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    html = response.data.decode()
    kind, resource = page.split("/")[1:3]
    assert f'data-source="{kind}"' in html and f'data-resource="{resource}"' in html
    assert f'data-token="{UUID}"' in html
    # Every script and style is Tessera's own, loaded relative to the page: no CDN, no inline code.
    sources = [s for s in re.findall(r'(?:src|href)="([^"]+)"', html) if s != "data:,"]  # data:, = no favicon
    assert len(sources) == 2 and all(s.startswith("../assets/") for s in sources)
    assert "<script>" not in html and "<style" not in html
    for source in sources:
        asset = client.get(f"/{kind}/{resource}/{source}".replace(f"/{resource}/../", "/"))
        assert asset.status_code == 200, source
    assert response.headers["Referrer-Policy"] == "no-referrer"


def test_assets_are_javascript_and_css_and_nothing_else(client):
    assert client.get("/public/assets/page.js").mimetype in ("text/javascript", "application/javascript")
    assert client.get("/embed/assets/page.css").mimetype == "text/css"
    for name in ("api.js", "filters.js", "render.js"):
        assert client.get(f"/public/assets/{name}").status_code == 200
    for missing in ("nope.js", "..%2F__init__.py", "page.html", "%2e%2e%2fviews.py"):
        assert client.get(f"/public/assets/{missing}").status_code == 404, missing
    scripts = "".join(client.get(f"/public/assets/{n}").data.decode() for n in ("page.js", "api.js", "filters.js", "render.js"))
    assert "http://" not in scripts and "https://" not in scripts.replace("https?:", "")
    assert "innerHTML" not in scripts  # server text goes in as text, never as markup


def test_the_token_is_escaped_into_the_shell(client):
    html = client.get('/embed/dashboard/"><img src=x onerror=alert(1)>').data.decode()
    assert "<img src=x" not in html
    assert 'data-token="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"' in html


def test_pages_may_be_framed_by_any_site_by_default(client):
    response = client.get(f"/public/dashboard/{UUID}")
    policy = response.headers["Content-Security-Policy"]
    assert policy.endswith("; frame-ancestors *")
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "X-Frame-Options" not in response.headers


def test_frame_ancestors_follow_the_setting(client, admin):
    sources = "https://app.example.com https://*.example.org:8443"
    assert admin.put("/api/setting/embedding-frame-ancestors", json={"value": sources}).status_code == 204
    for page in PAGES:
        response = client.get(page.format(t=UUID))
        assert response.headers["Content-Security-Policy"].endswith(f"; frame-ancestors {sources}")
        assert "X-Frame-Options" not in response.headers
    assert admin.put("/api/setting/embedding-frame-ancestors", json={"value": "'none'"}).status_code == 204
    response = client.get(f"/embed/question/{UUID}")
    assert response.headers["Content-Security-Policy"].endswith("; frame-ancestors 'none'")
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("bad", ["", "https://a.example.com; script-src *", "https://a.example.com,https://b",
                                 "'none' https://a.example.com", "'unsafe-inline'", "https://a.example.com\r\nX: y",
                                 "javascript:alert(1)//x y'"])
def test_frame_ancestors_refuses_what_is_not_a_source_list(admin, client, bad):
    response = admin.put("/api/setting/embedding-frame-ancestors", json={"value": bad})
    assert response.status_code == 400, bad
    assert "embedding-frame-ancestors" in str(response.json)
    assert client.get(f"/public/question/{UUID}").headers["Content-Security-Policy"].endswith("frame-ancestors *")


def test_the_setting_is_documented_and_for_administrators(admin, user):
    listed = next(s for s in admin.get("/api/setting").json if s["key"] == "embedding-frame-ancestors")
    assert listed["default"] == "*" and "frame" in listed["description"]
    assert user.get("/api/setting/embedding-frame-ancestors").status_code == 403


def test_api_responses_are_never_framed(client, admin):
    admin.put("/api/setting/embedding-frame-ancestors", json={"value": "*"})
    for path in ("/api/health", "/api/session/properties", "/api/public/card/" + UUID, "/api/embed/card/x.y.z",
                 "/api/user/current"):
        response = client.get(path)
        assert response.headers["X-Frame-Options"] == "DENY", path
        assert "frame-ancestors" not in response.headers.get("Content-Security-Policy", ""), path


def test_pages_are_404_when_sharing_is_disabled(app_config):
    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.sharing"})
    client = ApiClient(app)
    for page in PAGES:
        response = client.get(page.format(t=UUID))
        assert response.status_code == 404
        assert response.headers["X-Frame-Options"] == "DENY"
    assert client.get("/public/assets/page.js").status_code == 404


def test_oembed_frames_the_page_it_names(client, admin):
    assert admin.put("/api/setting/enable-public-sharing", json={"value": True}).status_code == 204
    url = f"http://localhost/public/dashboard/{UUID}#titled=false"
    answer = client.get("/api/public/oembed", query_string={"url": url, "format": "json"})
    assert answer.status_code == 200, answer.json
    src = re.search(r'<iframe src="([^"]+)"', answer.json["html"]).group(1)
    assert src.replace("&amp;", "&") == url
    page = client.get(src.split("#")[0].removeprefix("http://localhost"))
    assert page.status_code == 200 and 'data-resource="dashboard"' in page.data.decode()
    assert page.headers["Content-Security-Policy"].endswith("frame-ancestors *")


@pytest.mark.parametrize("export_format", ["csv", "json", "xlsx"])
def test_public_question_download_links_lead_to_the_export(client, export_format):
    response = client.get(f"/public/question/{UUID}.{export_format}?parameters=%5B%5D")
    assert response.status_code == 302
    assert response.headers["Location"] == f"../../api/public/card/{UUID}/query/{export_format}?parameters=%5B%5D"
    assert client.get(f"/public/question/{UUID}.pdf").status_code == 200  # no such download: just a page
    assert client.get(f"/embed/question/{UUID}.csv").data.startswith(b"<!doctype html>")


def test_an_embed_page_chart_is_the_embed_api_svg_export(client, embeddable):
    """The embed page asks for a chart with its size and theme in the query string and its filter values
    as one parameters=<json>; the plain keys are never taken for filters."""
    from tests.plugins.sharing.jwt_helpers import card_token

    token = card_token(embeddable["card"], {"min_age": 30})
    response = client.get(f"/api/embed/card/{token}/query/svg",
                          query_string={"parameters": '{"name": "Ann"}', "width": "320", "height": "200", "theme": "dark"})
    assert response.status_code == 200, response.data[:300]
    assert response.mimetype == "image/svg+xml"
    assert b'width="320"' in response.data and b'height="200"' in response.data
    # The locked filter still holds for pictures: a value for it from the URL is refused.
    refused = client.get(f"/api/embed/card/{token}/query/svg", query_string={"parameters": '{"min_age": 1}'})
    assert refused.status_code == 400
