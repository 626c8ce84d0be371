"""bench/bench_query.py runs end to end on a small table and reports its three targets (structure only:
a benchmark is not a timed test)."""
from bench import bench_query


def test_bench_query_reports_its_targets(capsys):
    targets = bench_query.main(rows=2500, rounds=1, per_round=1)
    assert [t.at_most for t in targets] == [True, False, False]
    assert [t.bound for t in targets] == [1.3, 0.7, 0.7]
    assert all(t.ratio > 0 for t in targets)
    printed = capsys.readouterr().out
    assert printed.count("target") == 3 and "2000 of 2,500 rows" in printed
