"""core.query.autobucket: Metabase's default day bucketing of date breakouts and date-string filters.

The step is tested on its own with a field-type table (cases after Metabase's
auto_bucket_datetimes_test.clj), then through the compiler for the SQL and the result columns
(`unit`, `field_ref`, `display_name`) a bucketed breakout reports. Cross-engine answers are rows of
the conformance table (test_conformance.py, "auto-bucket-*").
"""
from __future__ import annotations

import copy

import pytest

from core.query.autobucket import auto_bucket, is_date_or_datetime
from core.query.compiler import compile_query
from core.query.mbql import normalize

from . import sample
from .conftest import driver_class

# One xdist worker runs this module (make test: --dist loadgroup): its module-scoped sample is built once.
pytestmark = pytest.mark.xdist_group("query-autobucket")

# field id -> (base_type, effective_type)
TYPES = {
    1: ("type/DateTime", "type/DateTime"),
    2: ("type/Date", "type/Date"),
    3: ("type/Time", "type/Time"),
    4: ("type/Integer", "type/Integer"),
    5: ("type/BigInteger", "type/Instant"),      # UNIX seconds coerced to a date-time
    6: ("type/DateTimeWithLocalTZ", None),
    7: ("type/Text", "type/Text"),
}
DAY = {"temporal-unit": "day"}


def bucketed(inner: dict, step: bool = True) -> dict:
    """The stage after the step (or only normalised), as breakouts, filters, order-by and fields."""
    query = normalize({"database": 1, "type": "query", "query": {"source-table": 10, **inner}})
    if step:
        auto_bucket(query, TYPES.get)
    stage = query.last
    return {"breakout": stage.breakouts, "filters": stage.filters, "order-by": stage.order_by, "fields": stage.fields}


def fld(ident, **opts):
    return ["field", ident, {k.replace("_", "-"): v for k, v in opts.items()}]


# ---- breakouts ------------------------------------------------------------------------------------

@pytest.mark.parametrize("field_id", [1, 2, 5, 6])
def test_unbucketed_date_breakouts_get_day(field_id):
    assert bucketed({"breakout": [fld(field_id)]})["breakout"] == [fld(field_id, temporal_unit="day")]


@pytest.mark.parametrize("field_id", [3, 4, 7, 999])
def test_time_other_types_and_unknown_fields_are_left_alone(field_id):
    assert bucketed({"breakout": [fld(field_id)]})["breakout"] == [fld(field_id)]


@pytest.mark.parametrize("opts", [{"temporal-unit": "month"}, {"temporal-unit": "default"},
                                  {"binning": {"strategy": "default"}}])
def test_a_unit_or_binning_already_given_is_kept(opts):
    assert bucketed({"breakout": [["field", 1, opts]]})["breakout"] == [["field", 1, opts]]


def test_joined_and_implicit_refs_keep_their_options():
    out = bucketed({"breakout": [fld(1, join_alias="J"), fld(2, source_field=4)]})["breakout"]
    assert out == [fld(1, join_alias="J", temporal_unit="day"), fld(2, source_field=4, temporal_unit="day")]


def test_field_literals_use_the_types_in_their_options():
    out = bucketed({"breakout": [fld("CREATED_AT", base_type="type/DateTime"), fld("T", base_type="type/Time"),
                                 fld("N", base_type="type/Integer", effective_type="type/Date")]})["breakout"]
    assert out == [fld("CREATED_AT", base_type="type/DateTime", temporal_unit="day"), fld("T", base_type="type/Time"),
                   fld("N", base_type="type/Integer", effective_type="type/Date", temporal_unit="day")]


def test_expressions_are_bucketed_only_when_their_options_say_date():
    inner = {"expressions": {"e": ["datetime-add", fld(1), 1, "day"]}}
    typed = bucketed({**inner, "breakout": [["expression", "e", {"base-type": "type/DateTime"}]]})["breakout"]
    assert typed == [["expression", "e", {"base-type": "type/DateTime", "temporal-unit": "day"}]]
    # Metabase reads the ref's options, not the definition: an untyped ref stays as it is.
    assert bucketed({**inner, "breakout": [["expression", "e"]]})["breakout"] == [["expression", "e", {}]]
    timed = bucketed({**inner, "filter": ["=", ["expression", "e", {"base-type": "type/Time"}], "2024-01-01"]})
    assert timed["filters"] == [["=", ["expression", "e", {"base-type": "type/Time"}], "2024-01-01"]]


