"""GET /api/public/oembed: Metabase's oEmbed answer for a public page of this server, the URL escaped."""
import pytest

from .support import enable_sharing


@pytest.fixture
def sharing_on(admin):
    enable_sharing(admin)


def test_oembed_defaults_and_sizes(client, sharing_on):
    url = "http://tessera.example/public/dashboard/8a2c1f3e-4b5d-4e6f-9a7b-1c2d3e4f5a6b"
    got = client.get("/api/public/oembed", query_string={"url": url, "format": "json"})
    assert got.status_code == 200, got.json
    assert got.json == {"version": "1.0", "type": "rich", "width": 1024, "height": 800,
                        "html": f'<iframe src="{url}" width="1024" height="800" frameborder="0"></iframe>'}
    got = client.get("/api/public/oembed", query_string={"url": url, "maxheight": "300", "maxwidth": "400"})
    assert got.json["width"] == 400 and got.json["height"] == 300 and 'width="400" height="300"' in got.json["html"]


@pytest.mark.security_row(13)
def test_oembed_escapes_the_url_and_takes_only_public_pages(client, sharing_on):
    evil = 'http://tessera.example/public/question/x"><script>alert(1)</script>'
    got = client.get("/api/public/oembed", query_string={"url": evil})
    assert got.status_code == 200 and "<script>" not in got.json["html"] and "&quot;&gt;&lt;script&gt;" in got.json["html"]
    for bad in ("javascript:alert(1)", "http://tessera.example/api/user", "/public/question/x", "file:///etc/passwd"):
        assert client.get("/api/public/oembed", query_string={"url": bad}).status_code == 400, bad
    assert client.get("/api/public/oembed", query_string={"url": "http://a.b/public/question/x",
                                                          "format": "xml"}).status_code == 400
    assert client.get("/api/public/oembed").status_code == 400


def test_oembed_needs_public_sharing(admin, client):
    assert admin.put("/api/setting/enable-public-sharing", json={"value": False}).status_code == 204
    got = client.get("/api/public/oembed", query_string={"url": "http://a.b/public/question/x"})
    assert got.status_code == 400 and got.json == "Public sharing is not enabled."
