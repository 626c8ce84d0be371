"""Related entities on the Sample Database: GET /api/card/:id/related, POST /api/card/related,
GET /api/table/:id/related and GET /api/field/:id/related; their content (table, similar questions,
metrics, canonical metric, collections), what users without access see, and the dashboard hooks."""
import pytest
from sqlalchemy import delete

from core import hookimpl
from core.appdb.models import ALL_USERS_GROUP_ID, DataPermission
from core.testing import make_user
from tests.plugins.definitions.support import grant_data_model
from tests.plugins.test_collections import create, set_perm, store
from tests.plugins.test_tables import sample

CARD_KEYS = {"table", "metrics", "segments", "dashboard-mates", "similar-questions", "canonical-metric",
             "dashboards", "collections"}


def field_ref(tables, table, name):
    return ["field", next(f["id"] for f in tables[table]["fields"] if f["name"] == name), None]


def save(client, name, db_id, table_id, collection_id=None, type="question", **inner):
    body = {"name": name, "display": "table", "visualization_settings": {}, "type": type,
            "collection_id": collection_id,
            "dataset_query": {"database": db_id, "type": "query", "query": {"source-table": table_id, **inner}}}
    response = client.post("/api/card", json=body)
    assert response.status_code == 200, response.json
    return response.json


def block_table(app, db_id, table_ids, blocked):
    """All Users: view-data per table, blocked for `blocked`, unrestricted for the others."""
    with app.app_context(), store(app).session() as session:
        session.execute(delete(DataPermission).where(
            DataPermission.db_id == db_id, DataPermission.group_id == ALL_USERS_GROUP_ID,
            DataPermission.perm_type == "view-data"))
        for table_id in table_ids:
            session.add(DataPermission(group_id=ALL_USERS_GROUP_ID, db_id=db_id, perm_type="view-data",
                                       table_id=table_id, perm_value="blocked" if table_id == blocked else
                                       "unrestricted"))


@pytest.fixture
def content(app, admin, sample_database_file):
    """Cards over ORDERS (two alike by month, one by product, one hidden in a secret collection), a
    metric card over ORDERS and a card over PEOPLE."""
    db_id, tables = sample(app, admin)
    orders = tables["ORDERS"]["id"]
    by_month = ["field", field_ref(tables, "ORDERS", "CREATED_AT")[1], {"temporal-unit": "month"}]
    total = field_ref(tables, "ORDERS", "TOTAL")
    sales, secret = create(admin, "Sales"), create(admin, "Secret")
    set_perm(app, ALL_USERS_GROUP_ID, secret["id"], "none")
    cards = {
        "count": save(admin, "Orders by month", db_id, orders, sales["id"], aggregation=[["count"]],
                      breakout=[by_month]),
        "total": save(admin, "Total by month", db_id, orders, sales["id"], aggregation=[["sum", total]],
                      breakout=[by_month]),
        "product": save(admin, "Orders by product", db_id, orders, aggregation=[["count"]],
                        breakout=[field_ref(tables, "ORDERS", "PRODUCT_ID")]),
        "secret": save(admin, "Secret by month", db_id, orders, secret["id"], aggregation=[["count"]],
                       breakout=[by_month]),
        "revenue": save(admin, "Revenue", db_id, orders, type="metric", aggregation=[["sum", total]]),
        "people": save(admin, "People by source", db_id, tables["PEOPLE"]["id"], aggregation=[["count"]],
                       breakout=[field_ref(tables, "PEOPLE", "SOURCE")]),
    }
    return {"db": db_id, "tables": tables, "cards": cards, "sales": sales, "secret": secret}


def ids(items):
    return sorted(i["id"] for i in items)


