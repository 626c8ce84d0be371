"""The expression editor's routes over HTTP (plugins/app/expressions_views.py) on the Sample Database:
the MBQL a valid expression becomes runs through POST /api/dataset with the values plain SQL on the
same file gives; errors come back with the wrong part marked; suggestions name the query's columns,
FK targets and joins; the API's own refusal of a clause is shown; bad requests are 4xx; a user who
may not read the table is offered nothing of it."""
from __future__ import annotations

import base64
import datetime as dt
import html
import json
import re
import shutil
import sqlite3

import pytest

from core.testing import USER_PASSWORD, make_user, setup_admin, wait_for_sync
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.support import module_app

BASE = "/question/notebook/expression"


def ok(response):
    assert response.status_code in (200, 202), response.json
    return response.json


class Sample:
    def __init__(self, app, admin, db, tables, fields, file):
        self.app, self.admin, self.db, self.tables, self.fields, self.file = app, admin, db, tables, fields, file

    def query(self, table="ORDERS", **inner) -> dict:
        return {"database": self.db, "type": "query", "query": {"source-table": self.tables[table], **inner}}

    def sql(self, statement: str) -> list[tuple]:
        conn = sqlite3.connect(self.file)
        try:
            return conn.execute(statement).fetchall()
        finally:
            conn.close()


@pytest.fixture(scope="module")
def sample(tmp_path_factory, app_db_template, sample_database_template):
    from core.sync.sample_data import FILE_NAME, directory

    data_dir = tmp_path_factory.mktemp("expressions")
    app = module_app(data_dir, app_db_template)
    directory(data_dir).mkdir(parents=True, exist_ok=True)
    shutil.copy(sample_database_template, directory(data_dir) / FILE_NAME)
    admin = setup_admin(app)
    db = ok(admin.post("/api/database/sample_database"))["id"]
    wait_for_sync(app)
    tables = {t["name"]: t for t in ok(admin.get(f"/api/database/{db}/metadata"))["tables"]}
    fields = {(t, f["name"]): f["id"] for t, table in tables.items() for f in table["fields"]}
    yield Sample(app, admin, db, {name: t["id"] for name, t in tables.items()}, fields,
                 str(directory(data_dir) / FILE_NAME))
    app.extensions["tessera"].db.dispose()


@pytest.fixture(scope="module")
def browser_client(sample):
    return sign_in(sample.app)


def b64(query: dict) -> str:
    return base64.b64encode(json.dumps(query).encode()).decode()


def validate(client, query: dict, kind: str, expression: str, **extra):
    return client.post(f"{BASE}/validate", json={"q": b64(query), "kind": kind, "text": expression,
                                                  "field": "clause", **extra}, headers=HTMX)


def clause_of(response):
    """The MBQL the validate fragment holds in its hidden input (None when it shows an error)."""
    body = text(response)
    assert response.status_code == 200, body
    found = re.search(r'<input type="hidden" name="clause" value="([^"]*)"', body)
    return json.loads(html.unescape(found.group(1))) if found else None


def error_of(response) -> tuple[str, str]:
    """The message and the marked part of a validate fragment that shows an error."""
    body = text(response)
    assert response.status_code == 200, body
    message = re.search(r'<p class="expression-error" role="alert">(.*?)</p>', body, re.S)
    marked = re.search(r"<mark>(.*?)</mark>", body, re.S)
    assert message and marked, body
    return html.unescape(message.group(1)), html.unescape(marked.group(1))


def rows(sample, query: dict) -> list[list]:
    answer = ok(sample.admin.post("/api/dataset", json=query))
    assert answer["status"] == "completed", answer.get("error")
    return answer["data"]["rows"]


def close(a, b) -> bool:
    return a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) < 1e-6)


def same(got: list, want: list) -> None:
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert all(close(x, y) for x, y in zip(g, w)), (g, w)


