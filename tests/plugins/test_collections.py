"""/api/collection through the API: the root, listing, detail, create and edit, moving, archiving
with its cascade, items (models, sorting, pinning, paging), the tree, personal collections,
namespaces, and what users with fewer rights see."""
from sqlalchemy import delete, select

from core.appdb.models import ALL_USERS_GROUP_ID, Card, CollectionPermission, Revision
from core.testing import make_user


def store(app):
    return app.extensions["tessera"].db


def add_card(app, name, collection_id=None, type="question", archived=False, archived_directly=False,
             position=None, creator_id=1, query=None, editor_id=None):
    with app.app_context(), store(app).session() as session:
        card = Card(name=name, display="table", dataset_query=query or {"type": "query", "database": 1},
                    type=type, collection_id=collection_id, archived=archived, archived_directly=archived_directly,
                    collection_position=position, creator_id=creator_id)
        session.add(card)
        session.flush()
        if editor_id is not None:
            session.add(Revision(model="Card", model_id=card.id, user_id=editor_id, object={}, most_recent=True))
        return card.id


def card_row(app, card_id):
    with app.app_context(), store(app).session() as session:
        card = session.get(Card, card_id)
        return {"archived": card.archived, "collection_id": card.collection_id}


def set_perm(app, group_id, collection_id, level, namespace=""):
    """Set a group's level on a collection (None: the root) directly in the permission rows."""
    with app.app_context(), store(app).session() as session:
        clause = (CollectionPermission.collection_id.is_(None) & (CollectionPermission.namespace == namespace)
                  if collection_id is None else CollectionPermission.collection_id == collection_id)
        session.execute(delete(CollectionPermission).where(CollectionPermission.group_id == group_id, clause))
        if level != "none":
            session.add(CollectionPermission(group_id=group_id, collection_id=collection_id, namespace=namespace,
                                             level=level))


def create(client, name, **kw):
    response = client.post("/api/collection", json={"name": name, **kw})
    assert response.status_code == 200, response.json
    return response.json


def names(items):
    return [(i["model"], i["name"]) for i in items["data"]]


# --------------------------------------------------------------------------------------------------
# Root, list, detail
# --------------------------------------------------------------------------------------------------


def test_list_is_a_bare_list_with_the_root_first(admin):
    create(admin, "beta")
    create(admin, "Alpha")
    listing = admin.get("/api/collection/").json
    assert isinstance(listing, list)
    assert listing[0] == {"id": "root", "name": "Our analytics", "namespace": None, "is_personal": False,
                          "authority_level": None, "can_write": True, "can_delete": False}
    shared = [c["name"] for c in listing[1:] if not c["is_personal"]]
    assert shared == ["Alpha", "beta"]
    for c in listing[1:]:
        assert {"id", "name", "description", "entity_id", "slug", "archived", "location", "personal_owner_id",
                "namespace", "authority_level", "type", "created_at", "is_personal", "can_write"} <= set(c)


def test_root_collection_endpoint(admin):
    root = admin.get("/api/collection/root").json
    assert root["id"] == "root" and root["name"] == "Our analytics"
    assert root["can_write"] is True and root["effective_ancestors"] == []
    snippets_root = admin.get("/api/collection/root?namespace=snippets").json
    assert snippets_root["namespace"] == "snippets" and snippets_root["id"] == "root"


def test_unauthenticated_is_401(client, admin):
    assert client.get("/api/collection").status_code == 401
    assert client.get("/api/collection/root/items").status_code == 401


def test_detail_has_effective_ancestors(admin):
    top = create(admin, "Top")
    mid = create(admin, "Mid", parent_id=top["id"])
    leaf = create(admin, "Leaf", parent_id=mid["id"])
    detail = admin.get(f"/api/collection/{leaf['id']}").json
    assert detail["location"] == f"/{top['id']}/{mid['id']}/"
    assert detail["parent_id"] == mid["id"]
    assert detail["effective_location"] == detail["location"]
    assert [a["id"] for a in detail["effective_ancestors"]] == ["root", top["id"], mid["id"]]
    assert all(a["can_write"] for a in detail["effective_ancestors"])
    assert admin.get("/api/collection/999999").status_code == 404
    assert admin.get("/api/collection/0").status_code == 400