def test_order_by_fields_and_aggregations_are_not_rewritten():
    out = bucketed({"breakout": [fld(1)], "aggregation": [["max", fld(1)]], "order-by": [["asc", fld(1)]]})
    assert out["breakout"] == [fld(1, temporal_unit="day")]
    assert out["order-by"] == [["asc", fld(1)]]
    assert bucketed({"fields": [fld(1)], "filter": ["not-null", fld(1)]})["fields"] == [fld(1)]


# ---- filters --------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["=", "!=", "<", "<=", ">", ">="])
def test_comparisons_with_a_date_string_are_bucketed(op):
    assert bucketed({"filter": [op, fld(1), "2024-03-05"]})["filters"] == [[op, fld(1, temporal_unit="day"), "2024-03-05"]]


@pytest.mark.parametrize("clause, expected", [
    (["between", fld(1), "2024-01-01", "2024-01-31"], ["between", fld(1, temporal_unit="day"), "2024-01-01", "2024-01-31"]),
    (["=", fld(1), "2024-01-01", "2024-01-02"], ["=", fld(1, temporal_unit="day"), "2024-01-01", "2024-01-02"]),
    (["=", fld(2), ["relative-datetime", "current"]], ["=", fld(2, temporal_unit="day"), ["relative-datetime", "current"]]),
    (["<", fld(1), ["relative-datetime", -1, "month"]], ["<", fld(1, temporal_unit="day"), ["relative-datetime", -1, "month"]]),
    # the join alias is kept (#12872 in Metabase)
    (["between", fld(1, join_alias="C"), "2019-11-01", "2019-11-01"],
     ["between", fld(1, join_alias="C", temporal_unit="day"), "2019-11-01", "2019-11-01"]),
])
def test_bucketable_filters(clause, expected):
    assert bucketed({"filter": clause})["filters"] == [expected]


@pytest.mark.parametrize("clause", [
    ["=", fld(1), "2024-01-01T10:00:00"],                       # more than a date: the instant was meant
    ["between", fld(1), "2024-01-01", "2024-01-02T14:20:00.000Z"],
    ["=", fld(1), "2024-1-1"],
    ["=", fld(1), "2024-01-01\n"],
    [">", fld(1), fld(2)],
    ["is-null", fld(1)],
    ["not-null", fld(1)],
    ["in", fld(1), "2024-01-01"],
    ["time-interval", fld(1), -30, "day"],
    ["relative-time-interval", fld(1), 1, "day", 2, "month"],
    ["during", fld(1), "2024-01-01", "month"],
    ["=", fld(3), "2024-01-01"],                                # a Time field
    ["=", fld(1, temporal_unit="month"), "2024-01-01"],
])
def test_filters_left_alone(clause):
    assert bucketed({"filter": clause})["filters"] == bucketed({"filter": clause}, step=False)["filters"]


def test_compound_filters_are_searched():
    out = bucketed({"filter": ["and", ["=", fld(1), "2018-11-19"], ["=", fld(7), "ABC"],
                               ["or", ["not", [">", fld(2), "2000-01-01"]], ["is-null", fld(1)]]]})
    assert out["filters"] == [["and", ["=", fld(1, temporal_unit="day"), "2018-11-19"], ["=", fld(7), "ABC"],
                               ["or", ["not", [">", fld(2, temporal_unit="day"), "2000-01-01"]], ["is-null", fld(1)]]]]


def test_only_the_instances_that_qualify_are_rewritten():
    out = bucketed({"breakout": [fld(1)], "filter": ["=", fld(1), "2018-11-20T14:20:00.000Z"]})
    assert out["breakout"] == [fld(1, temporal_unit="day")]
    assert out["filters"] == [["=", fld(1), "2018-11-20T14:20:00.000Z"]]
    out = bucketed({"breakout": [fld(1, temporal_unit="month")], "filter": ["=", fld(1), "2018-11-20"]})
    assert out["breakout"] == [fld(1, temporal_unit="month")]
    assert out["filters"] == [["=", fld(1, temporal_unit="day"), "2018-11-20"]]


