"""Hostile MBQL never crashes the normaliser or the compiler: any input either compiles or is a 400
(core.http.errors.Invalid). Shapes are generated from real clause names with arbitrary arguments."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.http.errors import Invalid
from core.query.compiler import compile_query
from core.query.mbql import normalize

from . import sample
from .conftest import driver_class

OPS = ["field", "expression", "aggregation", "value", "=", "!=", "<", ">", "between", "and", "or", "not", "is-null",
       "is-empty", "contains", "starts-with", "time-interval", "relative-time-interval", "during", "inside", "+", "-",
       "*", "/", "case", "coalesce", "substring", "concat", "upper", "regex-match-first", "datetime-add",
       "datetime-diff", "temporal-extract", "get-week", "get-day-of-week", "relative-datetime", "interval", "count",
       "sum", "avg", "cum-sum", "share", "count-where", "sum-where", "percentile", "median", "distinct",
       "aggregation-options", "month-name", "round", "power", "in", "segment", "metric", "fk->", "datetime-field",
       "field-id", "binning-strategy", "joined-field", "host", "domain", "subdomain", "path", "split-part", "text",
       "integer", "float", "date", "datetime", "today", "convert-timezone", "offset"]
UNITS = ["day", "week", "month", "quarter", "year", "hour", "day-of-week", "week-of-year", "fortnight", "current", "iso",
         "millisecond", "second", "Asia/Tokyo", "+05:30", "unix-seconds", "simple"]


def clauses(field_ids):
    leaves = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(field_ids), st.floats(-2, 2),
                       st.sampled_from(UNITS + ["2024-01-01", "x :y", "TOTAL", ""]),
                       st.dictionaries(st.sampled_from(["temporal-unit", "binning", "base-type", "join-alias",
                                                        "case-sensitive", "include-current", "default", "name", "mode"]),
                                       st.one_of(st.sampled_from(UNITS), st.booleans(), st.none(), st.integers(0, 3))))
    return st.recursive(leaves, lambda inner: st.one_of(
        st.tuples(st.sampled_from(OPS), st.lists(inner, max_size=4)).map(lambda t: [t[0], *t[1]]),
        st.lists(inner, max_size=3)), max_leaves=12)


@pytest.fixture(scope="module")
def fuzz_metadata(appdb):
    with appdb.session() as session:
        ids = sample.register(session, "postgres", "public")
    session = appdb.Session()
    yield session, ids
    session.close()


def test_hostile_queries_are_invalid_or_compile(fuzz_metadata):
    session, ids = fuzz_metadata
    field_ids = [v for k, v in ids.items() if k.startswith("$") and not k.startswith("$$")]
    driver = driver_class("postgres")
    outcomes = {"compiled": 0, "invalid": 0}

    @settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(x=clauses(field_ids), kind=st.sampled_from(["filter", "aggregation", "breakout", "expression", "fields",
                                                        "order-by"]))
    def check(x, kind):
        inner = {"source-table": ids["$$ORDERS"]}
        if kind == "filter":
            inner["filter"] = x
        elif kind == "aggregation":
            inner["aggregation"] = [x]
        elif kind == "breakout":
            inner.update(breakout=[x], aggregation=[["count"]])
        elif kind == "expression":
            inner.update(expressions={"e": x}, fields=[["expression", "e"]])
        elif kind == "order-by":
            inner["order-by"] = [["desc", x]]
        else:
            inner["fields"] = [x]
        try:
            compile_query(session, normalize({"database": ids["database"], "type": "query", "query": inner}), driver)
            outcomes["compiled"] += 1
        except Invalid as error:
            assert error.status == 400 and error.message.startswith("Invalid MBQL")
            outcomes["invalid"] += 1

    check()
    # Both outcomes happen: the generator reaches the compiler, not only the normaliser's checks.
    assert outcomes["compiled"] > 5 and outcomes["invalid"] > 5, outcomes
