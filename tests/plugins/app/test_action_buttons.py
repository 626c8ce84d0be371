"""Action buttons on dashboard pages (plugins/app/buttons.py) through HTTP as a browser sends them: the
button drawn with its label, its form of the parameters no filter gives (prefilled for an implicit update
whose row a filter names), the run through the dashcard execute route with the filters' mapped values,
the API's refusal shown in the form, the cross-site rule, and what a user who may not see the action gets."""
from __future__ import annotations

import re
from html import unescape

import orjson
import pytest

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, USER_PASSWORD, make_user, setup_admin
from tests.plugins.actions.support import (
    enable_actions,
    implicit,
    make_model,
    param,
    query_action,
    register,
    table_id,
    tag,
)
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.support import module_app

pytestmark = pytest.mark.xdist_group("app-action-buttons")

PERSON = {"id": "p_person", "name": "Person", "slug": "person", "type": "id"}
AGE = {"id": "p_age", "name": "Age", "slug": "age", "type": "number/="}


def ok(response, status=200):
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:500])
    return response.json


class Site:
    pass


@pytest.fixture(scope="module")
def site(tmp_path_factory, app_db_template):
    folder = tmp_path_factory.mktemp("app-actions")
    app = module_app(folder, app_db_template)
    admin = setup_admin(app)
    db = register(app, admin)
    enable_actions(admin, db)
    people = table_id(admin, db, "people")
    shelf = ok(admin.post("/api/collection", json={"name": "Shelf"}))["id"]
    model = make_model(admin, db, people, collection_id=shelf)
    update = ok(implicit(admin, model, "row/update", name="Update person"))
    create = ok(implicit(admin, model, "row/create", name="Add person"))
    ager = ok(query_action(admin, model, db, "UPDATE people SET age = {{age}} WHERE id = {{id}}",
                           {"age": tag("age", "number"), "id": tag("id", "number")},
                           [param("age", "number/="), param("id", "number/=")], name="Set age"))
    dashboard = ok(admin.post("/api/dashboard", json={"name": "People desk",
                                                      "parameters": [PERSON, AGE]}))

    def button(i, action, viz=None, mappings=()):
        return {"id": -(i + 1), "card_id": None, "action_id": action, "row": i * 2, "col": 0, "size_x": 6,
                "size_y": 2, "parameter_mappings": list(mappings),
                "visualization_settings": {"virtual_card": {"display": "action"}, **(viz or {})}}

    to_id = {"parameter_id": "p_person", "target": ["variable", ["template-tag", "id"]]}
    to_age = {"parameter_id": "p_age", "target": ["variable", ["template-tag", "age"]]}
    saved = ok(admin.put(f"/api/dashboard/{dashboard['id']}", json={"dashcards": [
        button(0, update["id"], {"button.label": "Edit this person"}, [to_id]),
        button(1, create["id"]),
        button(2, ager["id"], None, [to_age])]}))
    site = Site()
    site.app, site.admin, site.db, site.shelf = app, admin, db, shelf
    site.path = f"/dashboard/{dashboard['id']}-people-desk"
    site.api = f"/api/dashboard/{dashboard['id']}"
    site.update, site.create, site.ager = (d["id"] for d in saved["dashcards"])
    yield site
    app.extensions["tessera"].db.dispose()


def fields(html: str) -> dict[str, str]:
    """The form's inputs by parameter id: their value (selects and textareas too)."""
    found = {name: unescape(value) for name, value in re.findall(r'name="param:([^"]+)"[^>]*value="([^"]*)"', html)}
    return found


def person(site, person_id: int) -> dict:
    return ok(site.admin.get(f"{site.api}/dashcard/{site.update}/execute",
                             query_string={"parameters": orjson.dumps({"id": person_id}).decode()}))


