"""Remapped columns (core.query.remaps) through /api/dataset on the SQLite Sample Database: a field's
dimension is set with POST /api/field/:id/dimension and then queried, as Metabase's remapping tests
(query_processor/remapping_test.clj, middleware/add_remaps_test.clj, streaming_test.clj) do."""
from __future__ import annotations

import csv
import io
import json

import openpyxl
import pytest

from core.testing import wait_for_sync

from .conftest import sample_sql


@pytest.fixture
def sample(app, admin, sample_database_file):
    db_id = admin.post("/api/database/sample_database").json["id"]
    wait_for_sync(app)
    tables = {t["name"]: t for t in admin.get(f"/api/database/{db_id}/metadata").json["tables"]}
    return {"db": db_id, "tables": {name: t["id"] for name, t in tables.items()},
            "fields": {(t, f["name"]): f["id"] for t, table in tables.items() for f in table["fields"]},
            "file": str(sample_database_file)}


def fid(sample, table: str, name: str) -> int:
    return sample["fields"][(table, name)]


def ref(sample, table: str, name: str, **opts) -> list:
    return ["field", fid(sample, table, name), opts or None]


def mbql(sample, table: str, inner: dict, **extra) -> dict:
    return {"database": sample["db"], "type": "query", "query": {"source-table": sample["tables"][table], **inner},
            **extra}


def dimension(admin, sample, table: str, name: str, body: dict) -> None:
    response = admin.post(f"/api/field/{fid(sample, table, name)}/dimension", json=body)
    assert response.status_code == 200, response.json


def remap_product_to_title(admin, sample, name="Product") -> None:
    dimension(admin, sample, "ORDERS", "PRODUCT_ID", {"type": "external", "name": name,
                                                      "human_readable_field_id": fid(sample, "PRODUCTS", "TITLE")})


def run(admin, body: dict) -> dict:
    response = admin.post("/api/dataset", json=body)
    assert response.status_code == 202, response.json
    assert response.json["status"] == "completed", response.json
    return response.json["data"]


def names(data: dict) -> list[tuple]:
    return [(c["name"], c["display_name"], c.get("remapped_to"), c.get("remapped_from")) for c in data["cols"]]


TITLES = "SELECT o.ID, o.PRODUCT_ID, o.TOTAL, p.TITLE FROM ORDERS o LEFT JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID"


# --------------------------------------------------------------------------------------------------
# External remaps
# --------------------------------------------------------------------------------------------------


def test_external_remap_appends_the_target_field(admin, sample):
    remap_product_to_title(admin, sample)
    data = run(admin, mbql(sample, "ORDERS", {"fields": [ref(sample, "ORDERS", "ID"), ref(sample, "ORDERS", "PRODUCT_ID"),
                                                         ref(sample, "ORDERS", "TOTAL")],
                                              "order-by": [["asc", ref(sample, "ORDERS", "ID")]], "limit": 5}))
    assert names(data) == [("ID", "ID", None, None), ("PRODUCT_ID", "Product ID", "TITLE", None),
                           ("TOTAL", "Total", None, None), ("TITLE", "Product", None, "PRODUCT_ID")]
    title = data["cols"][3]
    assert title["fk_field_id"] == fid(sample, "ORDERS", "PRODUCT_ID")
    assert title["id"] == fid(sample, "PRODUCTS", "TITLE")
    assert title["field_ref"] == ["field", fid(sample, "PRODUCTS", "TITLE"),
                                  {"source-field": fid(sample, "ORDERS", "PRODUCT_ID")}]
    assert [tuple(r) for r in data["rows"]] == sample_sql(sample, TITLES + " ORDER BY o.ID LIMIT 5")
    # The remap is an implicit join the compiler built, visible in the SQL.
    assert "PRODUCTS__via__PRODUCT_ID" in data["native_form"]["query"]


