"""Pivoted downloads (pivot_results) through POST /api/dataset/:export-format and
POST /api/card/:id/query/:export-format, over the Sample Database."""
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
    metadata = admin.get(f"/api/database/{db_id}/metadata").json
    tables = {t["name"]: t for t in metadata["tables"]}
    fields = {f"{t}.{f['name']}": f["id"] for t in tables for f in tables[t]["fields"]}
    return {"db": db_id, "orders": tables["ORDERS"]["id"], "fields": fields, "file": str(sample_database_file)}


def pivot_query(sample, aggregation=None):
    f = sample["fields"]
    return {"database": sample["db"], "type": "query", "query": {
        "source-table": sample["orders"],
        "aggregation": aggregation or [["count"], ["sum", ["field", f["ORDERS.TOTAL"], None]]],
        "breakout": [["field", f["PRODUCTS.CATEGORY"], {"source-field": f["ORDERS.PRODUCT_ID"]}],
                     ["field", f["ORDERS.CREATED_AT"], {"temporal-unit": "year"}]]}}


SPLIT = {"rows": ["CATEGORY"], "columns": ["CREATED_AT"], "values": ["count", "sum"]}


JOINED = "FROM ORDERS o JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID"
YEAR = "strftime('%Y', o.CREATED_AT)"


def expected_counts_and_sums(sample):
    """The same numbers by plain GROUP BYs on the file: cells, row totals, column totals, grand total."""
    cells = sample_sql(sample, f"SELECT p.CATEGORY, {YEAR}, count(*), sum(o.TOTAL) {JOINED} GROUP BY 1, 2 ORDER BY 1, 2")
    by_category = {c: (n, s) for c, n, s in sample_sql(sample, f"SELECT p.CATEGORY, count(*), sum(o.TOTAL) {JOINED} GROUP BY 1")}
    by_year = {y: (n, s) for y, n, s in sample_sql(sample, f"SELECT {YEAR}, count(*), sum(o.TOTAL) {JOINED} GROUP BY 1")}
    total = sample_sql(sample, f"SELECT count(*), sum(o.TOTAL) {JOINED}")[0]
    years: list[str] = []
    for _, year, _, _ in cells:  # column order: first appearance in rows ordered by the breakouts
        if year not in years:
            years.append(year)
    categories = sorted(by_category)
    return {(c, y): (n, s) for c, y, n, s in cells}, by_category, by_year, total, years, categories


def read_csv(response) -> list[list[str]]:
    assert response.status_code == 200, response.get_data(as_text=True)
    return list(csv.reader(io.StringIO(response.get_data(as_text=True))))


def assert_numbers(cells: list, expected: list) -> None:
    """Counts exactly; sums to float precision (the engine adds in its own order)."""
    assert len(cells) == len(expected), (cells, expected)
    for cell, want in zip(cells, expected):
        if want is None:
            assert cell in ("", None), (cells, expected)
        elif isinstance(want, int):
            assert int(cell) == want, (cells, expected)
        else:
            assert float(cell) == pytest.approx(want, rel=1e-9), (cells, expected)


def test_dataset_csv_pivot_with_two_measures_and_totals(admin, sample):
    cells, by_category, by_year, total, years, categories = expected_counts_and_sums(sample)
    assert len(years) == 5 and categories == ["Doohickey", "Gadget", "Gizmo", "Widget"]
    body = {"query": pivot_query(sample), "pivot_results": True,
            "visualization_settings": {"pivot_table.column_split": SPLIT}}
    rows = read_csv(admin.post("/api/dataset/csv", json=body))
    # Two measures: a row of year values (each over its two measures), then titles and measure names.
    assert rows[0] == [""] + [f"{y}-01-01" for y in years for _ in (1, 2)] + ["Row totals", "Row totals"]
    assert rows[1] == ["Product → Category"] + ["Count", "Sum of Total"] * (len(years) + 1)
    assert [r[0] for r in rows[2:]] == categories + ["Grand totals"]
    for line, category in zip(rows[2:], categories):
        want = []
        for year in years:
            want.extend(cells.get((category, year), (None, None)))
        assert_numbers(line[1:], want + list(by_category[category]))
    grand = [v for year in years for v in by_year[year]] + list(total)
    assert_numbers(rows[-1][1:], grand)


