"""core.query.compiler: golden SQL per dialect, result column metadata, limits and clear 400s.

Golden SQL lives in tests/core/query/golden/<engine>.sql, one statement per "-- name" section, and
is compared exactly. After a deliberate change, regenerate with TESSERA_REGEN_GOLDEN=1 and review
the diff like code.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from core.appdb.models import User
from core.http.errors import Invalid
from core.query import access
from core.query.cards import expand as expand_cards
from core.query.compiler import apply_limit, compile_query
from core.query.mbql import normalize

from . import sample
from .conftest import ENGINES, driver_class

# One xdist worker runs this module (make test: --dist loadgroup): its module-scoped sample and app DB are built once.
pytestmark = pytest.mark.xdist_group("query-compiler")

GOLDEN = Path(__file__).parent / "golden"
SCHEMAS = {"sqlite": None, "duckdb": "main", "postgres": "public", "mysql": None}


def f(ref, **opts):
    return ["field", f"${ref}", {k.replace("_", "-"): v for k, v in opts.items()} or None]


GOLDEN_CASES = {
    "rows": {"source-table": "$$ORDERS", "fields": [f("ORDERS.ID"), f("ORDERS.TOTAL")],
             "filter": ["and", ["!=", f("ORDERS.QUANTITY"), 1], ["!=", f("ORDERS.QUANTITY"), 2, 3],
                        ["not", [">", f("ORDERS.TAX"), 10]]],
             "order-by": [["desc", f("ORDERS.TOTAL")]], "page": {"page": 2, "items": 10}},
    "temporal": {"source-table": "$$ORDERS", "aggregation": [["count"]],
                 "breakout": [f("ORDERS.CREATED_AT", temporal_unit="week"),
                              f("ORDERS.CREATED_AT", temporal_unit="day-of-week"),
                              f("PEOPLE.BIRTH_DATE", source_field="$ORDERS.USER_ID", temporal_unit="quarter")],
                 "filter": ["time-interval", f("ORDERS.CREATED_AT"), -3, "month", {"include-current": True}]},
    "strings": {"source-table": "$$PEOPLE", "aggregation": [["count"]],
                "filter": ["or", ["starts-with", f("PEOPLE.NAME"), "O'B%", {"case-sensitive": False}],
                           ["ends-with", f("PEOPLE.EMAIL"), "_x"], ["is-empty", f("PEOPLE.SOURCE")]]},
    "aggregations": {"source-table": "$$ORDERS", "breakout": [f("ORDERS.CREATED_AT", temporal_unit="month")],
                     "aggregation": [["cum-sum", f("ORDERS.TOTAL")], ["avg", f("ORDERS.QUANTITY")],
                                     ["stddev", f("ORDERS.TOTAL")], ["share", [">", f("ORDERS.QUANTITY"), 2]],
                                     ["aggregation-options", ["/", ["sum", f("ORDERS.TAX")], ["count"]], {"name": "r"}]],
                     "order-by": [["desc", ["aggregation", 1]]]},
    "binning": {"source-table": "$$ORDERS", "aggregation": [["count"]],
                "breakout": [f("ORDERS.TOTAL", binning={"strategy": "num-bins", "num-bins": 10})]},
    "expressions": {"source-table": "$$ORDERS", "expressions": {
        "net": ["/", ["-", f("ORDERS.TOTAL"), f("ORDERS.TAX")], f("ORDERS.QUANTITY")],
        "later": ["datetime-add", f("ORDERS.CREATED_AT"), 1, "month"],
        "label": ["case", [[["<", f("ORDERS.TOTAL"), 50], "small"]], {"default": ["concat", "big ", ["upper", "x"]]}]},
        "fields": [["expression", "net"], ["expression", "later"], ["expression", "label"]], "limit": 5},
    "joins": {"source-table": "$$ORDERS", "joins": [{
        "source-table": "$$PRODUCTS", "alias": "P", "strategy": "inner-join", "fields": [f("PRODUCTS.TITLE", join_alias="P")],
        "condition": ["=", f("ORDERS.PRODUCT_ID"), f("PRODUCTS.ID", join_alias="P")]}, {
        "source-query": {"source-table": "$$PEOPLE", "fields": [f("PEOPLE.ID"), f("PEOPLE.STATE")]}, "alias": "U",
        "fields": "all", "condition": ["=", f("ORDERS.USER_ID"), f("PEOPLE.ID", join_alias="U")]}],
        "fields": [f("ORDERS.ID")], "filter": ["=", f("ORDERS.CREATED_AT"), "2024-05-01"]},
    "nested": {"source-query": {"source-table": "$$ORDERS", "aggregation": [["sum", f("ORDERS.TOTAL")]],
                                "breakout": [f("ORDERS.USER_ID")]},
               "filter": [">", ["field", "sum", {"base-type": "type/Float"}], 100],
               "aggregation": [["count"]]},
    "url-parts": {"source-table": "$$PEOPLE", "expressions": {
        part: [part, f("PEOPLE.EMAIL")] for part in ("host", "domain", "subdomain", "path")},
        "fields": [["expression", part] for part in ("host", "domain", "subdomain", "path")]},
    "functions": {"source-table": "$$ORDERS", "expressions": {
        "piece": ["split-part", ["text", f("ORDERS.CREATED_AT")], "-", 2],
        "computed piece": ["split-part", ["text", f("ORDERS.TOTAL")], ".", f("ORDERS.QUANTITY")],
        "whole": ["integer", f("ORDERS.TOTAL")], "number": ["float", ["text", f("ORDERS.ID")]],
        "day": ["date", "2024-03-05T10:00:00"], "simple": ["datetime", "20240305102030", {"mode": "simple"}],
        "unix": ["datetime", f("ORDERS.ID"), {"mode": "unix-milliseconds"}], "today": ["today"],
        "shifted": ["convert-timezone", f("ORDERS.CREATED_AT"), "+05:30", "-02:00"],
        "later": ["datetime-add", f("ORDERS.CREATED_AT"), 1500, "millisecond"]},
        "fields": [*[["expression", n] for n in ("piece", "computed piece", "whole", "number", "day", "simple", "unix",
                                                "today", "shifted")],
                   ["expression", "later", {"temporal-unit": "millisecond"}], f("ORDERS.CREATED_AT", temporal_unit="second")]},
    "offset": {"source-table": "$$ORDERS", "aggregation": [
        ["sum", f("ORDERS.TOTAL")], ["offset", {"name": "previous"}, ["sum", f("ORDERS.TOTAL")], -1],
        ["/", ["count"], ["offset", {}, ["count"], 1]]],
        "breakout": [f("PRODUCTS.CATEGORY", source_field="$ORDERS.PRODUCT_ID"), f("ORDERS.CREATED_AT", temporal_unit="month")],
        "order-by": [["desc", ["aggregation", 0]]]},
    # Running totals partitioned by the category, accumulating along the (finest temporal) year, the
    # query's sort on count first in the window; rows sorted category then year.
    "cumulative": {"source-table": "$$ORDERS", "aggregation": [
        ["count"], ["cum-count"], ["cum-sum", f("ORDERS.QUANTITY")]],
        "breakout": [f("ORDERS.CREATED_AT", temporal_unit="year"), f("PRODUCTS.CATEGORY", source_field="$ORDERS.PRODUCT_ID"),
                     f("ORDERS.CREATED_AT", temporal_unit="month-of-year")],
        "order-by": [["desc", ["aggregation", 0]]]},
    # Weeks starting on Wednesday (the start-of-week setting, GOLDEN_OPTIONS): truncation, day-of-week,
    # the week-of-year bucket, instance and US week numbers, and a "this week" filter.
    "week-start": {"source-table": "$$ORDERS", "aggregation": [["count"]],
                   "expressions": {"instance": ["get-week", f("ORDERS.CREATED_AT"), "instance"],
                                   "us": ["get-week", f("ORDERS.CREATED_AT"), "us"]},
                   "breakout": [f("ORDERS.CREATED_AT", temporal_unit="week"),
                                f("ORDERS.CREATED_AT", temporal_unit="day-of-week"),
                                f("ORDERS.CREATED_AT", temporal_unit="week-of-year"),
                                ["expression", "instance"], ["expression", "us"]],
                   "filter": ["time-interval", f("ORDERS.CREATED_AT"), "current", "week"]},
    # Columns with coercion strategies (sample.COERCED): converted once, in the WHERE and GROUP BY too.
    "coercion": {"source-table": "$$EVENTS", "aggregation": [
        ["count"], ["sum", f("EVENTS.SCORE")], ["sum", f("EVENTS.COUNT_TEXT")], ["avg", f("EVENTS.PRICE_TEXT")]],
        "breakout": [f("EVENTS.AT_SECONDS", temporal_unit="month"), f("EVENTS.HAPPENED_AT", temporal_unit="year")],
        "filter": ["and", ["between", f("EVENTS.AT_MILLIS"), "2024-01-01", "2024-03-31"],
                   ["<", f("EVENTS.AT_ISO"), "2024-03-01T12:00:00"], [">", f("EVENTS.DAY_ISO"), "2023-12-01"],
                   ["not-null", f("EVENTS.STAMP")]]},
}
# Cases that need a driver feature: compiled only for the engines declaring it.
GOLDEN_FEATURES: dict[str, tuple[str, ...]] = {}
# compile_query options of a case (the others compile with the defaults).
GOLDEN_OPTIONS: dict[str, dict] = {"week-start": {"week_start": 2}}


@pytest.fixture(scope="module")
def metadata(appdb):
    """Sample metadata registered once per engine (no data needed to compile)."""
    out = {}
    for engine in ENGINES:
        with appdb.session() as session:
            out[engine] = sample.register(session, engine, SCHEMAS[engine])
    session = appdb.Session()
    yield session, out
    session.close()


# Card sources are expanded before compiling (core.query.cards.expand, behind the data-access gate);
# these tests expand them as an administrator, who may read every card.
ADMIN = User(id=0, email="admin@example.com", is_superuser=True, is_active=True)


def expanded(session, query):
    access.resolve_database(session, query)
    return expand_cards(session, ADMIN, query, saved=False)


def compile_case(metadata, engine: str, inner: dict, **kwargs):
    session, ids = metadata
    query = normalize(sample.resolve({"database": "$db", "type": "query", "query": inner}, ids[engine]))
    return compile_query(session, expanded(session, query), driver_class(engine), now=sample.NOW, **kwargs)


def read_golden(engine: str) -> dict[str, str]:
    text = (GOLDEN / f"{engine}.sql").read_text(encoding="utf-8")
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^-- (\S+)\n(.*?)(?=^-- |\Z)", text, re.M | re.S)}


@pytest.mark.parametrize("engine", ENGINES)
def test_golden_sql(metadata, engine):
    features = driver_class(engine).features
    actual = {name: compile_case(metadata, engine, inner, **GOLDEN_OPTIONS.get(name, {})).sql
              for name, inner in GOLDEN_CASES.items()
              if all(feature in features for feature in GOLDEN_FEATURES.get(name, ()))}
    path = GOLDEN / f"{engine}.sql"
    if os.environ.get("TESSERA_REGEN_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text("".join(f"-- {name}\n{sql}\n" for name, sql in actual.items()), encoding="utf-8")
    expected = read_golden(engine)
    assert sorted(expected) == sorted(actual)
    for name in actual:
        assert actual[name] == expected[name], f"{engine} {name}"


def cols(compiled):
    return [(c["name"], c["display_name"], c["source"], c["field_ref"]) for c in compiled.columns]


def test_columns_of_plain_rows(metadata):
    _, ids = metadata
    i = ids["sqlite"]
    compiled = compile_case(metadata, "sqlite", {"source-table": "$$ORDERS", "joins": [{
        "source-table": "$$PRODUCTS", "alias": "Products", "fields": [f("PRODUCTS.ID", join_alias="Products")],
        "condition": ["=", f("ORDERS.PRODUCT_ID"), f("PRODUCTS.ID", join_alias="Products")]}],
        "expressions": {"double": ["*", f("ORDERS.TOTAL"), 2]}})
    assert not compiled.aggregated
    names = [c["name"] for c in compiled.columns]
    assert names == ["ID", "USER_ID", "PRODUCT_ID", "SUBTOTAL", "TAX", "TOTAL", "DISCOUNT", "QUANTITY", "CREATED_AT",
                     "double", "ID_2"]
    by_name = {c["name"]: c for c in compiled.columns}
    assert by_name["ID"]["field_ref"] == ["field", i["$ORDERS.ID"], None]
    assert by_name["ID"]["id"] == i["$ORDERS.ID"] and by_name["ID"]["table_id"] == i["$$ORDERS"]
    assert by_name["ID"]["semantic_type"] == "type/PK" and by_name["ID"]["source"] == "fields"
    assert by_name["PRODUCT_ID"]["fk_target_field_id"] == i["$PRODUCTS.ID"]
    assert by_name["CREATED_AT"]["unit"] == "default"
    assert by_name["CREATED_AT"]["field_ref"] == ["field", i["$ORDERS.CREATED_AT"], {"temporal-unit": "default"}]
    assert by_name["double"]["field_ref"] == ["expression", "double"]
    assert by_name["double"]["base_type"] == "type/Float"
    assert by_name["ID_2"]["display_name"] == "Products → ID"
    assert by_name["ID_2"]["field_ref"] == ["field", i["$PRODUCTS.ID"], {"join-alias": "Products"}]
    assert by_name["ID_2"]["source_alias"] == "Products"


def test_columns_of_aggregated_query(metadata):
    _, ids = metadata
    i = ids["sqlite"]
    compiled = compile_case(metadata, "sqlite", {
        "source-table": "$$ORDERS",
        "breakout": [f("ORDERS.CREATED_AT", temporal_unit="month"), f("PRODUCTS.CATEGORY", source_field="$ORDERS.PRODUCT_ID"),
                     f("ORDERS.TOTAL", binning={"strategy": "bin-width", "bin-width": 50})],
        "aggregation": [["count"], ["sum", f("ORDERS.TOTAL")], ["avg", f("ORDERS.QUANTITY")], ["distinct", f("ORDERS.USER_ID")],
                        ["cum-count"], ["aggregation-options", ["max", f("ORDERS.TAX")], {"display-name": "Biggest tax"}],
                        ["sum", f("ORDERS.SUBTOTAL")]]})
    assert compiled.aggregated
    import math

    totals = [o["TOTAL"] for o in sample.ROWS["ORDERS"]]
    low, high = math.floor(min(totals) / 50) * 50, math.ceil(max(totals) / 50) * 50
    bins = (high - low) // 50
    assert cols(compiled) == [
        ("CREATED_AT", "Created At: Month", "breakout", ["field", i["$ORDERS.CREATED_AT"], {"temporal-unit": "month"}]),
        ("CATEGORY", "Product → Category", "breakout", ["field", i["$PRODUCTS.CATEGORY"], {"source-field": i["$ORDERS.PRODUCT_ID"]}]),
        ("TOTAL", "Total: 50", "breakout", ["field", i["$ORDERS.TOTAL"], {"binning": {
            "strategy": "bin-width", "min-value": low, "max-value": high, "num-bins": bins, "bin-width": 50}}]),
        ("count", "Count", "aggregation", ["aggregation", 0]),
        ("sum", "Sum of Total", "aggregation", ["aggregation", 1]),
        ("avg", "Average of Quantity", "aggregation", ["aggregation", 2]),
        ("count_2", "Distinct values of User ID", "aggregation", ["aggregation", 3]),
        ("cum_count", "Cumulative count", "aggregation", ["aggregation", 4]),
        ("max", "Biggest tax", "aggregation", ["aggregation", 5]),
        ("sum_2", "Sum of Subtotal", "aggregation", ["aggregation", 6]),
    ]
    by_name = {c["name"]: c for c in compiled.columns}
    assert by_name["CREATED_AT"]["unit"] == "month"
    assert by_name["CATEGORY"]["fk_field_id"] == i["$ORDERS.PRODUCT_ID"]
    assert by_name["TOTAL"]["binning_info"] == {"binning_strategy": "bin-width", "bin_width": 50, "num_bins": bins,
                                                "min_value": low, "max_value": high}
    assert (by_name["count"]["base_type"], by_name["count"]["semantic_type"]) == ("type/BigInteger", "type/Quantity")
    assert by_name["sum"]["base_type"] == "type/Float" and by_name["avg"]["base_type"] == "type/Float"
    assert by_name["count"]["aggregation_index"] == 0


def test_nested_stage_columns_refer_by_name(metadata):
    compiled = compile_case(metadata, "sqlite", {
        "source-query": {"source-table": "$$ORDERS", "aggregation": [["count"]],
                         "breakout": [f("ORDERS.CREATED_AT", temporal_unit="month")]},
        "fields": [f("ORDERS.CREATED_AT", temporal_unit="month"), ["field", "count", {"base-type": "type/BigInteger"}]]})
    created, count = compiled.columns
    assert created["field_ref"] == ["field", "CREATED_AT", {"base-type": "type/DateTime"}]
    assert created["unit"] == "month" and created["id"] == metadata[1]["sqlite"]["$ORDERS.CREATED_AT"]
    assert count["field_ref"] == ["field", "count", {"base-type": "type/BigInteger"}]
    # The month was bucketed in the first stage: the second selects the column as it is.
    assert 'SELECT "source"."CREATED_AT" AS "CREATED_AT"' in compiled.sql


def test_limits(metadata):
    compiled = compile_case(metadata, "sqlite", {"source-table": "$$ORDERS", "limit": 10}, limit=2000)
    assert compiled.sql.endswith("LIMIT 10")
    compiled = compile_case(metadata, "sqlite", {"source-table": "$$ORDERS", "limit": 5000}, limit=2000)
    assert compiled.sql.endswith("LIMIT 2000")
    compiled = compile_case(metadata, "sqlite", {"source-table": "$$ORDERS"})
    assert "LIMIT" not in compiled.sql
    tree = apply_limit(compiled.tree, 7)
    assert tree.sql().endswith("LIMIT 7")
    assert compiled.params == {}


def test_values_never_become_sql(metadata):
    evil = "x'); DROP TABLE \"ORDERS\"; --"
    compiled = compile_case(metadata, "postgres", {"source-table": "$$PEOPLE",
                                                   "filter": ["=", f("PEOPLE.NAME"), evil]})
    assert "'x''); DROP TABLE \"ORDERS\"; --'" in compiled.sql
    compiled = compile_case(metadata, "mysql", {"source-table": "$$PEOPLE", "filter": ["=", f("PEOPLE.NAME"), "a\\' OR 1=1 #"]})
    assert "'a\\\\'' OR 1=1 #'" in compiled.sql


@pytest.mark.parametrize("inner, fragment", [
    ({"source-table": 999999}, "table 999999 does not exist"),
    ({"source-table": "$$ORDERS", "fields": [["field", 999999, None]]}, "field 999999 does not exist"),
    ({"source-table": "$$ORDERS", "fields": [f("PRODUCTS.TITLE")]}, "not a column of table 'ORDERS'"),
    ({"source-table": "$$ORDERS", "fields": [f("PRODUCTS.TITLE", join_alias="Nope")]}, "no join with alias 'Nope'"),
    ({"source-table": "$$ORDERS", "fields": [f("PRODUCTS.TITLE", source_field="$ORDERS.TOTAL")]}, "is not a foreign key"),
    ({"source-table": "$$ORDERS", "fields": [["expression", "missing", {}]]}, "no expression named 'missing'"),
    ({"source-table": "$$ORDERS", "expressions": {"a": ["+", ["expression", "a"], 1]}, "fields": [["expression", "a"]]},
     "refers to itself"),
    ({"source-table": "$$ORDERS", "aggregation": [["count"]], "order-by": [["asc", ["aggregation", 3]]]},
     "aggregation 3, which does not exist"),
    ({"source-table": "$$ORDERS", "aggregation": [["median", f("ORDERS.TOTAL")]]}, "not supported by the sqlite driver"),
    ({"source-table": "$$PEOPLE", "aggregation": [["count"]], "breakout": [f("PEOPLE.NAME", binning={"strategy": "default"})]},
     "which is not a number"),
    ({"source-table": "$$ORDERS", "filter": ["segment", 987654]}, "Segment 987654 does not exist, or is invalid."),
    ({"source-table": "$$ORDERS", "aggregation": [["metric", 987654]]}, "Metric 987654 does not exist, or is invalid."),
    ({"source-table": "$$ORDERS", "filter": ["=", ["sum", f("ORDERS.TOTAL")], 1]}, "only allowed in the aggregation clause"),
    *[({"source-table": "$$PEOPLE", "expressions": {"x": clause}, "fields": [["expression", "x"]]}, fragment)
      for clause, fragment in [
          (["split-part", f("PEOPLE.NAME"), "", 1], "split-part needs a non-empty literal text as its delimiter"),
          (["split-part", f("PEOPLE.NAME"), f("PEOPLE.STATE"), 1], "split-part needs a non-empty literal text"),
          (["split-part", f("PEOPLE.NAME"), " ", 0], "split-part positions count from 1, got 0"),
          (["split-part", f("PEOPLE.NAME"), " ", 1.5], "split-part needs a whole number as its position"),
          (["datetime", f("PEOPLE.NAME"), {"mode": "julian"}], "datetime does not know the mode 'julian'"),
          (["datetime", f("PEOPLE.NAME"), {"mode": "iso-bytes"}], "datetime mode 'iso-bytes' is not supported"),
          (["datetime", f("PEOPLE.NAME"), {"mode": "unix-seconds"}], "'unix-seconds' converts a number, not type/Text"),
          (["datetime", f("PEOPLE.LATITUDE")], "datetime mode 'iso' converts text, not type/Float"),
          (["integer", f("PEOPLE.CREATED_AT")], "integer converts text or a number, not type/DateTime"),
          (["float", f("PEOPLE.BIRTH_DATE")], "float converts text or a number, not type/Date"),
          (["date", f("PEOPLE.LATITUDE")], "date converts text or a date-time, not type/Float"),
          (["convert-timezone", f("PEOPLE.CREATED_AT"), "+09:00", "Mars/Olympus"], "valid timezone ID as its source"),
          (["convert-timezone", f("PEOPLE.CREATED_AT"), "+25:00"], "valid timezone ID as its target, got '+25:00'"),
          (["convert-timezone", f("PEOPLE.BIRTH_DATE"), "+09:00"], "convert-timezone converts a date-time, not type/Date"),
          (["split-part", f("PEOPLE.NAME"), " "], "'split-part' takes 3 argument(s), got 2"),
          (["today", 1], "'today' takes 0 argument(s), got 1"),
          (["get-week", f("PEOPLE.BIRTH_DATE"), "fortnight"], "get-week does not take the mode 'fortnight'"),
          (["get-day-of-week", f("PEOPLE.BIRTH_DATE"), "us"], "get-day-of-week does not take the mode 'us'"),
          (["temporal-extract", f("PEOPLE.BIRTH_DATE"), "week-of-month"], "does not know the unit 'week-of-month'"),
      ]],
    ({"source-table": "$$ORDERS", "aggregation": [["offset", {}, ["count"], -1]]},
     "offset needs breakouts or an order-by in the query"),
    ({"source-table": "$$ORDERS", "aggregation": [["offset", {}, ["count"], 0]], "breakout": [f("ORDERS.USER_ID")]},
     "offset needs a non-zero whole number of rows, got 0"),
    ({"source-table": "$$ORDERS", "aggregation": [["offset", {}, ["count"], 1.5]], "breakout": [f("ORDERS.USER_ID")]},
     "offset needs a non-zero whole number of rows, got 1.5"),
    ({"source-table": "$$ORDERS", "expressions": {"x": ["offset", {}, f("ORDERS.TOTAL"), -1]},
      "fields": [["expression", "x"]]}, "offset is only allowed in the aggregation clause"),
    ({"source-table": "card__5"}, "card 5 does not exist"),
    ({"source-table": "$$ORDERS", "filter": ["time-interval", f("ORDERS.TOTAL"), -1, "day"]}, "needs a date or time column"),
])
def test_bad_queries_are_400s(metadata, inner, fragment):
    with pytest.raises(Invalid) as error:
        compile_case(metadata, "sqlite", inner)
    assert error.value.status == 400
    assert fragment in error.value.message


def test_table_of_another_database_is_refused(metadata):
    session, ids = metadata
    query = normalize({"database": ids["postgres"]["database"], "type": "query",
                       "query": {"source-table": ids["sqlite"]["$$ORDERS"]}})
    with pytest.raises(Invalid, match="is not in database"):
        compile_query(session, query, driver_class("postgres"))


def test_native_query_is_not_compiled(metadata):
    with pytest.raises(Invalid, match="native"):
        compile_query(metadata[0], normalize({"database": 1, "type": "native", "native": {"query": "SELECT 1"}}),
                      driver_class("sqlite"))


@pytest.fixture(scope="module")
def cards(appdb, sqlite_sample):
    """Saved questions over the SQLite sample: an MBQL one, a native one, one sourcing itself."""
    from core.appdb.models.card import Card
    from core.identity.users import create_user

    ids = sqlite_sample.ids
    with appdb.session() as session:
        owner = create_user(session, email="cards@example.com", first_name="C", last_name="Ard", password_hash="x")
        session.flush()

        def card(name, query, **kw):
            c = Card(name=name, display="table", dataset_query=query, creator_id=owner.id,
                     database_id=ids["database"], query_type=query.get("type", "query"), **kw)
            session.add(c)
            session.flush()
            return c.id

        by_user = card("by user", sample.resolve({"database": "$db", "type": "query", "query": {
            "source-table": "$$ORDERS", "aggregation": [["count"]], "breakout": [f("ORDERS.USER_ID")]}}, ids))
        native = card("native", {"database": ids["database"], "type": "native", "native": {"query": "SELECT 1"}})
        archived = card("archived", sample.resolve({"database": "$db", "type": "query",
                                                    "query": {"source-table": "$$ORDERS"}}, ids), archived=True)
        selfish = card("selfish", {"database": ids["database"], "type": "query", "query": {"source-table": "card__1"}})
        c = session.get(Card, selfish)
        c.dataset_query = {"database": ids["database"], "type": "query", "query": {"source-table": f"card__{selfish}"}}
    return {"by_user": by_user, "native": native, "archived": archived, "selfish": selfish}


def run_sqlite(sqlite_sample, outer: dict):
    query = expanded(sqlite_sample.session, normalize(sample.resolve(outer, sqlite_sample.ids)))
    compiled = compile_query(sqlite_sample.session, query, sqlite_sample.driver, now=sample.NOW)
    return compiled, sqlite_sample.run(compiled.sql, compiled.params)


def test_saved_question_as_source(sqlite_sample, cards):
    from collections import Counter

    counts = Counter(o["USER_ID"] for o in sample.ROWS["ORDERS"])
    for database in ("$db", -1337):
        compiled, rows = run_sqlite(sqlite_sample, {"database": database, "type": "query", "query": {
            "source-table": f"card__{cards['by_user']}", "filter": [">=", ["field", "count", {"base-type": "type/BigInteger"}], 9],
            "order-by": [["asc", ["field", "USER_ID", {"base-type": "type/Integer"}]]]}})
        assert rows == sorted((u, n) for u, n in counts.items() if n >= 9)
        assert [c["name"] for c in compiled.columns] == ["USER_ID", "count"]
    # MBQL 5 names the card with source-card, and a join can use a card too.
    compiled, rows = run_sqlite(sqlite_sample, {"lib/type": "mbql/query", "database": "$db", "stages": [
        {"lib/type": "mbql.stage/mbql", "source-table": "$$PEOPLE",
         "joins": [{"lib/type": "mbql/join", "alias": "C", "fields": "all",
                    "stages": [{"lib/type": "mbql.stage/mbql", "source-card": cards["by_user"]}],
                    "conditions": [["=", {}, ["field", {}, "$PEOPLE.ID"],
                                    ["field", {"base-type": "type/Integer", "join-alias": "C"}, "USER_ID"]]]}],
         "fields": [["field", {}, "$PEOPLE.ID"]], "order-by": [["asc", {}, ["field", {}, "$PEOPLE.ID"]]]}]})
    assert rows == [(p["ID"], p["ID"] if counts[p["ID"]] else None, counts[p["ID"]] or None) for p in sample.ROWS["PEOPLE"]]


@pytest.mark.parametrize("key, fragment", [
    ("native", "columns of the native source are unknown"), ("archived", "does not exist"),
    ("selfish", "reads itself through other cards")])
def test_unusable_source_cards(sqlite_sample, cards, key, fragment):
    with pytest.raises(Invalid, match=fragment):
        run_sqlite(sqlite_sample, {"database": "$db", "type": "query", "query": {"source-table": f"card__{cards[key]}"}})


def test_mbql5_compiles_like_its_legacy_twin(metadata):
    session, ids = metadata
    i = ids["postgres"]
    legacy = {"database": i["database"], "type": "query", "query": {
        "source-table": i["$$ORDERS"],
        "expressions": {"net": ["-", ["field", i["$ORDERS.TOTAL"], None], ["field", i["$ORDERS.TAX"], None]]},
        "filter": ["and", ["time-interval", ["field", i["$ORDERS.CREATED_AT"], None], -2, "month", {"include-current": True}],
                   ["contains", ["field", i["$PRODUCTS.TITLE"], {"source-field": i["$ORDERS.PRODUCT_ID"]}], "lamp",
                    {"case-sensitive": False}]],
        "aggregation": [["sum", ["expression", "net"]], ["aggregation-options", ["count"], {"name": "n"}]],
        "breakout": [["field", i["$ORDERS.CREATED_AT"], {"temporal-unit": "week"}]],
        "order-by": [["desc", ["aggregation", 1]]], "limit": 4}}
    current = {"lib/type": "mbql/query", "database": i["database"], "stages": [{
        "lib/type": "mbql.stage/mbql", "source-table": i["$$ORDERS"],
        "expressions": [["-", {"lib/uuid": "1", "lib/expression-name": "net"}, ["field", {"lib/uuid": "2"}, i["$ORDERS.TOTAL"]],
                         ["field", {"lib/uuid": "3"}, i["$ORDERS.TAX"]]]],
        "filters": [["time-interval", {"lib/uuid": "4", "include-current": True}, ["field", {"lib/uuid": "5"}, i["$ORDERS.CREATED_AT"]],
                     -2, "month"],
                    ["contains", {"lib/uuid": "6", "case-sensitive": False},
                     ["field", {"lib/uuid": "7", "source-field": i["$ORDERS.PRODUCT_ID"]}, i["$PRODUCTS.TITLE"]], "lamp"]],
        "aggregation": [["sum", {"lib/uuid": "a1"}, ["expression", {"lib/uuid": "8"}, "net"]],
                        ["count", {"lib/uuid": "a2", "name": "n"}]],
        "breakout": [["field", {"lib/uuid": "9", "temporal-unit": "week"}, i["$ORDERS.CREATED_AT"]]],
        "order-by": [["desc", {"lib/uuid": "10"}, ["aggregation", {"lib/uuid": "11"}, "a2"]]], "limit": 4}]}
    driver = driver_class("postgres")
    one = compile_query(session, normalize(legacy), driver, now=sample.NOW)
    two = compile_query(session, normalize(current), driver, now=sample.NOW)
    assert one.sql == two.sql
    assert one.columns == two.columns
    assert '"n" DESC' in one.sql and "LIMIT 4" in one.sql


def test_sorting_on_the_plain_field_of_a_bucketed_breakout(metadata):
    compiled = compile_case(metadata, "sqlite", {
        "source-table": "$$ORDERS", "aggregation": [["count"]],
        "breakout": [f("ORDERS.CREATED_AT", temporal_unit="month")], "order-by": [["desc", f("ORDERS.CREATED_AT")]]})
    assert compiled.sql.endswith('ORDER BY "CREATED_AT" DESC')


def test_base_types_of_functions(metadata):
    """Result columns carry Metabase's base type for each function (lib.schema.expression)."""
    expressions = {
        "host": ["host", f("PEOPLE.EMAIL")], "domain": ["domain", f("PEOPLE.EMAIL")],
        "subdomain": ["subdomain", f("PEOPLE.EMAIL")], "path": ["path", f("PEOPLE.EMAIL")],
        "split": ["split-part", f("PEOPLE.NAME"), " ", 1], "text": ["text", f("PEOPLE.ID")],
        "integer": ["integer", f("PEOPLE.LATITUDE")], "float": ["float", "1.5"], "date": ["date", f("PEOPLE.CREATED_AT")],
        "datetime": ["datetime", 0, {"mode": "unix-seconds"}], "today": ["today"],
        "tokyo": ["convert-timezone", f("PEOPLE.CREATED_AT"), "Asia/Tokyo", "UTC"]}
    compiled = compile_case(metadata, "postgres", {"source-table": "$$PEOPLE", "expressions": expressions,
                                                   "fields": [["expression", name] for name in expressions]})
    assert {c["name"]: c["base_type"] for c in compiled.columns} == {
        "host": "type/Text", "domain": "type/Text", "subdomain": "type/Text", "path": "type/Text", "split": "type/Text",
        "text": "type/Text", "integer": "type/BigInteger", "float": "type/Float", "date": "type/Date",
        "datetime": "type/DateTime", "today": "type/Date", "tokyo": "type/DateTime"}