def test_all_fields_get_remaps_last_with_unique_names(admin, sample):
    remap_product_to_title(admin, sample)
    dimension(admin, sample, "ORDERS", "USER_ID", {"type": "external", "name": "Customer since",
                                                   "human_readable_field_id": fid(sample, "PEOPLE", "CREATED_AT")})
    data = run(admin, mbql(sample, "ORDERS", {"order-by": [["asc", ref(sample, "ORDERS", "ID")]], "limit": 3}))
    cols = data["cols"]
    plain = [name for (name,) in sample_sql(sample, "SELECT name FROM pragma_table_info('ORDERS')")]
    assert {c["name"] for c in cols[:-2]} == set(plain) and len(cols) == len(plain) + 2
    # After every column, in the order of the columns they remap; ORDERS has its own CREATED_AT, so
    # the remapped one becomes CREATED_AT_2, as Metabase names NAME_2.
    originals = [c["name"] for c in cols if c.get("remapped_to")]
    assert originals in (["USER_ID", "PRODUCT_ID"], ["PRODUCT_ID", "USER_ID"])
    remaps = {"USER_ID": ("CREATED_AT_2", "Customer since", None, "USER_ID"),
              "PRODUCT_ID": ("TITLE", "Product", None, "PRODUCT_ID")}
    assert names({"cols": cols[-2:]}) == [remaps[o] for o in originals]
    by_name = {c["name"]: i for i, c in enumerate(cols)}
    assert cols[by_name["USER_ID"]]["remapped_to"] == "CREATED_AT_2"
    assert cols[by_name["PRODUCT_ID"]]["remapped_to"] == "TITLE"
    expected = sample_sql(sample, "SELECT p.TITLE, u.CREATED_AT FROM ORDERS o JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID "
                           "JOIN PEOPLE u ON u.ID = o.USER_ID ORDER BY o.ID LIMIT 3")
    got = [(r[by_name["TITLE"]], r[by_name["CREATED_AT_2"]]) for r in data["rows"]]
    assert [t for t, _ in got] == [t for t, _ in expected]
    assert [c.replace("T", " ")[:19] for _, c in got] == [c.replace("T", " ")[:19] for _, c in expected]


def test_breakout_is_grouped_and_sorted_by_the_remapped_field(admin, sample):
    remap_product_to_title(admin, sample)
    data = run(admin, mbql(sample, "ORDERS", {"aggregation": [["sum", ref(sample, "ORDERS", "TOTAL")]],
                                              "breakout": [ref(sample, "ORDERS", "PRODUCT_ID")], "limit": 3}))
    assert names(data) == [("TITLE", "Product", None, "PRODUCT_ID"), ("PRODUCT_ID", "Product ID", "TITLE", None),
                           ("sum", "Sum of Total", None, None)]
    assert [c["source"] for c in data["cols"]] == ["breakout", "breakout", "aggregation"]
    expected = sample_sql(sample, "SELECT p.TITLE, o.PRODUCT_ID, SUM(o.TOTAL) FROM ORDERS o LEFT JOIN PRODUCTS p "
                           "ON p.ID = o.PRODUCT_ID GROUP BY p.TITLE, o.PRODUCT_ID ORDER BY p.TITLE, o.PRODUCT_ID LIMIT 3")
    assert [r[:2] for r in data["rows"]] == [list(e[:2]) for e in expected]
    assert [round(r[2], 6) for r in data["rows"]] == [round(e[2], 6) for e in expected]


def test_order_by_the_original_sorts_by_the_remapped_value(admin, sample):
    remap_product_to_title(admin, sample)
    data = run(admin, mbql(sample, "ORDERS", {"fields": [ref(sample, "ORDERS", "ID"), ref(sample, "ORDERS", "PRODUCT_ID")],
                                              "order-by": [["desc", ref(sample, "ORDERS", "PRODUCT_ID")]], "limit": 20}))
    titles = [r[-1] for r in data["rows"]]
    assert titles == [t for (t,) in sample_sql(sample, TITLES.replace("o.ID, o.PRODUCT_ID, o.TOTAL, p.TITLE", "p.TITLE")
                                        + " ORDER BY p.TITLE DESC LIMIT 20")]
    # descending titles, not descending ids
    assert data["rows"][0][1] != sample_sql(sample, "SELECT MAX(PRODUCT_ID) FROM ORDERS")[0][0]


def test_breakouts_of_running_totals_stay_as_they_are(admin, sample):
    """A stage with window aggregations has built its windows over the breakouts: a leading remapped
    breakout would sort its rows against them, so it gets none (a choice of ours, see core.query.remaps)."""
    remap_product_to_title(admin, sample)
    data = run(admin, mbql(sample, "ORDERS", {"aggregation": [["cum-count"]],
                                              "breakout": [ref(sample, "ORDERS", "PRODUCT_ID")], "limit": 3}))
    assert [c["name"] for c in data["cols"]] == ["PRODUCT_ID", "cum_count"]
    counts = sample_sql(sample, "SELECT PRODUCT_ID, COUNT(*) FROM ORDERS GROUP BY PRODUCT_ID ORDER BY PRODUCT_ID LIMIT 3")
    assert [r[1] for r in data["rows"]] == [sum(n for _, n in counts[:i + 1]) for i in range(3)]