def test_card_csv_pivot_subtotals_and_settings(admin, sample):
    """Two row breakouts: "Totals for" rows after groups of more than one (condensed otherwise)."""
    f = sample["fields"]
    query = pivot_query(sample, [["count"]])
    query["query"]["breakout"][1] = ["field", f["PRODUCTS.VENDOR"], {"source-field": f["ORDERS.PRODUCT_ID"]}]
    query["query"]["breakout"].append(["field", f["ORDERS.CREATED_AT"], {"temporal-unit": "year"}])
    query["query"]["filter"] = ["<", ["field", f["ORDERS.PRODUCT_ID"], None], 8]
    split = {"rows": ["CATEGORY", "VENDOR"], "columns": ["CREATED_AT"], "values": ["count"]}
    card = admin.post("/api/card", json={"name": "Pivot", "display": "pivot", "dataset_query": query,
                                          "visualization_settings": {"pivot_table.column_split": split}}).json
    rows = read_csv(admin.post(f"/api/card/{card['id']}/query/csv", json={"pivot_results": True}))

    where = "WHERE o.PRODUCT_ID < 8"
    cells = sample_sql(sample, f"SELECT p.CATEGORY, p.VENDOR, {YEAR}, count(*) {JOINED} {where} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3")
    years: list[str] = []
    for *_, year, _ in cells:
        if year not in years:
            years.append(year)
    counts = {(c, v, y): n for c, v, y, n in cells}
    vendors = {(c, v): n for c, v, n in sample_sql(sample, f"SELECT p.CATEGORY, p.VENDOR, count(*) {JOINED} {where} GROUP BY 1, 2")}
    category_year = {(c, y): n for c, y, n in sample_sql(sample, f"SELECT p.CATEGORY, {YEAR}, count(*) {JOINED} {where} GROUP BY 1, 2")}
    categories = {c: n for c, n in sample_sql(sample, f"SELECT p.CATEGORY, count(*) {JOINED} {where} GROUP BY 1")}
    years_total = {y: n for y, n in sample_sql(sample, f"SELECT {YEAR}, count(*) {JOINED} {where} GROUP BY 1")}
    total = sample_sql(sample, f"SELECT count(*) {JOINED} {where}")[0][0]

    expected = [["Product → Category", "Product → Vendor"] + [f"{y}-01-01" for y in years] + ["Row totals"]]
    for category in sorted(categories):
        group = sorted(v for c, v in vendors if c == category)
        for vendor in group:
            expected.append([category, vendor] + [str(counts.get((category, vendor, y), "")) for y in years]
                            + [str(vendors[(category, vendor)])])
        if len(group) > 1:
            expected.append([f"Totals for {category}", ""] + [str(category_year.get((category, y), "")) for y in years]
                            + [str(categories[category])])
    expected.append(["Grand totals", ""] + [str(years_total[y]) for y in years] + [str(total)])
    assert any(line[0].startswith("Totals for") for line in expected)  # the data really has subtotals
    assert rows == expected

    # No totals asked: neither the row totals column nor the totals rows.
    admin.put(f"/api/card/{card['id']}", json={"visualization_settings": {
        "pivot_table.column_split": split, "pivot.show_row_totals": False, "pivot.show_column_totals": False}})
    bare = read_csv(admin.post(f"/api/card/{card['id']}/query/csv", json={"pivot_results": True}))
    assert bare == [line[:-1] for line in expected if not line[0].startswith(("Totals for", "Grand totals"))]