# --------------------------------------------------------------------------------------------------
# Create and update
# --------------------------------------------------------------------------------------------------


def test_create_validates(admin):
    assert admin.post("/api/collection", json={"name": ""}).status_code == 400
    bad_color = admin.post("/api/collection", json={"name": "x", "color": "blue"})
    assert bad_color.status_code == 400 and "color" in bad_color.json["errors"]
    assert admin.post("/api/collection", json={"name": "x", "parent_id": 987654}).status_code == 404
    assert admin.post("/api/collection", json={"name": "x", "authority_level": "gold"}).status_code == 400
    made = create(admin, "Colored", color="#aBcDeF", description="about")
    assert made["color"] == "#aBcDeF" and made["description"] == "about" and made["slug"] == "colored"
    assert len(made["entity_id"]) == 21
    assert len(admin.get(f"/api/collection/{admin.user['personal_collection_id']}").json["entity_id"]) == 21


def test_update_edits_and_validates_color(admin):
    c = create(admin, "Old name")
    updated = admin.put(f"/api/collection/{c['id']}", json={"name": "New name", "color": "#000000"})
    assert updated.status_code == 200
    assert updated.json["name"] == "New name" and updated.json["slug"] == "new_name"
    assert updated.json["color"] == "#000000"
    assert admin.put(f"/api/collection/{c['id']}", json={"color": "#12345"}).status_code == 400
    assert admin.get(f"/api/collection/{c['id']}").json["color"] == "#000000"


def test_official_collections_need_a_superuser_and_sort_first(app, admin):
    user = make_user(app)
    assert user.post("/api/collection", json={"name": "Mine", "authority_level": "official"}).status_code == 403
    plain = create(admin, "Aardvark")
    official = create(admin, "Zebra", authority_level="official")
    assert official["authority_level"] == "official"
    c = create(user, "Users")
    assert user.put(f"/api/collection/{c['id']}", json={"authority_level": "official"}).status_code == 403
    listing = [x["id"] for x in admin.get("/api/collection").json if x["id"] != "root"]
    assert listing.index(official["id"]) < listing.index(plain["id"])
    items = admin.get("/api/collection/root/items?models=collection").json["data"]
    assert items[0]["id"] == official["id"]
    by_name = admin.get("/api/collection/root/items?models=collection&official_collections_first=false").json
    assert by_name["data"][0]["id"] == plain["id"]


# --------------------------------------------------------------------------------------------------
# Personal collections
# --------------------------------------------------------------------------------------------------


def test_personal_collections_are_private(app, admin):
    ulla = make_user(app, "ulla@example.com", "Ulla", "User")
    olaf = make_user(app, "olaf@example.com", "Olaf", "Other")
    ulla_pc = ulla.user["personal_collection_id"]
    olaf_pc = olaf.user["personal_collection_id"]
    mine = ulla.get(f"/api/collection/{ulla_pc}").json
    assert mine["name"] == "Ulla User's Personal Collection" and mine["is_personal"] is True
    assert mine["personal_owner_id"] == ulla.user["id"] and mine["can_write"] is True
    assert ulla.get(f"/api/collection/{olaf_pc}").status_code == 403
    assert ulla.get(f"/api/collection/{olaf_pc}/items").status_code == 403
    assert ulla.post("/api/collection", json={"name": "x", "parent_id": olaf_pc}).status_code == 403
    ids = {c["id"] for c in ulla.get("/api/collection").json}
    assert ulla_pc in ids and olaf_pc not in ids
    sub = create(olaf, "Olaf's stuff", parent_id=olaf_pc)
    assert sub["is_personal"] is True
    assert ulla.get(f"/api/collection/{sub['id']}").status_code == 403
    # Administrators see every personal collection unless they ask not to.
    admin_ids = {c["id"] for c in admin.get("/api/collection").json}
    assert {ulla_pc, olaf_pc, sub["id"]} <= admin_ids
    own_only = {c["id"] for c in admin.get("/api/collection?exclude-other-user-collections=true").json}
    assert not own_only & {ulla_pc, olaf_pc, sub["id"]}
    personal = admin.get("/api/collection?personal-only=true").json
    assert all(c["personal_owner_id"] for c in personal) and "root" not in [c["id"] for c in personal]
    # Root items show only the caller's own personal collection.
    root_items = {i["id"] for i in ulla.get("/api/collection/root/items").json["data"]}
    assert ulla_pc in root_items and olaf_pc not in root_items