def test_a_selected_remap_target_is_not_added_twice(admin, sample):
    remap_product_to_title(admin, sample)
    title = ref(sample, "PRODUCTS", "TITLE", **{"source-field": fid(sample, "ORDERS", "PRODUCT_ID")})
    data = run(admin, mbql(sample, "ORDERS", {"fields": [ref(sample, "ORDERS", "ID"), title,
                                                         ref(sample, "ORDERS", "PRODUCT_ID")],
                                              "order-by": [["asc", ref(sample, "ORDERS", "ID")]], "limit": 2}))
    assert names(data) == [("ID", "ID", None, None), ("TITLE", "Product", None, "PRODUCT_ID"),
                           ("PRODUCT_ID", "Product ID", "TITLE", None)]


def test_nested_stage_passes_the_remap_on(admin, sample):
    remap_product_to_title(admin, sample)
    inner = {"source-table": sample["tables"]["ORDERS"],
             "fields": [ref(sample, "ORDERS", "ID"), ref(sample, "ORDERS", "PRODUCT_ID")],
             "order-by": [["asc", ref(sample, "ORDERS", "ID")]], "limit": 4}
    data = run(admin, {"database": sample["db"], "type": "query", "query": {"source-query": inner}})
    assert names(data) == [("ID", "ID", None, None), ("PRODUCT_ID", "Product ID", "TITLE", None),
                           ("TITLE", "Product", None, "PRODUCT_ID")]
    assert [tuple(r) for r in data["rows"]] == [(i, p, t) for i, p, _, t in sample_sql(sample, TITLES + " ORDER BY o.ID LIMIT 4")]


def test_explicit_join_columns_are_remapped_through_the_join(admin, sample):
    remap_product_to_title(admin, sample)
    people_id = fid(sample, "PEOPLE", "ID")
    join = {"source-table": sample["tables"]["ORDERS"], "alias": "O", "fields": [
        ref(sample, "ORDERS", "ID", **{"join-alias": "O"}), ref(sample, "ORDERS", "PRODUCT_ID", **{"join-alias": "O"})],
        "condition": ["=", ["field", people_id, None], ref(sample, "ORDERS", "USER_ID", **{"join-alias": "O"})]}
    data = run(admin, mbql(sample, "PEOPLE", {"fields": [["field", people_id, None]], "joins": [join],
                                              "order-by": [["asc", ["field", people_id, None]],
                                                           ["asc", ref(sample, "ORDERS", "ID", **{"join-alias": "O"})]],
                                              "limit": 3}))
    cols = data["cols"]
    assert [c["name"] for c in cols] == ["ID", "ID_2", "PRODUCT_ID", "TITLE"]
    assert (cols[2]["remapped_to"], cols[3]["remapped_from"], cols[3]["display_name"]) == ("TITLE", "PRODUCT_ID",
                                                                                           "Product")
    expected = sample_sql(sample, "SELECT u.ID, o.ID, o.PRODUCT_ID, p.TITLE FROM PEOPLE u LEFT JOIN ORDERS o ON u.ID = o.USER_ID "
                           "LEFT JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID ORDER BY u.ID, o.ID LIMIT 3")
    assert [tuple(r) for r in data["rows"]] == expected


def test_what_is_not_remapped(admin, sample):
    remap_product_to_title(admin, sample)
    product = ref(sample, "ORDERS", "PRODUCT_ID")
    # a native query
    native = run(admin, {"database": sample["db"], "type": "native",
                         "native": {"query": "SELECT ID, PRODUCT_ID FROM ORDERS ORDER BY ID LIMIT 2"}})
    assert [c["name"] for c in native["cols"]] == ["ID", "PRODUCT_ID"]
    assert all("remapped_to" not in c for c in native["cols"])
    # disable-remaps? in the query's middleware
    off = run(admin, mbql(sample, "ORDERS", {"fields": [product], "limit": 2}, middleware={"disable-remaps?": True}))
    assert [c["name"] for c in off["cols"]] == ["PRODUCT_ID"] and "remapped_to" not in off["cols"][0]
    # aggregations without breakouts, and columns of implicit joins
    count = run(admin, mbql(sample, "ORDERS", {"aggregation": [["count"]]}))
    assert [c["name"] for c in count["cols"]] == ["count"]
    implicit = ref(sample, "PRODUCTS", "ID", **{"source-field": fid(sample, "ORDERS", "PRODUCT_ID")})
    data = run(admin, mbql(sample, "ORDERS", {"fields": [implicit], "limit": 1}))
    assert [c["name"] for c in data["cols"]] == ["ID"]
    # a dimension that has been deleted
    assert admin.delete(f"/api/field/{fid(sample, 'ORDERS', 'PRODUCT_ID')}/dimension").status_code == 204
    assert [c["name"] for c in run(admin, mbql(sample, "ORDERS", {"fields": [product], "limit": 1}))["cols"]] == [
        "PRODUCT_ID"]


