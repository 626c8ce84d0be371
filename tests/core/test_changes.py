"""core.appdb.changes' statement classifier: which counters a write moves and which tables a read reads."""
from __future__ import annotations

from sqlalchemy import text

import core.appdb.models  # noqa: F401  (the tables the classifier knows)
from core.appdb import changes
from core.appdb.changes import CATCH_ALL


def test_a_write_moves_its_target_and_a_read_names_its_tables():
    # With the search index's triggers declared (core.appdb.search_index): the index is written too.
    assert changes.classify("INSERT INTO report_card (name) VALUES (?) RETURNING report_card.id")[1] == {
        "report_card", "search_index"}
    assert changes.classify("INSERT INTO core_user (email) VALUES (?) RETURNING core_user.id")[1] == {"core_user"}
    assert changes.classify('UPDATE "query" SET average_execution_time=%(x)s')[1] == {"query"}
    reads, writes = changes.classify("SELECT report_card.id, report_card.dataset_query FROM report_card "
                                     "JOIN collection ON collection.id = report_card.collection_id")
    assert reads == {"report_card", "collection"} and writes == frozenset()
    assert changes.classify("SAVEPOINT sa_savepoint_1")[1] == frozenset()


def test_a_write_no_table_can_be_named_for_moves_the_catch_all():
    assert changes.classify("CREATE TABLE x (id INTEGER)")[1] == {CATCH_ALL}
    assert changes.classify("WITH c AS (SELECT 1 AS id) DELETE FROM report_card WHERE id IN (SELECT id FROM c)"
                            )[1] == {CATCH_ALL}
    assert changes.classify("WITH c AS (SELECT 1) SELECT * FROM c")[1] == frozenset()


def test_deletes_move_the_tables_their_foreign_keys_cascade_to_and_inserts_do_not():
    deleted = changes.classify("DELETE FROM core_user WHERE core_user.id = ?")[1]
    assert {"core_user", "core_session", "permissions_group_membership"} <= deleted
    assert changes.classify("INSERT INTO core_user (email) VALUES (?)")[1] == {"core_user"}
    assert changes.classify("UPDATE core_user SET first_name=? WHERE core_user.id = ?")[1] == {"core_user"}


def test_a_declared_trigger_moves_the_table_it_writes():
    changes.triggered("timeline", "timeline_event")
    try:
        assert changes.classify("UPDATE timeline SET name=? WHERE timeline.id = ?")[1] == {"timeline", "timeline_event"}
    finally:
        changes._schema.triggers = {k: v for k, v in changes._schema.triggers.items() if k != "timeline"}
        changes._schema._statements = {}


def test_the_search_index_triggers_are_declared_for_every_indexed_table(app):
    """Every table whose triggers keep search_index (the core's kinds and the dashboards plugin's) moves
    the index's counter when written, in any process that loaded the app."""
    from core.appdb import search_index

    tables = [table for table, _columns in search_index.CORE_KINDS.values()] + ["report_dashboard"]
    for table in tables:
        assert "search_index" in changes.classify(f"UPDATE {table} SET name=? WHERE {table}.id = ?")[1], table
    assert "search_index" not in changes.classify("UPDATE core_user SET first_name=? WHERE core_user.id = ?")[1]


# Where each engine lists triggers on tables: (statement, its trigger name column, its table column).
_TRIGGERS = {
    "sqlite": "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'",
    "postgresql": "SELECT trigger_name, event_object_table FROM information_schema.triggers",
}


def test_every_table_declared_as_indexed_has_its_search_index_triggers_after_all_migrations(any_app):
    """A table rebuilt by a later migration (SQLite's batch mode copies a table and drops the old one)
    loses its triggers silently, and the index then misses that kind's writes: every table declared
    with `indexed` must still carry triggers that write search_index, and no other table any."""
    from core.appdb import search_engines

    engine = any_app.extensions["tessera"].db.engine
    with engine.connect() as connection:
        rows = connection.execute(text(_TRIGGERS[engine.dialect.name])).all()
    with_index_triggers = {table for name, table in rows if name.startswith(search_engines.TABLE)
                           and table != search_engines.TABLE}
    declared = {table for table, written in changes._schema.triggers.items() if search_engines.TABLE in written}
    assert declared and with_index_triggers == declared