def test_mbql5_datetime_mode_sits_in_the_options(metadata):
    session, ids = metadata
    i = ids["duckdb"]
    legacy = {"database": i["database"], "type": "query", "query": {
        "source-table": i["$$ORDERS"], "expressions": {
            "t": ["datetime", ["field", i["$ORDERS.ID"], None], {"mode": "unix-milliseconds"}]},
        "fields": [["expression", "t"]]}}
    current = {"lib/type": "mbql/query", "database": i["database"], "stages": [{
        "lib/type": "mbql.stage/mbql", "source-table": i["$$ORDERS"],
        "expressions": [["datetime", {"lib/uuid": "1", "lib/expression-name": "t", "mode": "unix-milliseconds"},
                         ["field", {"lib/uuid": "2"}, i["$ORDERS.ID"]]]],
        "fields": [["expression", {"lib/uuid": "3"}, "t"]]}]}
    driver = driver_class("duckdb")
    one = compile_query(session, normalize(legacy), driver)
    two = compile_query(session, normalize(current), driver)
    assert one.sql == two.sql
    assert "1000.0" in one.sql


def test_offset_columns_and_mbql5(metadata):
    """An offset aggregation keeps its inner aggregation's type and its given name; MBQL 5 puts the name in
    the options, legacy in offset's own leading options map."""
    session, ids = metadata
    i = ids["postgres"]
    legacy = {"database": i["database"], "type": "query", "query": {
        "source-table": i["$$ORDERS"], "breakout": [["field", i["$ORDERS.CREATED_AT"], {"temporal-unit": "year"}]],
        "aggregation": [["offset", {"name": "previous", "display-name": "Previous year"},
                         ["sum", ["field", i["$ORDERS.QUANTITY"], None]], -1], ["offset", {}, ["count"], 1]]}}
    current = {"lib/type": "mbql/query", "database": i["database"], "stages": [{
        "lib/type": "mbql.stage/mbql", "source-table": i["$$ORDERS"],
        "breakout": [["field", {"lib/uuid": "1", "temporal-unit": "year"}, i["$ORDERS.CREATED_AT"]]],
        "aggregation": [["offset", {"lib/uuid": "2", "name": "previous", "display-name": "Previous year"},
                         ["sum", {"lib/uuid": "3"}, ["field", {"lib/uuid": "4"}, i["$ORDERS.QUANTITY"]]], -1],
                        ["offset", {"lib/uuid": "5"}, ["count", {"lib/uuid": "6"}], 1]]}]}
    driver = driver_class("postgres")
    one = compile_query(session, normalize(legacy), driver)
    two = compile_query(session, normalize(current), driver)
    assert one.sql == two.sql
    assert [(c["name"], c["display_name"], c["base_type"]) for c in one.columns[1:]] == [
        ("previous", "Previous year", "type/Integer"), ("offset", "Offset", "type/BigInteger")]
    assert "LAG(SUM(" in one.sql and "LEAD(COUNT(*), 1) OVER (ORDER BY DATE_TRUNC('YEAR'" in one.sql