CUSTOM_COLUMNS = [
    # (expression, SQL of the same column over ORDERS o joined to PRODUCTS p, exact MBQL with ids filled)
    ("[Total] - [Tax]", "o.TOTAL - o.TAX", lambda f: ["-", f("ORDERS", "TOTAL"), f("ORDERS", "TAX")]),
    ('case([Total] > 50, "big", "small")', "CASE WHEN o.TOTAL > 50 THEN 'big' ELSE 'small' END",
     lambda f: ["case", [[[">", f("ORDERS", "TOTAL"), 50], "big"]], {"default": "small"}]),
    ('concat([Product → Category], ": ", [Product → Title])', "p.CATEGORY || ': ' || p.TITLE",
     lambda f: ["concat", f("PRODUCTS", "CATEGORY", {"source-field": f("ORDERS", "PRODUCT_ID")[1]}), ": ",
                f("PRODUCTS", "TITLE", {"source-field": f("ORDERS", "PRODUCT_ID")[1]})]),
    ("round([Total] * 100) / 100", "ROUND(o.TOTAL * 100) / 100.0",
     lambda f: ["/", ["round", ["*", f("ORDERS", "TOTAL"), 100]], 100]),
    ("coalesce([Discount], 0) + 1", "COALESCE(o.DISCOUNT, 0) + 1",
     lambda f: ["+", ["coalesce", f("ORDERS", "DISCOUNT"), 0], 1]),
    ("-[Quantity] * 2", "-o.QUANTITY * 2", lambda f: ["*", ["-", 0, f("ORDERS", "QUANTITY")], 2]),
    ('upper(substring([Product → Vendor], 1, 3))', "UPPER(SUBSTR(p.VENDOR, 1, 3))",
     lambda f: ["upper", ["substring", f("PRODUCTS", "VENDOR", {"source-field": f("ORDERS", "PRODUCT_ID")[1]}), 1, 3]]),
    ("length([Product → Title])", "LENGTH(p.TITLE)",
     lambda f: ["length", f("PRODUCTS", "TITLE", {"source-field": f("ORDERS", "PRODUCT_ID")[1]})]),
    ("year([Created At])", "CAST(strftime('%Y', o.CREATED_AT) AS INTEGER)",
     lambda f: ["get-year", f("ORDERS", "CREATED_AT")]),
]


def refs(sample):
    def f(table, name, opts=None):
        return ["field", sample.fields[(table, name)], opts]
    return f


@pytest.mark.parametrize(("expression", "sql", "mbql"), CUSTOM_COLUMNS, ids=[c[0] for c in CUSTOM_COLUMNS])
def test_a_custom_column_runs_with_the_values_sql_gives(sample, browser_client, expression, sql, mbql):
    base = sample.query()
    clause = clause_of(validate(browser_client, base, "expression", expression))
    assert clause == mbql(refs(sample))
    query = sample.query(expressions={"Formula": clause},
                         fields=[["field", sample.fields[("ORDERS", "ID")], None], ["expression", "Formula"]],
                         **{"order-by": [["asc", ["field", sample.fields[("ORDERS", "ID")], None]]]}, limit=20)
    want = sample.sql(f"SELECT o.ID, {sql} FROM ORDERS o JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID ORDER BY o.ID LIMIT 20")
    same(rows(sample, query), [list(r) for r in want])


def test_a_date_moved_a_month_runs(sample, browser_client):
    clause = clause_of(validate(browser_client, sample.query(), "expression", 'datetimeAdd([Created At], 1, "month")'))
    assert clause == ["datetime-add", ["field", sample.fields[("ORDERS", "CREATED_AT")], None], 1, "month"]
    order_id = ["field", sample.fields[("ORDERS", "ID")], None]
    query = sample.query(expressions={"Later": clause},
                         fields=[["field", sample.fields[("ORDERS", "CREATED_AT")], None], ["expression", "Later"]],
                         **{"order-by": [["asc", order_id]]}, limit=10)
    for created, later in rows(sample, query):
        a, b = dt.datetime.fromisoformat(created[:19]), dt.datetime.fromisoformat(later[:19])
        assert (b.year * 12 + b.month) - (a.year * 12 + a.month) == 1 and b.time() == a.time()


def test_a_custom_aggregation_runs_by_a_breakout(sample, browser_client):
    clause = clause_of(validate(browser_client, sample.query(), "aggregation", "Sum([Total]) / Count"))
    total = ["field", sample.fields[("ORDERS", "TOTAL")], None]
    assert clause == ["/", ["sum", total], ["count"]]
    category = ["field", sample.fields[("PRODUCTS", "CATEGORY")], {"source-field": sample.fields[("ORDERS", "PRODUCT_ID")]}]
    big = clause_of(validate(browser_client, sample.query(), "aggregation", "CountIf([Total] > 50)"))
    query = sample.query(aggregation=[clause, big], breakout=[category],
                         **{"order-by": [["asc", category]]})
    want = sample.sql("SELECT p.CATEGORY, SUM(o.TOTAL) * 1.0 / COUNT(*), SUM(CASE WHEN o.TOTAL > 50 THEN 1 ELSE 0 END) "
                      "FROM ORDERS o JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID GROUP BY p.CATEGORY ORDER BY p.CATEGORY")
    same(rows(sample, query), [list(r) for r in want])