def test_card_related_content(admin, content):
    cards = content["cards"]
    related = admin.get(f"/api/card/{cards['count']['id']}/related")
    assert related.status_code == 200, related.json
    body = related.json
    assert set(body) == CARD_KEYS
    assert body["table"]["name"] == "ORDERS" and body["table"]["id"] == content["tables"]["ORDERS"]["id"]
    # Questions over ORDERS sharing the monthly breakout; the card itself and the one by product are not similar.
    assert ids(body["similar-questions"]) == sorted([cards["total"]["id"], cards["secret"]["id"]])
    assert {q["similarity"] for q in body["similar-questions"]} == {1}
    assert body["similar-questions"][0]["dataset_query"]["query"]["source-table"] == content["tables"]["ORDERS"]["id"]
    assert ids(body["collections"]) == sorted([content["sales"]["id"], content["secret"]["id"]])
    assert {"name", "location", "archived", "personal_owner_id"} <= set(body["collections"][0])
    assert [m["id"] for m in body["metrics"]] == [cards["revenue"]["id"]]
    assert body["metrics"][0]["type"] == "metric" and body["metrics"][0]["similarity"] == 0
    assert body["canonical-metric"] is None  # a count is not the Revenue metric's sum
    assert body["segments"] == [] and body["dashboard-mates"] == [] and body["dashboards"] == []
    # The sum of TOTAL is what the Revenue metric computes.
    total = admin.get(f"/api/card/{cards['total']['id']}/related").json
    assert total["canonical-metric"]["id"] == cards["revenue"]["id"]
    assert total["metrics"][0]["similarity"] == 1
    people = admin.get(f"/api/card/{cards['people']['id']}/related").json
    assert people["table"]["name"] == "PEOPLE" and people["similar-questions"] == [] and people["metrics"] == []


def test_card_related_respects_permissions(app, admin, content):
    cards, tables = content["cards"], content["tables"]
    user = make_user(app)
    body = user.get(f"/api/card/{cards['count']['id']}/related").json
    # The card in the secret collection and the collection itself stay unknown.
    assert ids(body["similar-questions"]) == [cards["total"]["id"]]
    assert ids(body["collections"]) == [content["sales"]["id"]]
    assert user.get(f"/api/card/{cards['secret']['id']}/related").status_code == 403
    assert user.get("/api/card/999999/related").status_code == 404
    # Without data access to PEOPLE, a readable card over it shows no table.
    block_table(app, content["db"], [t["id"] for t in tables.values()], tables["PEOPLE"]["id"])
    people = user.get(f"/api/card/{cards['people']['id']}/related").json
    assert people["table"] is None and people["similar-questions"] == []
    assert admin.get(f"/api/card/{cards['people']['id']}/related").json["table"]["name"] == "PEOPLE"


def test_adhoc_query_related(app, admin, content):
    cards = content["cards"]
    query = cards["count"]["dataset_query"]
    body = admin.post("/api/card/related", json=query)
    assert body.status_code == 200, body.json
    assert set(body.json) == CARD_KEYS and body.json["table"]["name"] == "ORDERS"
    # Unsaved, the query is similar to the card it was copied from too.
    assert ids(body.json["similar-questions"]) == sorted(cards[k]["id"] for k in ("count", "total", "secret"))
    user = make_user(app)
    assert ids(user.post("/api/card/related", json=query).json["similar-questions"]) == sorted(
        cards[k]["id"] for k in ("count", "total"))
    # A native query or one that cannot be read relates to nothing; a body that is not a map is a 400.
    native = admin.post("/api/card/related", json={"database": content["db"], "type": "native",
                                                   "native": {"query": "SELECT 1"}}).json
    assert native["table"] is None and native["similar-questions"] == [] and native["collections"] == []
    assert admin.post("/api/card/related", json={"nonsense": True}).json["table"] is None
    assert admin.post("/api/card/related", json=[1, 2]).status_code == 400