@pytest.mark.parametrize("clause, fragment", [
    (["host", f("PEOPLE.EMAIL")], "the host function is not supported by the sqlite driver"),
    (["convert-timezone", f("PEOPLE.CREATED_AT"), "Asia/Tokyo"],
     "convert-timezone with a named time zone is not supported by the sqlite driver"),
])
def test_features_a_driver_lacks_are_400s(metadata, clause, fragment):
    """A driver without regular expressions (nor its own url_part) or without a zone database refuses those
    clauses with a 400 naming it; fixed offsets need no zone database."""
    from drivers.sqlite import SQLiteDriver

    class Bare(SQLiteDriver):
        features = frozenset()
        url_parts_without_regex = False

    session, ids = metadata

    def query(expression):
        return normalize(sample.resolve({"database": "$db", "type": "query", "query": {
            "source-table": "$$PEOPLE", "expressions": {"x": expression}, "fields": [["expression", "x"]]}},
            ids["sqlite"]))

    with pytest.raises(Invalid, match=fragment):
        compile_query(session, query(clause), Bare)
    assert "TESSERA_" in compile_query(session, query(clause), SQLiteDriver).sql
    compile_query(session, query(["convert-timezone", f("PEOPLE.CREATED_AT"), "+09:00"]), Bare)