FILTERS = [
    ('contains([Product → Category], "adg") AND NOT isNull([Discount])',
     "p.CATEGORY LIKE '%adg%' AND o.DISCOUNT IS NOT NULL"),
    ('contains([Product → Category], "WIDG", "case-insensitive")', "lower(p.CATEGORY) LIKE '%widg%'"),
    ("[Total] > 100 OR [Tax] < 1", "o.TOTAL > 100 OR o.TAX < 1"),
    ("NOT ([Total] > 100 OR [Tax] < 1)", "NOT (o.TOTAL > 100 OR o.TAX < 1)"),
    ("between([Total], 10, 20)", "o.TOTAL BETWEEN 10 AND 20"),
    ('in([Product → Category], "Widget", "Gadget")', "p.CATEGORY IN ('Widget', 'Gadget')"),
    ('startsWith([Product → Title], "Small") and [Quantity] >= 3', "p.TITLE LIKE 'Small%' AND o.QUANTITY >= 3"),
    ("[Total] - [Tax] > [Subtotal]", "o.TOTAL - o.TAX > o.SUBTOTAL"),
]


@pytest.mark.parametrize(("expression", "sql"), FILTERS, ids=[f[0] for f in FILTERS])
def test_a_custom_filter_keeps_the_rows_sql_keeps(sample, browser_client, expression, sql):
    clause = clause_of(validate(browser_client, sample.query(), "filter", expression))
    assert clause is not None
    query = sample.query(filter=clause, aggregation=[["count"]])
    want = sample.sql(f"SELECT COUNT(*) FROM ORDERS o JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID WHERE {sql}")
    assert rows(sample, query) == [[want[0][0]]]
    assert 0 < want[0][0] < 18760  # the filter keeps some rows and not all


def test_joined_columns_and_custom_columns_of_the_query_can_be_named(sample, browser_client):
    joined = {"alias": "Products", "source-table": sample.tables["PRODUCTS"], "fields": "all",
              "condition": ["=", ["field", sample.fields[("ORDERS", "PRODUCT_ID")], None],
                            ["field", sample.fields[("PRODUCTS", "ID")], {"join-alias": "Products"}]]}
    base = sample.query(joins=[joined], expressions={"Net": ["-", ["field", sample.fields[("ORDERS", "TOTAL")], None],
                                                             ["field", sample.fields[("ORDERS", "TAX")], None]]})
    clause = clause_of(validate(browser_client, base, "expression", "[Net] / [Products → Price]"))
    assert clause == ["/", ["expression", "Net"], ["field", sample.fields[("PRODUCTS", "PRICE")], {"join-alias": "Products"}]]
    order_id = ["field", sample.fields[("ORDERS", "ID")], None]
    query = {**base, "query": {**base["query"], "expressions": {**base["query"]["expressions"], "Ratio": clause},
                               "fields": [order_id, ["expression", "Ratio"]], "order-by": [["asc", order_id]], "limit": 5}}
    want = sample.sql("SELECT o.ID, (o.TOTAL - o.TAX) * 1.0 / p.PRICE FROM ORDERS o JOIN PRODUCTS p "
                      "ON p.ID = o.PRODUCT_ID ORDER BY o.ID LIMIT 5")
    same(rows(sample, query), [list(r) for r in want])
    # A custom column is not offered to itself while it is edited.
    message, marked = error_of(validate(browser_client, base, "expression", "[Net] + 1", name="Net"))
    assert "Unknown column [Net]" in message and marked == "[Net]"


def test_an_error_is_shown_with_its_place_marked(sample, browser_client):
    response = validate(browser_client, sample.query(), "expression", "[Total] + [Taxes] * 2")
    message, marked = error_of(response)
    assert message == "Unknown column [Taxes]. Did you mean [Tax]?" and marked == "[Taxes]"
    assert 'name="clause"' not in text(response)
    assert "<code>[Total] + <mark>[Taxes]</mark> * 2</code>" in text(response)
    message, marked = error_of(validate(browser_client, sample.query(), "filter", "Sum([Total]) > 1"))
    assert "aggregation" in message and marked == "Sum([Total])"
    message, marked = error_of(validate(browser_client, sample.query(), "expression", "concat([Total]"))
    assert "closing parenthesis" in message and marked == "concat("
    # The columns' types come from the API: a sum of text is refused where it is written.
    message, marked = error_of(validate(browser_client, sample.query(), "aggregation", "Sum([Product → Category])"))
    assert message == "Sum expects a number, but this is text." and marked == "[Product → Category]"
    # Nothing typed: nothing to say, and no clause.
    assert text(validate(browser_client, sample.query(), "expression", "  ")).strip() == ""


