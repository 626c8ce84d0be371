"""core.query.describe: definitions of segments and legacy metrics in words."""
from core.query.describe import describe_aggregations, describe_filters


def test_filters_and_aggregations_in_words(sqlite_sample):
    session, ids = sqlite_sample.session, sqlite_sample.ids
    total, created = ["field", ids["$ORDERS.TOTAL"], {}], ["field", ids["$ORDERS.CREATED_AT"], {}]
    cases = [
        ([[">", total, 100]], "Filtered by Total is greater than 100"),
        ([["=", total, 1, 2, 3]], "Filtered by Total is 3 selections"),
        ([["between", total, 1, 5], ["not-null", created]],
         "Filtered by Total is between 1 and 5 and Created At is not empty"),
        ([["or", ["contains", ["field", ids["$PRODUCTS.CATEGORY"], {}], "Giz", {}], ["not", ["<", total, 3]]]],
         "Filtered by Category contains Giz or not Total is less than 3"),
        ([["time-interval", created, -30, "day", {}]], "Filtered by Created At is in the previous 30 days"),
        ([["time-interval", created, "current", "month", {}]], "Filtered by Created At is this month"),
        ([["segment", 987654]], "Filtered by a segment"),
        ([["regex-match-first", total, "x"]], "Filtered by a custom condition"),
    ]
    for filters, words in cases:
        assert describe_filters(session, filters) == words
    assert describe_filters(session, []) is None
    assert describe_aggregations(session, [["count"]]) == "Count"
    assert describe_aggregations(session, [["sum", total]]) == "Sum of Total"
    assert describe_aggregations(session, [["percentile", total, 0.9]]) == "0.9th percentile of Total"
    assert describe_aggregations(session, [["sum-where", total, [">", total, 1]]]) == "Sum of Total matching condition"
    assert describe_aggregations(session, [["aggregation-options", ["count"], {"display-name": "Orders"}]]) == "Orders"
    assert describe_aggregations(session, [["+", ["count"], 1]]) == "Custom expression"