def test_personal_collections_cannot_be_archived_moved_or_made_official(app, admin):
    ulla = make_user(app)
    pc = ulla.user["personal_collection_id"]
    target = create(admin, "Target")
    archived = ulla.put(f"/api/collection/{pc}", json={"archived": True})
    assert archived.status_code == 400 and "archived" in archived.json["errors"]
    moved = admin.put(f"/api/collection/{pc}", json={"parent_id": target["id"]})
    assert moved.status_code == 400 and "location" in moved.json["errors"]
    assert admin.put(f"/api/collection/{pc}", json={"authority_level": "official"}).status_code == 400
    assert admin.get(f"/api/collection/{pc}").json["location"] == "/"


# --------------------------------------------------------------------------------------------------
# Moving, archiving, unarchiving
# --------------------------------------------------------------------------------------------------


def test_move_rewrites_the_subtree(admin):
    a = create(admin, "A")
    b = create(admin, "B", parent_id=a["id"])
    c = create(admin, "C", parent_id=b["id"])
    target = create(admin, "T")
    moved = admin.put(f"/api/collection/{b['id']}", json={"parent_id": target["id"]})
    assert moved.status_code == 200 and moved.json["location"] == f"/{target['id']}/"
    assert admin.get(f"/api/collection/{c['id']}").json["location"] == f"/{target['id']}/{b['id']}/"
    into_self = admin.put(f"/api/collection/{b['id']}", json={"parent_id": c["id"]})
    assert into_self.status_code == 400
    to_root = admin.put(f"/api/collection/{b['id']}", json={"parent_id": None})
    assert to_root.json["location"] == "/"
    assert admin.get(f"/api/collection/{c['id']}").json["location"] == f"/{b['id']}/"


def test_archive_cascades_and_unarchive_restores_what_went_with_it(app, admin):
    parent = create(admin, "Parent")
    child = create(admin, "Child", parent_id=parent["id"])
    grandchild = create(admin, "Grandchild", parent_id=child["id"])
    kept = add_card(app, "kept", parent["id"])
    deep = add_card(app, "deep", grandchild["id"])
    on_its_own = add_card(app, "on its own", child["id"], archived=True, archived_directly=True)
    # The grandchild is archived first, on its own: unarchiving the parent must leave it archived.
    assert admin.put(f"/api/collection/{grandchild['id']}", json={"archived": True}).status_code == 200
    assert card_row(app, deep)["archived"] is True
    response = admin.put(f"/api/collection/{parent['id']}", json={"archived": True})
    assert response.status_code == 200 and response.json["archived"] is True
    assert response.json["can_restore"] is True
    child_now = admin.get(f"/api/collection/{child['id']}").json
    assert child_now["archived"] is True and child_now["archived_directly"] is False
    assert child_now["can_restore"] is False
    assert card_row(app, kept)["archived"] is True
    listed = {c["id"] for c in admin.get("/api/collection").json}
    assert parent["id"] not in listed and child["id"] not in listed
    archived_ids = {c["id"] for c in admin.get("/api/collection?archived=true").json}
    assert {parent["id"], child["id"], grandchild["id"]} <= archived_ids
    # Items of an archived collection are its archived items.
    assert ("card", "kept") in names(admin.get(f"/api/collection/{parent['id']}/items").json)
    # An indirectly archived child cannot be restored on its own without a new parent.
    assert admin.put(f"/api/collection/{child['id']}", json={"archived": False}).status_code == 400
    restored = admin.put(f"/api/collection/{parent['id']}", json={"archived": False})
    assert restored.status_code == 200 and restored.json["archived"] is False
    assert admin.get(f"/api/collection/{child['id']}").json["archived"] is False
    assert admin.get(f"/api/collection/{grandchild['id']}").json["archived"] is True
    assert card_row(app, kept)["archived"] is False
    assert card_row(app, deep)["archived"] is True
    assert card_row(app, on_its_own)["archived"] is True