@pytest.mark.parametrize("breakouts, partition, along", [
    ([f("PRODUCTS.CATEGORY", source_field="$ORDERS.PRODUCT_ID"), f("ORDERS.CREATED_AT", temporal_unit="year")], [0], 1),
    ([f("ORDERS.CREATED_AT", temporal_unit="year"), f("PRODUCTS.CATEGORY", source_field="$ORDERS.PRODUCT_ID")], [1], 0),
    # no temporal breakout: accumulate along the last one
    ([f("ORDERS.QUANTITY"), f("PRODUCTS.CATEGORY", source_field="$ORDERS.PRODUCT_ID")], [0], 1),
    # an extracted part can be the finest: month-of-year ranks below year, day below day-of-year
    ([f("ORDERS.CREATED_AT", temporal_unit="year"), f("ORDERS.CREATED_AT", temporal_unit="month-of-year")], [0], 1),
    ([f("ORDERS.CREATED_AT", temporal_unit="day"), f("ORDERS.CREATED_AT", temporal_unit="day-of-year")], [1], 0),
    # equal granularity (an unbucketed date counts as a day): the leftmost wins
    ([f("ORDERS.QUANTITY"), f("PEOPLE.BIRTH_DATE", source_field="$ORDERS.USER_ID"),
      f("ORDERS.CREATED_AT", temporal_unit="day")], [0, 2], 1),
    # Metabase's granularity table has no second or millisecond: such a breakout is not temporal there
    ([f("ORDERS.CREATED_AT", temporal_unit="second"), f("PRODUCTS.CATEGORY", source_field="$ORDERS.PRODUCT_ID")], [0], 1),
])
def test_which_breakout_a_running_total_follows(metadata, breakouts, partition, along):
    """cum-sum's window is partitioned by every breakout but the finest temporal one and accumulates along
    that one (Metabase's nest-breakouts granularity); the rows are sorted with it last."""
    compiled = compile_case(metadata, "sqlite", {"source-table": "$$ORDERS", "breakout": breakouts,
                                                 "aggregation": [["cum-sum", f("ORDERS.QUANTITY")]]})
    assert_running_along(compiled, partition, along)


