"""core.query.mbql: legacy MBQL (old forms included) and MBQL 5 normalise to one model; bad input is a
400 naming the clause."""
from __future__ import annotations

import pytest

from core.http.errors import Invalid
from core.query.mbql import normalize


def legacy(inner: dict, **outer) -> dict:
    return {"database": 1, "type": "query", "query": inner, **outer}


def stage(query):
    return normalize(query).stages[-1]


def test_legacy_query_normalises_tokens_keys_and_refs():
    s = stage({"database": 1, "type": "QUERY", "query": {
        "source_table": 2, "aggregation": [["COUNT"], ["sum", ["field_id", 5]]],
        "breakout": [["datetime-field", ["field-id", 7], "month"]],
        "filter": ["AND", ["=", ["field", 3, None], "x"], ["is_null", ["field", 4, {}]]],
        "order_by": [["desc", ["aggregation", 1]]], "limit": 10}})
    assert s.source_table == 2
    assert s.aggregations == [["count"], ["sum", ["field", 5, {}]]]
    assert s.breakouts == [["field", 7, {"temporal-unit": "month"}]]
    assert s.filters == [["and", ["=", ["field", 3, {}], "x"], ["is-null", ["field", 4, {}]]]]
    assert s.order_by == [["desc", ["aggregation", 1, {}]]]
    assert s.limit == 10
    assert s.aggregated


def test_old_forms():
    s = stage(legacy({
        "source-table": 2,
        "breakout": [12, ["datetime-field", ["fk->", ["field-id", 3], ["field-id", 9]], "as", "week"],
                     ["binning-strategy", ["field-id", 4], "num-bins", 20],
                     ["joined-field", "P", ["field-literal", "TITLE", "type/Text"]]],
        "aggregation": [["named", ["sum", ["field-id", 5]], "total"], ["count"]],
        "order-by": [[["field-id", 12], "descending"], ["asc", ["aggregate-field", 0]]]}))
    assert s.breakouts == [
        ["field", 12, {}],
        ["field", 9, {"source-field": 3, "temporal-unit": "week"}],
        ["field", 4, {"binning": {"strategy": "num-bins", "num-bins": 20}}],
        ["field", "TITLE", {"base-type": "type/Text", "join-alias": "P"}],
    ]
    assert s.aggregations[0] == ["aggregation-options", ["sum", ["field", 5, {}]], {"name": "total"}]
    assert s.order_by == [["desc", ["field", 12, {}]], ["asc", ["aggregation", 0, {}]]]


def test_single_old_style_aggregation():
    assert stage(legacy({"source-table": 1, "aggregation": ["count"]})).aggregations == [["count"]]


def test_source_query_becomes_stages_innermost_first():
    q = normalize(legacy({"source-query": {"source-query": {"source-table": 3, "limit": 5},
                                           "aggregation": [["count"]]},
                          "filter": [">", ["field", "count", {"base-type": "type/Integer"}], 1]}))
    assert [s.source_table for s in q.stages] == [3, None, None]
    assert q.stages[0].limit == 5 and q.stages[1].aggregations == [["count"]]
    assert q.stages[2].filters[0][1] == ["field", "count", {"base-type": "type/Integer"}]


def test_native_source_query_and_card_source():
    q = normalize(legacy({"source-query": {"native": "SELECT 1", "template-tags": {}}}))
    assert q.stages[0].native == {"query": "SELECT 1", "template-tags": {}}
    assert stage(legacy({"source-table": "card__12"})).source_card == 12


def test_joins_legacy():
    s = stage(legacy({"source-table": 1, "joins": [{
        "source-table": 2, "alias": "P", "strategy": "inner-join", "fields": "all",
        "condition": ["=", ["field", 3, None], ["field", 4, {"join-alias": "P"}]]}]}))
    join = s.joins[0]
    assert (join.alias, join.strategy, join.fields) == ("P", "inner-join", "all")
    assert join.stages[0].source_table == 2
    assert join.condition == ["=", ["field", 3, {}], ["field", 4, {"join-alias": "P"}]]


def test_expressions_keep_their_names_and_case_options():
    s = stage(legacy({"source-table": 1, "expressions": {"Net Total": ["-", ["field", 1, None], 2]},
                      "filter": ["contains", ["expression", "Net Total"], "x", {"case_sensitive": False}]}))
    assert s.expressions == {"Net Total": ["-", ["field", 1, {}], 2]}
    assert s.filters == [["contains", ["expression", "Net Total", {}], "x", {"case-sensitive": False}]]