def test_remaps_to_hidden_fields_are_skipped(admin, sample):
    remap_product_to_title(admin, sample)
    title = fid(sample, "PRODUCTS", "TITLE")
    assert admin.put(f"/api/field/{title}", json={"visibility_type": "sensitive"}).status_code == 200
    data = run(admin, mbql(sample, "ORDERS", {"fields": [ref(sample, "ORDERS", "PRODUCT_ID")], "limit": 1}))
    assert [c["name"] for c in data["cols"]] == ["PRODUCT_ID"]


def test_parameter_values_and_pivots_are_not_remapped(admin, sample):
    remap_product_to_title(admin, sample)
    product = ref(sample, "ORDERS", "PRODUCT_ID")
    body = {"parameter": {"id": "p", "type": "id"}, "field_ids": [fid(sample, "ORDERS", "PRODUCT_ID")]}
    found = admin.post("/api/dataset/parameter/search/12", json=body)
    assert found.status_code == 200, found.json
    assert all(isinstance(v[0], int) and "12" in str(v[0]) for v in found.json["values"]) and found.json["values"]
    pivot = admin.post("/api/dataset/pivot", json=mbql(sample, "ORDERS", {
        "aggregation": [["count"]], "breakout": [product]}))
    assert pivot.status_code == 202, pivot.json
    assert [c["name"] for c in pivot.json["data"]["cols"]] == ["PRODUCT_ID", "pivot-grouping", "count"]


# --------------------------------------------------------------------------------------------------
# Internal remaps
# --------------------------------------------------------------------------------------------------


def name_ratings(admin, sample) -> int:
    """REVIEWS.RATING listed, values 1 and 2 named (3-5 left unnamed), and an internal dimension."""
    rating = fid(sample, "REVIEWS", "RATING")
    assert admin.put(f"/api/field/{rating}", json={"has_field_values": "list"}).status_code == 200
    response = admin.post(f"/api/field/{rating}/values", json={"values": [[1, "Awful"], [2, "Poor"]]})
    assert response.status_code == 200, response.json
    dimension(admin, sample, "REVIEWS", "RATING", {"type": "internal", "name": "Rating label"})
    return rating


LABELS = {1: "Awful", 2: "Poor"}


def test_internal_remap_adds_a_named_column(admin, sample):
    name_ratings(admin, sample)
    data = run(admin, mbql(sample, "REVIEWS", {"fields": [ref(sample, "REVIEWS", "ID"), ref(sample, "REVIEWS", "RATING")],
                                               "order-by": [["asc", ref(sample, "REVIEWS", "ID")]], "limit": 40}))
    assert names(data) == [("ID", "ID", None, None), ("RATING", "Rating", "Rating label", None),
                           ("Rating label", "Rating label", None, "RATING")]
    new = data["cols"][2]
    assert (new["base_type"], new["id"], new["table_id"], new["semantic_type"]) == ("type/Text", None, None, None)
    expected = sample_sql(sample, "SELECT ID, RATING FROM REVIEWS ORDER BY ID LIMIT 40")
    assert [tuple(r) for r in data["rows"]] == [(i, r, LABELS.get(r)) for i, r in expected]
    assert {r for _, r in expected} - set(LABELS), "unnamed values are part of the test"


def test_internal_remap_of_a_breakout_comes_after_the_aggregations(admin, sample):
    name_ratings(admin, sample)
    data = run(admin, mbql(sample, "REVIEWS", {"aggregation": [["count"]], "breakout": [ref(sample, "REVIEWS", "RATING")]}))
    assert [c["name"] for c in data["cols"]] == ["RATING", "count", "Rating label"]
    expected = sample_sql(sample, "SELECT RATING, COUNT(*) FROM REVIEWS GROUP BY RATING ORDER BY RATING")
    assert [tuple(r) for r in data["rows"]] == [(r, n, LABELS.get(r)) for r, n in expected]


# --------------------------------------------------------------------------------------------------
# Downloads: the remapped value in the original column's place
# --------------------------------------------------------------------------------------------------


def export(admin, sample, fmt: str, body: dict):
    response = admin.post(f"/api/dataset/{fmt}", json={"query": body})
    assert response.status_code == 200, response.data[:500]
    return response


