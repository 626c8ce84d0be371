"""The question builder's custom expressions (plugins/app/notebook_expressions.py) through HTTP as a browser
sends its forms: a custom column, a custom aggregation and a custom filter give the MBQL a client posts (and
the API runs it with the same rows), a custom column is offered wherever the stage's columns are, editing
prints a clause back into the editor, renaming and removing take the clauses that read it along, and a bad
expression or a name clash is refused in its step with the editor's message, never a 500."""
from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlencode, urlparse

from tests.plugins.app import test_notebook_pages as pages
from tests.plugins.app.test_notebook_pages import (
    BASE,
    b64,
    change,
    field,
    js,
    options,
    refused,
    runs,
    shown,
    table_query,
    unb64,
)
from tests.plugins.app.test_pages import text

page, sample = pages.page, pages.sample  # the fixtures: a signed-in admin's browser, the Sample Database's ids


def net_column(page, sample, query=None) -> dict:
    """The custom column Net = [Total] - [Tax] added by its form (the editor's text)."""
    return change(page, query or table_query(sample, "ORDERS"), op="expression", stage=0, column_name="Net",
                  expression_text="[Total] - [Tax]")


def net(sample) -> list:
    orders = sample["ORDERS"]
    return ["-", field(orders["TOTAL"]), field(orders["TAX"])]


def test_a_custom_column_is_the_question_a_client_posts_and_runs_the_same(page, admin, sample):
    """Orders with Net = [Total] - [Tax], Net over 50, sum of Net by Product → Category and Created At: Month."""
    orders, products = sample["ORDERS"], sample["PRODUCTS"]
    query = net_column(page, sample)
    assert query == table_query(sample, "ORDERS", expressions={"Net": net(sample)})
    body = shown(page, query)
    # Net is offered by every step that lists columns, as ["expression", "Net"].
    net_ref = js(["expression", "Net"])
    assert (net_ref, "Net") in options(body, "filter-column-0")
    assert (net_ref, "Net") in options(body, "agg-column-0")
    assert (net_ref, "Net") in options(body, "group-column-0")
    assert (net_ref, "Net") in options(body, "sort-column-0")
    joining = shown(page, query, join_table=products["id"])  # a join matches the data's own columns
    assert (net_ref, "Net") not in options(joining, "join-left") and options(joining, "join-left")
    # Its filter widget is a number's.
    assert 'id="filter-value-0" type="number"' in shown(page, query, stage=0, filter_column=net_ref)
    query = change(page, query, op="filter", stage=0, column=net_ref, operator=">", value="50")
    query = change(page, query, op="aggregate", stage=0, operator="sum", column=net_ref)
    groupings = {label: v for v, label in options(shown(page, query), "group-column-0")}
    query = change(page, query, op="group", stage=0, column=groupings["Product → Category"])
    query = change(page, query, op="group", stage=0, column=groupings["Created At: Month"])
    client = {"database": sample["db"], "type": "query", "query": {
        "source-table": orders["id"],
        "expressions": {"Net": ["-", ["field", orders["TOTAL"], None], ["field", orders["TAX"], None]]},
        "filter": [">", ["expression", "Net"], 50],
        "aggregation": [["sum", ["expression", "Net"]]],
        "breakout": [["field", products["CATEGORY"], {"source-field": orders["PRODUCT_ID"]}],
                     ["field", orders["CREATED_AT"], {"temporal-unit": "month"}]]}}
    assert query == client
    body = html.unescape(shown(page, query))
    assert "Net is greater than 50" in body and "Sum of Net" in body
    # The builder's question and the client's run through POST /api/dataset with the same rows.
    built = runs(admin, query)["data"]
    assert built["rows"] == runs(admin, client)["data"]["rows"] and len(built["rows"]) > 20
    assert [c["name"] for c in built["cols"]] == ["CATEGORY", "CREATED_AT", "sum"]
    # A second stage reads Net's summary by name.
    assert "Sum of Net" in [label for _, label in options(shown(page, change(page, query, op="stage")), "filter-column-1")]


