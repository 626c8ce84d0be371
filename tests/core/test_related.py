"""core.content.related without the API: context-bearing clauses, similarity and the interesting mix."""
import random

from core.content.related import Candidate, interesting_mix, query_forms, rank, similarity


def query(**inner):
    return {"database": 1, "type": "query", "query": {"source-table": 2, **inner}}


def test_forms_are_field_metric_and_segment_references_at_any_depth():
    forms = query_forms(query(aggregation=[["sum", ["field-id", 7]]], breakout=[["field", 8, {"temporal-unit": "day"}]],
                              filter=["=", ["field", 9, None], 1]))
    # Legacy refs are normalised; filters are not part of a card's definition.
    assert len(forms) == 2 and any('"field", 7' in f for f in forms)
    assert query_forms({"database": 1, "type": "native", "native": {"query": "SELECT 1"}}) == set()
    assert query_forms({"nonsense": 1}) == set() and query_forms(None) == set()


def test_similarity_is_overlap_over_the_smaller_definition():
    a = query_forms(query(breakout=[["field", 1, None]], aggregation=[["sum", ["field", 2, None]]]))
    b = query_forms(query(breakout=[["field", 1, None]]))
    c = query_forms(query(breakout=[["field", 3, None]]))
    assert similarity(a, b) == 1 and similarity(a, c) == 0 and similarity(set(), set()) == 0
    ranked = rank(b, [Candidate(("card", 1), {"id": 1}, c), Candidate(("card", 2), {"id": 2}, a),
                      Candidate(("card", 3), {"id": 3}, b)], exclude=("card", 3))
    assert [(r.json["id"], r.json["similarity"]) for r in ranked] == [(2, 1), (1, 0)]
    assert [r.json["id"] for r in rank(b, [Candidate(("card", 1), {"id": 1}, c)], positive=True)] == []


def test_interesting_mix_keeps_the_best_three_and_two_others():
    matches = list(range(10))
    mixed = interesting_mix(matches, random.Random(4))
    assert mixed[:3] == [0, 1, 2] and len(mixed) == 5 and set(mixed[3:]) <= set(range(3, 10))
    assert interesting_mix([1, 2]) == [1, 2]