def test_the_apis_refusal_of_a_well_formed_clause_is_shown(sample, browser_client):
    message, marked = error_of(validate(browser_client, sample.query(), "expression", 'datetime([Total], "simpleBytes")'))
    assert "simple-bytes" in message and marked == 'datetime([Total], "simpleBytes")'


def options(response) -> list[dict]:
    body = text(response)
    assert response.status_code == 200, body
    found = []
    for match in re.finditer(r'<li role="option"[^>]*data-insert="([^"]*)" data-start="(\d+)" data-end="(\d+)">'
                             r'\s*<span class="suggestion-label">(.*?)</span>', body, re.S):
        found.append({"insert": html.unescape(match.group(1)), "start": int(match.group(2)),
                      "end": int(match.group(3)), "label": html.unescape(match.group(4))})
    return found


def complete(client, query, kind, expression, cursor=None):
    return client.post(f"{BASE}/complete", json={"q": b64(query), "kind": kind, "text": expression,
                                                  "cursor": str(len(expression) if cursor is None else cursor),
                                                  "id": "formula"}, headers=HTMX)


def test_suggestions_name_functions_with_signatures_and_the_querys_columns(sample, browser_client):
    found = options(complete(browser_client, sample.query(), "aggregation", "Su"))
    assert found[0] == {"insert": "Sum(", "start": 0, "end": 2, "label": "Sum(value)"}
    found = options(complete(browser_client, sample.query(), "expression", "[Total] - [cat"))
    assert [f["label"] for f in found] == ["Product → Category"]
    assert found[0]["insert"] == "[Product → Category]" and (found[0]["start"], found[0]["end"]) == (10, 14)
    assert options(complete(browser_client, sample.query(), "expression", "[Total] ")) == []
    response = complete(browser_client, sample.query(), "aggregation", "Su")
    assert "The sum of a numeric value" in text(response) and 'id="formula-option-1"' in text(response)


def test_the_editor_fragment_is_a_labelled_combobox_that_checks_itself(sample, browser_client):
    response = browser_client.get(f"{BASE}/editor", query_string={
        "q": b64(sample.query()), "kind": "filter", "id": "where", "label": "Condition", "field": "where",
        "text": "[Total] > 50"}, headers=HTMX)
    body = text(response)
    assert response.status_code == 200, body
    assert '<label for="where">Condition</label>' in body
    assert 'role="combobox"' in body and 'aria-controls="where-list"' in body and 'value="[Total] &gt; 50"' in body
    assert 'hx-post="/question/notebook/expression/validate"' in body and 'hx-target="#where-result"' in body
    assert 'role="listbox"' in body
    # The input's own field name carries the text to the check.
    clause = clause_of(browser_client.post(f"{BASE}/validate", json={
        "q": b64(sample.query()), "kind": "filter", "field": "clause", "clause_text": "[Total] > 50"}, headers=HTMX))
    assert clause == [">", ["field", sample.fields[("ORDERS", "TOTAL")], None], 50]