def test_a_custom_column_on_a_date_is_grouped_by_its_units(page, admin, sample):
    query = change(page, table_query(sample, "ORDERS"), op="expression", stage=0, column_name="Shipped",
                   expression_text="datetimeAdd([Created At], 3, \"day\")")
    groupings = {label: v for v, label in options(shown(page, query), "group-column-0")}
    assert groupings["Shipped: Month"] == js(["expression", "Shipped", {"temporal-unit": "month"}])
    query = change(page, query, op="aggregate", stage=0, operator="count")
    query = change(page, query, op="group", stage=0, column=groupings["Shipped: Month"])
    assert query["query"]["breakout"] == [["expression", "Shipped", {"temporal-unit": "month"}]]
    assert runs(admin, query)["data"]["rows"]


def test_custom_aggregation_and_custom_filter_are_metabases_mbql(page, admin, sample):
    orders = sample["ORDERS"]
    query = change(page, table_query(sample, "ORDERS"), op="custom-filter", stage=0,
                   condition_text='[Total] > 50 AND contains([Product → Category], "Gadget")')
    condition = ["and", [">", field(orders["TOTAL"]), 50],
                 ["contains", ["field", sample["PRODUCTS"]["CATEGORY"], {"source-field": orders["PRODUCT_ID"]}], "Gadget"]]
    assert query == table_query(sample, "ORDERS", filter=condition)
    query = change(page, query, op="custom-aggregate", stage=0, aggregation_name="Average net",
                   aggregation_text="Sum([Total] - [Tax]) / Count")
    named = ["aggregation-options", ["/", ["sum", ["-", field(orders["TOTAL"]), field(orders["TAX"])]], ["count"]],
             {"name": "Average net", "display-name": "Average net"}]
    assert query == table_query(sample, "ORDERS", filter=condition, aggregation=[named])
    body = html.unescape(shown(page, query))
    assert ">Average net</a>" in body
    # A custom filter the words cannot say is said in the expression language.
    query2 = change(page, table_query(sample, "ORDERS"), op="custom-filter", stage=0,
                    condition_text="[Total] - [Tax] > 100")
    assert "[Total] - [Tax] > 100" in html.unescape(shown(page, query2))
    answer = runs(admin, query)["data"]
    assert answer["cols"][0]["display_name"] == "Average net" and answer["rows"][0][0] > 0
    # The sort offers the named aggregation by its name.
    assert ("Average net" in [label for _, label in options(shown(page, query), "sort-column-0")])


def test_editing_opens_the_editor_with_the_clause_printed_back(page, sample):
    orders = sample["ORDERS"]
    query = net_column(page, sample)
    query = change(page, query, op="filter", stage=0, column=js(["expression", "Net"]), operator=">", value="50")
    query = change(page, query, op="custom-aggregate", stage=0, aggregation_name="Revenue",
                   aggregation_text="Sum([Net])")
    body = shown(page, query)
    edit_column = re.search(r'<a class="nb-edit" href="([^"]+)" aria-label="Edit custom column: Net">', body).group(1)
    opened = text(page.get(html.unescape(edit_column)))
    assert 'id="expression-0" type="text" name="expression_text" value="[Total] - [Tax]"' in opened
    assert 'name="original" value="Net"' in opened and 'id="column-name-0" type="text" name="column_name" maxlength="100" value="Net"' in opened
    opened = shown(page, query, stage=0, edit_filter=0)
    assert 'id="condition-0" type="text" name="condition_text" value="[Net] &gt; 50"' in opened
    opened = shown(page, query, stage=0, edit_aggregation=0)
    assert 'id="aggregation-0" type="text" name="aggregation_text" value="Sum([Net])"' in opened
    assert 'value="Revenue"' in opened
    # An edited clause replaces the old one where it was.
    edited = change(page, query, op="custom-filter", stage=0, position=0, condition_text="[Net] > 60")
    assert edited["query"]["filter"] == [">", ["expression", "Net"], 60]
    edited = change(page, query, op="custom-aggregate", stage=0, position=0, aggregation_name="Revenue",
                    aggregation_text="Max([Net])")
    assert edited["query"]["aggregation"] == [["aggregation-options", ["max", ["expression", "Net"]],
                                               {"name": "Revenue", "display-name": "Revenue"}]]
    # A renamed column: every clause that read it reads the new name.
    renamed = change(page, query, op="expression", stage=0, original="Net", column_name="Net sale",
                     expression_text="[Total] - [Tax] - [Discount]")
    assert renamed["query"]["expressions"] == {"Net sale": ["-", field(orders["TOTAL"]), field(orders["TAX"]),
                                                            field(orders["DISCOUNT"])]}
    assert renamed["query"]["filter"] == [">", ["expression", "Net sale"], 50]
    assert renamed["query"]["aggregation"][0][1] == ["sum", ["expression", "Net sale"]]