def test_card_xlsx_pivot_is_a_flat_typed_sheet(admin, sample):
    cells, by_category, by_year, total, years, categories = expected_counts_and_sums(sample)
    split = {"rows": ["CATEGORY"], "columns": ["CREATED_AT"], "values": ["count"]}
    card = admin.post("/api/card", json={"name": "Pivot", "display": "pivot",
                                          "dataset_query": pivot_query(sample, [["count"]]),
                                          "visualization_settings": {"pivot_table.column_split": split}}).json
    response = admin.post(f"/api/card/{card['id']}/query/xlsx", json={"pivot_results": True})
    assert response.status_code == 200
    sheet = openpyxl.load_workbook(io.BytesIO(response.data), read_only=True)["Query result"]
    rows = [list(r) for r in sheet.iter_rows(values_only=True)]
    assert rows[0] == ["Product → Category"] + [f"{y}-01-01" for y in years] + ["Row totals"]
    for line, category in zip(rows[1:], categories):
        assert line == [category] + [cells.get((category, y), (None,))[0] for y in years] + [by_category[category][0]]
    assert rows[-1] == ["Grand totals"] + [by_year[y][0] for y in years] + [total[0]]
    assert len(rows) == 1 + len(categories) + 1


def test_format_rows_titles_and_labels(admin, sample):
    viz = {"pivot_table.column_split": {"rows": ["CATEGORY"], "columns": [], "values": ["sum", "count"]},
           "column_settings": {'["name","count"]': {"column_title": "Orders"}}}
    query = pivot_query(sample)
    del query["query"]["breakout"][1]
    body = {"query": query, "pivot_results": True, "visualization_settings": viz}
    _, by_category, _, total, _, categories = expected_counts_and_sums(sample)
    plain = read_csv(admin.post("/api/dataset/csv", json=body))
    # No column breakout: one header row, measures in the split's order, display names unformatted.
    assert plain[0] == ["Product → Category", "Sum of Total", "Count"]
    assert [line[0] for line in plain[1:]] == categories + ["Grand totals"]
    assert_numbers(plain[-1][1:], [total[1], total[0]])
    formatted = read_csv(admin.post("/api/dataset/csv", json={**body, "format_rows": True}))
    assert formatted[0] == ["Product → Category", "Sum of Total", "Orders"]
    count = by_category[categories[0]][0]
    assert formatted[1][2] == f"{count:,}" and "," in formatted[-1][2]


def test_json_stays_flat_and_non_pivots_are_unchanged(admin, sample):
    """Metabase writes json flat even with pivot_results; csv of a non-pivot stays as it was."""
    query = pivot_query(sample)
    viz = {"pivot_table.column_split": SPLIT}
    flat = admin.post("/api/dataset/json", json={"query": query})
    pivoted = admin.post("/api/dataset/json", json={"query": query, "pivot_results": True,
                                                    "visualization_settings": viz})
    assert pivoted.status_code == 200 and pivoted.json == flat.json
    assert set(flat.json[0]) == {"Product → Category", "Created At: Year", "Count", "Sum of Total"}

    flat_csv = admin.post("/api/dataset/csv", json={"query": query}).get_data()
    # pivot_results false, or no column split and no was-pivot: the ordinary download.
    for body in ({"query": query, "visualization_settings": viz},
                 {"query": query, "pivot_results": True},
                 {"query": query, "pivot_results": False, "visualization_settings": viz},
                 {"query": {**query, "was-pivot": True}, "visualization_settings": viz}):
        assert admin.post("/api/dataset/csv", json=body).get_data() == flat_csv
    card = admin.post("/api/card", json={"name": "Table", "display": "table", "dataset_query": query,
                                          "visualization_settings": viz}).json
    plain = admin.post(f"/api/card/{card['id']}/query/csv").get_data()
    assert admin.post(f"/api/card/{card['id']}/query/csv", json={"pivot_results": True}).get_data() == plain
    assert plain.decode().splitlines()[0] == "Product → Category,Created At: Year,Count,Sum of Total"


