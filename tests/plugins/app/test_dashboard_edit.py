"""Making and editing dashboards (plugins/app/dashboard_edit*.py) through HTTP as the editor's page sends
it: a new dashboard in a collection the user may write; the editor's changes (questions from the picker,
text, heading and link cards, removing, placing on the grid, tabs, filters wired to columns with the
same-field suggestion, defaults, required, linked filters, per-card overrides), each answered by the
editor drawn again; Save as exactly one PUT /api/dashboard/:id of the whole dashboard, refused when
stale or invalid; Cancel writes nothing; a read-only user gets no Edit and no editor; history and revert."""
from __future__ import annotations

import re
from html import unescape

import orjson
import pytest

from core.testing import make_user, setup_admin
from tests.plugins.app.test_dashboard_pages import build_shop, ok
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.support import module_app

pytestmark = pytest.mark.xdist_group("app-dashboard-edit")


class Site:
    def __init__(self, app, admin, shop, reader, collection):
        self.app, self.admin, self.shop, self.reader, self.collection = app, admin, shop, reader, collection


@pytest.fixture(scope="module")
def site(tmp_path_factory, app_db_template):
    app = module_app(tmp_path_factory.mktemp("app-dashboard-edit"), app_db_template)
    admin = setup_admin(app)
    collection = ok(admin.post("/api/collection", json={"name": "Shelf"}))["id"]
    shop = build_shop(app, admin, collection)
    reader = make_user(app, email="reader@example.com")
    graph = ok(admin.get("/api/collection/graph"))
    ok(admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {
        "1": {"root": "read", str(collection): "read"}}}))
    yield Site(app, admin, shop, reader, collection)
    app.extensions["tessera"].db.dispose()


def form_of(html: str) -> dict:
    """The editor form's fields as json-enc sends them (text inputs, textareas, selected options, checked boxes)."""
    form = html[html.index('<form id="editor"'):]
    fields: dict = {}

    def put(name, value):
        if name in fields:
            fields[name] = fields[name] if isinstance(fields[name], list) else [fields[name]]
            fields[name].append(value)
        else:
            fields[name] = value

    for tag in re.finditer(r"<input\b([^>]*)>", form):
        attrs = dict((k, unescape(v)) for k, v in re.findall(r'([\w.:-]+)="([^"]*)"', tag.group(1)))
        if "name" not in attrs or attrs.get("type") == "search":
            continue
        if attrs.get("type") == "checkbox":
            if " checked" in tag.group(1):
                put(attrs["name"], attrs.get("value", "on"))
        else:
            put(attrs["name"], attrs.get("value", ""))
    for tag in re.finditer(r'<textarea\b[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', form, re.DOTALL):
        put(tag.group(1), unescape(tag.group(2)))
    for tag in re.finditer(r'<select\b[^>]*name="([^"]+)"[^>]*>(.*?)</select>', form, re.DOTALL):
        options = re.findall(r'<option value="([^"]*)"( selected)?', tag.group(2))
        chosen = next((v for v, s in options if s), options[0][0] if options else "")
        put(tag.group(1), unescape(chosen))
    return fields


class Editor:
    """The editor's page as a browser drives it: each change posts the whole form and gets the form back."""

    def __init__(self, client, path: str):
        self.client, self.path = client, path
        page = client.get(path + "/edit")
        assert page.status_code == 200, text(page)[:300]
        self.html = text(page)

    @property
    def fields(self) -> dict:
        return form_of(self.html)

    @property
    def draft(self) -> dict:
        return orjson.loads(self.fields["draft"])

    def apply(self, op: str, status: int = 200, **changes) -> str:
        response = self.client.post(self.path + "/edit/apply", json={**self.fields, **changes, "op": op}, headers=HTMX)
        assert response.status_code == status, text(response)[:500]
        if status == 200:
            self.html = text(response)
        return text(response)

    def save(self, **changes):
        return self.client.post(self.path + "/edit/save", json={**self.fields, **changes}, headers=HTMX)


def test_smoke(site):
    client = sign_in(site.app)
    editor = Editor(client, site.shop["path"])
    assert "Revenue by city" in editor.html
