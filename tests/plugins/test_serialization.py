"""Content as code (issue 35): everything exported from a server on a SQLite app DB, imported into a
fresh server on a PostgreSQL app DB whose databases have other ids, answers the same through the API and
exports the same bytes; an edit changes one file; a damaged file fails a dry run naming it; the API's
.tar.gz gives the same files as the commands."""
import io
import shutil
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.assembly import cli
from core.assembly.app import create_app
from core.testing import FAST_HASHING, add_database, setup_admin, sqlite_file, wait_for_sync
from core.testing.app import _postgres_database

pytestmark = pytest.mark.xdist_group("serialization")  # one module's servers, built once

WAREHOUSE = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, state TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, person_id INTEGER REFERENCES people(id), total REAL, kind TEXT);
INSERT INTO people VALUES (1, 'Ada', 'CA'), (2, 'Bob', 'NY'), (3, 'Cy', 'CA');
INSERT INTO orders VALUES (1, 1, 10.5, 'a'), (2, 1, 20, 'b'), (3, 2, 7, 'a'), (4, 3, 1, 'b'), (5, 3, 2, 'a');
"""
SQL = "SELECT state,\n       count(*) AS n\nFROM people\nWHERE {{state}}\nGROUP BY state\nORDER BY state"


def _ok(response):
    assert response.status_code in (200, 202), (response.request.path, response.json)
    return response.json


def _config(folder: Path, db_url: str) -> dict:
    return {"TESSERA_DATA_DIR": str(folder), "TESSERA_DB_URL": db_url, "TESSERA_PLUGINS_AUTOLOAD": False,
            "TESSERA_RUN_MIGRATIONS": False, **FAST_HASHING}


def _server(config: dict, extra_database: bool = False):
    app = create_app(config)
    admin = setup_admin(app)
    if extra_database:  # the target's warehouse gets another id than the source's (and its tables, fields)
        elsewhere, _ = add_database(app, "Elsewhere", tables=(("main", "t1"), ("main", "t2")))
        assert admin.delete(f"/api/database/{elsewhere}").status_code == 204
    path = sqlite_file(app, "warehouse.sqlite", WAREHOUSE)
    db_id = _ok(admin.post("/api/database", json={"name": "Warehouse", "engine": "sqlite", "details": {"db": path}}))["id"]
    wait_for_sync(app)
    _ok(admin.put(f"/api/database/{db_id}", json={"settings": {"database-enable-actions": True}}))
    return app, admin, db_id


def _command(config: dict, *args):
    env = {key: str(value) for key, value in config.items()}
    env["TESSERA_PLUGINS_AUTOLOAD"] = "false"
    env["TESSERA_RUN_MIGRATIONS"] = "false"
    return CliRunner().invoke(cli.build_cli(), [str(a) for a in args], env=env, catch_exceptions=False)


def _content(app, admin, db_id: int) -> dict:
    metadata = _ok(admin.get(f"/api/database/{db_id}/metadata"))
    tables = {t["name"]: t for t in metadata["tables"]}
    fields = {(t, f["name"]): f["id"] for t in tables for f in tables[t]["fields"]}
    people, orders = tables["people"]["id"], tables["orders"]["id"]
    _ok(admin.put(f"/api/table/{people}", json={"description": "Everyone who ordered", "display_name": "Folk"}))
    _ok(admin.put(f"/api/field/{fields['people', 'state']}", json={"semantic_type": "type/State",
                                                                   "description": "Two letters"}))
    _ok(admin.put(f"/api/field/{fields['orders', 'kind']}", json={"visibility_type": "details-only"}))
    _ok(admin.put(f"/api/field/{fields['orders', 'person_id']}", json={
        "semantic_type": "type/FK", "fk_target_field_id": fields["people", "id"]}))
    _ok(admin.post(f"/api/field/{fields['orders', 'person_id']}/dimension", json={
        "type": "external", "name": "Person", "human_readable_field_id": fields["people", "name"]}))

    top = _ok(admin.post("/api/collection", json={"name": "Sales", "description": "Top"}))["id"]
    nested = _ok(admin.post("/api/collection", json={"name": "Sales / West", "parent_id": top}))["id"]
    segment = _ok(admin.post("/api/segment", json={"name": "Big orders", "table_id": orders, "definition": {
        "source-table": orders, "filter": [">", ["field", fields["orders", "total"], None], 5]}}))["id"]
    _ok(admin.post("/api/metric", json={"name": "Order count", "table_id": orders, "definition": {
        "source-table": orders, "aggregation": [["count"]]}}))

    def card(name, query, collection, **extra):
        return _ok(admin.post("/api/card", json={"name": name, "display": extra.pop("display", "table"),
                                                 "visualization_settings": extra.pop("visualization_settings", {}),
                                                 "dataset_query": query, "collection_id": collection, **extra}))["id"]

    def mbql(query):
        return {"database": db_id, "type": "query", "query": query}

    ids = {"collections": [top, nested]}
    total = ["field", fields["orders", "total"], None]
    ids["question"] = card("Totals by person", mbql({
        "source-table": orders, "aggregation": [["sum", total]],
        "breakout": [["field", fields["people", "name"], {"source-field": fields["orders", "person_id"]}]],
        "filter": ["segment", segment], "order-by": [["asc", ["aggregation", 0]]]}), top, display="bar",
        visualization_settings={"column_settings": {f'["ref",["field",{fields["orders", "total"]},null]]': {
            "prefix": "$"}}})
    ids["native"] = card("States", {"database": db_id, "type": "native", "native": {"query": SQL, "template-tags": {
        "state": {"id": "t1", "name": "state", "display-name": "State", "type": "dimension",
                  "dimension": ["field", fields["people", "state"], None], "widget-type": "string/="}}}}, nested)
    ids["model"] = card("Orders model", mbql({"source-table": orders}), nested, type="model")
    ids["metric"] = card("Revenue", mbql({"source-table": orders, "aggregation": [["sum", total]]}), top, type="metric")
    ids["on_model"] = card("Kinds from the model", mbql({
        "source-table": f"card__{ids['model']}", "aggregation": [["count"]],
        "breakout": [["field", "kind", {"base-type": "type/Text"}]], "order-by": [["asc", ["field", "kind", {"base-type": "type/Text"}]]]}),
        nested)
    ids["root"] = card("Everyone", mbql({"source-table": people, "order-by": [["asc", ["field", fields["people", "id"], None]]]}), None)

    _ok(admin.post("/api/action", json={"name": "Mark kind", "type": "query", "model_id": ids["model"],
                                        "database_id": db_id, "parameters": [], "dataset_query": {
                                            "database": db_id, "type": "native",
                                            "native": {"query": "UPDATE orders SET kind = 'c' WHERE id = 1"}}}))
    timeline = _ok(admin.post("/api/timeline", json={"name": "Launches", "collection_id": top}))["id"]
    _ok(admin.post("/api/timeline-event", json={"name": "Go live", "timestamp": "2024-03-01T00:00:00Z",
                                                "timezone": "UTC", "timeline_id": timeline}))

    parameter = {"id": "p1", "name": "State", "slug": "state", "type": "string/="}
    dashboard = _ok(admin.post("/api/dashboard", json={"name": "Overview", "collection_id": nested,
                                                       "parameters": [parameter]}))["id"]
    _ok(admin.put(f"/api/dashboard/{dashboard}", json={
        "tabs": [{"id": -1, "name": "First"}, {"id": -2, "name": "Second"}],
        "dashcards": [
            {"id": -1, "card_id": ids["native"], "dashboard_tab_id": -1, "row": 0, "col": 0, "size_x": 6, "size_y": 4,
             "parameter_mappings": [{"parameter_id": "p1", "card_id": ids["native"],
                                     "target": ["dimension", ["template-tag", "state"]]}]},
            {"id": -2, "card_id": ids["question"], "dashboard_tab_id": -1, "row": 0, "col": 6, "size_x": 6, "size_y": 4,
             "series": [{"id": ids["metric"]}],
             "visualization_settings": {"click_behavior": {"type": "link", "linkType": "question",
                                                           "targetId": ids["root"], "parameterMapping": {}}}},
            {"id": -3, "card_id": ids["model"], "dashboard_tab_id": -2, "row": 0, "col": 0, "size_x": 8, "size_y": 4,
             "parameter_mappings": [{"parameter_id": "p1", "card_id": ids["model"], "target": [
                 "dimension", ["field", fields["people", "state"], {"source-field": fields["orders", "person_id"]}]]}]},
            {"id": -4, "card_id": None, "dashboard_tab_id": -2, "row": 4, "col": 0, "size_x": 4, "size_y": 2,
             "visualization_settings": {"virtual_card": {"display": "text"}, "text": "# Notes\nRead me."}}]}))
    ids["dashboard"] = dashboard
    _ok(admin.post("/api/native-query-snippet", json={"name": "CA only", "content": "state = 'CA'"}))
    return ids


@pytest.fixture(scope="module")
def servers(tmp_path_factory, app_db_template, postgres_app_db_template):
    source_dir = tmp_path_factory.mktemp("source")
    shutil.copy(app_db_template, source_dir / "tessera.db")
    source_config = _config(source_dir, f"sqlite:///{source_dir / 'tessera.db'}")
    source, source_admin, source_db = _server(source_config)
    ids = _content(source, source_admin, source_db)
    with _postgres_database("tessera_serdes", template=postgres_app_db_template) as url:
        target_config = _config(tmp_path_factory.mktemp("target"), url)
        target, target_admin, target_db = _server(target_config, extra_database=True)
        assert target_db != source_db
        yield {"source": (source, source_admin, source_config), "target": (target, target_admin, target_config),
               "ids": ids, "dirs": tmp_path_factory.mktemp("exports")}
        target.extensions["tessera"].db.dispose()
    source.extensions["tessera"].db.dispose()


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _by_entity(admin, path: str) -> dict:
    return {item["entity_id"]: item for item in _ok(admin.get(path))}


def _content_of(cards: list[dict]) -> list[dict]:
    """Cards without their usage counters (a read's view is counted later, by the write-behind)."""
    return [{k: v for k, v in c.items() if k not in ("view_count", "last_used_at")} for c in cards]


def _dashboard_view(admin, dashboard_id: int, card_names: dict) -> dict:
    board = _ok(admin.get(f"/api/dashboard/{dashboard_id}"))
    tabs = {t["id"]: t["name"] for t in board["tabs"]}
    cards = sorted((tabs.get(d["dashboard_tab_id"]), d["row"], d["col"], d["size_x"], d["size_y"],
                    card_names.get(d["card_id"]), [card_names[s["id"]] for s in d.get("series", [])],
                    d["visualization_settings"].get("text"), sorted(m["parameter_id"] for m in d["parameter_mappings"]),
                    (d["visualization_settings"].get("click_behavior") or {}).get("linkType"))
                   for d in board["dashcards"])
    return {"name": board["name"], "parameters": board["parameters"], "tabs": sorted(tabs.values()), "cards": cards}


@pytest.fixture(scope="module")
def round_trip(servers) -> dict:
    """The source exported by the command into `first`, a dry run and an import of it into the target,
    and the target exported into `second`: the outputs, for the tests to judge."""
    source_config, target_config = servers["source"][2], servers["target"][2]
    first, second = servers["dirs"] / "first", servers["dirs"] / "second"
    out = {"export": _command(source_config, "export", first)}
    out["cards_before"] = _ok(servers["target"][1].get("/api/card"))
    out["dry_run"] = _command(target_config, "import", "--dry-run", first)
    out["import"] = _command(target_config, "import", first)
    out["second_export"] = _command(target_config, "export", second)
    out["again"] = _command(target_config, "import", "--dry-run", second)
    return out


def test_round_trip_to_postgres_is_the_same_content_and_bytes(servers, round_trip):
    source, source_admin, _ = servers["source"]
    target, target_admin, _ = servers["target"]
    for step in ("export", "dry_run", "import", "second_export", "again"):
        assert round_trip[step].exit_code == 0, (step, round_trip[step].output)
    files = _files(servers["dirs"] / "first")
    assert "settings.yaml" in files and any(p.startswith("snippets/") for p in files)
    card_files = [p for p in files if "/cards/" in p]
    assert len(card_files) == 6 and any(p.startswith("collections/cards/") for p in card_files)
    assert any(p.count("/") == 4 and "/dashboards/" in p for p in files)  # the dashboard in the nested collection
    native = next(files[p].decode() for p in card_files if "_states.yaml" in p)
    assert "query: |-\n" in native and "- Warehouse\n" in native  # SQL as a block, fields by name
    assert "dry run: nothing changed" in round_trip["dry_run"].output
    assert "created collections/" in round_trip["dry_run"].output and round_trip["cards_before"] == []

    source_cards, target_cards = _by_entity(source_admin, "/api/card"), _by_entity(target_admin, "/api/card")
    assert set(source_cards) == set(target_cards)
    for entity_id, card in source_cards.items():
        rows = [_ok(admin.post(f"/api/card/{cards[entity_id]['id']}/query"))["data"]["rows"]
                for admin, cards in ((source_admin, source_cards), (target_admin, target_cards))]
        assert rows[0] == rows[1] and rows[0], card["name"]
    names = [{c["id"]: c["name"] for c in cards.values()} for cards in (source_cards, target_cards)]
    boards = [next(d["id"] for d in _ok(admin.get("/api/dashboard")) if d["name"] == "Overview")
              for admin in (source_admin, target_admin)]
    assert _dashboard_view(source_admin, boards[0], names[0]) == _dashboard_view(target_admin, boards[1], names[1])
    assert _data_model_view(source_admin) == _data_model_view(target_admin)
    assert _data_model_view(target_admin)["orders"]["person_id"][2:] == ("people.id", ("Person", "people.name"))

    assert _files(servers["dirs"] / "second") == files
    assert f"0 created, 0 changed, {len(files)} unchanged" in round_trip["again"].output


def _data_model_view(admin) -> dict:
    """Per table and field of the warehouse what an administrator set: descriptions, semantic types,
    visibility, FK targets and remappings, by name."""
    tables = [_ok(admin.get(f"/api/table/{t['id']}/query_metadata")) for t in _ok(admin.get("/api/table"))
              if t["db"]["name"] == "Warehouse"]
    names = {f["id"]: f"{t['name']}.{f['name']}" for t in tables for f in t["fields"]}

    def remap(field):
        dimension = (field.get("dimensions") or [None])[0]
        return dimension and (dimension["name"], names.get(dimension["human_readable_field_id"]))

    return {t["name"]: {"": (t["display_name"], t["description"])} | {
        f["name"]: (f["semantic_type"], f["visibility_type"], names.get(f["fk_target_field_id"]), remap(f))
        for f in t["fields"]} for t in tables}


def test_an_edit_changes_one_file_and_diff_shows_it(servers, round_trip):
    target, target_admin, target_config = servers["target"]
    second, third = servers["dirs"] / "second", servers["dirs"] / "third"
    card = next(c for c in _ok(target_admin.get("/api/card")) if c["name"] == "States")
    _ok(target_admin.put(f"/api/card/{card['id']}", json={"description": "Edited in production"}))
    assert _command(target_config, "export", third).exit_code == 0
    before, after = _files(second), _files(third)
    assert set(before) == set(after)
    changed = [p for p in before if before[p] != after[p]]
    assert len(changed) == 1 and changed[0].endswith(f"{card['entity_id']}_states.yaml")
    diff = _command(target_config, "diff", second)
    assert diff.exit_code == 0, diff.output
    assert "-description: Edited in production" in diff.output and "1 changed" in diff.output
    assert _command(target_config, "import", second).exit_code == 0
    assert _ok(target_admin.get(f"/api/card/{card['id']}"))["description"] is None

    # A rename moves the file: the export replaces its directories, so the old name does not linger.
    renamed = servers["dirs"] / "renamed"
    shutil.copytree(second, renamed)
    _ok(target_admin.put(f"/api/card/{card['id']}", json={"name": "States again"}))
    assert _command(target_config, "export", renamed).exit_code == 0
    gone, added = set(before) - set(_files(renamed)), set(_files(renamed)) - set(before)
    assert [p.rsplit("/", 1)[1] for p in gone] == [f"{card['entity_id']}_states.yaml"]
    assert [p.rsplit("/", 1)[1] for p in added] == [f"{card['entity_id']}_states_again.yaml"]
    assert _command(target_config, "import", second).exit_code == 0


def test_dry_run_on_a_damaged_file_names_it_and_changes_nothing(servers, round_trip):
    target, target_admin, target_config = servers["target"]
    damaged = servers["dirs"] / "damaged"
    shutil.copytree(servers["dirs"] / "second", damaged)
    victim = next(p for p in damaged.rglob("*_totals_by_person.yaml"))
    victim.write_text(victim.read_text().replace("- Warehouse", "- Nowhere").replace("name: Totals by person",
                                                                                     "name: Renamed"))
    before = _ok(target_admin.get("/api/card"))
    for args in (("import", "--dry-run", damaged), ("import", damaged)):
        result = _command(target_config, *args)
        assert result.exit_code != 0
        assert victim.relative_to(damaged).as_posix() in result.output and '"Nowhere"' in result.output
    assert _content_of(_ok(target_admin.get("/api/card"))) == _content_of(before)
    victim.write_text("serdes/meta: [unclosed\n")
    result = _command(target_config, "import", "--dry-run", damaged)
    assert result.exit_code != 0 and victim.relative_to(damaged).as_posix() in result.output


def test_api_archive_round_trip_matches_the_commands(servers, round_trip):
    source, source_admin, _ = servers["source"]
    target, target_admin, _ = servers["target"]
    response = source_admin.post("/api/ee/serialization/export?dirname=snapshot")
    assert response.status_code == 200 and response.mimetype == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(response.data), mode="r:gz") as archive:
        files = {m.name.removeprefix("snapshot/"): archive.extractfile(m).read() for m in archive.getmembers()}
    assert files == _files(servers["dirs"] / "first")
    dry = _ok(target_admin.post("/api/ee/serialization/import?dry_run=true", content_type="multipart/form-data",
                                data={"file": (io.BytesIO(response.data), "snapshot.tar.gz")}))
    assert dry["status"] == "ok" and dry["unchanged"] == len(files)
    upload = {"file": (io.BytesIO(response.data), "snapshot.tar.gz")}
    report = _ok(target_admin.post("/api/ee/serialization/import", data=upload, content_type="multipart/form-data"))
    assert report["status"] == "ok" and report["created"] == [] and report["unchanged"] == len(files)
    bad = target_admin.post("/api/ee/serialization/import", data={"file": (io.BytesIO(b"nope"), "x.tar.gz")},
                            content_type="multipart/form-data")
    assert bad.status_code == 400 and "file" in bad.json["errors"]