def test_a_rename_of_a_grouped_column_follows_into_the_next_stage(page, admin, sample):
    query = net_column(page, sample)
    query = change(page, query, op="aggregate", stage=0, operator="count")
    query = change(page, query, op="group", stage=0, column=js(["expression", "Net"]))
    query = change(page, query, op="stage")
    net_field = next(v for v, label in options(shown(page, query), "filter-column-1") if label == "Net")
    query = change(page, query, op="filter", stage=1, column=net_field, operator=">", value="10")
    renamed = change(page, query, op="expression", stage=0, original="Net", column_name="Margin",
                     expression_text="[Total] - [Tax]")
    assert renamed["query"]["filter"][1][:2] == ["field", "Margin"]
    assert runs(admin, renamed)["data"]["rows"]


def test_removing_a_custom_column_removes_what_reads_it(page, admin, sample):
    orders = sample["ORDERS"]
    query = net_column(page, sample)
    query = change(page, query, op="expression", stage=0, column_name="Double net", expression_text="[Net] * 2")
    query = change(page, query, op="filter", stage=0, column=js(["expression", "Double net"]), operator=">", value="5")
    query = change(page, query, op="filter", stage=0, column=js(field(orders["TOTAL"])), operator=">", value="10")
    query = change(page, query, op="aggregate", stage=0, operator="count")
    query = change(page, query, op="aggregate", stage=0, operator="sum", column=js(["expression", "Net"]))
    query = change(page, query, op="aggregate", stage=0, operator="max", column=js(field(orders["TOTAL"])))
    query = change(page, query, op="group", stage=0, column=js(["field", orders["CREATED_AT"], {"temporal-unit": "year"}]))
    query = change(page, query, op="sort", stage=0, column=js(["aggregation", 2]), direction="desc")
    query = change(page, query, op="stage")
    query = change(page, query, op="limit", stage=1, limit="3")
    body = html.unescape(shown(page, query))
    remove = re.search(r'<a class="nb-remove" href="([^"]+)" aria-label="Remove custom column: Net">', body).group(1)
    response = page.get(remove)
    assert response.status_code == 303
    after = unb64(parse_qs(urlparse(response.headers["Location"]).query)["q"][0])
    # Net, the column built on it, the filter on that and the sum of Net go; the sort by the max moves
    # down one; the summary changed, so the stage on top of it goes too.
    assert after == table_query(sample, "ORDERS", filter=[">", field(orders["TOTAL"]), 10],
                                aggregation=[["count"], ["max", field(orders["TOTAL"])]],
                                breakout=[["field", orders["CREATED_AT"], {"temporal-unit": "year"}]],
                                **{"order-by": [["desc", ["aggregation", 1]]]})
    assert runs(admin, after)["data"]["rows"]
    # A removed join takes the custom columns on its columns, and what reads them.
    products = sample["PRODUCTS"]
    joined = change(page, table_query(sample, "ORDERS"), op="join", table=products["id"], strategy="left-join",
                    left=js(field(orders["PRODUCT_ID"])), right=str(products["ID"]))
    joined = change(page, joined, op="expression", stage=0, column_name="Markup", expression_text="[Total] - [Products → Price]")
    joined = change(page, joined, op="expression", stage=0, column_name="Own", expression_text="[Total] * 2")
    joined = change(page, joined, op="custom-filter", stage=0, condition_text="[Markup] > 0")
    assert change(page, joined, op="remove", stage=0, key="joins", index=0) == table_query(
        sample, "ORDERS", expressions={"Own": ["*", field(orders["TOTAL"]), 2]})
    # A column nothing reads goes alone.
    lone = change(page, net_column(page, sample), op="limit", stage=0, limit="5")
    assert change(page, lone, op="remove-expression", stage=0, name="Net") == table_query(sample, "ORDERS", limit=5)
    assert "no such custom column" in refused(page, lone, op="remove-expression", stage=0, name="Gross")