def test_the_page_draws_each_button_with_its_label(site):
    page = text(sign_in(site.app).get(site.path))
    assert re.search(r'<button[^>]*class="action-button"[^>]*>Edit this person</button>', page)
    assert re.search(r'<button[^>]*class="action-button"[^>]*>Add person</button>', page)  # the action's name
    assert f'hx-get="{site.path}/action/{site.update}"' in page
    # The filters' values go with the form's request, so mapped parameters take them.
    assert f'{site.path}/action/{site.update}?person=2' in unescape(text(sign_in(site.app).get(f"{site.path}?person=2")))


def test_an_update_form_is_prefilled_from_the_row_a_filter_names_and_runs(site):
    client = sign_in(site.app)
    empty = text(client.get(f"{site.path}/action/{site.update}", headers=HTMX))
    # No filter names the row: the key is asked for too, and nothing is prefilled.
    assert fields(empty) == {"id": "", "name": "", "age": ""} and ">Update</button>" in empty
    form = text(client.get(f"{site.path}/action/{site.update}?person=2", headers=HTMX))
    assert fields(form) == {"name": "Alan", "age": "41"}  # the key comes from the filter, not asked
    assert f'hx-post="{site.path}/action/{site.update}?person=2"' in form
    ran = client.post(f"{site.path}/action/{site.update}?person=2", json={"param:name": "Alan T.", "param:age": ""},
                      headers=HTMX)
    assert ran.status_code == 200 and "Update person ran successfully. 1 row updated." in text(ran)
    assert ran.headers["HX-Trigger"] == "refresh"  # the cards reload
    assert person(site, 2) == {"id": 2, "name": "Alan T.", "age": 41}  # an empty input left the age alone


def test_a_mapped_filter_gives_its_value_and_the_rest_is_asked(site):
    client = sign_in(site.app)
    form = text(client.get(f"{site.path}/action/{site.ager}?age=77", headers=HTMX))
    assert fields(form) == {"id": ""}  # age comes from the filter
    assert 'type="number"' in form
    ran = client.post(f"{site.path}/action/{site.ager}?age=77", json={"param:id": "3"}, headers=HTMX)
    assert ran.status_code == 200 and "1 row affected" in text(ran)
    assert person(site, 3)["age"] == 77
    # Without the filter the age is asked for as well.
    assert fields(text(client.get(f"{site.path}/action/{site.ager}", headers=HTMX))) == {"age": "", "id": ""}


def test_the_apis_refusal_is_shown_in_the_form(site):
    client = sign_in(site.app)
    refused = client.post(f"{site.path}/action/{site.create}", json={"param:age": "5"}, headers=HTMX)
    assert refused.status_code == 400 and 'role="alert"' in text(refused)
    assert "name" in text(refused).lower()
    typed = client.post(f"{site.path}/action/{site.ager}", json={"param:id": "3", "param:age": "old"}, headers=HTMX)
    assert typed.status_code == 400 and 'role="alert"' in text(typed)
    made = client.post(f"{site.path}/action/{site.create}", json={"param:name": "Edsger", "param:age": "72"},
                       headers=HTMX)
    assert made.status_code == 200 and "Add person ran successfully." in text(made)


def test_a_cross_site_form_post_is_refused(site):
    client = sign_in(site.app)
    response = client.post(f"{site.path}/action/{site.create}", data={"param:name": "Mallory"})
    assert response.status_code == 403
    assert all(row["name"] != "Mallory" for row in [person(site, i) for i in (1, 2, 3)])


def test_a_user_who_may_not_see_the_action_gets_no_button(site):
    graph = ok(site.admin.get("/api/collection/graph"))
    ok(site.admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(site.shelf): "none", "root": "read"}}}))
    try:
        make_user(site.app, email="outsider@example.com")
        outsider = sign_in(site.app, "outsider@example.com", USER_PASSWORD)
        # The dashboard (in the root) is readable; the actions' model (in Shelf) is not: no button, no form.
        page = text(outsider.get(site.path))
        assert "People desk" in page and "action-button" not in page and "Edit this person" not in page
        assert outsider.get(f"{site.path}/action/{site.update}", headers=HTMX).status_code == 404
        assert outsider.post(f"{site.path}/action/{site.create}", json={"param:name": "Eve"},
                             headers=HTMX).status_code == 404
    finally:
        graph = ok(site.admin.get("/api/collection/graph"))
        ok(site.admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {
            "1": {str(site.shelf): "read"}}}))