def test_unarchive_into_another_parent(admin):
    old = create(admin, "Old home")
    child = create(admin, "Wanderer", parent_id=old["id"])
    new = create(admin, "New home")
    admin.put(f"/api/collection/{old['id']}", json={"archived": True})
    moved = admin.put(f"/api/collection/{child['id']}", json={"archived": False, "parent_id": new["id"]})
    assert moved.status_code == 200
    assert moved.json["archived"] is False and moved.json["location"] == f"/{new['id']}/"
    assert admin.get(f"/api/collection/{old['id']}").json["archived"] is True


# --------------------------------------------------------------------------------------------------
# Items
# --------------------------------------------------------------------------------------------------


def test_items_envelope_models_and_order(app, admin):
    home = create(admin, "Home")
    create(admin, "beta folder", parent_id=home["id"])
    add_card(app, "Beta", home["id"])
    add_card(app, "alpha", home["id"], type="model")
    add_card(app, "Alpha", home["id"], type="metric")
    add_card(app, "gone", home["id"], archived=True, archived_directly=True)
    items = admin.get(f"/api/collection/{home['id']}/items").json
    assert set(items) == {"total", "data", "models", "limit", "offset"}
    assert items["total"] == 4 and items["limit"] is None and items["offset"] is None
    # By lower(name), ties by id.
    assert names(items) == [("dataset", "alpha"), ("metric", "Alpha"), ("card", "Beta"),
                            ("collection", "beta folder")]
    for item in items["data"]:
        assert item["collection_id"] == home["id"] and {"id", "name", "model"} <= set(item)
    cards = {i["name"]: i for i in items["data"] if i["model"] != "collection"}
    assert "database_id" in cards["Beta"] and "database_id" not in cards["Alpha"]
    assert cards["Beta"]["fully_parameterized"] is True and cards["Beta"]["can_write"] is True
    single = admin.get(f"/api/collection/{home['id']}/items?models=card").json
    assert names(single) == [("card", "Beta")] and single["models"] == ["card"]
    repeated = admin.get(f"/api/collection/{home['id']}/items?models=card&models=dataset").json
    assert names(repeated) == [("dataset", "alpha"), ("card", "Beta")]
    assert admin.get(f"/api/collection/{home['id']}/items?models=no_models").json["total"] == 0
    assert admin.get(f"/api/collection/{home['id']}/items?models=chart").status_code == 400
    # Kinds Tessera does not hold yet (documents, timelines) are accepted and simply match nothing.
    assert admin.get(f"/api/collection/{home['id']}/items?models=document&models=timeline").json["total"] == 0
    archived = admin.get(f"/api/collection/{home['id']}/items?archived=true").json
    assert names(archived) == [("card", "gone")]