def test_an_unbucketed_coerced_date_ranks_with_day(metadata):
    """DAY_ISO is text read as a date (ISO8601->Date): unbucketed, it ranks with a day breakout, and the
    leftmost of the two wins."""
    compiled = compile_case(metadata, "sqlite", {
        "source-table": "$$EVENTS", "aggregation": [["cum-count"]],
        "breakout": [f("EVENTS.AT_SECONDS", temporal_unit="day"), f("EVENTS.DAY_ISO", temporal_unit="default")]})
    assert_running_along(compiled, [1], 0)


def assert_running_along(compiled, partition: list[int], along: int) -> None:
    tree = sqlglot.parse_one(compiled.sql, read="sqlite")
    groups = [g.sql() for g in tree.args["group"].expressions]
    window = tree.find(exp.Window)
    assert [p.sql() for p in window.args.get("partition_by") or []] == [groups[i] for i in partition]
    assert [o.this.sql() for o in window.args["order"].expressions][-1] == groups[along]
    aliases = [c["name"] for c in compiled.columns]
    assert tree.args["order"].expressions[-1].this.name == aliases[along]


@pytest.mark.parametrize("unit, shown", [("month", "2025-05-01"), ("year", "2024-01-01"), ("day", "2025-06-17"),
                                         ("hour", "2025-06-18 14:00:00")])