def test_a_button_whose_database_runs_no_actions_is_drawn_disabled(site):
    enable_actions(site.admin, site.db, False)
    try:
        page = text(sign_in(site.app).get(site.path))
        assert re.search(r'<button[^>]*class="action-button"[^>]*disabled[^>]*>Edit this person</button>', page)
        assert "Actions are not enabled for this database." in page
    finally:
        enable_actions(site.admin, site.db, True)


def test_a_button_opens_its_form_and_runs_in_a_browser(site):
    from tests.plugins.app.test_dashboard_browser import go, wait_for
    from tests.plugins.sharing.browser import Browser, Server, chromium_path
    from tests.plugins.sharing.test_pages_browser import press, serious_violations

    if chromium_path() is None:
        pytest.skip("the browser tests need Debian's chromium package (apt-get install chromium)")
    session = site.app.test_client().post("/api/session", json={"username": ADMIN_EMAIL,
                                                                "password": ADMIN_PASSWORD}).json
    with Server(site.app) as server, Browser(chromium_path(), 1400, 900) as browser:
        browser.watch_errors()
        browser.send("Network.enable")
        browser.send("Network.setCookie", name="metabase.SESSION", value=session["id"], url=server.url, httpOnly=True)
        go(browser, f"{server.url}{site.path}?person=1")
        assert serious_violations(browser) == []
        browser.evaluate(f"document.getElementById('dashcard-{site.update}-title').click()")
        wait_for(browser, "!!document.querySelector('dialog.action-dialog[open] form')")
        # The row the filter names, prefilled; the focus in the form's first input.
        wait_for(browser, "document.activeElement && document.activeElement.name === 'param:name'")
        assert browser.evaluate("document.activeElement.value") == "Ada"
        assert serious_violations(browser) == []
        browser.evaluate("document.activeElement.value = 'Ada L.'")
        browser.evaluate("document.querySelector('dialog[open] button[type=submit]').click()")
        wait_for(browser, "!!document.querySelector('dialog[open] .action-result .form-done')")
        assert "1 row updated" in browser.evaluate("document.querySelector('dialog[open] .action-result').textContent")
        assert person(site, 1)["name"] == "Ada L."
        press(browser, "Escape")
        assert browser.evaluate("document.querySelector('dialog[open]')") is None
        # The API's refusal is shown in the form, in the dark theme too: no filter names the row, the key is
        # asked for, and no person 99 exists to update.
        go(browser, f"{server.url}{site.path}")
        browser.evaluate("document.querySelector('[data-theme-toggle]').click()")
        browser.evaluate(f"document.getElementById('dashcard-{site.update}-title').click()")
        wait_for(browser, "!!document.querySelector('dialog.action-dialog[open] form')")
        browser.evaluate("document.querySelector('dialog[open] input[name=\"param:id\"]').value = '99'")
        browser.evaluate("document.querySelector('dialog[open] input[name=\"param:name\"]').value = 'Nobody'")
        browser.evaluate("document.querySelector('dialog[open] button[type=submit]').click()")
        wait_for(browser, "!!document.querySelector('dialog[open] .action-result .form-error')")
        assert browser.evaluate("document.querySelector('dialog[open] .action-result').textContent.trim()")
        assert serious_violations(browser) == []
        # A phone: the form fits the screen.
        browser.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=1, mobile=True)
        wait_for(browser, "document.querySelector('dialog[open]').getBoundingClientRect().right <= 390")
        assert browser.evaluate("document.documentElement.scrollWidth") <= 390
        browser.evaluate("document.querySelector('dialog[open] [data-dialog-close]').click()")
        assert browser.evaluate("document.querySelector('dialog[open]')") is None
        # The refusal's 400 answer is the browser's one logged failed load; nothing else went wrong.
        errors = browser.errors()
        assert len(errors) == 1 and "400" in errors[0] and f"/action/{site.update}" in errors[0]