def test_mbql5_stages():
    q = normalize({"lib/type": "mbql/query", "database": 1, "stages": [
        {"lib/type": "mbql.stage/mbql", "source-table": 2,
         "expressions": [["+", {"lib/uuid": "e", "lib/expression-name": "plus"}, ["field", {"lib/uuid": "f"}, 3], 1]],
         "filters": [["contains", {"lib/uuid": "c", "case-sensitive": False}, ["field", {"lib/uuid": "g"}, 4], "a", "b"],
                     ["time-interval", {"lib/uuid": "t", "include-current": True}, ["field", {}, 5], -3, "month"]],
         "aggregation": [["count", {"lib/uuid": "agg-1"}],
                         ["sum", {"lib/uuid": "agg-2", "name": "s", "display-name": "Sum!"}, ["expression", {}, "plus"]]],
         "breakout": [["field", {"lib/uuid": "b", "temporal-unit": "month", "base-type": "type/DateTime"}, 5]],
         "order-by": [["desc", {"lib/uuid": "o"}, ["aggregation", {"lib/uuid": "r"}, "agg-2"]]],
         "limit": 3},
        {"lib/type": "mbql.stage/mbql", "filters": [[">", {}, ["field", {"base-type": "type/Integer"}, "count"], 2]]},
    ]})
    first, second = q.stages
    assert first.source_table == 2
    assert first.expressions == {"plus": ["+", ["field", 3, {}], 1]}
    assert first.filters == [
        ["or", ["contains", ["field", 4, {}], "a", {"case-sensitive": False}],
         ["contains", ["field", 4, {}], "b", {"case-sensitive": False}]],
        ["time-interval", ["field", 5, {}], -3, "month", {"include-current": True}],
    ]
    assert first.aggregations == [["count"], ["aggregation-options", ["sum", ["expression", "plus", {}]],
                                              {"name": "s", "display-name": "Sum!"}]]
    assert first.breakouts == [["field", 5, {"temporal-unit": "month", "base-type": "type/DateTime"}]]
    assert first.order_by == [["desc", ["aggregation", 1, {}]]]
    assert second.filters == [[">", ["field", "count", {"base-type": "type/Integer"}], 2]]


def test_mbql5_join_and_case():
    s = stage({"lib/type": "mbql/query", "database": 1, "stages": [{
        "lib/type": "mbql.stage/mbql", "source-table": 2,
        "joins": [{"lib/type": "mbql/join", "alias": "J", "fields": "none",
                   "stages": [{"lib/type": "mbql.stage/mbql", "source-table": 3}],
                   "conditions": [["=", {}, ["field", {}, 1], ["field", {"join-alias": "J"}, 2]]]}],
        "expressions": [["case", {"lib/expression-name": "c"}, [[["=", {}, ["field", {}, 1], 1], "one"]], "other"]]}]})
    assert s.joins[0].condition == ["=", ["field", 1, {}], ["field", 2, {"join-alias": "J"}]]
    assert s.joins[0].stages[0].source_table == 3
    assert s.expressions["c"] == ["case", [[["=", ["field", 1, {}], 1], "one"]], {"default": "other"}]


@pytest.mark.parametrize("query, fragment", [
    ("nope", "must be a map"),
    ({"database": "x", "type": "query", "query": {}}, "database must be an integer"),
    ({"database": 1, "type": "weird"}, "type must be"),
    (legacy({}), "needs a source-table or a source-query"),
    (legacy({"source-table": "card__x"}), "card__<id>"),
    (legacy({"source-table": 1, "breakout": [["field", "NAME", None]]}), "without base-type"),
    (legacy({"source-table": 1, "breakout": [["field", 3, {"temporal-unit": "fortnight"}]]}), "unknown temporal unit 'fortnight'"),
    (legacy({"source-table": 1, "breakout": [["field", 3, {"binning": {"strategy": "num-bins"}}]]}), "num-bins of breakout"),
    (legacy({"source-table": 1, "order-by": [["sideways", ["field", 1, None]]]}), "malformed order-by"),
    (legacy({"source-table": 1, "limit": -1}), "limit must be an integer >= 0"),
    (legacy({"source-table": 1, "page": {"page": 0, "items": 10}}), "page.page"),
    (legacy({"source-table": 1, "joins": [{"source-table": 2, "strategy": "cross-join",
                                           "condition": ["=", 1, 1]}]}), "unknown join strategy 'cross-join'"),
    (legacy({"source-table": 1, "joins": [{"source-table": 2}]}), "needs a condition"),
    (legacy({"source-table": 1, "fields": [["aggregation-options"]]}), "expected a field reference in fields"),
    ({"lib/type": "mbql/query", "database": 1, "stages": [{"source-table": 1, "filter": ["=", {}, 1, 1]}]},
     "take \"filters\""),
    ({"lib/type": "mbql/query", "database": 1, "stages": []}, "non-empty list of stages"),
    ({"lib/type": "mbql/query", "database": 1, "stages": [{"source-table": 1, "order-by": [["asc", {}, ["aggregation", {}, "zzz"]]]}]},
     "no aggregation with uuid 'zzz'"),
    ({"lib/type": "mbql/query", "database": 1, "stages": [{"source-table": 1, "breakout": [["field", 3]]}]},
     "needs an options map"),
])
def test_invalid_queries_name_the_clause(query, fragment):
    with pytest.raises(Invalid) as error:
        normalize(query)
    assert error.value.status == 400
    assert fragment in error.value.message