def test_items_sorting_pinning_and_paging(app, admin):
    home = create(admin, "Sorted")
    add_card(app, "c-pinned", home["id"], position=1)
    add_card(app, "a-card", home["id"], editor_id=1)
    add_card(app, "b-card", home["id"])
    create(admin, "z-folder", parent_id=home["id"])
    base = f"/api/collection/{home['id']}/items"
    desc = admin.get(base + "?sort_column=name&sort_direction=desc").json
    assert [i["name"] for i in desc["data"]] == ["z-folder", "c-pinned", "b-card", "a-card"]
    by_model = admin.get(base + "?sort_column=model").json
    assert [i["model"] for i in by_model["data"]] == ["card", "card", "card", "collection"]
    pinned = admin.get(base + "?pinned_state=is_pinned").json
    assert [i["name"] for i in pinned["data"]] == ["c-pinned"]
    unpinned = admin.get(base + "?pinned_state=is_not_pinned").json
    assert [i["name"] for i in unpinned["data"]] == ["a-card", "b-card", "z-folder"]
    edited = admin.get(base + "?sort_column=last_edited_at&sort_direction=desc").json
    assert edited["data"][0]["name"] == "a-card"
    assert edited["data"][0]["last-edit-info"]["email"] == "admin@example.com"
    page = admin.get(base + "?limit=2&offset=1").json
    assert page["total"] == 4 and page["limit"] == 2 and page["offset"] == 1
    assert [i["name"] for i in page["data"]] == ["b-card", "c-pinned"]
    assert admin.get(base + "?limit=2").json["offset"] == 0
    assert admin.get(base + "?limit=-1").status_code == 400
    assert admin.get(base + "?sort_column=size").status_code == 400


def test_root_items_hold_cards_without_a_collection(app, admin):
    add_card(app, "Loose card")
    top = create(admin, "Top level")
    create(admin, "Nested", parent_id=top["id"])
    items = admin.get("/api/collection/root/items").json
    found = names(items)
    assert ("card", "Loose card") in found and ("collection", "Top level") in found
    assert ("collection", "Nested") not in found
    top_item = next(i for i in items["data"] if i["name"] == "Top level")
    assert top_item["here"] == ["collection"] and top_item["collection_id"] is None


def test_fully_parameterized():
    from plugins.collections.items import fully_parameterized

    def native(text, tags):
        return {"type": "native", "native": {"query": text, "template-tags": tags}}

    assert fully_parameterized(native("select 1", {})) is True
    assert fully_parameterized(native("select {{x}}", {"x": {"type": "text"}})) is False
    assert fully_parameterized(native("select {{x}}", {"x": {"type": "text", "default": "1"}})) is True
    assert fully_parameterized(native("select 1 [[where a = {{x}}]]", {"x": {"type": "text"}})) is True
    assert fully_parameterized(native("select 1 where {{f}}", {"f": {"type": "dimension"}})) is True
    assert fully_parameterized(native("select 1 [[and {{x}}]]", {"x": {"type": "text", "required": True}})) is False


# --------------------------------------------------------------------------------------------------
# Tree
# --------------------------------------------------------------------------------------------------


def test_tree_nests_and_marks_here_and_below(app, admin):
    top = create(admin, "Tree top")
    mid = create(admin, "Tree mid", parent_id=top["id"])
    create(admin, "Tree leaf", parent_id=mid["id"])
    add_card(app, "model here", mid["id"], type="model")
    add_card(app, "question top", top["id"])
    tree = admin.get("/api/collection/tree").json
    node = next(n for n in tree if n["id"] == top["id"])
    assert node["here"] == ["card"] and node["below"] == ["dataset"]
    child = node["children"][0]
    assert child["id"] == mid["id"] and child["here"] == ["dataset"] and "below" not in child
    assert child["children"][0]["name"] == "Tree leaf" and child["children"][0]["children"] == []
    shallow = admin.get("/api/collection/tree?shallow=true").json
    assert next(n for n in shallow if n["id"] == top["id"])["children"] is True
    below_top = admin.get(f"/api/collection/tree?shallow=true&collection-id={top['id']}").json
    assert [(n["id"], n["children"]) for n in below_top] == [(mid["id"], True)]
    admin.put(f"/api/collection/{mid['id']}", json={"archived": True})
    live = admin.get("/api/collection/tree?exclude-archived=true").json
    assert next(n for n in live if n["id"] == top["id"])["children"] == []


