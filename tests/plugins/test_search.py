"""GET /api/search through the API: the envelope, matching and ranking, models and
available_models, archived items, filters, paging, and permission filtering."""
from sqlalchemy import update

from core.appdb.models import ALL_USERS_GROUP_ID, Database, DataPermission, Table
from core.testing import make_user
from tests.plugins.test_collections import add_card, create, set_perm, store


def add_database(app, name, tables=()):
    with app.app_context(), store(app).session() as session:
        db = Database(name=name, engine="sqlite", details="{}")
        session.add(db)
        session.flush()
        ids = []
        for table_name in tables:
            table = Table(db_id=db.id, name=table_name, display_name=table_name.title(), schema=None)
            session.add(table)
            session.flush()
            ids.append(table.id)
        return db.id, ids


def block(app, db_id):
    with app.app_context(), store(app).session() as session:
        session.execute(update(DataPermission).where(
            DataPermission.db_id == db_id, DataPermission.group_id == ALL_USERS_GROUP_ID,
            DataPermission.perm_type == "view-data").values(perm_value="blocked"))


def found(response):
    assert response.status_code == 200, response.json
    return [(r["model"], r["name"]) for r in response.json["data"]]


def test_envelope_and_kinds(app, admin):
    home = create(admin, "Revenue reports")
    add_card(app, "Revenue by month", home["id"])
    add_card(app, "Revenue model", home["id"], type="model")
    add_card(app, "Unrelated", home["id"])
    add_database(app, "Revenue warehouse", ["revenue_lines", "customers"])
    body = admin.get("/api/search/?q=revenue").json
    assert set(body) >= {"data", "total", "limit", "offset", "models", "available_models", "table_db_id"}
    assert body["total"] == len(body["data"]) == 5
    kinds = {(r["model"], r["name"]) for r in body["data"]}
    assert kinds == {("collection", "Revenue reports"), ("card", "Revenue by month"), ("dataset", "Revenue model"),
                     ("database", "Revenue warehouse"), ("table", "Revenue_Lines")}
    assert set(body["available_models"]) == {"collection", "card", "dataset", "database", "table"}
    card = next(r for r in body["data"] if r["model"] == "card")
    assert card["collection"] == {"id": home["id"], "name": "Revenue reports", "authority_level": None,
                                  "type": None}
    assert card["creator_common_name"] == "Ada Admin" and card["can_write"] is True
    table = next(r for r in body["data"] if r["model"] == "table")
    assert table["table_name"] == "revenue_lines" and table["database_name"] == "Revenue warehouse"
    assert body["limit"] is None and body["models"] is None


def test_ranking_prefers_exact_and_full_matches(app, admin):
    add_card(app, "Orders")
    add_card(app, "Old orders archive of the previous system")
    add_card(app, "Sales", query={"type": "native", "database": 1, "native": {"query": "select * from orders"}})
    names = [n for _, n in found(admin.get("/api/search?q=orders&models=card"))]
    assert names == ["Orders", "Old orders archive of the previous system"]
    native = [n for _, n in found(admin.get("/api/search?q=orders&models=card&search_native_query=true"))]
    assert "Sales" in native


def test_models_filter_and_available_models(app, admin):
    create(admin, "Widgets folder")
    add_card(app, "Widgets chart")
    add_card(app, "Widgets metric", type="metric")
    only_cards = admin.get("/api/search?q=widgets&models=card").json
    assert found_models(only_cards) == {"card"}
    assert only_cards["models"] == ["card"]
    assert set(only_cards["available_models"]) == {"card", "metric", "collection"}
    two = admin.get("/api/search?q=widgets&models=card&models=metric").json
    assert found_models(two) == {"card", "metric"}
    assert admin.get("/api/search?models=spreadsheet").status_code == 400


def found_models(body):
    return {r["model"] for r in body["data"]}


def test_archived_and_paging(app, admin):
    folder = create(admin, "Gadget folder")
    for i in range(5):
        add_card(app, f"Gadget {i}", folder["id"])
    add_card(app, "Gadget retired", folder["id"], archived=True, archived_directly=True)
    live = admin.get("/api/search?q=gadget&models=card").json
    assert live["total"] == 5 and "Gadget retired" not in [r["name"] for r in live["data"]]
    archived = admin.get("/api/search?q=gadget&archived=true").json
    assert [r["name"] for r in archived["data"]] == ["Gadget retired"]
    page = admin.get("/api/search?q=gadget&models=card&limit=2&offset=1").json
    assert page["total"] == 5 and len(page["data"]) == 2 and page["limit"] == 2 and page["offset"] == 1
    assert [r["name"] for r in page["data"]] == [r["name"] for r in live["data"][1:3]]


