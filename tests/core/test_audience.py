"""core.policy.audience: which queries' permission answers follow from the caller's groups alone."""
import orjson

from core.policy.audience import group_decided


def test_a_table_query_is_decided_by_groups():
    assert group_decided(orjson.dumps({"database": 1, "type": "query", "query": {"source-table": 2}}))


def test_cards_snippets_and_native_sql_are_decided_per_user():
    for query in ({"type": "query", "query": {"source-card": 3}},
                  {"type": "query", "query": {"source-table": "card__3"}},
                  {"type": "query", "query": {"source-table": 2, "joins": [{"source-card": 3}]}},
                  {"type": "native", "native": {"query": "SELECT 1"}},
                  {"type": "native", "native": {"query": "{{snippet: x}}", "template-tags": {}}}):
        assert not group_decided(orjson.dumps(query)), query