def test_relative_datetime_in_an_expression_starts_its_unit(metadata, unit, shown):
    """As in a filter, Metabase's relative-datetime is truncated to its own unit (sample.NOW is 15:30, 18 June 2025)."""
    inner = {"source-table": "$$ORDERS", "expressions": {"then": ["relative-datetime", -1, unit]},
             "fields": [["expression", "then"]], "limit": 1}
    sql = compile_case(metadata, "postgres", inner).sql
    assert f"'{shown}" in sql, sql


# ---- coercion strategies (core.query.coercion) ---------------------------------------------------


def test_columns_of_coerced_fields(metadata):
    """A coerced column reports its stored base type and the effective type of its strategy, as Metabase's
    field metadata does; a temporal unit on it is a temporal unit like any date-time's."""
    _, ids = metadata
    i = ids["sqlite"]
    compiled = compile_case(metadata, "sqlite", {
        "source-table": "$$EVENTS", "fields": [f("EVENTS.AT_SECONDS"), f("EVENTS.AT_MILLIS", temporal_unit="month"),
                                               f("EVENTS.AT_ISO", temporal_unit="hour-of-day"), f("EVENTS.COUNT_TEXT"),
                                               f("EVENTS.SCORE")]})
    by_name = {c["name"]: c for c in compiled.columns}
    seconds = by_name["AT_SECONDS"]
    assert (seconds["base_type"], seconds["effective_type"]) == ("type/BigInteger", "type/Instant")
    assert seconds["coercion_strategy"] == "Coercion/UNIXSeconds->DateTime"
    assert seconds["unit"] == "default"
    assert seconds["field_ref"] == ["field", i["$EVENTS.AT_SECONDS"], {"temporal-unit": "default"}]
    millis = by_name["AT_MILLIS"]
    assert (millis["unit"], millis["display_name"]) == ("month", "At Millis: Month")
    assert (by_name["AT_ISO"]["base_type"], by_name["AT_ISO"]["effective_type"]) == ("type/Text", "type/Integer")
    assert (by_name["COUNT_TEXT"]["base_type"], by_name["COUNT_TEXT"]["effective_type"]) == ("type/Text", "type/Integer")
    assert "unit" not in by_name["COUNT_TEXT"]
    assert (by_name["SCORE"]["base_type"], by_name["SCORE"]["effective_type"]) == ("type/Float", "type/Integer")