def test_was_pivot_uses_the_default_split(admin, sample):
    """An ad-hoc query marked was-pivot without a column split: every breakout a row."""
    _, by_category, _, total, _, _ = expected_counts_and_sums(sample)
    query = {**pivot_query(sample, [["count"]]), "was-pivot": True}
    rows = read_csv(admin.post("/api/dataset/csv", json={"query": query, "pivot_results": True}))
    assert rows[0] == ["Product → Category", "Created At: Year", "Count"]
    totals = {line[0]: line for line in rows if line[0].startswith("Totals for")}
    assert {k: int(v[2]) for k, v in totals.items()} == {f"Totals for {c}": n for c, (n, _) in by_category.items()}
    assert rows[-1] == ["Grand totals", "", str(total[0])]


def test_bad_pivot_settings(admin, sample):
    query = pivot_query(sample, [["count"]])
    # A column split that is not a map: 400.
    bad = admin.post("/api/dataset/csv", json={"query": query, "pivot_results": True,
                                               "visualization_settings": {"pivot_table.column_split": "rows"}})
    assert bad.status_code == 400 and "column_split" in json.dumps(bad.json)
    # Names that match no column are skipped (Metabase's rule): the default split remains.
    unknown = {"rows": ["NOPE", 42, ["field", 999999, None]], "columns": {"x": 1}, "values": ["nothing"]}
    rows = read_csv(admin.post("/api/dataset/csv", json={
        "query": query, "pivot_results": True, "visualization_settings": {"pivot_table.column_split": unknown}}))
    assert rows[0] == ["Product → Category", "Created At: Year", "Count"]
    # A query that cannot be pivoted (no aggregation, native): the failed-query body, 400.
    raw = {"database": sample["db"], "type": "query", "query": {"source-table": sample["orders"]}}
    failed = admin.post("/api/dataset/csv", json={"query": raw, "pivot_results": True,
                                                  "visualization_settings": {"pivot_table.column_split": SPLIT}})
    assert failed.status_code == 400 and failed.json["status"] == "failed"
    native = admin.post("/api/card", json={
        "name": "Native pivot", "display": "pivot",
        "dataset_query": {"database": sample["db"], "type": "native", "native": {"query": "SELECT 1 AS x"}},
        "visualization_settings": {"pivot_table.column_split": "garbage"}}).json
    response = admin.post(f"/api/card/{native['id']}/query/csv", json={"pivot_results": True})
    assert response.status_code == 400 and response.json["status"] == "failed"
    assert admin.post(f"/api/card/{native['id']}/query/csv").status_code == 200


def test_column_split_by_refs(admin, sample):
    """Older cards store the split as field and aggregation refs rather than names."""
    f = sample["fields"]
    split = {"rows": [["field", f["PRODUCTS.CATEGORY"], {"source-field": f["ORDERS.PRODUCT_ID"]}]],
             "columns": [["field", f["ORDERS.CREATED_AT"], {"temporal-unit": "year"}]],
             "values": [["aggregation", 1], ["aggregation", 0]]}
    card = admin.post("/api/card", json={"name": "Refs", "display": "pivot", "dataset_query": pivot_query(sample),
                                          "visualization_settings": {"pivot_table.column_split": split}}).json
    rows = read_csv(admin.post(f"/api/card/{card['id']}/query/csv", json={"pivot_results": True}))
    _, _, _, total, years, _ = expected_counts_and_sums(sample)
    assert rows[1] == ["Product → Category"] + ["Sum of Total", "Count"] * (len(years) + 1)
    assert_numbers(rows[-1][-2:], [total[1], total[0]])
    # The pivot endpoint reads the same split.
    ran = admin.post(f"/api/card/pivot/{card['id']}/query")
    groupings = {row[2] for row in ran.json["data"]["rows"]}
    assert ran.status_code == 202 and groupings == {0, 1, 2, 3}