def test_table_related(app, admin, content):
    tables, cards = content["tables"], content["cards"]
    body = admin.get(f"/api/table/{tables['ORDERS']['id']}/related").json
    assert set(body) == {"segments", "metrics", "linking-to", "linked-from", "tables"}
    assert [t["name"] for t in body["linking-to"]] == ["PEOPLE", "PRODUCTS"]
    assert body["linked-from"] == [] and [t["name"] for t in body["tables"]] == ["REVIEWS"]
    assert [m["id"] for m in body["metrics"]] == [cards["revenue"]["id"]] and body["segments"] == []
    user = make_user(app)
    block_table(app, content["db"], [t["id"] for t in tables.values()], tables["PEOPLE"]["id"])
    seen = user.get(f"/api/table/{tables['ORDERS']['id']}/related").json
    assert [t["name"] for t in seen["linking-to"]] == ["PRODUCTS"]
    assert [t["name"] for t in user.get(f"/api/table/{tables['PRODUCTS']['id']}/related").json["linked-from"]] \
        == ["ORDERS", "REVIEWS"]
    assert user.get(f"/api/table/{tables['PEOPLE']['id']}/related").status_code == 403
    # A metric in a collection the user cannot read is not listed.
    admin.put(f"/api/card/{cards['revenue']['id']}", json={"collection_id": content["secret"]["id"]})
    assert user.get(f"/api/table/{tables['ORDERS']['id']}/related").json["metrics"] == []


def test_field_related(app, admin, content):
    tables, cards = content["tables"], content["cards"]
    fields = {f["name"]: f for f in tables["ORDERS"]["fields"]}
    body = admin.get(f"/api/field/{fields['TOTAL']['id']}/related").json
    assert set(body) == {"table", "segments", "metrics", "fields"}
    assert body["table"]["name"] == "ORDERS"
    # Revenue sums TOTAL; nothing about CREATED_AT.
    assert [m["id"] for m in body["metrics"]] == [cards["revenue"]["id"]]
    assert admin.get(f"/api/field/{fields['CREATED_AT']['id']}/related").json["metrics"] == []
    assert len(body["fields"]) == 5 and "TOTAL" not in {f["name"] for f in body["fields"]}
    assert all(f["table_id"] == tables["ORDERS"]["id"] for f in body["fields"])
    user = make_user(app)
    block_table(app, content["db"], [t["id"] for t in tables.values()], tables["ORDERS"]["id"])
    assert user.get(f"/api/field/{fields['TOTAL']['id']}/related").status_code == 403


class Dashboards:
    """A stand-in dashboards plugin: dashboard 1 holds the two monthly cards, dashboard 2 is archived."""

    def __init__(self, pairs):
        self.pairs = pairs

    @hookimpl
    def dashboard_cards(self, session, card_ids, dashboard_ids):
        return [(d, c) for d, c in self.pairs
                if (card_ids is None or c in card_ids) and (dashboard_ids is None or d in dashboard_ids)]

    @hookimpl
    def visible_dashboards(self, session, user, dashboard_ids):
        return [{"id": d, "name": f"Dashboard {d}"} for d in dashboard_ids if d != 2]


def test_dashboards_come_from_the_hooks(app, admin, content):
    cards = content["cards"]
    pairs = [(1, cards["count"]["id"]), (1, cards["total"]["id"]), (1, cards["secret"]["id"]),
             (2, cards["total"]["id"])]
    app.extensions["tessera"].pm.register(Dashboards(pairs))
    body = admin.get(f"/api/card/{cards['count']['id']}/related").json
    assert ids(body["dashboard-mates"]) == sorted([cards["total"]["id"], cards["secret"]["id"]])
    assert body["dashboards"] == [{"id": 1, "name": "Dashboard 1"}]
    user = make_user(app)
    assert ids(user.get(f"/api/card/{cards['count']['id']}/related").json["dashboard-mates"]) == [cards["total"]["id"]]


def definition_entity(admin, kind, name, table_id, definition):
    response = admin.post(f"/api/{kind}", json={"name": name, "table_id": table_id, "definition": definition})
    assert response.status_code == 200, response.json
    return response.json