def test_exports_show_external_remaps_in_place(admin, sample):
    remap_product_to_title(admin, sample)
    body = mbql(sample, "ORDERS", {"fields": [ref(sample, "ORDERS", "ID"), ref(sample, "ORDERS", "PRODUCT_ID"),
                                              ref(sample, "ORDERS", "TOTAL")],
                                   "order-by": [["asc", ref(sample, "ORDERS", "ID")]], "limit": 3})
    expected = sample_sql(sample, TITLES + " ORDER BY o.ID LIMIT 3")
    rows = list(csv.reader(io.StringIO(export(admin, sample, "csv", body).get_data(as_text=True))))
    assert rows == [["ID", "Product", "Total"]] + [[str(i), t, repr(total)] for i, _, total, t in expected]
    items = json.loads(export(admin, sample, "json", body).data)
    assert [list(item) for item in items] == [["ID", "Product", "Total"]] * 3
    assert [item["Product"] for item in items] == [t for *_, t in expected]
    book = openpyxl.load_workbook(io.BytesIO(export(admin, sample, "xlsx", body).data), read_only=True)
    sheet = list(book["Query result"].iter_rows(values_only=True))
    assert sheet[0] == ("ID", "Product", "Total")
    assert sheet[1:] == [(i, t, total) for i, _, total, t in expected]
    # the api format is the ordinary result: every column
    api = admin.post("/api/dataset/api", json={"query": body}).json
    assert [c["name"] for c in api["data"]["cols"]] == ["ID", "PRODUCT_ID", "TOTAL", "TITLE"]


def test_exports_show_internal_remaps_in_place(admin, sample):
    name_ratings(admin, sample)
    body = mbql(sample, "REVIEWS", {"fields": [ref(sample, "REVIEWS", "RATING"), ref(sample, "REVIEWS", "ID")],
                                    "order-by": [["asc", ref(sample, "REVIEWS", "ID")]]})
    rows = list(csv.reader(io.StringIO(export(admin, sample, "csv", body).get_data(as_text=True))))
    expected = sample_sql(sample, "SELECT RATING, ID FROM REVIEWS ORDER BY ID")
    assert rows[0] == ["Rating label", "ID"]
    assert rows[1:] == [[LABELS.get(r, ""), str(i)] for r, i in expected]


def block_table(app, db_id: int, table_ids: dict, blocked: str) -> None:
    """All Users keep view-data on every table of the database but `blocked` (rows set table by table)."""
    from sqlalchemy import delete

    from core.appdb.models import ALL_USERS_GROUP_ID, DataPermission

    with app.app_context(), app.extensions["tessera"].db.session() as session:
        session.execute(delete(DataPermission).where(
            DataPermission.db_id == db_id, DataPermission.group_id == ALL_USERS_GROUP_ID,
            DataPermission.perm_type == "view-data"))
        session.add_all([DataPermission(group_id=ALL_USERS_GROUP_ID, db_id=db_id, table_id=table_id,
                                        perm_type="view-data",
                                        perm_value="blocked" if name == blocked else "unrestricted")
                         for name, table_id in table_ids.items()])


def test_a_remap_into_a_blocked_table_is_left_out(app, admin, sample):
    """The remap's target lives in another table: a user who may not see that table gets the plain
    column (no title column, no title value), and the remapping route answers 403."""
    from core.testing import make_user

    remap_product_to_title(admin, sample)
    block_table(app, sample["db"], sample["tables"], "PRODUCTS")
    user = make_user(app)
    body = mbql(sample, "ORDERS", {"fields": [ref(sample, "ORDERS", "ID"), ref(sample, "ORDERS", "PRODUCT_ID")],
                                   "order-by": [["asc", ref(sample, "ORDERS", "ID")]], "limit": 5})
    titles = [row[3] for row in sample_sql(sample, TITLES + " ORDER BY o.ID LIMIT 5")]
    data = run(user, body)
    assert names(data) == [("ID", "ID", None, None), ("PRODUCT_ID", "Product ID", None, None)]
    assert "PRODUCTS" not in data["native_form"]["query"]
    assert [c["name"] for c in run(admin, body)["cols"]] == ["ID", "PRODUCT_ID", "TITLE"]
    path = f"/api/field/{fid(sample, 'ORDERS', 'PRODUCT_ID')}/remapping/{fid(sample, 'PRODUCTS', 'TITLE')}?value=1"
    refused = user.get(path)
    assert refused.status_code == 403
    assert not any(title.encode() in refused.get_data() for title in titles)
    assert admin.get(path).status_code == 200
