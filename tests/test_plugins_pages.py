"""The register_pages hook (core.assembly.pages): a plugin's blueprint served outside /api, prefixes
unique and never under /api, and the framing headers every response gets."""
import pytest

from core.assembly.app import create_app
from core.assembly.plugins import PluginError
from core.testing import ApiClient
from tests.support import write_plugin

PAGES_PLUGIN = '''
from flask import Blueprint
from core import Pages, hookimpl

framed = Blueprint("hook_framed", __name__)
closed = Blueprint("hook_closed", __name__)
ANCESTORS = ["https://app.example.com"]

@framed.get("/hello")
def hello():
    return "<p>framed</p>"

@closed.get("/hello")
def hello_closed():
    return "<p>closed</p>"

@hookimpl
def register_pages():
    return [Pages("{framed}", framed, lambda session: ANCESTORS[0], "default-src 'self'"),
            Pages("/hook-closed", closed)]
'''


def pages_app(app_config, tmp_path, monkeypatch, framed="/hook-pages"):
    name = write_plugin(tmp_path, monkeypatch, PAGES_PLUGIN.replace("{framed}", framed))
    return create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name}), name


def test_hook_register_pages_serves_a_framed_page(app_config, tmp_path, monkeypatch):
    app, _ = pages_app(app_config, tmp_path, monkeypatch)
    response = ApiClient(app).get("/hook-pages/hello")
    assert response.status_code == 200 and b"framed" in response.data
    assert response.headers["Content-Security-Policy"] == "default-src 'self'; frame-ancestors https://app.example.com"
    assert "X-Frame-Options" not in response.headers


def test_a_page_without_a_framing_policy_is_not_framed(app_config, tmp_path, monkeypatch):
    app, _ = pages_app(app_config, tmp_path, monkeypatch)
    response = ApiClient(app).get("/hook-closed/hello")
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"].endswith("frame-ancestors 'none'")
    assert response.headers["X-Frame-Options"] == "DENY"


def test_every_other_response_denies_framing(app_config, tmp_path, monkeypatch):
    app, _ = pages_app(app_config, tmp_path, monkeypatch)
    client = ApiClient(app)
    for path in ("/api/health", "/api/user/current", "/api/nothing-here", "/", "/hook-pages/missing", "/elsewhere"):
        response = client.get(path)
        assert response.headers["X-Frame-Options"] == "DENY", path
        assert "frame-ancestors *" not in response.headers.get("Content-Security-Policy", ""), path


def test_a_policy_that_fails_denies_framing(app_config, tmp_path, monkeypatch):
    app, name = pages_app(app_config, tmp_path, monkeypatch)
    import sys

    monkeypatch.setattr(sys.modules[name], "ANCESTORS", [])  # the lambda now raises IndexError
    response = ApiClient(app).get("/hook-pages/hello")
    assert response.status_code == 200
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Content-Security-Policy"].endswith("frame-ancestors 'none'")


@pytest.mark.parametrize("prefix", ["/api", "/api/pages", "pages", "/Pages/x y"])
def test_page_prefix_must_be_a_path_outside_api(app_config, tmp_path, monkeypatch, prefix):
    with pytest.raises(PluginError, match="page prefix"):
        pages_app(app_config, tmp_path, monkeypatch, framed=prefix)


def test_duplicate_page_prefix_fails_naming_both_plugins(app_config, tmp_path, monkeypatch):
    with pytest.raises(PluginError, match="page prefix '/public'.*plugins.sharing"):
        pages_app(app_config, tmp_path, monkeypatch, framed="/public")


def test_every_route_outside_api_is_a_declared_page(app):
    """A plugin cannot serve anything outside /api but through register_pages (framing and prefixes are
    decided there): every other URL rule of the app is an /api endpoint, the landing page or Flask's static."""
    pages = app.extensions["tessera"].pages
    assert {p.prefix for p in pages.values()} == {"/public", "/embed", "/", "/embed-preview", "/auth/sso", "/auth/google"}
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/") or rule.rule == "/static/<path:filename>":
            continue
        blueprint = rule.endpoint.split(".")[0]
        prefix = pages[blueprint].prefix if blueprint in pages else None
        assert prefix is not None and (rule.rule == prefix or rule.rule.startswith(prefix.rstrip("/") + "/")), rule.rule