def test_fields_inside_a_compared_expression_are_bucketed_but_not_inside_datetime_diff():
    out = bucketed({"filter": ["and", ["=", ["datetime-add", fld(1), 1, "day"], "2024-01-02"],
                               ["=", ["datetime-diff", fld(1), fld(2), "day"], "2024-01-02"]]})
    assert out["filters"] == [["and", ["=", ["datetime-add", fld(1, temporal_unit="day"), 1, "day"], "2024-01-02"],
                               ["=", ["datetime-diff", fld(1), fld(2), "day"], "2024-01-02"]]]


def test_a_minute_shift_in_the_filters_leaves_the_whole_stage_alone():
    shift = ["between", ["+", fld(1), ["interval", 10, "minute"]], ["relative-datetime", -30, "minute"],
             ["relative-datetime", 0, "minute"]]
    out = bucketed({"breakout": [fld(1)], "filter": ["and", shift, ["=", fld(2), "2024-01-01"]]})
    assert out["breakout"] == [fld(1)]
    assert out["filters"] == [["and", shift, ["=", fld(2), "2024-01-01"]]]
    # a day shift is no reason: the date comparison inside gets its unit
    by_day = ["=", ["+", fld(1), ["interval", 1, "day"]], "2024-01-01"]
    assert bucketed({"filter": by_day})["filters"] == [["=", ["+", fld(1, temporal_unit="day"), ["interval", 1, "day"]],
                                                        "2024-01-01"]]


# ---- stages ---------------------------------------------------------------------------------------

def test_every_stage_and_joined_stage_is_rewritten():
    query = normalize({"database": 1, "type": "query", "query": {
        "source-query": {"source-table": 10, "aggregation": [["count"]], "filter": ["between", fld(1), "2020-02-01", "2020-02-29"]},
        "joins": [{"alias": "J", "condition": ["=", fld(4), fld(4, join_alias="J")],
                   "source-query": {"source-table": 11, "breakout": [fld(2)], "aggregation": [["count"]]}}],
        "breakout": [fld("CREATED_AT", base_type="type/DateTime")], "aggregation": [["count"]]}})
    auto_bucket(query, TYPES.get)
    first, last = query.stages
    assert first.filters == [["between", fld(1, temporal_unit="day"), "2020-02-01", "2020-02-29"]]
    assert last.joins[0].stages[0].breakouts == [fld(2, temporal_unit="day")]
    assert last.joins[0].condition == ["=", fld(4), fld(4, join_alias="J")]
    assert last.breakouts == [fld("CREATED_AT", base_type="type/DateTime", temporal_unit="day")]


def test_native_queries_pass_through():
    query = normalize({"database": 1, "type": "native", "native": {"query": "SELECT 1"}})
    before = copy.deepcopy(query)
    assert auto_bucket(query, TYPES.get) == before


def test_mbql5_queries_are_bucketed_like_legacy_ones():
    mbql5 = normalize({"lib/type": "mbql/query", "database": 1, "stages": [{
        "lib/type": "mbql.stage/mbql", "source-table": 10, "aggregation": [["count", {}]],
        "breakout": [["field", {"lib/uuid": "a"}, 1]], "filters": [["=", {}, ["field", {}, 2], "2024-01-01"]]}]})
    auto_bucket(mbql5, TYPES.get)
    assert mbql5.last.breakouts == [fld(1, temporal_unit="day")]
    assert mbql5.last.filters == [["=", fld(2, temporal_unit="day"), "2024-01-01"]]


def test_idempotent():
    query = normalize({"database": 1, "type": "query", "query": {
        "source-table": 10, "breakout": [fld(1)], "filter": ["=", fld(2), "2024-01-01"]}})
    auto_bucket(query, TYPES.get)
    once = copy.deepcopy(query)
    assert auto_bucket(query, TYPES.get) == once


def test_type_test_follows_metabase_hierarchy():
    assert is_date_or_datetime("type/Integer", "type/Instant")
    assert is_date_or_datetime("type/DateTimeWithZoneID", None)
    assert not is_date_or_datetime("type/Time", "type/TimeWithTZ")
    assert not is_date_or_datetime(None, None)