def test_export_options_choose_what_is_written(servers, round_trip):
    source, source_admin, source_config = servers["source"]
    nested = servers["ids"]["collections"][1]
    only = servers["dirs"] / "only"
    assert _command(source_config, "export", "--collection", nested, "--no-data-model", "--no-settings",
                    only).exit_code == 0
    files = _files(only)
    folders = {p.split("/")[0] for p in files}
    assert folders == {"collections", "actions"}  # the action on the nested collection's model comes along
    collection_files = [p for p in files if p.startswith("collections/")]
    assert collection_files and all(p.split("/")[2].endswith("_sales_west") for p in collection_files)
    assert not any("totals_by_person" in p for p in files)

    field_id = next(f["id"] for f in _ok(source_admin.get(f"/api/table/{_people(source_admin)}/query_metadata"))["fields"]
                    if f["name"] == "state")
    _ok(source_admin.post(f"/api/field/{field_id}/rescan_values"))
    wait_for_sync(source)
    data_model = servers["dirs"] / "data_model"
    assert _command(source_config, "export", "--no-collections", "--include-field-values", "--include-database-secrets",
                    data_model).exit_code == 0
    files = _files(data_model)
    assert {p.split("/")[0] for p in files} == {"databases", "settings.yaml"}
    values = files["databases/Warehouse/tables/people/fields/state___fieldvalues.yaml"].decode()
    assert "- CA\n" in values and "- NY\n" in values
    assert b"warehouse.sqlite" in files["databases/Warehouse/Warehouse.yaml"]
    assert b"details" not in _files(servers["dirs"] / "first")["databases/Warehouse/Warehouse.yaml"]
    # Details from a file pass the connection policy a registration does: no file outside the data directory.
    secrets = data_model / "databases/Warehouse/Warehouse.yaml"
    secrets.write_text(secrets.read_text().replace(str(Path(source_config["TESSERA_DATA_DIR"]) / "files"), "/etc"))
    refused = _command(source_config, "import", "--dry-run", data_model)
    assert refused.exit_code != 0 and "databases/Warehouse/Warehouse.yaml" in refused.output, refused.output