def test_results_are_filtered_by_permissions(app, admin):
    user = make_user(app)
    other = make_user(app, "other@example.com", "Olga", "Other")
    secret = create(admin, "Secret plans")
    add_card(app, "Secret card plans", secret["id"])
    open_folder = create(admin, "Open plans")
    add_card(app, "Open card plans", open_folder["id"])
    mine = create(other, "Olga private plans", parent_id=other.user["personal_collection_id"])
    add_card(app, "Olga personal plans card", mine["id"], creator_id=other.user["id"])
    blocked_db, _ = add_database(app, "Plans warehouse", ["plans"])
    block(app, blocked_db)
    set_perm(app, ALL_USERS_GROUP_ID, secret["id"], "none")
    visible = set(found(user.get("/api/search?q=plans")))
    assert visible == {("collection", "Open plans"), ("card", "Open card plans")}
    everything = set(found(admin.get("/api/search?q=plans")))
    assert {("card", "Secret card plans"), ("card", "Olga personal plans card"), ("database", "Plans warehouse"),
            ("table", "Plans"), ("collection", "Olga private plans")} <= everything
    olga_sees = set(found(other.get("/api/search?q=plans&filter_items_in_personal_collection=only-mine")))
    assert olga_sees == {("collection", "Olga private plans"), ("card", "Olga personal plans card")}
    admin_excluding = set(found(admin.get("/api/search?q=plans&filter_items_in_personal_collection=exclude")))
    assert ("card", "Olga personal plans card") not in admin_excluding


def test_filters_by_database_creator_and_editor(app, admin):
    user = make_user(app)
    db_id, _ = add_database(app, "Filter db", ["filtered"])
    add_card(app, "Filter by db", query={"type": "query", "database": db_id})
    with app.app_context(), store(app).session() as session:
        from core.appdb.models import Card

        session.execute(update(Card).where(Card.name == "Filter by db").values(database_id=db_id))
    add_card(app, "Filter by creator", creator_id=user.user["id"], editor_id=user.user["id"])
    by_db = set(found(admin.get(f"/api/search?q=filter&table_db_id={db_id}")))
    assert by_db == {("card", "Filter by db"), ("table", "Filtered")}
    by_creator = set(found(admin.get(f"/api/search?q=filter&created_by={user.user['id']}")))
    assert by_creator == {("card", "Filter by creator")}
    by_editor = admin.get(f"/api/search?q=filter&last_edited_by={user.user['id']}").json["data"]
    assert [r["name"] for r in by_editor] == ["Filter by creator"]
    assert by_editor[0]["last_editor_common_name"] == "Ulla User"


def test_without_a_query_everything_visible_is_listed(app, admin):
    user = make_user(app)
    create(admin, "Anything")
    body = user.get("/api/search").json
    names = {(r["model"], r["name"]) for r in body["data"]}
    assert ("collection", "Anything") in names
    assert ("collection", "Ulla User's Personal Collection") in names
    assert ("collection", "Ada Admin's Personal Collection") not in names


def test_search_requires_a_session(client, admin):
    assert client.get("/api/search?q=x").status_code == 401


def test_a_new_user_finds_things_through_search_and_the_tree(app, admin):
    """The issue's acceptance path: content made by others and by the user shows up for a new user
    where they may see it, through the tree, the items and search."""
    team = create(admin, "Team dashboards")
    quarterly = create(admin, "Quarterly", parent_id=team["id"])
    add_card(app, "Quarterly churn", quarterly["id"], type="model")
    hidden = create(admin, "Board only")
    add_card(app, "Board churn forecast", hidden["id"])
    set_perm(app, ALL_USERS_GROUP_ID, hidden["id"], "none")
    newcomer = make_user(app, "new@example.com", "Nora", "New")
    draft = create(newcomer, "Churn drafts", parent_id=newcomer.user["personal_collection_id"])
    add_card(app, "My churn idea", draft["id"], creator_id=newcomer.user["id"])

    tree = newcomer.get("/api/collection/tree").json
    by_name = {node["name"]: node for node in tree}
    assert "Board only" not in by_name
    assert by_name["Team dashboards"]["below"] == ["dataset"]
    assert by_name["Team dashboards"]["children"][0]["here"] == ["dataset"]
    personal = by_name["Nora New's Personal Collection"]
    assert [c["name"] for c in personal["children"]] == ["Churn drafts"]

    items = newcomer.get(f"/api/collection/{quarterly['id']}/items").json
    assert [(i["model"], i["name"]) for i in items["data"]] == [("dataset", "Quarterly churn")]

    results = found(newcomer.get("/api/search?q=churn"))
    assert set(results) == {("dataset", "Quarterly churn"), ("collection", "Churn drafts"),
                            ("card", "My churn idea")}
    own = next(r for r in newcomer.get("/api/search?q=idea").json["data"] if r["name"] == "My churn idea")
    assert own["can_write"] is True and own["collection"]["name"] == "Churn drafts"