# --------------------------------------------------------------------------------------------------
# Namespaces
# --------------------------------------------------------------------------------------------------


def test_snippet_namespace_is_separate(admin):
    folder = create(admin, "SQL bits", namespace="snippets")
    assert folder["namespace"] == "snippets"
    default_ids = {c["id"] for c in admin.get("/api/collection").json}
    assert folder["id"] not in default_ids
    snippet_list = admin.get("/api/collection?namespace=snippets").json
    assert snippet_list[0]["id"] == "root" and snippet_list[0]["name"] == "Top folder"
    assert folder["id"] in {c["id"] for c in snippet_list}
    regular = create(admin, "Regular")
    mixed = admin.post("/api/collection", json={"name": "x", "parent_id": regular["id"], "namespace": "snippets"})
    assert mixed.status_code == 400
    moved = admin.put(f"/api/collection/{folder['id']}", json={"parent_id": regular["id"]})
    assert moved.status_code == 400
    items = admin.get("/api/collection/root/items?namespace=snippets").json
    assert [i["id"] for i in items["data"]] == [folder["id"]]
    assert "limit" not in items and "card" not in items["models"]
    assert folder["id"] not in {i["id"] for i in admin.get("/api/collection/root/items").json["data"]}


# --------------------------------------------------------------------------------------------------
# Permissions
# --------------------------------------------------------------------------------------------------


def test_read_only_and_hidden_collections(app, admin):
    user = make_user(app)
    readable = create(admin, "Readable")
    writable = create(admin, "Writable")
    hidden = create(admin, "Hidden")
    visible_below_hidden = create(admin, "Visible below hidden", parent_id=hidden["id"])
    set_perm(app, ALL_USERS_GROUP_ID, readable["id"], "read")
    set_perm(app, ALL_USERS_GROUP_ID, hidden["id"], "none")
    set_perm(app, ALL_USERS_GROUP_ID, None, "read")
    listing = {c["id"]: c for c in user.get("/api/collection").json}
    assert listing["root"]["can_write"] is False
    assert listing[readable["id"]]["can_write"] is False and listing[writable["id"]]["can_write"] is True
    assert hidden["id"] not in listing and visible_below_hidden["id"] in listing
    assert user.get(f"/api/collection/{hidden['id']}").status_code == 403
    assert user.get(f"/api/collection/{hidden['id']}/items").status_code == 403
    detail = user.get(f"/api/collection/{visible_below_hidden['id']}").json
    assert detail["effective_location"] == "/" and [a["id"] for a in detail["effective_ancestors"]] == ["root"]
    # The collection below the hidden one shows at the user's top level.
    root_items = {i["id"]: i for i in user.get("/api/collection/root/items").json["data"]}
    assert visible_below_hidden["id"] in root_items and hidden["id"] not in root_items
    assert root_items[visible_below_hidden["id"]]["effective_location"] == "/"
    tree_ids = [n["id"] for n in user.get("/api/collection/tree").json]
    assert visible_below_hidden["id"] in tree_ids and hidden["id"] not in tree_ids
    # Writes need write permission.
    assert user.post("/api/collection", json={"name": "at root"}).status_code == 403
    assert user.post("/api/collection", json={"name": "x", "parent_id": readable["id"]}).status_code == 403
    assert user.put(f"/api/collection/{readable['id']}", json={"name": "renamed"}).status_code == 403
    assert user.put(f"/api/collection/{writable['id']}", json={"archived": True}).status_code == 403  # root read-only
    assert user.post("/api/collection", json={"name": "ok", "parent_id": writable["id"]}).status_code == 200


