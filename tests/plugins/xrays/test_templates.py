"""The templates: the plugin's own files parse, a third-party plugin adds one through the
register_xray_templates hook, and a duplicate or broken one stops startup naming the plugin(s)."""
from __future__ import annotations

import pytest

from core.testing import setup_admin, sqlite_file, wait_for_sync

from .support import XRAY, cards, run_every_card


def test_builtin_templates_cover_the_entity_and_field_types():
    from plugins.xrays import templates

    parsed = {(t.kind, t.name): templates.parse(t.kind, t.name, t.spec) for t in templates.builtin()}
    assert {name for kind, name in parsed if kind == "table"} >= {"GenericTable", "TransactionTable", "UserTable",
                                                                   "EventTable"}
    assert {t.applies_to for (kind, _), t in parsed.items() if kind == "field"} >= {"type/Number", "type/Temporal",
                                                                                     "type/Category", "type/*"}
    for template in parsed.values():
        assert template.cards and template.dimensions and template.metrics
        assert all(card.display and card.width <= 24 for card in template.cards)
        assert set(template.dashboard_filters) <= set(template.dimensions)


def test_a_plugin_adds_a_template_through_the_hook(app_config):
    from core.assembly.app import create_app

    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": "tests.plugins.xrays.extra_templates"})
    try:
        admin = setup_admin(app)
        path = sqlite_file(app, "tickets.db", """
            CREATE TABLE tickets (id INTEGER PRIMARY KEY, priority TEXT, created_at TIMESTAMP);
            INSERT INTO tickets VALUES (1, 'high', '2024-01-02 10:00:00'), (2, 'low', '2024-01-03 11:00:00'),
                                       (3, 'high', '2024-01-03 12:00:00');""")
        db = admin.post("/api/database", json={"name": "Tickets", "engine": "sqlite", "details": {"db": path}}).json
        wait_for_sync(app)
        [table] = admin.get(f"/api/database/{db['id']}/metadata").json["tables"]
        fields = {f["name"]: f["id"] for f in table["fields"]}
        admin.put(f"/api/field/{fields['priority']}", json={"semantic_type": "type/Category"})
        admin.put(f"/api/field/{fields['created_at']}", json={"semantic_type": "type/CreationTimestamp"})
        response = admin.get(f"{XRAY}/table/{table['id']}/rule/table/TicketsAtAGlance")
        assert response.status_code == 200, response.json
        dashboard = response.json
        assert dashboard["name"] == "Tickets at a glance: Tickets"
        assert [c["name"] for c in cards(dashboard)] == ["Open tickets", "Tickets per Priority", "Tickets per day"]
        assert [p["name"] for p in dashboard["parameters"]] == ["Priority"]
        run_every_card(admin, dashboard)
    finally:
        app.extensions["tessera"].db.dispose()


@pytest.mark.parametrize("module,message", [
    ("duplicate_templates", "duplicate x-ray template 'table/GenericTable': registered by"),
    ("broken_templates", "x-ray template 'field/Broken' from tests.plugins.xrays.broken_templates is invalid"),
])
def test_a_duplicate_or_broken_template_stops_startup(app_config, module, message):
    from core.assembly.app import create_app
    from core.assembly.plugins import PluginError

    with pytest.raises(PluginError) as raised:
        create_app({**app_config, "TESSERA_PLUGINS_EXTRA": f"tests.plugins.xrays.{module}"})
    assert message in str(raised.value)
    if module == "duplicate_templates":
        assert "plugins.xrays" in str(raised.value) and f"tests.plugins.xrays.{module}" in str(raised.value)


def test_disabled_plugin_reads_no_templates(app_config):
    from core.assembly.app import create_app

    app = create_app({**app_config, "TESSERA_PLUGINS_DISABLED": "plugins.xrays",
                      "TESSERA_PLUGINS_EXTRA": "tests.plugins.xrays.duplicate_templates"})
    try:
        assert "xrays" not in app.extensions
        admin = setup_admin(app)
        assert admin.get(f"{XRAY}/table/1").status_code == 404
    finally:
        app.extensions["tessera"].db.dispose()


@pytest.mark.parametrize("name, title, expected", [
    ("Total", "Total {{this}}", "Total"),  # not "Total Total"
    ("total amount", "Total {{this}}", "total amount"),
    ("Total", "Minimum {{this}}", "Minimum Total"),
    ("Total", "{{this}} in {{table}}", "Total in Total"),  # words apart are kept
    ("Subtotal", "Total {{this}}", "Total Subtotal"),
])
def test_a_title_does_not_repeat_the_word_before_a_name(name, title, expected):
    from plugins.xrays.bind import interpolate
    from plugins.xrays.roots import Root

    root = Root(entity="field", id_or_query="1", database_id=1, source={}, name=name, entity_type="type/Number",
                cols=())
    assert interpolate(title, root) == expected