# ---- through the compiler -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def metadata(appdb):
    with appdb.session() as session:
        ids = sample.register(session, "sqlite", None)
    session = appdb.Session()
    yield session, ids
    session.close()


def compiled(metadata, inner: dict):
    session, ids = metadata
    query = normalize(sample.resolve({"database": "$db", "type": "query", "query": inner}, ids))
    return compile_query(session, query, driver_class("sqlite"), now=sample.NOW)


def sf(ref, **opts):
    return ["field", f"${ref}", {k.replace("_", "-"): v for k, v in opts.items()} or None]


@pytest.mark.parametrize("ref, display", [("ORDERS.CREATED_AT", "Created At: Day"), ("PEOPLE.BIRTH_DATE", "Birth Date: Day")])
def test_breakout_columns_report_the_day_unit(metadata, ref, display):
    _, ids = metadata
    table = "$$" + ref.split(".")[0]
    plain = compiled(metadata, {"source-table": table, "aggregation": [["count"]], "breakout": [sf(ref)]})
    explicit = compiled(metadata, {"source-table": table, "aggregation": [["count"]],
                                   "breakout": [sf(ref, temporal_unit="day")]})
    col = plain.columns[0]
    assert col["unit"] == "day"
    assert col["field_ref"] == ["field", ids[f"${ref}"], {"temporal-unit": "day"}]
    assert col["display_name"] == display
    assert plain.columns == explicit.columns
    assert plain.sql == explicit.sql


def test_grouping_is_by_day_not_by_instant(metadata):
    sql = compiled(metadata, {"source-table": "$$ORDERS", "aggregation": [["count"]],
                              "breakout": [sf("ORDERS.CREATED_AT")]}).sql
    assert 'GROUP BY "ORDERS"."CREATED_AT"' not in sql
    raw = compiled(metadata, {"source-table": "$$ORDERS", "aggregation": [["count"]],
                              "breakout": [sf("ORDERS.CREATED_AT", temporal_unit="default")]})
    assert 'GROUP BY "ORDERS"."CREATED_AT"' in raw.sql
    assert raw.columns[0]["unit"] == "default"
    assert raw.columns[0]["display_name"] == "Created At"


def test_plain_rows_keep_the_raw_column(metadata):
    _, ids = metadata
    out = compiled(metadata, {"source-table": "$$ORDERS", "fields": [sf("ORDERS.CREATED_AT")],
                              "filter": ["=", sf("ORDERS.CREATED_AT"), "2025-06-01"]})
    assert out.columns[0]["unit"] == "default"
    assert out.columns[0]["field_ref"] == ["field", ids["$ORDERS.CREATED_AT"], {"temporal-unit": "default"}]


def test_sorting_on_the_plain_field_follows_the_first_breakout(metadata):
    out = compiled(metadata, {"source-table": "$$ORDERS", "aggregation": [["count"]],
                              "breakout": [sf("ORDERS.CREATED_AT")], "order-by": [["desc", sf("ORDERS.CREATED_AT")]]})
    assert out.sql.endswith('ORDER BY "CREATED_AT" DESC')
    two = compiled(metadata, {"source-table": "$$ORDERS", "aggregation": [["count"]],
                              "breakout": [sf("ORDERS.CREATED_AT", temporal_unit="month"), sf("ORDERS.CREATED_AT")],
                              "order-by": [["desc", sf("ORDERS.CREATED_AT")]]})
    assert 'ORDER BY "CREATED_AT" DESC, "CREATED_AT_2"' in two.sql


def test_nested_stage_breakout_on_a_previous_column(metadata):
    out = compiled(metadata, {"source-query": {"source-table": "$$ORDERS", "fields": [sf("ORDERS.ID"), sf("ORDERS.CREATED_AT")]},
                              "aggregation": [["count"]],
                              "breakout": [["field", "CREATED_AT", {"base-type": "type/DateTime"}]]})
    col = out.columns[0]
    assert col["unit"] == "day"
    assert col["field_ref"] == ["field", "CREATED_AT", {"base-type": "type/DateTime", "temporal-unit": "day"}]