def test_without_root_access_root_items_are_collections_only(app, admin):
    user = make_user(app)
    shared = create(admin, "Shared")
    add_card(app, "root card")
    set_perm(app, ALL_USERS_GROUP_ID, None, "none")
    set_perm(app, ALL_USERS_GROUP_ID, shared["id"], "read")
    assert "root" not in {c["id"] for c in user.get("/api/collection").json}
    assert user.get("/api/collection/root").status_code == 403
    items = user.get("/api/collection/root/items").json
    assert {i["model"] for i in items["data"]} == {"collection"}
    assert shared["id"] in {i["id"] for i in items["data"]}
    assert user.get("/api/collection/root/items?models=card").json["data"] == []


def test_moving_out_of_a_personal_collection_grants_the_new_parents_permissions(app, admin):
    user = make_user(app)
    pc = user.user["personal_collection_id"]
    private = create(user, "Draft", parent_id=pc)
    with app.app_context(), store(app).session() as session:
        assert not session.scalars(select(CollectionPermission).where(
            CollectionPermission.collection_id == private["id"])).all()
    moved = user.put(f"/api/collection/{private['id']}", json={"parent_id": None})
    assert moved.status_code == 200 and moved.json["is_personal"] is False
    with app.app_context(), store(app).session() as session:
        levels = {(p.group_id, p.level) for p in session.scalars(select(CollectionPermission).where(
            CollectionPermission.collection_id == private["id"]))}
    assert levels == {(ALL_USERS_GROUP_ID, "write")}
    back = user.put(f"/api/collection/{private['id']}", json={"parent_id": pc})
    assert back.status_code == 200 and back.json["is_personal"] is True
    with app.app_context(), store(app).session() as session:
        assert not session.scalars(select(CollectionPermission).where(
            CollectionPermission.collection_id == private["id"])).all()


def test_collections_on_postgres_app_db(any_app):
    from core.testing import setup_admin

    admin = setup_admin(any_app)
    parent = create(admin, "PG parent")
    child = create(admin, "PG child", parent_id=parent["id"])
    add_card(any_app, "PG card", child["id"])
    assert admin.put(f"/api/collection/{parent['id']}", json={"archived": True}).status_code == 200
    assert admin.get(f"/api/collection/{child['id']}").json["archived"] is True
    assert admin.put(f"/api/collection/{parent['id']}", json={"archived": False}).status_code == 200
    items = admin.get(f"/api/collection/{child['id']}/items").json
    assert names(items) == [("card", "PG card")]
    assert admin.get("/api/collection/tree").status_code == 200


def test_graph_routes_coexist_with_collection_routes(app, admin):
    """/api/collection/graph (plugins.permissions) and /api/collection/<id> (here) share a stem."""
    user = make_user(app)
    shared = create(admin, "Graph-governed")
    graph = admin.get("/api/collection/graph").json
    assert graph["groups"][str(ALL_USERS_GROUP_ID)][str(shared["id"])] == "write"
    assert user.get("/api/collection/graph").status_code == 403
    revoked = admin.put("/api/collection/graph", json={
        "revision": graph["revision"], "groups": {str(ALL_USERS_GROUP_ID): {str(shared["id"]): "none"}}})
    assert revoked.status_code == 200, revoked.json
    assert user.get(f"/api/collection/{shared['id']}").status_code == 403
    assert shared["id"] not in {c["id"] for c in user.get("/api/collection").json}
    assert admin.get(f"/api/collection/{shared['id']}").status_code == 200


