"""The share page of a dashboard and a question (plugins/app/sharing.py, sharing_code.py,
sharing_preview.py) through HTTP: the public link made and removed (and opened signed out), the
embedding's rules stored, the token code without the secret, and the preview's iframe page drawn with
its locked filter; refusals for a user who is not an administrator, as the API's."""
from __future__ import annotations

import re
from html import unescape

import pytest

from core.testing import USER_PASSWORD, make_user, setup_admin
from tests.plugins.app.test_dashboard_pages import build_shop, card_urls, ok
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


def test_smoke(site):
    client = sign_in(site.app)
    page = client.get(site.shop["path"] + "/share")
    print(text(page)[:6000])
    assert page.status_code == 200