def _people(admin) -> int:
    return next(t["id"] for t in _ok(admin.get("/api/table")) if t["name"] == "people")


def test_entity_ids_are_given_once(app):
    """New rows get an entity id from their column default; rows from before (here: emptied by hand)
    get one from the backfill, once."""
    from plugins.serialization.entity_ids import backfill

    db_id, table_ids = add_database(app, "Fresh", tables=(("s", "a"), ("s", "b")))
    state = app.extensions["tessera"]
    with state.db.engine.begin() as connection:
        given = connection.exec_driver_sql("SELECT entity_id FROM metabase_table ORDER BY id").scalars().all()
        assert len(given) == 2 and all(len(eid) == 21 for eid in given)
        connection.exec_driver_sql("UPDATE metabase_table SET entity_id = NULL")
        assert backfill(connection) == 2
        first = connection.exec_driver_sql("SELECT id, entity_id FROM metabase_table ORDER BY id").all()
        assert backfill(connection) == 0
        assert connection.exec_driver_sql("SELECT id, entity_id FROM metabase_table ORDER BY id").all() == first
    assert all(len(eid) == 21 for _, eid in first)


def test_references_rewrite_both_ways_in_every_shape():
    from plugins.serialization.refs import Refs, Rewriter

    refs = Refs(session=None)
    known = {"database": {1: "Warehouse"}, "table": {5: ("Warehouse", None, "orders")},
             "field": {7: ("Warehouse", None, "orders", "total"), 8: ("Warehouse", None, "people", "id")},
             "card": {3: "c" * 21}, "dashboard": {4: "d" * 21}, "segment": {2: "s" * 21}}
    refs.out = {kind: dict(rows) for kind, rows in known.items()}
    refs.back = {kind: {v: i for i, v in rows.items()} for kind, rows in known.items()}
    local = {
        "legacy": {"database": 1, "type": "query", "query": {
            "source-table": 5, "filter": ["and", ["segment", 2], [">", ["field", 7, {"source-field": 8}], 1]]}},
        "on_card": {"source-table": "card__3"},
        "mbql5": {"lib/type": "mbql/query", "database": 1, "stages": [{"source-card": 3, "aggregation": [
            ["sum", {"lib/uuid": "u"}, ["field", {"lib/uuid": "v"}, 7]]], "filters": [["segment", {}, 2]]}]},
        "viz": {"column_settings": {'["ref",["field",7,null]]': {"prefix": "$"}}, "click_behavior": {
            "type": "link", "linkType": "dashboard", "targetId": 4, "parameterMapping": {
                '["dimension",["field",8,null]]': {"id": '["dimension",["field",8,null]]'}}}},
        "mapping": [{"parameter_id": "p", "card_id": 3, "target": ["dimension", ["field", 7, None]]}],
        "untouched": {"targetId": 4, "field": ["field", "total", {"base-type": "type/Float"}], "id": 7},
    }
    portable = Rewriter(refs, export=True).walk(local)
    assert portable["legacy"]["database"] == "Warehouse"
    assert portable["legacy"]["query"]["filter"][2][1] == ["field", ["Warehouse", None, "orders", "total"],
                                                          {"source-field": ["Warehouse", None, "people", "id"]}]
    assert portable["on_card"]["source-table"] == "c" * 21
    assert portable["mbql5"]["stages"][0]["source-card"] == "c" * 21
    assert portable["mbql5"]["stages"][0]["aggregation"][0][2][2] == ["Warehouse", None, "orders", "total"]
    assert portable["mbql5"]["stages"][0]["filters"] == [["segment", {}, "s" * 21]]
    assert list(portable["viz"]["column_settings"]) == ['["ref",["field",["Warehouse",null,"orders","total"],null]]']
    assert portable["viz"]["click_behavior"]["targetId"] == "d" * 21
    assert portable["mapping"][0]["card_id"] == "c" * 21
    assert portable["untouched"] == local["untouched"]  # no link type, a column name, a bare id: not references
    assert Rewriter(refs, export=False).walk(portable) == local