def test_table_level_data_access_decides_which_tables_are_found(app, admin):
    """Tables are filtered in bulk (core.policy.permissions.tables_with_data_access); the answer must be
    can_see_data's for every table, with rows set table by table."""
    from sqlalchemy import delete, select

    from core.appdb.models import User
    from core.policy import permissions

    user = make_user(app)
    db_id, (open_t, blocked_t, unlisted_t) = add_database(app, "Granular", ["granular_a", "granular_b", "granular_c"])
    with app.app_context(), store(app).session() as session:
        session.execute(delete(DataPermission).where(
            DataPermission.db_id == db_id, DataPermission.group_id == ALL_USERS_GROUP_ID,
            DataPermission.perm_type == "view-data"))
        for table_id, value in ((open_t, "unrestricted"), (blocked_t, "blocked")):
            session.add(DataPermission(group_id=ALL_USERS_GROUP_ID, db_id=db_id, perm_type="view-data",
                                       schema_name="", table_id=table_id, perm_value=value))
    tables = {name for model, name in found(user.get("/api/search?q=granular")) if model == "table"}
    assert tables == {"Granular_A"}
    assert {"Granular_A", "Granular_B", "Granular_C"} <= {n for _, n in found(admin.get("/api/search?q=granular"))}
    with app.app_context(), store(app).session() as session:
        ulla = session.scalar(select(User).where(User.email == "user@example.com"))
        bulk = permissions.tables_with_data_access(session, ulla, db_id, [open_t, blocked_t, unlisted_t])
        single = {t for t in (open_t, blocked_t, unlisted_t) if permissions.can_see_data(session, ulla, db_id, t)}
        assert bulk == single == {open_t}


def test_search_on_each_app_db(any_app):
    """Matching is SQL on the app DB (lower(...) LIKE with escaping), so it runs on PostgreSQL too."""
    from core.testing import setup_admin

    admin = setup_admin(any_app)
    folder = create(admin, "100% Sales_Q1")
    add_card(any_app, "Sales pipeline", folder["id"])
    add_card(any_app, "Marketing spend", folder["id"])
    assert set(found(admin.get("/api/search?q=SALES"))) == {("collection", "100% Sales_Q1"), ("card", "Sales pipeline")}
    # LIKE wildcards in the query are literal characters.
    assert found(admin.get("/api/search?q=100%25")) == [("collection", "100% Sales_Q1")]
    assert found(admin.get("/api/search?q=s_q")) == [("collection", "100% Sales_Q1")]


def test_what_a_result_shows_on_each_app_db(any_app):
    """Each kind is one statement joining the collection, its personal owner, the creator, the last
    revision's editor and the caller's bookmark: every joined value reaches the result on each backend."""
    from core.testing import setup_admin

    admin = setup_admin(any_app)
    ulla = make_user(any_app, first_name="Ulla", last_name="User", email="ulla@example.com")
    ulla_id = ulla.get("/api/user/current").json["id"]
    mine = ulla.get("/api/user/current").json["personal_collection_id"]
    card_id = add_card(any_app, "Orbit report", mine, creator_id=ulla_id, editor_id=1, position=1)
    dashboard = ulla.post("/api/dashboard", json={"name": "Orbit board", "collection_id": mine}).json
    assert ulla.post(f"/api/bookmark/card/{card_id}").status_code == 200
    assert ulla.post(f"/api/bookmark/dashboard/{dashboard['id']}").status_code == 200
    hits = {r["model"]: r for r in ulla.get("/api/search?q=orbit").json["data"]}
    assert set(hits) == {"card", "dashboard"}
    ref = {"id": mine, "name": "Ulla User's Personal Collection", "authority_level": None, "type": None}
    card, board = hits["card"], hits["dashboard"]
    assert card["collection"] == board["collection"] == ref
    assert (card["creator_common_name"], card["last_editor_id"], card["last_editor_common_name"]) == \
        ("Ulla User", 1, "Ada Admin")
    assert card["bookmark"] is board["bookmark"] is True and card["can_write"] is board["can_write"] is True
    assert board["creator_common_name"] == "Ulla User" and board["dashboardcard_count"] == 0
    assert {r["model"] for r in admin.get("/api/search?q=orbit&filter_items_in_personal_collection=exclude")
            .json["data"]} == set()
    assert not any(r["bookmark"] for r in admin.get("/api/search?q=orbit").json["data"])
    edited = admin.get("/api/search?q=orbit&last_edited_by=1").json["data"]
    assert [(r["model"], r["name"]) for r in edited] == [("card", "Orbit report")]
    db_id, (table_id,) = add_database(any_app, "Orbit warehouse", ["orbit_events"])
    rows = {r["model"]: r for r in admin.get("/api/search?q=orbit&models=database&models=table").json["data"]}
    assert (rows["database"]["id"], rows["table"]["id"], rows["table"]["database_name"]) == \
        (db_id, table_id, "Orbit warehouse")
