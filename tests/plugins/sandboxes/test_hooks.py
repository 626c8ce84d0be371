"""The two hooks row-level security adds, each implemented by a plugin written here (plugins.sandboxes
disabled, so the answers are this plugin's alone): restrict_tables (a restriction is applied wherever
the table is read, twice is refused) and apply_sandboxes (the graph hands it the `sandboxes` key)."""
from pathlib import Path

from core.assembly.app import create_app
from core.testing import make_user, setup_admin
from tests.plugins.cards.fixtures import make_warehouse, register_warehouse
from tests.support import write_plugin

PLUGIN = '''
from core import hookimpl
from core.assembly.records import TableRestriction
from core.policy.principal import account_of

TABLES = {}
CHANGES = []
TWICE = []

@hookimpl
def restrict_tables(session, viewer, database_id):
    account = account_of(viewer)
    if account is None or account.is_superuser:
        return None
    out = [TableRestriction(table_id, filters=(["=", ["field", field_id, None], value],), key=str(value),
                            label="the test plugin") for table_id, (field_id, value) in TABLES.items()]
    return out + [TableRestriction(t, label="again") for t in TWICE]

@hookimpl
def apply_sandboxes(session, user, changes):
    if changes is not None:
        CHANGES.append(changes)
    return True
'''


def test_restrict_tables_and_apply_sandboxes_hooks(app_config, tmp_path, monkeypatch):
    import sys

    name = write_plugin(tmp_path, monkeypatch, PLUGIN)
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name, "TESSERA_PLUGINS_DISABLED": "plugins.sandboxes"})
    module = sys.modules[name]
    admin = setup_admin(app)
    ids = register_warehouse(app, make_warehouse(Path(app_config["TESSERA_DATA_DIR"])))
    user = make_user(app)
    module.TABLES[ids["people"]] = (ids["people.age"], 41)

    def count(client, table, **extra):
        return client.post("/api/dataset", json={"database": ids["db"], "type": "query", "query": {
            "source-table": ids[table], "aggregation": [["count"]], **extra}})

    first = count(user, "people")
    assert first.json["data"]["rows"] == [[1]], first.json["error"]
    assert count(admin, "people").json["data"]["rows"] == [[3]]
    # an implicit join reads the restricted table too: only Alan's order has a person
    by_name = count(user, "orders", breakout=[["field", ids["people.first_name"],
                                               {"source-field": ids["orders.person_id"]}]])
    assert by_name.json["data"]["rows"] == [[None, 3], ["Alan", 1]]
    native = user.post("/api/dataset", json={"database": ids["db"], "type": "native",
                                             "native": {"query": "SELECT * FROM people"}})
    assert native.status_code == 403
    module.TWICE.append(ids["people"])
    # (a new query: kept runs follow the app DB, which this plugin's answers do not read)
    twice = count(user, "people", limit=5)
    assert twice.status_code == 400 and "restricted twice" in twice.json["error"]
    # the graph passes its sandboxes key to the plugin that stores them, and accepts "sandboxed"
    graph = admin.get("/api/permissions/graph").json
    response = admin.put("/api/permissions/graph", json={
        "revision": graph["revision"], "groups": {"1": {str(ids["db"]): {"view-data": "sandboxed", "create-queries": "query-builder"}}},
        "sandboxes": [{"group_id": 1, "table_id": ids["people"], "attribute_remappings": {"a": ["dimension", ["field", 1, None]]}}]})
    assert response.status_code == 200, response.json
    assert [(c.group_id, c.table_id) for c in module.CHANGES[-1]] == [(1, ids["people"])]
    assert admin.get("/api/session/properties").json["token-features"]["sandboxes"] is True