@pytest.mark.parametrize(("params", "routes"), [
    ({}, ("validate", "complete", "editor")),
    ({"q": "not base64!"}, ("validate", "complete", "editor")),
    ({"q": b64({"database": 1, "type": "query", "query": {}}), "kind": "window"}, ("validate", "complete", "editor")),
    # The editor itself reads no columns: only its checks find that a native query has none.
    ({"q": b64({"database": 1, "type": "native", "native": {"query": "select 1"}})}, ("validate", "complete")),
    ({"q": b64({"database": 1, "type": "query", "query": {"source-table": 1}}), "field": "bad name"},
     ("validate", "complete", "editor")),
    ({"q": b64({"database": 1, "type": "query", "query": {"source-table": 1}}), "text": "x" * 10_001},
     ("validate", "complete", "editor")),
    ({"q": b64({"database": 1, "type": "query", "query": {"source-table": 1, "expressions": [1]}})},
     ("validate", "complete")),
    ({"q": b64({"database": 1, "type": "query", "query": {"source-table": 1, "joins": {"a": 1}}})},
     ("validate", "complete")),
    ({"q": b64({"database": 1, "type": "query", "query": {"source-table": "card__x"}})}, ("validate", "complete")),
    ({"q": b64({"database": 1, "type": "query", "query": {"source-table": 999999}})}, ("validate", "complete")),
])
def test_bad_requests_are_4xx_fragments(sample, browser_client, params, routes):
    for route in routes:
        if route == "editor":
            response = browser_client.get(f"{BASE}/{route}", query_string={"text": "1", **params}, headers=HTMX)
        else:
            response = browser_client.post(f"{BASE}/{route}", json={"text": "1", **params}, headers=HTMX)
        assert 400 <= response.status_code < 500, (route, params, text(response))
        assert 'class="form-error"' in text(response)
    response = browser_client.post(f"{BASE}/complete", json={"q": b64(sample.query()), "text": "a", "cursor": "x"},
                                   headers=HTMX)
    assert response.status_code == 400
    # The cookie alone with a body that is not JSON: the API's cross-site rule refuses it.
    response = browser_client.post(f"{BASE}/validate", data={"q": b64(sample.query()), "text": "1"}, headers=HTMX)
    assert response.status_code == 403


def test_a_table_the_user_may_not_read_offers_nothing(sample):
    from core.appdb.models import ALL_USERS_GROUP_ID

    make_user(sample.app, email="nodata@example.com")
    graph = ok(sample.admin.get("/api/permissions/graph"))
    graph["groups"][str(ALL_USERS_GROUP_ID)][str(sample.db)] = {"view-data": "blocked", "create-queries": "no"}
    ok(sample.admin.put("/api/permissions/graph", json=graph))
    try:
        client = sign_in(sample.app, "nodata@example.com", USER_PASSWORD)
        response = validate(client, sample.query(), "expression", "[Total] - [Tax]")
        assert response.status_code == 403 and 'class="form-error"' in text(response)
        assert "Total" not in text(complete(client, sample.query(), "expression", "To"))
    finally:
        graph = ok(sample.admin.get("/api/permissions/graph"))
        graph["groups"][str(ALL_USERS_GROUP_ID)][str(sample.db)] = {"view-data": "unrestricted",
                                                                     "create-queries": "query-builder-and-native"}
        ok(sample.admin.put("/api/permissions/graph", json=graph))


def test_someone_not_signed_in_is_sent_to_sign_in(sample):
    response = sample.app.test_client().post(f"{BASE}/validate", json={"q": b64(sample.query()), "text": "1"})
    assert response.status_code in (302, 303) and "/auth/login" in response.headers["Location"]


def test_a_query_on_a_summary_offers_the_summarys_columns(sample, browser_client):
    category = ["field", sample.fields[("PRODUCTS", "CATEGORY")], {"source-field": sample.fields[("ORDERS", "PRODUCT_ID")]}]
    summary = {"source-table": sample.tables["ORDERS"], "aggregation": [["count"]], "breakout": [category]}
    nested = {"database": sample.db, "type": "query", "query": {"source-query": summary}}
    names = [o["label"] for o in options(complete(browser_client, nested, "expression", "[", 1))]
    assert names == ["Count", "Product → Category"]  # a related table's columns after the own ones
    clause = clause_of(validate(browser_client, nested, "expression", "[Count] * 2"))
    assert clause == ["*", ["field", "count", {"base-type": "type/BigInteger"}], 2]
    query = {**nested, "query": {**nested["query"], "expressions": {"Twice": clause},
                                 "order-by": [["asc", ["field", "CATEGORY", {"base-type": "type/Text"}]]]}}
    want = sample.sql("SELECT p.CATEGORY, COUNT(*), COUNT(*) * 2 FROM ORDERS o JOIN PRODUCTS p ON p.ID = o.PRODUCT_ID "
                      "GROUP BY p.CATEGORY ORDER BY p.CATEGORY")
    same(rows(sample, query), [list(r) for r in want])