@pytest.mark.parametrize("engine", ENGINES)
def test_coercion_sql_per_dialect(engine):
    """Each strategy's SQL on each engine (the golden `coercion` case covers them in a whole query)."""
    from core.query.coercion import coerce

    driver = driver_class(engine)
    column = exp.column("v", quoted=True)

    def sql(strategy, base_type):
        converted, value_type = coerce(driver, column.copy(), strategy, base_type, "field v")
        return driver.to_sql(exp.select(converted)).removeprefix("SELECT "), value_type

    time_sql = {"sqlite": 'TIME("v")', "mysql": "CAST(`v` AS TIME)"}.get(engine, 'CAST("v" AS TIME)')
    assert sql("Coercion/ISO8601->Time", "type/Text") == (time_sql, "type/Time")
    date_sql = {"sqlite": 'DATE("v")', "mysql": "CAST(`v` AS DATE)"}.get(engine, 'CAST("v" AS DATE)')
    assert sql("Coercion/DateTime->Date", "type/DateTimeWithLocalTZ") == (date_sql, "type/Date")
    # a UNIX instant is computed as UTC wall-clock time: SQL sees a plain date-time
    assert sql("Coercion/UNIXNanoSeconds->DateTime", "type/BigInteger")[1] == "type/DateTime"
    assert "1000000000.0" in sql("Coercion/UNIXNanoSeconds->DateTime", "type/BigInteger")[0]
    # a strategy that does not fit the stored type is left out, as Metabase's compiler leaves it
    quoted = "`v`" if engine == "mysql" else '"v"'
    assert sql("Coercion/UNIXSeconds->DateTime", "type/Text") == (quoted, None)
    assert sql("Coercion/Float->Integer", "type/Integer") == (quoted, None)
    assert sql("Coercion/String->Integer", "type/Float") == (quoted, None)
    assert sql(None, "type/Text") == (quoted, None)
    for strategy in ("Coercion/ISO8601Bytes->Temporal", "Coercion/YYYYMMDDHHMMSSBytes->Temporal"):
        with pytest.raises(Invalid, match=f"field v has the coercion strategy {re.escape(strategy)}, which the {engine} "
                                          "driver does not support"):
            sql(strategy, "type/*")


def test_coercion_of_an_implicitly_joined_field(metadata):
    """A field reached through a foreign key is converted too (Metabase converts every field read from a table)."""
    from core.appdb.models.database import Field

    session, ids = metadata
    i = ids["postgres"]
    field = session.get(Field, i["$PEOPLE.LATITUDE"])
    field.coercion_strategy, field.effective_type = "Coercion/Float->Integer", "type/Integer"
    try:
        compiled = compile_case(metadata, "postgres", {
            "source-table": "$$ORDERS", "aggregation": [["count"]],
            "breakout": [f("PEOPLE.LATITUDE", source_field="$ORDERS.USER_ID")]})
    finally:
        field.coercion_strategy, field.effective_type = None, "type/Float"
    assert 'CAST(FLOOR("PEOPLE__via__USER_ID"."LATITUDE" + 0.5) AS BIGINT) AS "LATITUDE"' in compiled.sql