def test_errors_are_shown_in_the_step_with_the_text_kept(page, sample):
    start = table_query(sample, "ORDERS")
    message = refused(page, start, op="expression", stage=0, column_name="Net", expression_text="[Total] - [Taxes]")
    assert "Taxes" in message
    body = shown_refused(page, start, op="expression", stage=0, column_name="Net", expression_text="[Total] - [Taxes]")
    step = re.search(r'<section class="nb-step" aria-labelledby="step-0-expression">(.*?)</section>', body, re.S).group(1)
    assert 'role="alert"' in step and "<details class=\"nb-add\" open>" in step
    assert 'value="[Total] - [Taxes]"' in html.unescape(step) and 'value="Net"' in step
    # A name clash, with a field or with another custom column, whatever the case.
    assert "already has a column named “Total”" in refused(page, start, op="expression", stage=0, column_name="total",
                                                         expression_text="[Tax] * 2")
    query = net_column(page, sample)
    assert "already has a column named “Net”" in refused(page, query, op="expression", stage=0, column_name="Net",
                                                       expression_text="[Tax]")
    # The same column, renamed to its own name, is not a clash.
    assert change(page, query, op="expression", stage=0, original="Net", column_name="Net",
                  expression_text="[Total]")["query"]["expressions"] == {"Net": field(sample["ORDERS"]["TOTAL"])}
    assert "name" in refused(page, start, op="expression", stage=0, column_name=" ", expression_text="[Tax]")
    assert "Write the expression" in refused(page, start, op="expression", stage=0, column_name="X", expression_text="")
    # A summary that is not one, a filter that is not a condition, a sum of text: the parser's words.
    assert "aggregation" in refused(page, start, op="custom-aggregate", stage=0, aggregation_name="A",
                                    aggregation_text="[Total] + 1")
    assert "condition" in refused(page, start, op="custom-filter", stage=0, condition_text="[Total] + 1")
    assert refused(page, start, op="custom-aggregate", stage=0, aggregation_name="A", aggregation_text="Sum([User → Name])")
    assert "name" in refused(page, start, op="custom-aggregate", stage=0, aggregation_name="", aggregation_text="Count")
    assert "no such clause" in refused(page, start, op="custom-filter", stage=0, position=3, condition_text="[Total] > 1")
    # A clause the language cannot print opens the editor with the reason, in its own step.
    odd = table_query(sample, "ORDERS", filter=[">", field(999999), 5])
    body = html.unescape(shown(page, odd, stage=0, edit_filter=0))
    step = re.search(r'aria-labelledby="step-0-filter">(.*?)</section>', body, re.S).group(1)
    assert "This cannot be edited as an expression" in step and 'id="condition-0" type="text" name="condition_text" value=""' in step
    # Editing a custom column that is not there.
    assert "no such custom column" in refused(page, start, op="expression", stage=0, original="Gone",
                                              column_name="X", expression_text="[Tax]")


def shown_refused(page, query: dict, **params) -> str:
    response = page.get(BASE + "?" + urlencode({"q": b64(query), **params}))
    assert response.status_code == 400
    return text(response)


def test_the_editors_are_written_against_their_stage(page, admin, sample):
    """Each stage's editors read the query as far as that stage: stage 2's offer stage 1's result columns."""
    query = change(page, table_query(sample, "ORDERS"), op="aggregate", stage=0, operator="count")
    query = change(page, query, op="group", stage=0, column=js(field(sample["ORDERS"]["PRODUCT_ID"])))
    query = change(page, query, op="stage")
    query = change(page, query, op="expression", stage=1, column_name="Many", expression_text="[Count] > 50")
    count = ["field", "count", {"base-type": "type/BigInteger"}]
    assert query["query"]["expressions"] == {"Many": [">", count, 50]}
    body = shown(page, query)
    assert (js(["expression", "Many"]), "Many") in options(body, "filter-column-1")
    assert (js(["expression", "Many"]), "Many") not in options(body, "filter-column-0")
    # Each editor carries the query as far as its own stage.
    editors = {html.unescape(q) for q in re.findall(r'data-q="([^"]+)"', body)}
    assert len(editors) == 2  # three editors a stage, one query each
    inner = [unb64(q)["query"] for q in editors]
    assert {"source-table": sample["ORDERS"]["id"], "aggregation": [["count"]],
            "breakout": [field(sample["ORDERS"]["PRODUCT_ID"])]} in inner
    assert any(q.get("source-query") and q.get("expressions") for q in inner)
    query = change(page, query, op="filter", stage=1, column=js(["expression", "Many"]), operator="true")
    assert query["query"]["filter"] == ["=", ["expression", "Many"], True]
    assert runs(admin, query)["data"]["rows"]