def test_the_editor_shows_an_existing_clause_as_its_text(sample, browser_client):
    product = sample.fields[("ORDERS", "PRODUCT_ID")]
    clause = ["and", ["contains", ["field", sample.fields[("PRODUCTS", "CATEGORY")], {"source-field": product}], "adg"],
              ["not", ["is-null", ["field", sample.fields[("ORDERS", "DISCOUNT")], None]]]]
    response = browser_client.get(f"{BASE}/editor", query_string={
        "q": b64(sample.query()), "kind": "filter", "id": "where", "clause": json.dumps(clause)}, headers=HTMX)
    assert response.status_code == 200, text(response)
    shown = html.unescape(re.search(r'id="where" type="text" name="expression_text" value="([^"]*)"', text(response)).group(1))
    assert shown == 'contains([Product → Category], "adg") AND NOT isNull([Discount])'
    assert clause_of(validate(browser_client, sample.query(), "filter", shown)) == clause
    for bad in ("not json", json.dumps(["field", 999999, None])):
        response = browser_client.get(f"{BASE}/editor", query_string={"q": b64(sample.query()), "clause": bad},
                                      headers=HTMX)
        assert response.status_code == 400 and 'class="form-error"' in text(response)


def test_an_offset_runs_over_the_summarys_rows(sample, browser_client):
    text_ = "Sum([Total]) - Offset(Sum([Total]), -1)"
    # Without a breakout there are no rows to look back on: the API's refusal is shown.
    message, marked = error_of(validate(browser_client, sample.query(), "aggregation", text_))
    assert message == "offset needs breakouts or an order-by in the query." and marked == text_
    total = ["field", sample.fields[("ORDERS", "TOTAL")], None]
    year = ["field", sample.fields[("ORDERS", "CREATED_AT")], {"temporal-unit": "year"}]
    by_year = sample.query(aggregation=[["sum", total]], breakout=[year])
    clause = clause_of(validate(browser_client, by_year, "aggregation", text_))
    assert clause == ["-", ["sum", total], ["offset", {}, ["sum", total], -1]]
    got = rows(sample, sample.query(aggregation=[["sum", total], clause], breakout=[year]))
    sums = [row[1] for row in got]
    assert got[0][2] is None and len(got) > 2
    assert all(close(row[2], sums[i] - sums[i - 1]) for i, row in enumerate(got) if i)


def test_a_segment_is_a_condition_of_filters_and_summaries(sample, browser_client):
    total = ["field", sample.fields[("ORDERS", "TOTAL")], None]
    segment = ok(sample.admin.post("/api/segment", json={
        "name": "Big orders", "table_id": sample.tables["ORDERS"], "description": "Over 100",
        "definition": {"source-table": sample.tables["ORDERS"], "filter": [">", total, 100]}}))["id"]
    try:
        counted = clause_of(validate(browser_client, sample.query(), "aggregation", "CountIf([Big orders])"))
        assert counted == ["count-where", ["segment", segment]]
        kept = clause_of(validate(browser_client, sample.query(), "filter", "[Big orders] AND [Tax] > 5"))
        assert kept == ["and", ["segment", segment], [">", ["field", sample.fields[("ORDERS", "TAX")], None], 5]]
        want_all = sample.sql("SELECT COUNT(*) FROM ORDERS WHERE TOTAL > 100")[0][0]
        want_both = sample.sql("SELECT COUNT(*) FROM ORDERS WHERE TOTAL > 100 AND TAX > 5")[0][0]
        assert rows(sample, sample.query(aggregation=[counted])) == [[want_all]]
        assert rows(sample, sample.query(filter=kept, aggregation=[["count"]])) == [[want_both]]
        # Not a column of a custom column.
        message, _ = error_of(validate(browser_client, sample.query(), "expression", "[Big orders]"))
        assert message.startswith("Unknown column [Big orders]")
    finally:
        sample.admin.delete(f"/api/segment/{segment}")


def test_a_metric_is_an_aggregation_of_a_summary(sample, browser_client):
    total = ["field", sample.fields[("ORDERS", "TOTAL")], None]
    metric = ok(sample.admin.post("/api/card", json={
        "name": "Revenue", "type": "metric", "display": "scalar", "visualization_settings": {},
        "dataset_query": sample.query(aggregation=[["sum", total]])}))["id"]
    clause = clause_of(validate(browser_client, sample.query(), "aggregation", "[Revenue] / Count"))
    assert clause == ["/", ["metric", metric], ["count"]]
    want = sample.sql("SELECT SUM(TOTAL) * 1.0 / COUNT(*) FROM ORDERS")
    same(rows(sample, sample.query(aggregation=[clause])), [list(want[0])])
    message, marked = error_of(validate(browser_client, sample.query(), "aggregation", "Sum([Revenue])"))
    assert "do not nest" in message and marked == "[Revenue]"