def test_check_permission_hook_is_honoured_in_listings(app_config, tmp_path, monkeypatch):
    """A plugin's check_permission verdict overrules the rows in lists, items, the tree and search."""
    from core.assembly.app import create_app
    from core.testing import setup_admin
    from tests.support import write_plugin

    name = write_plugin(tmp_path, monkeypatch, '''
        from core import hookimpl

        @hookimpl
        def check_permission(user, action, obj):
            if obj.get("model") == "collection" and obj.get("id") is not None and not user.is_superuser:
                from core.appdb.db import session
                from core.appdb.models import Collection
                collection = session().get(Collection, obj["id"])
                if collection is not None and collection.name.startswith("Embargoed"):
                    return False
            return None
    ''')
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    try:
        admin = setup_admin(app)
        user = make_user(app)
        embargoed = create(admin, "Embargoed report")
        normal = create(admin, "Normal report")
        ids = {c["id"] for c in user.get("/api/collection").json}
        assert normal["id"] in ids and embargoed["id"] not in ids
        assert user.get(f"/api/collection/{embargoed['id']}").status_code == 403
        assert embargoed["id"] not in {i["id"] for i in user.get("/api/collection/root/items").json["data"]}
        assert embargoed["id"] not in {n["id"] for n in user.get("/api/collection/tree").json}
        assert ("collection", "Embargoed report") not in {
            (r["model"], r["name"]) for r in user.get("/api/search?q=report").json["data"]}
        assert ("collection", "Embargoed report") in {
            (r["model"], r["name"]) for r in admin.get("/api/search?q=report").json["data"]}
    finally:
        app.extensions["tessera"].db.dispose()


def test_snippet_folders_list_their_snippets_and_archive_with_them(admin):
    folder = create(admin, "Snippet folder", namespace="snippets")
    inside = admin.post("/api/native-query-snippet", json={"name": "orders_filter", "content": "status = 'paid'",
                                                           "collection_id": folder["id"]})
    assert inside.status_code == 200, inside.json
    loose = admin.post("/api/native-query-snippet", json={"name": "at_top", "content": "1 = 1"})
    assert loose.status_code == 200, loose.json
    items = admin.get(f"/api/collection/{folder['id']}/items").json
    assert [(i["model"], i["name"]) for i in items["data"]] == [("snippet", "orders_filter")]
    assert "limit" not in items and items["models"] == ["collection", "snippet"]
    top = admin.get("/api/collection/root/items?namespace=snippets").json
    assert [(i["model"], i["name"]) for i in top["data"]] == [("snippet", "at_top"), ("collection", "Snippet folder")]
    # Snippets never appear among default-namespace items.
    assert "snippet" not in admin.get("/api/collection/root/items").json["models"]
    assert admin.put(f"/api/collection/{folder['id']}", json={"archived": True}).status_code == 200
    assert admin.get(f"/api/native-query-snippet/{inside.json['id']}").json["archived"] is True
    assert admin.put(f"/api/collection/{folder['id']}", json={"archived": False}).status_code == 200
    assert admin.get(f"/api/native-query-snippet/{inside.json['id']}").json["archived"] is False


def test_cards_saved_through_the_card_api_live_in_collections(app, admin, app_config):
    """End to end with plugins.cards: a card saved into a collection is one of its items (with the
    revision's last-edit-info), is found by search, and is archived and restored with the collection."""
    from pathlib import Path

    from tests.plugins.cards.fixtures import card_body, make_warehouse, native_query, register_warehouse

    ids = register_warehouse(app, make_warehouse(Path(app_config["TESSERA_DATA_DIR"])))
    home = create(admin, "Card home")
    saved = admin.post("/api/card", json=card_body("Totals by person", native_query(
        ids["db"], "SELECT person_id, SUM(total) FROM orders GROUP BY person_id"), collection_id=home["id"]))
    assert saved.status_code == 200, saved.json
    items = admin.get(f"/api/collection/{home['id']}/items").json
    assert names(items) == [("card", "Totals by person")]
    item = items["data"][0]
    assert item["database_id"] == ids["db"] and item["last-edit-info"]["email"] == "admin@example.com"
    hits = admin.get("/api/search?q=totals").json["data"]
    assert [(h["model"], h["id"]) for h in hits] == [("card", saved.json["id"])]
    assert admin.put(f"/api/collection/{home['id']}", json={"archived": True}).status_code == 200
    assert admin.get(f"/api/card/{saved.json['id']}").json["archived"] is True
    assert admin.get("/api/search?q=totals").json["data"] == []
    assert admin.put(f"/api/collection/{home['id']}", json={"archived": False}).status_code == 200
    assert admin.get(f"/api/card/{saved.json['id']}").json["archived"] is False
