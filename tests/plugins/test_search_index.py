"""The search index (core.appdb.search_index) follows every change of every searchable kind made
through the API, on SQLite and PostgreSQL app DBs, and search reads it instead of scanning the
content tables."""
from sqlalchemy import event, select

from core.appdb.models import Card, Field, SearchIndex
from core.testing import setup_admin
from tests.plugins.test_collections import create, store
from tests.plugins.test_search import add_database, found


def indexed(app, model, model_id):
    with app.app_context(), store(app).session() as session:
        return session.scalar(select(SearchIndex.text).where(SearchIndex.model == model,
                                                             SearchIndex.model_id == model_id))


def add_field(app, table_id):
    with app.app_context(), store(app).session() as session:
        field = Field(table_id=table_id, name="total", display_name="Total", base_type="type/Integer",
                      database_type="INTEGER")
        session.add(field)
        session.flush()
        return field.id


def ok(response):
    assert response.status_code in (200, 202, 204), response.json
    return response.json


def test_the_index_follows_creates_renames_archives_moves_and_deletes(any_app):
    admin = setup_admin(any_app)
    db_id, (table_id,) = add_database(any_app, "Warehouse Zeta", ["orders_zeta"])
    assert indexed(any_app, "database", db_id) == "warehouse zeta\n"
    assert indexed(any_app, "table", table_id) == "orders_zeta\norders_zeta\n"
    folder = create(admin, "Folder Alpha", description="Quarterly")
    other = create(admin, "Folder Beta")
    card = ok(admin.post("/api/card", json={
        "name": "Revenue Gamma", "display": "table", "visualization_settings": {}, "collection_id": folder["id"],
        "dataset_query": {"database": db_id, "type": "native", "native": {"query": "select 1"}}}))
    dashboard = ok(admin.post("/api/dashboard", json={"name": "Board Delta", "collection_id": folder["id"]}))
    segment = ok(admin.post("/api/segment", json={
        "name": "Big Epsilon", "table_id": table_id,
        "definition": {"source-table": table_id, "filter": ["=", ["field", add_field(any_app, table_id), None], 1]}}))
    assert indexed(any_app, "collection", folder["id"]) == "folder alpha\nquarterly"
    assert indexed(any_app, "card", card["id"]) == "revenue gamma\n"
    assert indexed(any_app, "dashboard", dashboard["id"]) == "board delta\n"
    assert indexed(any_app, "segment", segment["id"]) == "big epsilon\n"
    assert set(found(admin.get("/api/search?q=gamma delta epsilon alpha zeta"))) == {
        ("card", "Revenue Gamma"), ("dashboard", "Board Delta"), ("segment", "Big Epsilon"),
        ("collection", "Folder Alpha"), ("database", "Warehouse Zeta"), ("table", "Orders_Zeta")}

    # Renames and new descriptions
    ok(admin.put(f"/api/card/{card['id']}", json={"name": "Income Gamma", "description": "Net"}))
    ok(admin.put(f"/api/dashboard/{dashboard['id']}", json={"name": "Panel Delta"}))
    ok(admin.put(f"/api/collection/{folder['id']}", json={"name": "Folder Omega"}))
    ok(admin.put(f"/api/segment/{segment['id']}", json={"name": "Huge Epsilon", "revision_message": "rename"}))
    ok(admin.put(f"/api/table/{table_id}", json={"display_name": "Zeta Sales"}))
    ok(admin.put(f"/api/database/{db_id}", json={"name": "Store Zeta"}))
    assert indexed(any_app, "card", card["id"]) == "income gamma\nnet"
    assert indexed(any_app, "dashboard", dashboard["id"]) == "panel delta\n"
    assert indexed(any_app, "collection", folder["id"]) == "folder omega\nquarterly"
    assert indexed(any_app, "segment", segment["id"]) == "huge epsilon\n"
    assert indexed(any_app, "table", table_id) == "orders_zeta\nzeta sales\n"
    assert indexed(any_app, "database", db_id) == "store zeta\n"
    assert found(admin.get("/api/search?q=revenue")) == []
    assert found(admin.get("/api/search?q=income")) == [("card", "Income Gamma")]
    assert found(admin.get("/api/search?q=sales")) == [("table", "Zeta Sales")]

    # Moves and archives keep the text; search still finds the items where they now are
    ok(admin.put(f"/api/card/{card['id']}", json={"collection_id": other["id"]}))
    ok(admin.put(f"/api/dashboard/{dashboard['id']}", json={"collection_id": other["id"]}))
    moved = admin.get("/api/search?q=gamma").json["data"]
    assert [(r["name"], r["collection"]["id"]) for r in moved] == [("Income Gamma", other["id"])]
    ok(admin.put(f"/api/collection/{other['id']}", json={"archived": True}))
    assert found(admin.get("/api/search?q=gamma")) == []
    assert set(found(admin.get("/api/search?q=gamma delta beta&archived=true"))) == {
        ("card", "Income Gamma"), ("dashboard", "Panel Delta"), ("collection", "Folder Beta")}
    assert indexed(any_app, "card", card["id"]) == "income gamma\nnet"

    # Deletes remove the rows, a database's tables and segments with it (foreign-key cascades)
    ok(admin.delete(f"/api/card/{card['id']}"))  # Metabase's deprecated DELETE archives a card
    ok(admin.delete(f"/api/dashboard/{dashboard['id']}"))
    assert indexed(any_app, "card", card["id"]) == "income gamma\nnet"
    with any_app.app_context(), store(any_app).session() as session:
        session.delete(session.get(Card, card["id"]))
    assert indexed(any_app, "card", card["id"]) is None
    assert indexed(any_app, "dashboard", dashboard["id"]) is None
    ok(admin.delete(f"/api/database/{db_id}"))
    assert indexed(any_app, "database", db_id) is None
    assert indexed(any_app, "table", table_id) is None
    assert indexed(any_app, "segment", segment["id"]) is None
    assert found(admin.get("/api/search?q=zeta epsilon")) == []


def test_search_reads_candidates_from_the_index_not_the_content_tables(any_app):
    admin = setup_admin(any_app)
    create(admin, "Index Probe")
    statements = []
    engine = any_app.extensions["tessera"].db.engine
    listener = lambda _conn, _cursor, sql, *_rest: statements.append(sql)  # noqa: E731
    event.listen(engine, "before_cursor_execute", listener)
    try:
        assert found(admin.get("/api/search?q=probe")) == [("collection", "Index Probe")]
        # A token shorter than the trigram tokenizer's three characters falls back to LIKE on the index.
        assert ("collection", "Index Probe") in found(admin.get("/api/search?q=pr"))
    finally:
        event.remove(engine, "before_cursor_execute", listener)
    assert sum("FROM search_index" in s for s in statements) == 2
    assert not any("lower(" in s.lower() for s in statements), "a content table was scanned with LIKE"
    if engine.dialect.name == "sqlite":
        assert any("search_index_fts MATCH" in s for s in statements)
        with engine.connect() as conn:
            plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT model, model_id FROM search_index WHERE search_index.id IN "
                "(SELECT rowid FROM search_index_fts WHERE search_index_fts MATCH 'probe')"))
        assert "VIRTUAL TABLE INDEX" in plan, plan
    else:
        with engine.connect() as conn:
            conn.exec_driver_sql("SET enable_seqscan = off")
            plan = " ".join(row[0] for row in conn.exec_driver_sql(
                "EXPLAIN SELECT model, model_id FROM search_index WHERE text LIKE %(p)s", {"p": "%probe%"}))
        assert "ix_search_index_text_trgm" in plan, plan