def test_segments_and_legacy_metrics(app, admin, content):
    tables, cards = content["tables"], content["cards"]
    orders = tables["ORDERS"]["id"]
    total = field_ref(tables, "ORDERS", "TOTAL")
    big = definition_entity(admin, "segment", "Big orders", orders, {"filter": [">", total, 100]})
    cheap = definition_entity(admin, "segment", "Cheap orders", orders, {"filter": ["<", total, 10]})
    gizmos = definition_entity(admin, "segment", "Gizmos", tables["PRODUCTS"]["id"],
                               {"filter": ["=", field_ref(tables, "PRODUCTS", "CATEGORY"), "Gizmo"]})
    legacy_sum = definition_entity(admin, "metric", "Legacy revenue", orders, {"aggregation": [["sum", total]]})
    legacy_count = definition_entity(admin, "metric", "Legacy count", orders, {"aggregation": [["count"]]})

    segment = admin.get(f"/api/segment/{big['id']}/related").json
    assert set(segment) == {"table", "metrics", "segments", "linked-from"} and segment["table"]["name"] == "ORDERS"
    assert [(s["id"], s["similarity"]) for s in segment["segments"]] == [(cheap["id"], 1)]
    assert "definition" in segment["segments"][0] and segment["linked-from"] == []
    # Metrics about TOTAL first (legacy before cards on ties), the count after.
    assert [(m["name"], m["similarity"]) for m in segment["metrics"]] == [
        ("Legacy revenue", 1), ("Revenue", 1), ("Legacy count", 0)]
    products = admin.get(f"/api/segment/{gizmos['id']}/related").json
    assert [t["name"] for t in products["linked-from"]] == ["ORDERS", "REVIEWS"] and products["segments"] == []

    metric = admin.get(f"/api/metric/{legacy_sum['id']}/related").json
    assert set(metric) == {"table", "metrics", "segments"} and metric["table"]["id"] == orders
    assert [m["name"] for m in metric["metrics"]] == ["Revenue", "Legacy count"]  # not itself
    assert ids(metric["segments"]) == sorted([big["id"], cheap["id"]])

    # Cards, tables and fields see them too; the legacy metric is the sum's canonical metric.
    card = admin.get(f"/api/card/{cards['total']['id']}/related").json
    assert card["canonical-metric"]["id"] == legacy_sum["id"] and "definition" in card["canonical-metric"]
    assert ids(card["segments"]) == sorted([big["id"], cheap["id"]])
    table = admin.get(f"/api/table/{orders}/related").json
    assert [m["name"] for m in table["metrics"]] == ["Legacy revenue", "Legacy count", "Revenue"]
    assert ids(table["segments"]) == sorted([big["id"], cheap["id"]])
    field = admin.get(f"/api/field/{total[1]}/related").json
    assert [m["name"] for m in field["metrics"]] == ["Legacy revenue", "Revenue"]
    assert {s["similarity"] for s in field["segments"]} == {1}

    # Archived ones are gone; without data access to the table the endpoints answer 403.
    admin.put(f"/api/segment/{cheap['id']}", json={"archived": True, "revision_message": "gone"})
    assert admin.get(f"/api/segment/{big['id']}/related").json["segments"] == []
    user = make_user(app)
    assert user.get(f"/api/metric/{legacy_count['id']}/related").status_code == 403  # no data-model rights
    grant_data_model(app, content["db"])
    assert user.get(f"/api/metric/{legacy_count['id']}/related").status_code == 200
    block_table(app, content["db"], [t["id"] for t in tables.values()], orders)
    assert user.get(f"/api/segment/{big['id']}/related").status_code == 403
    assert user.get(f"/api/metric/{legacy_count['id']}/related").status_code == 403
    assert admin.get("/api/segment/999999/related").status_code == 404
    # Gizmos stays readable, but ORDERS no longer links to it for this user.
    assert [t["name"] for t in user.get(f"/api/segment/{gizmos['id']}/related").json["linked-from"]] == ["REVIEWS"]
